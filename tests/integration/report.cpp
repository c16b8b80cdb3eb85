#include "tests/integration/report.h"

#include <gtest/gtest.h>

#include "tests/integration/env.h"
#include "tests/integration/run.h"

namespace atrace::it {

std::optional<nlohmann::json> report_json(const std::string& file,
                                          const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Paths::atrace, "report", "-i", file, "--format=json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Result r = run(argv);
  if (!r.exited(0)) {
    ADD_FAILURE() << "atrace report failed\n" << r.describe();
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "atrace report --format=json printed no valid JSON: " << e.what() << "\n"
                  << r.describe();
    return std::nullopt;
  }
}

std::string base_name(std::string_view demangled) {
  // Cut at the parameter list: the first '(' outside template brackets.
  int depth = 0;
  size_t end = demangled.size();
  for (size_t i = 0; i < demangled.size(); ++i) {
    char c = demangled[i];
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    else if (c == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  std::string_view head = demangled.substr(0, end);
  // Drop a return type: whatever precedes the last space outside brackets.
  depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    char c = head[i];
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    else if (c == ' ' && depth == 0) start = i + 1;
  }
  return std::string(head.substr(start));
}

const nlohmann::json* find_function(const nlohmann::json& report, std::string_view name) {
  const nlohmann::json* found = nullptr;
  if (!report.contains("functions") || !report["functions"].is_array()) return nullptr;
  for (const auto& f : report["functions"]) {
    if (!f.contains("name") || !f["name"].is_string()) continue;
    const std::string full = f["name"].get<std::string>();
    if (full != name && base_name(full) != name) continue;
    if (found != nullptr) {
      ADD_FAILURE() << "several functions in the report match '" << name
                    << "': " << function_names(report);
      return nullptr;
    }
    found = &f;
  }
  return found;
}

long long function_field(const nlohmann::json& report, std::string_view name, const char* field) {
  const nlohmann::json* f = find_function(report, name);
  if (f == nullptr || !f->contains(field) || !(*f)[field].is_number_integer()) return -1;
  return (*f)[field].get<long long>();
}

std::string function_names(const nlohmann::json& report) {
  std::string names;
  if (!report.contains("functions") || !report["functions"].is_array()) return "(no functions)";
  for (const auto& f : report["functions"]) {
    if (!names.empty()) names += ", ";
    names += f.value("name", std::string("?"));
  }
  return names.empty() ? "(none)" : names;
}

}  // namespace atrace::it
