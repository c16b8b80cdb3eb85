// The HTML report's pieces on hand-made traces: the timeline's downsampling
// (the longest spans kept, closed under nesting; every other span's time in
// the busy cells, exactly), the escaping that keeps the data inside its
// <script> element whatever the names, and the page's data against the
// profile it was built from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <random>

#include "analysis/export_timeline.h"
#include "analysis/profile.h"
#include "analysis/timeline_downsample.h"
#include "formats/trace_reader.h"
#include "formats/trace_writer.h"
#include "output/report_html.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace;
using analysis::DownsampledTimeline;
using analysis::KeptSpan;
using analysis::SpanKind;
using formats::EventKind;
using json = nlohmann::json;

namespace {

std::vector<formats::ProbeInfo> probes(uint32_t n = 4) {
  std::vector<formats::ProbeInfo> out;
  for (uint32_t id = 1; id <= n; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = "f" + std::to_string(id);
    p.module = "demo";
    out.push_back(p);
  }
  return out;
}

formats::Event event(uint64_t ts, uint32_t tid, EventKind kind, uint32_t id = 0,
                     uint64_t arg0 = 0) {
  formats::Event e;
  e.ts = ts;
  e.pid = 100;
  e.tid = tid;
  e.id = id;
  e.kind = kind;
  e.arg0 = arg0;
  return e;
}

// Feeds events through a Timeline into a downsampler.
DownsampledTimeline sample(const std::vector<formats::Event>& events, size_t max_spans,
                           uint32_t buckets, uint64_t t0, uint64_t t1, size_t max_cells = 200000) {
  formats::TraceHeader h;
  analysis::TraceNames names(h, probes(), {});
  analysis::DownsampleOptions opt;
  opt.max_spans = max_spans;
  opt.buckets = buckets;
  opt.t0 = t0;
  opt.t1 = t1;
  opt.max_cells = max_cells;
  analysis::TimelineDownsampler sampler(names, opt);
  analysis::Timeline timeline(sampler);
  for (const auto& e : events) timeline.add(e);
  timeline.finish(t1);
  return sampler.finish();
}

uint64_t busy_sum(const DownsampledTimeline& t) {
  uint64_t s = 0;
  for (const auto& c : t.cells) s += c.busy_ns;
  return s;
}
uint64_t cell_spans(const DownsampledTimeline& t) {
  uint64_t s = 0;
  for (const auto& c : t.cells) s += c.spans;
  return s;
}

// One outer call [0, 10000] of f1 with 100 calls of f2 inside, the i-th
// lasting 10 + i ns from 100 i + 1: each of the first 90 within its 100 ns.
std::vector<formats::Event> outer_with_short_calls() {
  std::vector<formats::Event> ev{event(0, 7, EventKind::FuncEntry, 1)};
  for (uint64_t i = 0; i < 100; i++) {
    ev.push_back(event(100 * i + 1, 7, EventKind::FuncEntry, 2));
    ev.push_back(event(100 * i + 1 + 10 + i, 7, EventKind::FuncExit, 2));
  }
  ev.push_back(event(10000, 7, EventKind::FuncExit, 1));
  return ev;
}

TEST(TimelineDownsample, UnderTheCapEverySpanIsKept) {
  DownsampledTimeline t = sample(outer_with_short_calls(), 1000, 100, 0, 10000);
  EXPECT_EQ(t.total_spans, 101u);
  EXPECT_EQ(t.dropped_spans, 0u);
  EXPECT_EQ(t.dropped_below_ns, 0u);
  EXPECT_TRUE(t.cells.empty());
  ASSERT_EQ(t.spans.size(), 101u);
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads[0].tid, 7u);
  EXPECT_EQ(t.threads[0].depth, 2u);
  // Sorted by row, then start: the outer call first (depth 0), then its callees.
  EXPECT_EQ(t.names[t.spans[0].name], "f1");
  EXPECT_EQ(t.spans[0].row.depth, 0u);
  EXPECT_EQ(t.spans[0].dur, 10000u);
  for (size_t i = 1; i < t.spans.size(); i++) {
    EXPECT_EQ(t.names[t.spans[i].name], "f2");
    EXPECT_EQ(t.spans[i].row.depth, 1u);
    EXPECT_EQ(t.spans[i].start, 100 * (i - 1) + 1);
    EXPECT_EQ(t.spans[i].dur, 10 + (i - 1));
  }
}

