// Recorded arguments and return values (record --args/--retval, issue 20)
// beyond `script`: the exporters carry them (Chrome JSON event args,
// Perfetto debug annotations, CSV), and `report --group-by` groups calls
// by them, in text and JSON. target_args calls each function with known
// values, 2 rounds: every figure below is exact. Each file is read back.
#include <cstdio>
#include <map>
#include <sstream>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class ArgsExport : public IntegrationTest {
 protected:
  // The recording each test reads back.
  std::string record_args() {
    std::string trace = file("a.data");
    Result r =
        record(trace, "ar_*", {Paths::target_args, "2", tag_arg()},
               {"--args=ar_negative@arg1/i32;ar_string@arg1/s,arg2/i32;ar_pointer@arg1/p;"
                "ar_signed@arg5/x32",
                "--retval=ar_negative/i32;ar_string/i32;ar_name/s", "--no-kernel", "--filter=off"});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return trace;
  }
};

// With --slice-args: without it, slices carry no args at all (speedscope
// would split a function's frames by value; ConvertChrome.*).
TEST_F(ArgsExport, ChromeEventsCarryTheValuesAsArgs) {
  std::string trace = record_args(), out = file("a.json");
  Result conv =
      run({Paths::atrace, "convert", "-i", trace, "--to=chrome", "--slice-args", "-o", out});
  ASSERT_TRUE(conv.exited(0)) << conv.describe();
  nlohmann::json doc = nlohmann::json::parse(read_whole(out));
  std::map<std::string, int> seen;  // "name args" -> calls
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "function") continue;
    nlohmann::json args = e["args"];
    args.erase("module");
    seen[e["name"].get<std::string>() + " " + args.dump()]++;
  }
  EXPECT_EQ(seen[R"(ar_negative {"arg1":5,"retval":-5})"], 2);
  EXPECT_EQ(seen[R"(ar_negative {"arg1":-7,"retval":7})"], 2);
  EXPECT_EQ(seen[R"(ar_string {"arg1":"hello","arg2":1,"retval":5})"], 2);
  EXPECT_EQ(seen[R"(ar_string {"arg1":"","arg2":1,"retval":0})"], 2);
  EXPECT_EQ(seen[R"(ar_string {"arg1":"NULL","arg2":0,"retval":-1})"], 2);
  EXPECT_EQ(seen[R"(ar_pointer {"arg1":"0x1234"})"], 2);
  EXPECT_EQ(seen[R"(ar_pointer {"arg1":"0x0"})"], 2);
  EXPECT_EQ(seen[R"(ar_signed {"arg5":"0xffffffff"})"], 2);
  EXPECT_EQ(seen[R"(ar_name {"retval":"zero"})"], 2);
  EXPECT_EQ(seen[R"(ar_name {"retval":"one"})"], 2);
  EXPECT_EQ(seen[R"(ar_unsigned {})"], 2) << "a function without a spec has no values";
  int unreadable = 0;
  for (const auto& [key, n] : seen)
    if (key.rfind(R"(ar_string {"arg1":"<unreadable 0x)", 0) == 0) unreadable += n;
  EXPECT_EQ(unreadable, 2) << ::testing::PrintToString(seen);
}

// An interned EventName's name. protoc --decode_raw shows a string that
// also parses as a message as that message: "ar_string" (9 bytes) is
// field 12 ('a': tag 97, fixed64) and 8 bytes; the bytes are rebuilt.
std::string name_of(const RawField& event_name) {
  const RawField* f = event_name.first(2);
  if (!f || !f->is_message) return event_name.text(2);
  std::string out;
  for (const RawField& part : f->fields) {
    if (part.is_message || part.value.rfind("0x", 0) != 0) return "?";
    out += static_cast<char>(part.number << 3 | 1);
    uint64_t v = std::stoull(part.value, nullptr, 16);
    for (int i = 0; i < 8; ++i) out += static_cast<char>(v >> (8 * i) & 0xff);
  }
  return out;
}

