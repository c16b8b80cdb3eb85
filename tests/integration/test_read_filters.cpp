// The read filters of report, script and convert (docs/filters.md) on a
// recording of target_threads: four threads "worker0".."worker3" that each
// call worker_step() exactly kSteps times from worker_main(), and a main
// thread that calls neither. Every filter is checked against those exact
// counts, in the JSON report, the script lines and a converted file.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kSteps = 300;
constexpr long long kWorkers = 4;

class ReadFilters : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped()) return;
    trace_ = file("threads.data");
    Result r = record(trace_, "worker_step,worker_main",
                      {Paths::target_threads, std::to_string(kSteps), tag_arg()}, {"--filter=off"});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    pid_ = printed_count(r.out, "pid").value_or(-1);
    auto all = report_json(trace_);
    ASSERT_TRUE(all);
    ASSERT_EQ((*all)["lost_events"], 0) << "a trace with losses cannot give exact counts";
    ASSERT_EQ(calls_of(*all, "worker_step"), kWorkers * kSteps);
    for (const auto& t : (*all)["threads"])
      tids_[t["name"].get<std::string>()] = t["tid"].get<long long>();
    for (int i = 0; i < kWorkers; ++i)
      ASSERT_TRUE(tids_.count("worker" + std::to_string(i))) << (*all)["threads"].dump();
  }

  long long tid(int worker) const { return tids_.at("worker" + std::to_string(worker)); }

  // `atrace script` lines with the filter, expected to succeed.
  std::vector<std::string> script(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {Paths::atrace, "script", "-i", trace_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Result r = run(argv);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }

  std::string trace_;
  long long pid_ = -1;
  std::map<std::string, long long> tids_;
};

