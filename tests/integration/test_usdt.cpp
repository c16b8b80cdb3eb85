// USDT probes (issue 6), on the real kernel: target_usdt fires probes of
// include/atrace/probe.h a known number of times with known arguments, in
// its executable and in libtarget_usdt_lib.so; the trace must hold exactly
// those, strings included, intervals as calls, and a probe's semaphore
// must be on in the program only while atrace records.
#include <map>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kMs = 1000 * 1000;
constexpr const char* kAllProbes = "app:*,libtarget_usdt_lib.so:libp:hit";

// One USDT line of `atrace script --fields=kind,details`: "usdt: app:tick
// arg1=5" (a library's probe: "libp:hit [libfoo.so] arg1=5").
struct Hit {
  std::string probe;
  std::vector<std::string> args;  // "5", "-2", "\"/index\""
};

std::vector<Hit> usdt_hits(const std::string& trace) {
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=kind,details"});
  EXPECT_TRUE(s.exited(0)) << s.describe();
  std::vector<Hit> hits;
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind != "usdt:") continue;
    Hit h;
    in >> h.probe;
    for (std::string a; in >> a;) {
      if (a.front() == '[') continue;  // "[libfoo.so]": the module of a library's probe
      size_t eq = a.find('=');
      h.args.push_back(eq == std::string::npos ? a : a.substr(eq + 1));
    }
    hits.push_back(std::move(h));
  }
  return hits;
}

class Usdt : public IntegrationTest {
 protected:
  // Records target_usdt (100 rounds) with `specs`; the trace's path.
  std::string record_usdt(const std::string& specs, const std::vector<std::string>& extra = {}) {
    std::string out = file("u.data");
    std::vector<std::string> args = {"--usdt=" + specs, "--no-kernel"};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = record(out, "", {Paths::target_usdt, "100", tag_arg()}, args);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.out.find("tick=100 request=100 index=60 api=40"), std::string::npos) << r.out;
    return out;
  }
};

TEST_F(Usdt, CountsAndIntegerArgumentsAreExact) {
  auto hits = usdt_hits(record_usdt(kAllProbes));
  std::map<std::string, int> count;
  std::vector<long> ticks, lib;
  for (const auto& h : hits) {
    count[h.probe]++;
    if (h.probe == "app:tick") {
      ASSERT_EQ(h.args.size(), 1u);
      ticks.push_back(std::stol(h.args[0]));
    } else if (h.probe == "app:six") {
      ASSERT_EQ(h.args.size(), 6u);
      EXPECT_EQ(h.args[0], "1");
      EXPECT_EQ(h.args[1], "-2");
      EXPECT_EQ(h.args[2], "3");
      EXPECT_EQ(h.args[3], "-4");
      EXPECT_EQ(h.args[4], "5");
      EXPECT_EQ(std::stol(h.args[5]), count[h.probe] - 1);
    } else if (h.probe == "app:none") {
      EXPECT_TRUE(h.args.empty());
    } else if (h.probe == "app:request") {
      ASSERT_EQ(h.args.size(), 2u);
      EXPECT_TRUE(h.args[1] == "200" || h.args[1] == "-1") << h.args[1];
    } else if (h.probe == "libp:hit") {
      ASSERT_EQ(h.args.size(), 1u);
      lib.push_back(std::stol(h.args[0]));
    }
  }
  EXPECT_EQ(count["app:tick"], 100);
  EXPECT_EQ(count["app:six"], 100);
  EXPECT_EQ(count["app:none"], 100);
  EXPECT_EQ(count["app:request"], 100);
  EXPECT_EQ(count["libp:hit"], 11);
  for (size_t i = 0; i < ticks.size(); i++) EXPECT_EQ(ticks[i], static_cast<long>(i));
  for (size_t i = 0; i < lib.size(); i++) EXPECT_EQ(lib[i], static_cast<long>(i));
  // The interval's probes are not events of their own.
  EXPECT_EQ(count.count("app:phase__begin") + count.count("app:phase"), 0u);
}

// With --follow-forks the probes are in every process that maps the file
// (the programs filter): the one attach helper spells that for each kind
// of link (record/probe_links.h). Multi links used to get pid -1 there,
// which the kernel refused ("Invalid argument").
TEST_F(Usdt, FollowForksCountsAreExact) {
  auto hits = usdt_hits(record_usdt("app:tick,libtarget_usdt_lib.so:libp:hit", {"--follow-forks"}));
  std::map<std::string, int> count;
  for (const auto& h : hits) count[h.probe]++;
  EXPECT_EQ(count["app:tick"], 100);
  EXPECT_EQ(count["libp:hit"], 11);
}