TEST(TimelineDownsample, KeepsTheLongestAndCountsTheRestInCells) {
  // 11 kept: the outer call and the 10 longest inner ones (the last 10).
  DownsampledTimeline t = sample(outer_with_short_calls(), 11, 100, 0, 10000);
  EXPECT_EQ(t.total_spans, 101u);
  EXPECT_EQ(t.dropped_spans, 90u);
  ASSERT_EQ(t.spans.size(), 11u);
  EXPECT_EQ(t.names[t.spans[0].name], "f1");
  for (size_t i = 1; i < 11; i++) EXPECT_EQ(t.spans[i].dur, 10 + 90 + (i - 1)) << i;
  EXPECT_EQ(t.dropped_below_ns, 100u);  // the shortest kept
  // The dropped ones: durations 10..99, each inside one 100 ns bucket.
  uint64_t dropped_ns = 0;
  for (uint64_t i = 0; i < 90; i++) dropped_ns += 10 + i;
  EXPECT_EQ(busy_sum(t), dropped_ns);
  EXPECT_EQ(cell_spans(t), 90u);
  ASSERT_EQ(t.cells.size(), 90u);
  for (size_t k = 0; k < t.cells.size(); k++) {
    EXPECT_EQ(t.cells[k].bucket, k);
    EXPECT_EQ(t.cells[k].busy_ns, 10 + k);
    EXPECT_EQ(t.cells[k].row.depth, 1u);
    EXPECT_EQ(t.cells[k].row.kind, SpanKind::Function);
  }
}

TEST(TimelineDownsample, EqualDurationsKeepTheCaller) {
  // f1 [0,50] calls f2 [0,50] calls f3 [0,50]: with room for one, the outermost.
  std::vector<formats::Event> ev{
      event(0, 7, EventKind::FuncEntry, 1), event(0, 7, EventKind::FuncEntry, 2),
      event(0, 7, EventKind::FuncEntry, 3), event(50, 7, EventKind::FuncExit, 3),
      event(50, 7, EventKind::FuncExit, 2), event(50, 7, EventKind::FuncExit, 1)};
  DownsampledTimeline t = sample(ev, 1, 10, 0, 100);
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.names[t.spans[0].name], "f1");
  EXPECT_EQ(t.spans[0].row.depth, 0u);
  EXPECT_EQ(t.threads[0].depth, 3u);  // the dropped calls still make rows
  t = sample(ev, 2, 10, 0, 100);
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.names[t.spans[1].name], "f2");
}

TEST(TimelineDownsample, ADroppedSpanIsSpreadOverItsBuckets) {
  // f2 [150, 420] inside f1 [0, 1000], buckets of 100 ns, room for f1 only.
  std::vector<formats::Event> ev{
      event(0, 7, EventKind::FuncEntry, 1), event(150, 7, EventKind::FuncEntry, 2),
      event(420, 7, EventKind::FuncExit, 2), event(1000, 7, EventKind::FuncExit, 1)};
  DownsampledTimeline t = sample(ev, 1, 10, 0, 1000);
  EXPECT_EQ(t.bucket_ns, 100u);
  ASSERT_EQ(t.cells.size(), 4u);
  const uint64_t want[][3] = {{1, 50, 1}, {2, 100, 0}, {3, 100, 0}, {4, 20, 0}};
  for (size_t k = 0; k < 4; k++) {
    EXPECT_EQ(t.cells[k].bucket, want[k][0]);
    EXPECT_EQ(t.cells[k].busy_ns, want[k][1]);
    EXPECT_EQ(t.cells[k].spans, want[k][2]);
  }
}

