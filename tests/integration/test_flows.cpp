// The flow graph (issue 34, docs/flows.md) on real recordings of
// target_pipeline, whose every hand-off is known: N pointers from
// make_record to transform (another thread) and to put_record, N wake-ups
// put_record -> take_record, N/8 pipe writes emit_batch -> read_batch (a
// child process) of 512 bytes, N/8 socket answers answer -> await_answer
// of 8 bytes. And its --isolated form: two thread groups that never talk.
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kN = 400;
constexpr long long kBatches = kN / 8;

std::string target_pipeline() {
  return (std::filesystem::path(Paths::target_kernel).parent_path() / "target_pipeline").string();
}

// (from, to, kind) -> (count, bytes), from the JSON report's `flows`.
using Edges =
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<long long, long long>>;
Edges edges_of(const nlohmann::json& rep) {
  Edges out;
  for (const auto& e : rep["flows"]) {
    auto& v = out[{e["from"].get<std::string>(), e["to"].get<std::string>(),
                   e["kind"].get<std::string>()}];
    v.first += e["count"].get<long long>();
    v.second += e["bytes"].get<long long>();
  }
  return out;
}

std::set<std::string> group(const nlohmann::json& split, size_t i) {
  std::set<std::string> out;
  for (const auto& n : split["groups"][i]) out.insert(n.get<std::string>());
  return out;
}

class Flows : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    trace_ = file("p.data");
    Result r = record(trace_,
                      "make_record,put_record,take_record,transform,emit_batch,await_answer,"
                      "read_batch,answer",
                      {target_pipeline(), std::to_string(kN), tag_arg()},
                      {"--kernel=+net", "--follow-forks", "--filter=off",
                       "--args=put_record,take_record,transform,emit_batch,read_batch@auto",
                       "--retval=make_record/p"});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    ASSERT_NE(r.out.find("records=400 batches=50"), std::string::npos) << r.describe();
  }
  std::string trace_;
};

TEST_F(Flows, EveryKindOfEdgeIsCountedExactly) {
  auto rep = report_json(trace_, {"--flows"});
  ASSERT_TRUE(rep);
  ASSERT_TRUE(rep->contains("flows")) << rep->dump(1);
  const Edges e = edges_of(*rep);
  using K = std::tuple<std::string, std::string, std::string>;
  auto at = [&](const char* from, const char* to, const char* kind) {
    auto it = e.find(K{from, to, kind});
    return it == e.end() ? std::pair<long long, long long>{-1, -1} : it->second;
  };
  // Values: the pointer make_record returned, taken by the two functions
  // that take a record (transform on another thread).
  EXPECT_EQ(at("make_record", "transform", "value").first, kN) << rep->dump(1);
  EXPECT_EQ(at("make_record", "put_record", "value").first, kN);
  // Bytes: each batch is one write and one read of 8 x 64 bytes; each
  // answer 8 bytes.
  EXPECT_EQ(at("emit_batch", "read_batch", "bytes"), std::make_pair(kBatches, kBatches * 512));
  EXPECT_EQ(at("answer", "await_answer", "bytes"), std::make_pair(kBatches, kBatches * 8));
  // Wake-ups: the producer waits until the transformer sleeps before each
  // hand-off, so each wakes it once. The pipe and socket wake their reader
  // only when it already waits: at most once a batch.
  EXPECT_EQ(at("put_record", "take_record", "wakeup").first, kN);
  EXPECT_LE(at("emit_batch", "read_batch", "wakeup").first, kBatches);
  EXPECT_LE(at("answer", "await_answer", "wakeup").first, kBatches);
  // Nothing else: no value, message or wake-up between other functions.
  for (const auto& [k, v] : e) {
    const auto& [from, to, kind] = k;
    if (kind == "wakeup" && ((from == "emit_batch" && to == "read_batch") ||
                             (from == "answer" && to == "await_answer")))
      continue;
    const bool known = k == K{"make_record", "transform", "value"} ||
                       k == K{"make_record", "put_record", "value"} ||
                       k == K{"emit_batch", "read_batch", "bytes"} ||
                       k == K{"answer", "await_answer", "bytes"} ||
                       k == K{"put_record", "take_record", "wakeup"};
    EXPECT_TRUE(known) << from << " -> " << to << " " << kind << ": " << v.first;
  }
  const auto& graph = (*rep)["flow_graph"];
  EXPECT_EQ(graph["level"], "function");
  EXPECT_TRUE(graph["recorded"]["values"]);
  EXPECT_TRUE(graph["recorded"]["bytes"]);
  EXPECT_TRUE(graph["recorded"]["wakeups"]);
}

TEST_F(Flows, ThePipeIsTheCheapestCutBetweenThreads) {
  auto rep = report_json(trace_, {"--flows=thread"});
  ASSERT_TRUE(rep);
  const auto& split = (*rep)["flow_graph"]["split"];
  ASSERT_FALSE(split.is_null()) << rep->dump(1);
  const auto a = group(split, 0), b = group(split, 1);
  auto names = [](const std::set<std::string>& s) {
    std::set<std::string> out;
    for (const auto& n : s) out.insert(n.substr(0, n.find(' ')));
    return out;
  };
  const std::set<std::string> left = {"producer", "transformer"}, right = {"consumer"};
  EXPECT_TRUE((names(a) == left && names(b) == right) || (names(a) == right && names(b) == left))
      << split.dump(1);
  EXPECT_TRUE(split["exact"]);
  // Cut: both directions of the pipe and the socket, and their wake-ups.
  EXPECT_EQ(split["cut_bytes"], kBatches * 512 + kBatches * 8);
  EXPECT_GE(split["cut"].get<long long>(), 2 * kBatches);
  EXPECT_LE(split["cut"].get<long long>(), 4 * kBatches);
}