TEST_F(Usdt, StringArgumentsAreExact) {
  std::string trace = record_usdt("app:request(str,int)");
  auto hits = usdt_hits(trace);
  ASSERT_EQ(hits.size(), 100u);
  for (size_t i = 0; i < hits.size(); i++) {
    ASSERT_EQ(hits[i].args.size(), 2u);
    bool index = i % 5 < 3;
    EXPECT_EQ(hits[i].args[0], index ? "\"/index\"" : "\"/api/v1\"") << i;
    EXPECT_EQ(hits[i].args[1], index ? "200" : "-1") << i;
  }
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  ASSERT_EQ((*rep)["probes"].size(), 1u) << rep->dump(1);
  const auto& p = (*rep)["probes"][0];
  EXPECT_EQ(p["provider"], "app");
  EXPECT_EQ(p["name"], "request");
  EXPECT_EQ(p["module"], "target_usdt");
  EXPECT_EQ(p["count"], 100);
  EXPECT_EQ(p["values"], (nlohmann::json{{"/index", 60}, {"/api/v1", 40}}));
  Result text = run({Paths::atrace, "report", "-i", trace});
  EXPECT_NE(text.out.find("USDT probes:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\"/api/v1\""), std::string::npos) << text.out;
}

// The README's example: a glob before the typed spec of one of its probes.
// The typed spec gives request's types; before, the glob won and the
// string printed as a number.
TEST_F(Usdt, TypedSpecWinsOverAnEarlierGlob) {
  std::string trace = record_usdt("app:*,app:request(str,int)");
  auto hits = usdt_hits(trace);
  size_t requests = 0;
  for (const auto& h : hits) {
    if (h.probe != "app:request") continue;
    ASSERT_EQ(h.args.size(), 2u);
    bool index = requests % 5 < 3;
    EXPECT_EQ(h.args[0], index ? "\"/index\"" : "\"/api/v1\"") << requests;
    ++requests;
  }
  EXPECT_EQ(requests, 100u);
}

TEST_F(Usdt, BeginEndPairsAreIntervals) {
  std::string trace = record_usdt("app:phase__*");
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "app:phase"), 3) << function_names(*rep);
  EXPECT_GE(function_field(*rep, "app:phase", "min_ns"), 20 * kMs);
  EXPECT_GE(function_field(*rep, "app:phase", "total_ns"), 3 * 20 * kMs);
  EXPECT_EQ(function_field(*rep, "app:phase", "unfinished"), 0);
  EXPECT_TRUE((*rep)["probes"].empty()) << rep->dump(1);
  Result info = run({Paths::atrace, "info", "-i", trace});
  EXPECT_NE(info.out.find("interval"), std::string::npos) << info.out;
}

TEST_F(Usdt, LibraryProbeByModuleInLaunchedProcess) {
  auto hits = usdt_hits(record_usdt("libtarget_usdt_lib.so:libp:hit"));
  ASSERT_EQ(hits.size(), 11u);
  for (const auto& h : hits) EXPECT_EQ(h.probe, "libp:hit");
}

TEST_F(Usdt, TogetherWithFunctions) {
  std::string out = file("f.data");
  Result r = record(out, "main", {Paths::target_usdt, "100", tag_arg()},
                    {"--usdt=app:tick", "--no-kernel"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "main"), 1);
  ASSERT_EQ((*rep)["probes"].size(), 1u);
  EXPECT_EQ((*rep)["probes"][0]["count"], 100);
}

// The two ways of attaching (docs/usdt.md): uprobe_multi links with
// atrace's own argument specs (the default where the kernel has them) and
// libbpf's perf-event links (--attach=perf) record the same hits with the
// same arguments, strings, negative numbers, a library's probe and the
// intervals included.
TEST_F(Usdt, MultiAndPerfLinksRecordTheSameHits) {
  const std::string specs =
      "app:tick,app:six,app:none,app:request(str,int),app:phase__*,"
      "libtarget_usdt_lib.so:libp:hit";
  auto hits_of = [&](const std::string& trace) {
    std::vector<std::string> v;
    for (const auto& h : usdt_hits(trace)) {
      std::string line = h.probe;
      for (const auto& a : h.args) line += " " + a;
      v.push_back(line);
    }
    return v;
  };
  const std::string multi = record_usdt(specs, {"--attach=multi"});
  const std::string perf = record_usdt(specs, {"--attach=perf"});
  Result info = run({Paths::atrace, "info", "-i", multi});
  auto a = hits_of(multi), b = hits_of(perf);
  EXPECT_EQ(a.size(), 100u * 4 + 11) << info.out;
  EXPECT_EQ(a, b);
  for (const auto& trace : {multi, perf}) {
    auto rep = report_json(trace);
    ASSERT_TRUE(rep);
    EXPECT_EQ(calls_of(*rep, "app:phase"), 3) << trace;
  }
}