long long count_with(const std::vector<std::string>& lines, const std::string& needle) {
  return std::count_if(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

TEST_F(ReadFilters, ThreadsByTidPidAndComm) {
  for (int w = 0; w < kWorkers; ++w) {
    auto one = report_json(trace_, {"--tid=" + std::to_string(tid(w))});
    ASSERT_TRUE(one);
    EXPECT_EQ(calls_of(*one, "worker_step"), kSteps) << "worker" << w;
    EXPECT_EQ(calls_of(*one, "worker_main"), 1) << "worker" << w;
    ASSERT_EQ((*one)["threads"].size(), 1u) << (*one)["threads"].dump();
    EXPECT_EQ((*one)["threads"][0]["tid"], tid(w));
  }
  auto two =
      report_json(trace_, {"--tid=" + std::to_string(tid(0)) + "," + std::to_string(tid(3))});
  ASSERT_TRUE(two);
  EXPECT_EQ(calls_of(*two, "worker_step"), 2 * kSteps);

  auto comm = report_json(trace_, {"--comm=worker2"});
  ASSERT_TRUE(comm);
  EXPECT_EQ(calls_of(*comm, "worker_step"), kSteps);
  auto workers = report_json(trace_, {"--comm=worker*"});
  ASSERT_TRUE(workers);
  EXPECT_EQ(calls_of(*workers, "worker_step"), kWorkers * kSteps);
  EXPECT_EQ((*workers)["threads"].size(), static_cast<size_t>(kWorkers));

  auto process = report_json(trace_, {"--pid=" + std::to_string(pid_)});
  ASSERT_TRUE(process);
  EXPECT_EQ(calls_of(*process, "worker_step"), kWorkers * kSteps);
  EXPECT_EQ((*process)["threads"].size(), static_cast<size_t>(kWorkers + 1));

  // script: the same thread's entries, and no line of another thread.
  auto lines =
      script({"--tid=" + std::to_string(tid(1)), "--kind=entry", "-F", "tid,kind,details"});
  EXPECT_EQ(static_cast<long long>(lines.size()), kSteps + 1);  // + worker_main
  EXPECT_EQ(count_with(lines, "worker_step"), kSteps);
  EXPECT_EQ(count_with(lines, std::to_string(tid(1)) + " entry:"), kSteps + 1);

  // convert: folded stacks weighed by calls add up to the thread's calls.
  std::string folded = file("w3.folded");
  Result c = run({Paths::atrace, "convert", "-i", trace_, "--to=folded", "--weight=calls",
                  "--comm=worker3", "-o", folded});
  ASSERT_TRUE(c.exited(0)) << c.describe();
  std::istringstream in(read_whole(folded));
  long long steps = 0;
  for (std::string l; std::getline(in, l);)
    if (l.rfind("worker_main;worker_step ", 0) == 0) steps += std::stoll(l.substr(l.rfind(' ')));
  EXPECT_EQ(steps, kSteps) << read_whole(folded);
}

// --function: the calls of the functions named and what happens inside them.
TEST_F(ReadFilters, FunctionKeepsCallsAndWhatTheyCall) {
  auto mains = report_json(trace_, {"--function=worker_main"});
  ASSERT_TRUE(mains);
  EXPECT_EQ(calls_of(*mains, "worker_main"), kWorkers);
  EXPECT_EQ(calls_of(*mains, "worker_step"), kWorkers * kSteps);  // called inside

  auto steps = report_json(trace_, {"--function=worker_s*"});
  ASSERT_TRUE(steps);
  EXPECT_EQ(calls_of(*steps, "worker_step"), kWorkers * kSteps);
  EXPECT_EQ(find_function(*steps, "worker_main"), nullptr) << function_names(*steps);

  auto lines = script({"--function=worker_step", "-F", "kind,details"});
  EXPECT_EQ(count_with(lines, "entry:"), kWorkers * kSteps);
  EXPECT_EQ(count_with(lines, "exit:"), kWorkers * kSteps);
  EXPECT_EQ(count_with(lines, "worker_main"), 0);
  // --kind narrows what --function kept.
  EXPECT_EQ(static_cast<long long>(script({"--function=worker_step", "--kind=exit"}).size()),
            kWorkers * kSteps);
}

// --time: two ranges that meet at a worker_step entry, 1 ns apart, share
// out every call by its entry: the first counts the calls that began in it
// (the last ones unfinished at its end), the second's exits of calls begun
// before it are orphans, not calls.
TEST_F(ReadFilters, TimeRangesShareOutTheCalls) {
  std::string json = file("all.json");
  ASSERT_TRUE(convert(trace_, "chrome", json));
  auto doc = nlohmann::json::parse(read_whole(json));
  const long long start = doc["otherData"]["start_ns"].get<long long>();
  std::vector<long long> entries;  // ns after the start
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "worker_step")
      entries.push_back(std::llround(e["ts"].get<double>() * 1000.0) - start);
  ASSERT_EQ(static_cast<long long>(entries.size()), kWorkers * kSteps);
  std::sort(entries.begin(), entries.end());
  const long long split = entries[entries.size() / 2];
  const long long before =
      std::upper_bound(entries.begin(), entries.end(), split) - entries.begin();

  auto first = report_json(trace_, {"--time=," + std::to_string(split) + "ns"});
  auto second = report_json(trace_, {"--time=" + std::to_string(split + 1) + "ns,"});
  ASSERT_TRUE(first && second);
  EXPECT_EQ(calls_of(*first, "worker_step"), before);
  EXPECT_EQ(calls_of(*second, "worker_step"), kWorkers * kSteps - before);
  EXPECT_LE(function_field(*first, "worker_step", "unfinished"), kWorkers);

  // Seconds without a unit, and a range from the start to past the end: all.
  auto all = report_json(trace_, {"--time=0,3600"});
  ASSERT_TRUE(all);
  EXPECT_EQ(calls_of(*all, "worker_step"), kWorkers * kSteps);
  auto lines = script({"--time=," + std::to_string(split) + "ns", "--kind=entry", "-F", "details"});
  EXPECT_EQ(count_with(lines, "worker_step"), before);
}

// A filter that selects nothing in the trace, or a malformed one: one line,
// status 2, for each command.
TEST_F(ReadFilters, BadFiltersAreOneLine) {
  const std::vector<std::vector<std::string>> bad = {
      {"--tid=1"},      {"--pid=abc"},       {"--comm=nosuch*"}, {"--function=nosuch"},
      {"--time=2s,1s"}, {"--time=1parsec,"}, {"--time=1,2,3"},
  };
  for (const auto& cmd :
       {std::vector<std::string>{"report"}, {"script"}, {"convert", "--to=csv"}}) {
    for (const auto& b : bad) {
      std::vector<std::string> argv = {Paths::atrace};
      argv.insert(argv.end(), cmd.begin(), cmd.end());
      argv.insert(argv.end(), {"-i", trace_});
      argv.insert(argv.end(), b.begin(), b.end());
      Result r = run(argv);
      EXPECT_TRUE(r.exited(2)) << r.describe();
      expect_one_error_line(r);
    }
  }
  Result k = run({Paths::atrace, "script", "-i", trace_, "--kind=entry,bogus"});
  EXPECT_TRUE(k.exited(2)) << k.describe();
  EXPECT_NE(expect_one_error_line(k).find("'bogus' is not an event kind"), std::string::npos);
  // --kind is script's: report has no such option.
  Result rk = run({Paths::atrace, "report", "-i", trace_, "--kind=entry"});
  EXPECT_TRUE(rk.exited(2)) << rk.describe();
}

}  // namespace
}  // namespace atrace::it