TEST_F(ArgsExport, PerfettoSlicesCarryTheValuesAsDebugAnnotations) {
  REQUIRE_TOOL("protoc");
  std::string trace = record_args(), pb = file("a.perfetto-trace");
  ASSERT_TRUE(convert(trace, "perfetto", pb));
  Result r = run({"sh", "-c", "protoc --decode_raw < '" + pb + "'"});
  ASSERT_TRUE(r.exited(0)) << r.err.substr(0, 2000);
  RawField root;
  std::string error;
  ASSERT_TRUE(parse_decode_raw(r.out, root, error)) << error;
  std::map<long long, std::string> names, keys;        // interned event and annotation names
  std::map<long long, std::vector<std::string>> open;  // track -> open slice names
  std::map<std::string, int> seen;                     // "name key=value..." -> slices
  // An annotation as "key=value": int_value (4) as int64, uint (3),
  // pointer (7) in hex, string (6) without quotes.
  auto annotation = [&](const RawField& a) {
    std::string s = keys[a.integer(1)] + "=";
    if (a.first(4)) s += std::to_string(static_cast<long long>(std::stoull(a.first(4)->value)));
    else if (a.first(3)) s += a.first(3)->value;
    else if (a.first(7)) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", std::stoull(a.first(7)->value));
      s += hex;
    } else s += a.text(6);
    return s;
  };
  for (const RawField& packet : root.fields) {
    if (const RawField* interned = packet.first(12)) {
      for (const RawField* n : interned->all(2)) names[n->integer(1)] = name_of(*n);
      for (const RawField* n : interned->all(3)) keys[n->integer(1)] = n->text(2);
    }
    const RawField* ev = packet.first(11);
    if (!ev) continue;
    long long track = ev->integer(11), type = ev->integer(9);
    std::string text;
    for (const RawField* a : ev->all(4)) text += " " + annotation(*a);
    if (type == 1) {
      open[track].push_back(names[ev->integer(10)] + text);
    } else if (type == 2 && !open[track].empty()) {
      seen[open[track].back() + text]++;
      open[track].pop_back();
    }
  }
  EXPECT_EQ(seen["ar_negative arg1=5 retval=-5"], 2) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen["ar_negative arg1=-7 retval=7"], 2);
  EXPECT_EQ(seen["ar_string arg1=hello arg2=1 retval=5"], 2);
  EXPECT_EQ(seen["ar_string arg1=NULL arg2=0 retval=-1"], 2);
  EXPECT_EQ(seen["ar_pointer arg1=0x1234"], 2);
  EXPECT_EQ(seen["ar_signed arg5=0xffffffff"], 2);
  EXPECT_EQ(seen["ar_name retval=one"], 2);
  EXPECT_EQ(seen["ar_unsigned"], 2);
}

TEST_F(ArgsExport, CsvTextHoldsTheValues) {
  std::string trace = record_args(), csv = file("a.csv");
  ASSERT_TRUE(convert(trace, "csv", csv));
  std::vector<std::vector<std::string>> rows;
  std::string error;
  ASSERT_TRUE(parse_csv(read_whole(csv), rows, error)) << error;
  std::map<std::string, int> seen;  // "kind name text"
  for (const auto& row : rows)
    if (row.size() == 11 && (row[4] == "entry" || row[4] == "exit"))
      seen[row[4] + " " + row[5] + " " + row[10]]++;
  EXPECT_EQ(seen["entry ar_negative arg1=5"], 2) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen["exit ar_negative retval=-5"], 2);
  EXPECT_EQ(seen["entry ar_string arg1=\"hello\" arg2=1"], 2);
  EXPECT_EQ(seen["entry ar_string arg1=NULL arg2=0"], 2);
  EXPECT_EQ(seen["exit ar_name retval=\"one\""], 2);
  EXPECT_EQ(seen["entry ar_unsigned "], 2);
}

// The HTML report's timeline: each call's values, one line per distinct
// set, indexed by the span's 8th number (report_html_data.cpp).
TEST_F(ArgsExport, HtmlTimelineSpansCarryTheValues) {
  std::string trace = record_args(), page = file("a.html");
  Result r = run({Paths::atrace, "report", "-i", trace, "--html=" + page});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const std::string html = read_whole(page);
  const std::string open = "<script type=\"application/json\" id=\"atrace-data\">";
  size_t a = html.find(open);
  ASSERT_NE(a, std::string::npos);
  a += open.size();
  nlohmann::json d = nlohmann::json::parse(html.substr(a, html.find("</script", a) - a));
  const auto& tl = d["timeline"];
  const size_t stride = tl["span_stride"];
  ASSERT_EQ(stride, 8u);
  std::map<std::string, int> seen;  // "name values" -> spans
  const auto& spans = tl["spans"];
  for (size_t o = 0; o + stride <= spans.size(); o += stride) {
    const std::string name = tl["names"][spans[o + 5].get<size_t>()];
    seen[name + " " + tl["values"][spans[o + 7].get<size_t>()].get<std::string>()]++;
  }
  EXPECT_EQ(seen["ar_negative arg1=5 retval=-5"], 2) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen["ar_negative arg1=-7 retval=7"], 2);
  EXPECT_EQ(seen["ar_string arg1=\"hello\" arg2=1 retval=5"], 2);
  EXPECT_EQ(seen["ar_name retval=\"one\""], 2);
  EXPECT_EQ(seen["ar_unsigned "], 2) << "no values: line 0, empty";
}