TEST_F(Usdt, SpecsThatMatchNothingAreOneError) {
  for (const char* spec :
       {"app:nosuch", "libp:hit", "nosuchlib.so:libp:hit", "app:tick(float)", "app"}) {
    Result r = record(file("bad.data"), "", {Paths::target_usdt, "1", tag_arg()},
                      {std::string("--usdt=") + spec});
    std::string line = expect_one_error_line(r);
    EXPECT_NE(line.find(spec), std::string::npos) << line;
  }
}

// The semaphore is the kernel's count of tracers: the program sees its
// probe on only while atrace records it (-p: the process was running
// before and goes on after).
TEST_F(Usdt, SemaphoreIsOnOnlyWhileRecording) {
  Child target({Paths::target_usdt, "--watch", "3", tag_arg()});
  ASSERT_TRUE(target.wait_for_line("disabled", milliseconds(5000)));
  Result listed =
      run({Paths::atrace, "list", "-p", std::to_string(target.pid()), "--usdt", "app:tick"});
  EXPECT_NE(listed.out.find(" off "), std::string::npos) << listed.out;
  std::string out = file("w.data");
  Child tracer({Paths::atrace, "record", "-p", std::to_string(target.pid()), "-o", out,
                "--usdt=app:tick", "--no-kernel", "--duration=1"});
  EXPECT_TRUE(target.wait_for_line("enabled", milliseconds(5000)));
  // One count per probe site registered: app:tick has two sites, and the
  // program sees it on from the first one (atrace may still be attaching
  // the second: wait for it).
  Result during;
  for (int i = 0; i < 100; i++) {
    during = run({Paths::atrace, "list", "-p", std::to_string(target.pid()), "--usdt", "app:tick"});
    if (during.out.find("on(2)") != std::string::npos) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_NE(during.out.find("on(2)"), std::string::npos) << during.out;
  Result rec = tracer.wait(milliseconds(20000));
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  Result t = target.wait(milliseconds(10000));
  ASSERT_TRUE(t.exited(0)) << t.describe();
  EXPECT_EQ(t.out.substr(0, t.out.find("ticks=")), "disabled\nenabled\ndisabled\n");
  // Every tick fired while on is in the trace, give or take the moments the
  // semaphore and the breakpoint change (not atomically) at each end.
  auto hits = usdt_hits(out);
  EXPECT_GT(hits.size(), 100u);  // ~1 s of a tick every 2 ms
  EXPECT_LT(hits.size(), 1000u);
}

TEST_F(Usdt, ListShowsProbesSemaphoresAndPaths) {
  Result r = run({Paths::atrace, "list", "--usdt", Paths::target_usdt});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  for (const char* p : {"app:tick", "app:six", "app:request", "app:none", "app:phase__begin",
                        "app:phase__end", "libp:hit"})
    EXPECT_NE(r.out.find(p), std::string::npos) << p << "\n" << r.out;
  // app:tick has two sites (main and --watch). The header's probes sit on a
  // 5-byte NOP: the optimized uprobe path.
  EXPECT_NE(r.out.find("8 USDT probe sites: 8 nop5 (optimized uprobe), 8 with a semaphore"),
            std::string::npos)
      << r.out;
}

// Nothing listed is said in one line with a non-zero exit, not shown as an
// empty table (issue 31).
TEST_F(Usdt, ListMatchingNothingSaysSo) {
  Result none = run({Paths::atrace, "list", "--usdt", Paths::target_usdt, "nomatch*"});
  EXPECT_TRUE(none.exited(1)) << none.describe();
  EXPECT_EQ(none.out, "");
  EXPECT_NE(none.err.find("atrace: no USDT probe matches 'nomatch*' in target_usdt or its "),
            std::string::npos)
      << none.err;
  Result plain = run({Paths::atrace, "list", "--usdt", Paths::target_c});
  EXPECT_TRUE(plain.exited(1)) << plain.describe();
  EXPECT_NE(plain.err.find("atrace: no USDT probes in target_c"), std::string::npos) << plain.err;
}

}  // namespace
}  // namespace atrace::it