TEST_F(Flows, ProcessAndHostLevelsAddUp) {
  auto rep = report_json(trace_, {"--flows=process"});
  ASSERT_TRUE(rep);
  long long bytes = 0, values = 0;
  for (const auto& e : (*rep)["flows"]) {
    if (e["kind"] == "bytes" && e["from"] != e["to"]) bytes += e["bytes"].get<long long>();
    if (e["kind"] == "value") values += e["count"].get<long long>();
  }
  EXPECT_EQ(bytes, kBatches * 512 + kBatches * 8) << rep->dump(1);
  EXPECT_EQ(values, 2 * kN);  // both inside the parent process
  Result text = run({Paths::atrace, "report", "-i", trace_, "--flows=host"});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("Flows between hosts"), std::string::npos) << text.out;
}

TEST_F(Flows, TheDotFileIsAcceptedByDot) {
  const std::string dot = file("p.dot");
  ASSERT_TRUE(convert(trace_, "flows-dot", dot));
  const std::string text = read_whole(dot);
  EXPECT_NE(text.find("label=\"50 msgs, 25600 B\""), std::string::npos) << text;
  EXPECT_NE(text.find("label=\"400 values\""), std::string::npos) << text;
  EXPECT_NE(text.find("subgraph cluster_"), std::string::npos) << text;
  if (!tool_present("dot")) {
    EXPECT_FALSE(in_ci()) << "graphviz (dot) is not installed";
    GTEST_SKIP() << "graphviz (dot) is not installed";
  }
  Result r = run({"dot", "-Tsvg", dot, "-o", file("p.svg")});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_TRUE(r.err.empty()) << r.err;  // no warning either
}

TEST_F(Flows, TheCallgrindFileHasTheFlowsAndCallgrindAnnotateReadsIt) {
  const std::string out = file("callgrind.out.p");
  ASSERT_TRUE(convert(trace_, "callgrind", out));
  const std::string text = read_whole(out);
  EXPECT_NE(text.find("events: Time OffCPU SysTime Syscalls Faults Flows FlowBytes"),
            std::string::npos)
      << text;
  // emit_batch -> read_batch: no call, 50 messages and up to 50 wake-ups,
  // 25600 bytes, as the edge of no call KCachegrind draws.
  const size_t at = text.find("cfn=(6) read_batch\ncalls=0 0\n0 0 0 0 0 0 ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, text.find('\n', at + 40) - at);
  EXPECT_NE(line.find(" 25600"), std::string::npos) << line;
  if (!tool_present("callgrind_annotate")) {
    EXPECT_FALSE(in_ci()) << "valgrind (callgrind_annotate) is not installed";
    GTEST_SKIP() << "valgrind (callgrind_annotate) is not installed";
  }
  Result r = run({"callgrind_annotate", "--inclusive=yes", out});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("Events recorded:  Time OffCPU SysTime Syscalls Faults Flows FlowBytes"),
            std::string::npos)
      << r.out;
  // The program's total of FlowBytes: every byte of the pipe and socket.
  EXPECT_NE(r.out.find("26,000 (100.0%)  PROGRAM TOTALS"), std::string::npos) << r.out;
}

TEST_F(Flows, WhatTheGraphCannotHoldIsCountedNotGuessed) {
  // The consumer's thread alone: its reads' sends are outside what is
  // read, so no edge, and every batch is counted as unmatched.
  Result r = run({Paths::atrace, "report", "-i", trace_, "--flows", "--comm=consumer"});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("No flows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not in the graph: " + std::to_string(kBatches) +
                       " received messages whose send is not in the trace"),
            std::string::npos)
      << r.out;
}

class FlowsIsolated : public IntegrationTest {};

TEST_F(FlowsIsolated, TwoGroupsThatNeverTalkAreSplitExactlyThere) {
  const std::string trace = file("i.data");
  Result r = record(trace, "iso_make,iso_put,iso_take,iso_use",
                    {target_pipeline(), std::to_string(kN), "--isolated", tag_arg()},
                    {"--filter=off", "--args=iso_put,iso_use@auto", "--retval=iso_make/p"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(trace, {"--flows=thread"});
  ASSERT_TRUE(rep);
  const auto& split = (*rep)["flow_graph"]["split"];
  ASSERT_FALSE(split.is_null()) << rep->dump(1);
  EXPECT_EQ(split["cut"], 0) << split.dump(1);
  std::set<std::string> a, b;
  for (const auto& n : group(split, 0)) a.insert(n.substr(0, 1));
  for (const auto& n : group(split, 1)) b.insert(n.substr(0, 1));
  EXPECT_EQ(a.size(), 1u) << split.dump(1);
  EXPECT_EQ(b.size(), 1u) << split.dump(1);
  EXPECT_NE(*a.begin(), *b.begin());
  EXPECT_EQ(group(split, 0).size(), 2u);
  EXPECT_EQ(group(split, 1).size(), 2u);
  // Each group's own hand-offs are all there.
  long long wakeups = 0, values = 0;
  for (const auto& e : (*rep)["flows"]) {
    if (e["kind"] == "wakeup") wakeups += e["count"].get<long long>();
    if (e["kind"] == "value") values += e["count"].get<long long>();
  }
  EXPECT_EQ(wakeups, 2 * kN);
  EXPECT_EQ(values, 4 * kN);  // iso_make -> iso_put and -> iso_use, per group
  // The text says which kind was not recorded.
  Result text = run({Paths::atrace, "report", "-i", trace, "--flows"});
  EXPECT_NE(text.out.find("not recorded: bytes"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace atrace::it