TEST(TimelineDownsample, KernelRowsAndNoRoomAtAll) {
  // f1 [0,1000]: read() [100,600] blocked off-CPU [200,500], then preempted [700,800].
  std::vector<formats::Event> ev{
      event(0, 7, EventKind::FuncEntry, 1),        event(100, 7, EventKind::SyscallEnter, 0, 0),
      event(200, 7, EventKind::SchedSwitchOut),    event(500, 7, EventKind::SchedSwitchIn),
      event(600, 7, EventKind::SyscallExit, 0, 0), event(700, 7, EventKind::SchedSwitchOut),
      event(800, 7, EventKind::SchedSwitchIn),     event(1000, 7, EventKind::FuncExit, 1)};
  ev[2].flags = 1;  // TASK_INTERRUPTIBLE: blocked
  ev[5].flags = formats::kSwitchRunnable;
  DownsampledTimeline t = sample(ev, 100, 10, 0, 1000);
  ASSERT_EQ(t.spans.size(), 4u);
  EXPECT_TRUE(t.threads[0].syscalls);
  EXPECT_TRUE(t.threads[0].offcpu);
  EXPECT_EQ(t.threads[0].depth, 1u);
  std::map<std::string, KeptSpan> by_name;
  for (const auto& s : t.spans) by_name[t.names[s.name]] = s;
  EXPECT_EQ(by_name["f1"].dur, 1000u);
  EXPECT_EQ(by_name["syscall:read"].row.kind, SpanKind::Syscall);
  EXPECT_EQ(by_name["syscall:read"].dur, 500u);
  EXPECT_EQ(by_name["off-cpu (blocked)"].row.kind, SpanKind::OffCpu);
  EXPECT_EQ(by_name["off-cpu (blocked)"].dur, 300u);
  EXPECT_EQ(by_name["off-cpu (runnable)"].dur, 100u);

  // max_spans 0: everything is a busy cell, nothing is lost.
  t = sample(ev, 0, 10, 0, 1000);
  EXPECT_TRUE(t.spans.empty());
  EXPECT_TRUE(t.names.empty());
  EXPECT_EQ(t.dropped_spans, 4u);
  EXPECT_EQ(busy_sum(t), 1000u + 500 + 300 + 100);
  EXPECT_EQ(cell_spans(t), 4u);
}

TEST(TimelineDownsample, TooManyCellsWidenTheBuckets) {
  // 100 calls of f2, one per 100 ns bucket, none kept: 100 cells; room for
  // 30 makes the buckets 400 ns wide (100 -> 50 -> 25 cells).
  std::vector<formats::Event> ev;
  for (uint64_t i = 0; i < 100; i++) {
    ev.push_back(event(100 * i + 10, 7, EventKind::FuncEntry, 2));
    ev.push_back(event(100 * i + 60, 7, EventKind::FuncExit, 2));
  }
  formats::TraceHeader h;
  analysis::TraceNames names(h, probes(), {});
  analysis::DownsampleOptions opt;
  opt.max_spans = 0;
  opt.buckets = 100;
  opt.max_cells = 30;
  opt.t0 = 0;
  opt.t1 = 10000;
  analysis::TimelineDownsampler sampler(names, opt);
  analysis::Timeline timeline(sampler);
  for (const auto& e : ev) timeline.add(e);
  timeline.finish(opt.t1);
  DownsampledTimeline t = sampler.finish();
  EXPECT_EQ(t.bucket_ns, 400u);
  ASSERT_EQ(t.cells.size(), 25u);
  for (size_t k = 0; k < t.cells.size(); k++) {
    EXPECT_EQ(t.cells[k].bucket, k);
    EXPECT_EQ(t.cells[k].busy_ns, 4 * 50u);
    EXPECT_EQ(t.cells[k].spans, 4u);
  }
}

