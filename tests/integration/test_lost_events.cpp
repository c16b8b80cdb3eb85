// Issue 18: events lost in a full ring buffer are marked where they were
// lost, per thread (a GAP event), and the replay pairs no call across the
// mark. target_c's call graph is known (outer -> middle -> leaf, nothing
// recursive), so with a 4 KiB ring and 3.2 million events to record, a
// call tree that shows a function under itself, or under a function that
// never calls it, is an exit paired with an unrelated entry.
#include <map>
#include <set>
#include <string>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

using nlohmann::json;

// Who may call whom in target_c (tests/targets/target_c.c). A call with no
// caller may be anything: after a gap the stack starts empty.
const std::map<std::string, std::set<std::string>> kCalls = {
    {"outer", {"middle"}}, {"middle", {"leaf"}}, {"leaf", {}}, {"sleeper", {}}};

// Every parent -> child edge of the JSON tree that target_c cannot have, as
// "parent>child", with its number of calls.
void impossible_edges(const json& node, const std::string& parent,
                      std::map<std::string, long long>& out) {
  for (const auto& c : node["children"]) {
    const std::string name = c.value("name", "");
    if (!parent.empty()) {
      auto allowed = kCalls.find(parent);
      if (allowed == kCalls.end() || !allowed->second.count(base_name(name)))
        out[parent + ">" + base_name(name)] += c.value("calls", 0LL);
    }
    impossible_edges(c, base_name(name), out);
  }
}

class LostEvents : public IntegrationTest {};

TEST_F(LostEvents, AFullRingNeverPairsAnExitWithAnUnrelatedEntry) {
  const std::string out = file("lost.data");
  // 200,000 middle calls: 800,000 calls, 1.6 million events in a 4 KiB
  // ring (128 records): most are lost, in many places.
  Result r = record(out, "leaf,middle,outer,sleeper", {Paths::target_c, "200000", tag_arg()},
                    {"--buffer-size=4k", "--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("leaf=600000"), std::string::npos) << "tracing changed the target";

  auto rep = report_json(out, {"--tree", "--min-pct=0"});
  ASSERT_TRUE(rep);
  ASSERT_TRUE((*rep)["lost_events"].is_number()) << (*rep)["lost_events"];
  const long long lost = (*rep)["lost_events"].get<long long>();
  ASSERT_GT(lost, 0) << "the ring never filled: the test proves nothing";

  ASSERT_EQ((*rep)["tree"]["hidden"], 0) << "every call path is checked";
  std::map<std::string, long long> bad;
  impossible_edges((*rep)["tree"], "", bad);
  EXPECT_TRUE(bad.empty()) << "calls target_c never makes: " << json(bad).dump();

  // The target's thread and its functions are partial.
  ASSERT_EQ((*rep)["threads"].size(), 1u) << (*rep)["threads"].dump();
  EXPECT_TRUE((*rep)["threads"][0]["partial"].get<bool>());
  for (const char* fn : {"leaf", "middle"}) {
    const json* f = find_function(*rep, fn);
    ASSERT_NE(f, nullptr) << fn;
    EXPECT_TRUE((*f)["partial"].get<bool>()) << fn;
  }
  // No call of leaf (a few instructions) stretched over a gap: its maximum
  // is far below the whole run's length.
  const json* leaf = find_function(*rep, "leaf");
  ASSERT_NE(leaf, nullptr);
  const long long span = (*rep)["duration_ns"].get<long long>();
  EXPECT_LT((*leaf)["max_ns"].get<long long>(), span / 4) << leaf->dump();

  // `script` shows each place the thread lost events, one line each, and
  // their counts add up to at most the footer's total (losses still
  // waiting for the thread's next event at the end are only in the total).
  Result s = run({Paths::atrace, "script", "-i", out, "--fields=kind,details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  long long gaps = 0, gap_events = 0;
  for (size_t at = s.out.find("lost:"); at != std::string::npos; at = s.out.find("lost:", at + 1)) {
    gaps++;
    size_t n = s.out.find("events=", at);
    ASSERT_NE(n, std::string::npos);
    gap_events += std::stoll(s.out.substr(n + 7));
  }
  EXPECT_GT(gaps, 0);
  EXPECT_GT(gap_events, 0);
  EXPECT_LE(gap_events, lost);
  RecordProperty("lost_events", std::to_string(lost));
  RecordProperty("gaps", std::to_string(gaps));
  RecordProperty("gap_events", std::to_string(gap_events));
}

}  // namespace
}  // namespace atrace::it
