// What the `atrace convert` tests share: running the conversion and the real
// consumers, and reading what they print — protoc --decode_raw's text
// (parsed into a tree of fields), CSV by RFC 4180, Chrome JSON intervals.
// Header-only: the integration suites are globbed test_*.cpp files.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/env.h"
#include "tests/integration/fixture.h"
#include "tests/integration/run.h"

namespace atrace::it {

inline std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// atrace convert -i IN --to=FORMAT -o OUT, expected to succeed.
inline bool convert(const std::string& in, const std::string& format, const std::string& out) {
  Result r = run({Paths::atrace, "convert", "-i", in, "--to=" + format, "-o", out});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.err, "") << r.describe();
  return r.exited(0);
}

// The consumer a test needs: present, or the test cannot run (a failure in
// CI, a skip elsewhere). Use as: if (!have_tool("pj_dump")) return;
inline bool tool_present(const std::string& name) {
  Result r = run({"sh", "-c", "command -v " + name});
  return r.exited(0);
}
#define REQUIRE_TOOL(name)                                                          \
  do {                                                                              \
    if (!::atrace::it::tool_present(name)) {                                        \
      if (::atrace::it::in_ci()) FAIL() << name << " is not installed (make deps)"; \
      GTEST_SKIP() << name << " is not installed (make deps installs it)";          \
    }                                                                               \
  } while (0)

// One field of protoc --decode_raw's output: "N: value" or "N { ... }".
struct RawField {
  int number = 0;
  std::string value;             // the scalar as printed (strings with their quotes)
  std::vector<RawField> fields;  // a nested message
  bool is_message = false;

  // Fields numbered `n`, in order.
  std::vector<const RawField*> all(int n) const {
    std::vector<const RawField*> out;
    for (const auto& f : fields)
      if (f.number == n) out.push_back(&f);
    return out;
  }
  const RawField* first(int n) const {
    for (const auto& f : fields)
      if (f.number == n) return &f;
    return nullptr;
  }
  long long integer(int n, long long missing = -1) const {
    const RawField* f = first(n);
    return f && !f->is_message ? std::stoll(f->value) : missing;
  }
  // A string field without its quotes (only plain ASCII names are compared).
  std::string text(int n) const {
    const RawField* f = first(n);
    if (!f || f->is_message || f->value.size() < 2) return "";
    return f->value.substr(1, f->value.size() - 2);
  }
};

// Parses decode_raw's text; false on anything that does not look like it.
inline bool parse_decode_raw(const std::string& text, RawField& root, std::string& error) {
  std::istringstream in(text);
  std::vector<RawField*> stack{&root};
  root.is_message = true;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line == "}") {
      if (stack.size() < 2) {
        error = "unbalanced } at line " + std::to_string(n);
        return false;
      }
      stack.pop_back();
      continue;
    }
    RawField f;
    size_t end = line.find_first_not_of("0123456789");
    if (end == 0 || end == std::string::npos) {
      error = "unexpected line " + std::to_string(n) + ": " + line;
      return false;
    }
    f.number = std::stoi(line.substr(0, end));
    if (line.compare(end, 2, " {") == 0) {
      f.is_message = true;
      stack.back()->fields.push_back(f);
      stack.push_back(&stack.back()->fields.back());
    } else if (line.compare(end, 2, ": ") == 0) {
      f.value = line.substr(end + 2);
      stack.back()->fields.push_back(f);
    } else {
      error = "unexpected line " + std::to_string(n) + ": " + line;
      return false;
    }
  }
  if (stack.size() != 1) {
    error = "unclosed message";
    return false;
  }
  return true;
}

// RFC 4180 records: quoted fields may hold commas, quotes ("") and newlines.
inline bool parse_csv(const std::string& text, std::vector<std::vector<std::string>>& rows,
                      std::string& error) {
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      if (!field.empty() || was_quoted) {
        error = "quote inside an unquoted field at byte " + std::to_string(i);
        return false;
      }
      quoted = was_quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      was_quoted = false;
    } else if (c == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      was_quoted = false;
    } else {
      if (was_quoted) {
        error = "text after a closing quote at byte " + std::to_string(i);
        return false;
      }
      field += c;
    }
  }
  if (quoted || !field.empty() || !row.empty()) {
    error = "the last record is not terminated";
    return false;
  }
  return true;
}

// `atrace info`'s "Events: N".
inline long long info_event_count(const std::string& trace) {
  Result r = run({Paths::atrace, "info", "-i", trace});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Events:", 0) == 0) return std::stoll(line.substr(7));
  ADD_FAILURE() << "no Events: line\n" << r.describe();
  return -1;
}

}  // namespace atrace::it