// Random nested calls on three threads, random caps: the kept spans are the
// longest ones and are closed under nesting (a kept call's caller is kept);
// the busy cells hold the dropped spans' time and count exactly.
TEST(TimelineDownsample, RandomTracesKeepCallersAndAccountForEverything) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 40; round++) {
    std::vector<formats::Event> ev;
    std::map<uint32_t, std::vector<uint32_t>> open;
    uint64_t ts = 1000;
    for (int i = 0; i < 600; i++) {
      ts += rng() % 50;
      uint32_t tid = 1 + static_cast<uint32_t>(rng() % 3);
      auto& stack = open[tid];
      if (!stack.empty() && (stack.size() > 6 || rng() % 2)) {
        ev.push_back(event(ts, tid, EventKind::FuncExit, stack.back()));
        stack.pop_back();
      } else {
        uint32_t id = 1 + static_cast<uint32_t>(rng() % 4);
        ev.push_back(event(ts, tid, EventKind::FuncEntry, id));
        stack.push_back(id);
      }
    }
    const uint64_t t1 = ts + 100;
    DownsampledTimeline all = sample(ev, 100000, 50, 1000, t1);
    ASSERT_EQ(all.dropped_spans, 0u);
    const size_t cap = rng() % (all.spans.size() + 1);
    const size_t max_cells = 1 + rng() % 200;
    DownsampledTimeline t = sample(ev, cap, 50, 1000, t1, max_cells);
    SCOPED_TRACE("round " + std::to_string(round) + " cap " + std::to_string(cap) + " max_cells " +
                 std::to_string(max_cells));
    // Over max_cells only when each row is down to one bucket.
    if (t.cells.size() > max_cells) {
      EXPECT_GE(t.bucket_ns, t1 - 1000);
    }
    EXPECT_EQ(t.total_spans, all.spans.size());
    EXPECT_EQ(t.spans.size(), std::min(cap, all.spans.size()));
    EXPECT_EQ(t.dropped_spans, all.spans.size() - t.spans.size());

    uint64_t kept_ns = 0, all_ns = 0;
    for (const auto& s : t.spans) kept_ns += s.dur;
    for (const auto& s : all.spans) all_ns += s.dur;
    EXPECT_EQ(busy_sum(t), all_ns - kept_ns);
    EXPECT_EQ(cell_spans(t), t.dropped_spans);
    EXPECT_TRUE(std::is_sorted(t.threads.begin(), t.threads.end(),
                               [](const auto& a, const auto& b) { return a.tid < b.tid; }));

    // Every kept call below depth 0 lies inside a kept call one level up.
    for (const auto& s : t.spans) {
      if (s.row.depth == 0) continue;
      bool parent = std::any_of(t.spans.begin(), t.spans.end(), [&](const KeptSpan& p) {
        return p.row.thread == s.row.thread && p.row.depth + 1 == s.row.depth &&
               p.start <= s.start && s.start + s.dur <= p.start + p.dur;
      });
      EXPECT_TRUE(parent) << "a kept call at depth " << s.row.depth << " without its caller";
    }
    // None dropped is longer than the shortest kept.
    if (t.dropped_spans && !t.spans.empty()) {
      uint64_t shortest = UINT64_MAX;
      for (const auto& s : t.spans) shortest = std::min(shortest, s.dur);
      EXPECT_EQ(t.dropped_below_ns, shortest);
      size_t longer = 0;
      for (const auto& s : all.spans) longer += s.dur > shortest;
      EXPECT_LE(longer, t.spans.size());
    }
  }
}

// ---- escaping and the page ---------------------------------------------

const char* kHostile = "a</script><script>alert(1)</script><!-- </SCRIPT >\"\\\n\xff";

std::string extract_blob(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"atrace-data\">";
  size_t a = page.find(open);
  if (a == std::string::npos) return "";
  a += open.size();
  // The first "</script" ends the element, as an HTML parser sees it.
  size_t b = page.find("</script", a);
  return b == std::string::npos ? "" : page.substr(a, b - a);
}

TEST(HtmlEscaping, ScriptSafeJsonParsesBackToTheSameValue) {
  json doc = {{"name", kHostile}, {"list", {"<", "<<!--", "</"}}, {"n", 3}};
  std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  ASSERT_NE(text.find("</script>"), std::string::npos);
  std::string safe = analysis::script_safe(text);
  EXPECT_EQ(safe.find('<'), std::string::npos) << safe;
  EXPECT_EQ(json::parse(safe), json::parse(text));
}

TEST(HtmlEscaping, HostileNamesStayInsideTheDataElement) {
  json doc = {{"name", kHostile}};
  std::string data = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string page = analysis::html_page(data);
  std::string blob = extract_blob(page);
  ASSERT_FALSE(blob.empty());
  EXPECT_EQ(json::parse(blob), json::parse(data));
  // The page loads nothing from anywhere.
  for (const char* ref : {"src=\"http", "href=\"http", "@import", "url(http", "src=\"//"})
    EXPECT_EQ(page.find(ref), std::string::npos) << ref;
  // The script and the style are inside.
  EXPECT_NE(page.find("data-atrace-ready"), std::string::npos);
  EXPECT_NE(page.find("FlameGraph"), std::string::npos);
  EXPECT_NE(page.find(".canvas-box"), std::string::npos);
}

// ---- the data against the profile -----------------------------------------