TEST_F(ArgsExport, ReportGroupsCallsByAValue) {
  std::string trace = record_args();
  Result j = run({Paths::atrace, "report", "-i", trace, "--group-by=arg1", "--format=json"});
  ASSERT_TRUE(j.exited(0)) << j.describe();
  nlohmann::json doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["groups"]["by"], "arg1");
  std::map<std::string, std::map<std::string, long long>> calls;  // function -> value -> calls
  for (const auto& f : doc["groups"]["functions"]) {
    long long sum = 0;
    for (const auto& v : f["values"]) {
      calls[f["name"]][v["value"]] = v["calls"];
      EXPECT_EQ(v["avg_ns"], v["total_ns"].get<long long>() / v["calls"].get<long long>());
      sum += v["total_ns"].get<long long>();
    }
    EXPECT_GT(sum, 0) << f.dump();
  }
  EXPECT_EQ(calls.size(), 3u) << "ar_negative, ar_string, ar_pointer: " << doc["groups"].dump();
  EXPECT_EQ(calls["ar_negative"], (std::map<std::string, long long>{{"5", 2}, {"-7", 2}}));
  EXPECT_EQ(calls["ar_pointer"], (std::map<std::string, long long>{{"0x1234", 2}, {"0x0", 2}}));
  auto& s = calls["ar_string"];
  EXPECT_EQ(s["\"\""], 2);
  EXPECT_EQ(s["\"hello\""], 2);
  EXPECT_EQ(s["\"" + std::string(127, 'L') + "\"..."], 2);
  EXPECT_EQ(s["\"\\xff\\xfea\\x80\""], 2);
  EXPECT_EQ(s["NULL"], 2);
  EXPECT_EQ(s.size(), 6u) << "the unmapped pointer is one more value";
  for (const auto& f : doc["groups"]["functions"]) {
    if (f["name"] != "ar_negative") continue;
    for (const auto& v : f["values"])
      EXPECT_EQ(v["number"], std::stoll(v["value"].get<std::string>()));
  }

  Result t = run({Paths::atrace, "report", "-i", trace, "--group-by=retval"});
  ASSERT_TRUE(t.exited(0)) << t.describe();
  EXPECT_NE(t.out.find("Calls by retval:"), std::string::npos) << t.out;
  std::map<std::string, int> rows;  // "function value" of each row, calls
  std::istringstream lines(t.out.substr(t.out.find("Calls by retval:")));
  std::string function;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    // Calls Total(2 words) Avg(2 words) [Function] Value
    if (w.empty() || w[0].find_first_not_of("0123456789") != std::string::npos) continue;
    if (w.size() == 7) function = w[5];
    if (w.size() == 6 || w.size() == 7) rows[function + " " + w.back()] = std::stoi(w[0]);
  }
  EXPECT_EQ(rows["ar_negative -5"], 2) << t.out;
  EXPECT_EQ(rows["ar_negative 7"], 2) << t.out;
  EXPECT_EQ(rows["ar_name \"zero\""], 2) << t.out;
  EXPECT_EQ(rows["ar_name \"one\""], 2) << t.out;
  EXPECT_EQ(rows["ar_string 5"], 2) << t.out;
  EXPECT_EQ(rows["ar_string -1"], 4) << t.out;

  Result bad = run({Paths::atrace, "report", "-i", trace, "--group-by=arg7"});
  std::string line = expect_one_error_line(bad);
  EXPECT_NE(line.find("--group-by: 'arg7'"), std::string::npos) << line;
}

}  // namespace
}  // namespace atrace::it
