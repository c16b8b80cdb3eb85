// The report renderings: JSON fields (a stable interface), text table,
// durations, footnotes; and build_profile over a file written for real.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/trace_reader.h"
#include "formats/trace_writer.h"
#include "output/report.h"

using namespace atrace;
using formats::EventKind;

namespace {

formats::TraceHeader header() {
  formats::TraceHeader h;
  h.atrace_version = "0.1.0";
  h.target_command = "/opt/demo --n 3";
  h.target_pid = 321;
  h.start_mono_ns = 1'000;
  h.end_mono_ns = 2'001'000;  // 2 ms
  return h;
}

std::vector<formats::ProbeInfo> probes() {
  formats::ProbeInfo a;
  a.id = 1;
  a.name = "compute";
  a.module = "demo";
  formats::ProbeInfo b;
  b.id = 2;
  b.name = "deflate";
  b.module = "libz.so.1";
  return {a, b};
}

formats::Event ev(uint64_t ts, uint32_t tid, EventKind k, uint32_t id) {
  formats::Event e;
  e.ts = ts;
  e.pid = 321;
  e.tid = tid;
  e.id = id;
  e.kind = k;
  return e;
}

// compute: 2 calls on two threads (1 ms, 0.5 ms, the second unfinished);
// deflate: 1 call of 20 us inside the first compute; one orphan exit.
analysis::Profile profile() {
  analysis::ProfileBuilder b(probes());
  b.per_thread_rows(true);
  b.add(ev(1'000, 321, EventKind::FuncEntry, 1));
  b.add(ev(101'000, 321, EventKind::FuncEntry, 2));
  b.add(ev(121'000, 321, EventKind::FuncExit, 2));
  b.add(ev(1'001'000, 321, EventKind::FuncExit, 1));
  b.add(ev(1'200'000, 322, EventKind::FuncExit, 2));
  b.add(ev(1'501'000, 322, EventKind::FuncEntry, 1));
  formats::LostCounts lost;
  lost.per_cpu = {0, 12};
  return b.finish(2'001'000, {{321, 321, "demo", 0, 0, 4}, {322, 321, "worker", 0, 0, 2}}, lost);
}

}  // namespace

TEST(ProfileReport, FormatDuration) {
  using analysis::format_duration;
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(812), "812 ns");
  EXPECT_EQ(format_duration(1'000), "1.00 us");
  EXPECT_EQ(format_duration(20'100'000), "20.1 ms");
  EXPECT_EQ(format_duration(999'600), "1.00 ms");
  EXPECT_EQ(format_duration(9'996), "10.0 us");
  EXPECT_EQ(format_duration(123'456'789), "123 ms");
  EXPECT_EQ(format_duration(1'520'000'000), "1.52 s");
  EXPECT_EQ(format_duration(4'000'000'000'000), "4000 s");
}

TEST(ProfileReport, JsonFields) {
  auto p = profile();
  formats::TraceHeader h = header();
  std::vector<std::string> warnings = {"x: something"};
  analysis::ReportInput in{h, p, warnings};
  auto doc = nlohmann::json::parse(analysis::render_json(in, {}));

  EXPECT_EQ(doc["report_version"], 1);
  EXPECT_EQ(doc["command"], "/opt/demo --n 3");
  EXPECT_EQ(doc["pid"], 321);
  EXPECT_EQ(doc["duration_ns"], 2'000'000);
  EXPECT_EQ(doc["events"], 6);
  EXPECT_EQ(doc["lost_events"], 12);
  EXPECT_EQ(doc["orphan_exits"], 1);
  EXPECT_TRUE(doc["detached"].is_array());
  EXPECT_TRUE(doc["detached"].empty());
  EXPECT_EQ(doc["warnings"], nlohmann::json::array({"x: something"}));

  ASSERT_EQ(doc["functions"].size(), 2u);
  const auto& c = doc["functions"][0];
  EXPECT_EQ(c["name"], "compute");
  EXPECT_EQ(c["module"], "demo");
  EXPECT_EQ(c["calls"], 2);
  EXPECT_EQ(c["unfinished"], 1);
  EXPECT_EQ(c["total_ns"], 1'500'000);
  EXPECT_EQ(c["self_ns"], 1'480'000);
  // Of the finished call alone (the unfinished one's 0.5 ms is a lower bound).
  EXPECT_EQ(c["min_ns"], 1'000'000);
  EXPECT_EQ(c["max_ns"], 1'000'000);
  EXPECT_EQ(c["avg_ns"], 1'000'000);
  EXPECT_FALSE(c.contains("per_thread"));
  const auto& d = doc["functions"][1];
  EXPECT_EQ(d["name"], "deflate");
  EXPECT_EQ(d["module"], "libz.so.1");
  EXPECT_EQ(d["total_ns"], 20'000);

  ASSERT_EQ(doc["threads"].size(), 2u);
  EXPECT_EQ(doc["threads"][1]["tid"], 322);
  EXPECT_EQ(doc["threads"][1]["name"], "worker");
  EXPECT_EQ(doc["threads"][1]["events"], 2);
}

TEST(ProfileReport, JsonPerThreadAndSort) {
  auto p = profile();
  formats::TraceHeader h = header();
  std::vector<std::string> warnings;
  analysis::ReportInput in{h, p, warnings};
  analysis::ReportOptions opt;
  opt.threads = true;
  opt.sort = analysis::SortKey::Name;
  auto doc = nlohmann::json::parse(analysis::render_json(in, opt));
  EXPECT_EQ(doc["functions"][0]["name"], "compute");
  const auto& per = doc["functions"][0]["per_thread"];
  ASSERT_EQ(per.size(), 2u);
  EXPECT_EQ(per[0]["tid"], 321);
  EXPECT_EQ(per[0]["total_ns"], 1'000'000);
  EXPECT_EQ(per[0]["unfinished"], 0);
  EXPECT_EQ(per[1]["tid"], 322);
  EXPECT_EQ(per[1]["unfinished"], 1);
  EXPECT_EQ(per[1]["avg_ns"], 0);  // no call of that thread finished
  EXPECT_EQ(per[1]["total_ns"], 500'000);
}

TEST(ProfileReport, Text) {
  auto p = profile();
  formats::TraceHeader h = header();
  std::vector<std::string> warnings;
  analysis::ReportInput in{h, p, warnings};
  std::string text = analysis::render_text(in, {});
  EXPECT_NE(text.find("Trace of /opt/demo --n 3 (pid 321): 2.00 ms, 6 events, 12 lost"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 (1 unfinished)"), std::string::npos) << text;
  EXPECT_NE(text.find("1.50 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("deflate [libz.so.1]"), std::string::npos) << text;
  EXPECT_EQ(text.find("compute [demo]"), std::string::npos) << text;
  EXPECT_NE(text.find("12 events lost (ring buffer full)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 exits without a recorded entry"), std::string::npos) << text;
  EXPECT_NE(text.find("unfinished: "), std::string::npos) << text;
  EXPECT_LT(text.find("compute"), text.find("deflate"));

  analysis::ReportOptions opt;
  opt.threads = true;
  text = analysis::render_text(in, opt);
  EXPECT_NE(text.find("Thread 321 (demo): 4 events"), std::string::npos) << text;
  EXPECT_NE(text.find("Thread 322 (worker): 2 events"), std::string::npos) << text;
}

TEST(ProfileReport, EmptyProfileSaysSo) {
  analysis::ProfileBuilder b(probes());
  auto p = b.finish(0, {}, {});
  formats::TraceHeader h = header();
  std::vector<std::string> warnings;
  std::string text = analysis::render_text({h, p, warnings}, {});
  EXPECT_NE(text.find("No function calls recorded"), std::string::npos) << text;
}

TEST(ProfileReport, BuildProfileFromFile) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("atrace-test-" + std::to_string(getpid()) + "-report.data"))
                         .string();
  {
    formats::TraceWriter w(path);
    w.write_header(header());
    w.write_probes(probes());
    // Written per thread, not in time order.
    std::vector<formats::Event> t2 = {ev(50'000, 2, EventKind::FuncEntry, 1),
                                      ev(80'000, 2, EventKind::FuncExit, 1)};
    std::vector<formats::Event> t1 = {
        ev(10'000, 1, EventKind::FuncEntry, 1), ev(60'000, 1, EventKind::FuncEntry, 2),
        ev(70'000, 1, EventKind::FuncExit, 2), ev(90'000, 1, EventKind::FuncExit, 1)};
    w.write_events(t2);
    w.write_events(t1);
    w.finish(header(), {}, {});
  }
  formats::TraceReader r(path);
  auto p = analysis::build_profile(r);
  std::filesystem::remove(path);
  EXPECT_EQ(p.events, 6u);
  ASSERT_EQ(p.functions.size(), 2u);
  EXPECT_EQ(p.functions[0].name, "compute");
  EXPECT_EQ(p.functions[0].calls, 2u);
  EXPECT_EQ(p.functions[0].total_ns, 80'000u + 30'000u);
  EXPECT_EQ(p.functions[0].self_ns, 70'000u + 30'000u);
  EXPECT_EQ(p.functions[1].total_ns, 10'000u);
  EXPECT_EQ(analysis::recording_duration_ns(r.header(), p), 2'000'000u);
}

// The table alone (atrace top): report's own table, cut to `max_rows`
// rows after sorting, nothing around it.
TEST(ProfileReport, FunctionTableAloneIsReportsTable) {
  analysis::Profile p = profile();
  const std::vector<std::string> warnings;
  analysis::ReportInput in{header(), p, warnings};
  analysis::ReportOptions opt;
  opt.fields = {analysis::Field::Calls, analysis::Field::Total};
  const std::string all = analysis::render_function_table(in, opt);
  EXPECT_EQ(all,
            "           Calls    Total  Function\n"
            "2 (1 unfinished)  1.50 ms  compute\n"
            "               1  20.0 us  deflate [libz.so.1]\n")
      << all;
  EXPECT_NE(analysis::render_text(in, opt).find(all), std::string::npos);
  opt.sort = analysis::SortKey::Name;
  EXPECT_EQ(analysis::render_function_table(in, opt, 1),
            "           Calls    Total  Function\n"
            "2 (1 unfinished)  1.50 ms  compute\n");
}