TEST(HtmlData, FunctionsTreeAndTimelineMatchTheProfile) {
  formats::testing::TempFile file;
  formats::TraceHeader h;
  h.atrace_version = "0.1.0";
  h.target_command = "/bin/demo";
  h.target_pid = 100;
  h.kernel_events = "sched,syscalls";
  h.start_mono_ns = 1000;
  std::vector<formats::ProbeInfo> p = probes();
  p[2].name = kHostile;  // f3
  // Thread 7: f1 [1000, 9000] calls f2 twice ([2000,3000], [4000,6000]) and
  // f3 [7000, 7500]; thread 8: f2 [1500, 2500] with a read() inside.
  std::vector<formats::Event> ev{
      event(1000, 7, EventKind::FuncEntry, 1),       event(1500, 8, EventKind::FuncEntry, 2),
      event(1600, 8, EventKind::SyscallEnter, 0, 0), event(1800, 8, EventKind::SyscallExit, 0, 0),
      event(2000, 7, EventKind::FuncEntry, 2),       event(2500, 8, EventKind::FuncExit, 2),
      event(3000, 7, EventKind::FuncExit, 2),        event(4000, 7, EventKind::FuncEntry, 2),
      event(6000, 7, EventKind::FuncExit, 2),        event(7000, 7, EventKind::FuncEntry, 3),
      event(7500, 7, EventKind::FuncExit, 3),        event(9000, 7, EventKind::FuncExit, 1)};
  {
    formats::TraceWriter w(file.path());
    w.write_header(h);
    w.write_probes(p);
    w.write_events(ev);
    formats::TraceHeader end = h;
    end.end_mono_ns = 10000;
    w.finish(end, {{7, 100, "main", 1000, 9000, 9}, {8, 100, "worker", 1500, 2500, 4}}, {});
  }
  formats::TraceReader reader(file.path());
  // Full names: the hostile name reaches the page whole (its short form
  // would lose the brackets whose escaping is checked here).
  analysis::Profile profile = analysis::build_profile(reader, false, true);
  analysis::ReportInput in{reader.header(), profile, reader.warnings()};
  analysis::ReportOptions opt;
  opt.long_names = true;
  std::string data = analysis::html_report_data(reader, in, opt);
  json d = json::parse(data);

  EXPECT_EQ(d["meta"]["command"], "/bin/demo");
  EXPECT_EQ(d["kernel"], true);
  EXPECT_EQ(d["sort"], "total_ns");
  // f3's name as the page has it: its invalid byte replaced by U+FFFD.
  std::string f3 = kHostile;
  f3.replace(f3.size() - 1, 1, "\xef\xbf\xbd");
  ASSERT_EQ(d["functions"].size(), profile.functions.size());
  for (const auto& f : profile.functions) {
    const std::string name = f.name == kHostile ? f3 : f.name;
    auto row = std::find_if(d["functions"].begin(), d["functions"].end(),
                            [&](const json& r) { return r["name"] == name; });
    ASSERT_NE(row, d["functions"].end()) << f.name;
    EXPECT_EQ((*row)["calls"], f.calls);
    EXPECT_EQ((*row)["total_ns"], f.total_ns);
    EXPECT_EQ((*row)["self_ns"], f.self_ns);
  }

  // Flame graph: all > f1 > {f2, f3}, all > f2 (thread 8's).
  const json& fl = d["flame"];
  const size_t S = fl["stride"];
  std::map<std::string, uint64_t> calls, total;
  for (size_t i = 1; i < fl["nodes"].size() / S; i++) {
    std::string name = fl["names"][fl["nodes"][i * S + 1].get<size_t>()];
    calls[name] += fl["nodes"][i * S + 2].get<uint64_t>();
    total[name] += fl["nodes"][i * S + 3].get<uint64_t>();
  }
  EXPECT_EQ(fl["nodes"][3].get<uint64_t>(), 8000u + 1000);  // root total: f1 + thread 8's f2
  EXPECT_EQ(calls["f1"], 1u);
  EXPECT_EQ(calls["f2"], 3u);
  EXPECT_EQ(total["f2"], 1000u + 2000 + 1000);
  EXPECT_EQ(total[f3], 500u) << fl["names"].dump();

  // Timeline: every call and the read(), nothing dropped, times from t0.
  const json& tl = d["timeline"];
  EXPECT_EQ(tl["t0"], 1000);
  EXPECT_EQ(tl["t1"], 10000);
  EXPECT_EQ(tl["dropped_spans"], 0);
  EXPECT_EQ(tl["total_spans"], 6);
  EXPECT_EQ(tl["spans"].size(), 6u * tl["span_stride"].get<size_t>());
  EXPECT_EQ(tl["threads"].size(), 2u);
  EXPECT_EQ(tl["threads"][0]["name"], "main");
  EXPECT_EQ(tl["threads"][0]["depth"], 2);
  EXPECT_EQ(tl["threads"][1]["syscalls"], true);

  // The page holds the same data, parsed back from inside its element.
  EXPECT_EQ(json::parse(extract_blob(analysis::html_page(data))), d);
}

}  // namespace
