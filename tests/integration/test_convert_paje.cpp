// atrace convert --to=paje on real recordings, read back by pajeng's
// pj_dump (what ViTE's reader accepts too): it reads the file without a
// complaint, and the Function states of each thread container are, per
// function, the report's calls; the Kernel states hold the system calls.
#include <map>
#include <set>
#include <sstream>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

struct State {
  std::string container, type, value;
  double start = 0, end = 0;
};

std::vector<State> pj_dump_states(const std::string& path) {
  Result r = run({"pj_dump", path});
  EXPECT_TRUE(r.exited(0)) << r.describe().substr(0, 3000);
  EXPECT_EQ(r.err, "") << "pj_dump complained";
  std::vector<State> out;
  std::istringstream in(r.out);
  std::string line;
  // State, CONTAINER, TYPE, START, END, DURATION, IMBRICATION, VALUE
  while (std::getline(in, line)) {
    if (line.rfind("State, ", 0) != 0) continue;
    std::vector<std::string> f;
    size_t pos = 0;
    for (int i = 0; i < 7; ++i) {
      size_t comma = line.find(", ", pos);
      if (comma == std::string::npos) break;
      f.push_back(line.substr(pos, comma - pos));
      pos = comma + 2;
    }
    f.push_back(line.substr(pos));  // the value may hold ", " itself
    if (f.size() != 8) {
      ADD_FAILURE() << "unexpected pj_dump line: " << line;
      continue;
    }
    out.push_back(State{f[1], f[2], f[7], std::stod(f[3]), std::stod(f[4])});
  }
  return out;
}

class ConvertPaje : public IntegrationTest {};

TEST_F(ConvertPaje, PjDumpReadsItAndStatesMatchCalls) {
  REQUIRE_TOOL("pj_dump");
  std::string trace = file("k.data"), paje = file("k.paje");
  Result r = record(trace, "sleeper,syscall_caller,getppid_1000,toucher,spinner,worker_job",
                    {Paths::target_kernel, tag_arg()}, {"--kernel=all"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "paje", paje));
  auto states = pj_dump_states(paje);
  ASSERT_FALSE(states.empty());
  std::map<std::string, long long> functions;
  std::map<std::string, std::map<std::string, long long>> by_thread;  // container -> fn -> n
  long long getppid = 0;
  for (const auto& s : states) {
    EXPECT_LE(s.start, s.end);
    if (s.type == "Function") {
      functions[s.value]++;
      by_thread[s.container][s.value]++;
    } else if (s.type == "Kernel" && s.value == "syscall:getppid") {
      ++getppid;
    }
  }
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  for (const auto& f : (*rep)["functions"]) {
    const std::string name = f["name"];
    EXPECT_EQ(functions[name], f["calls"].get<long long>()) << name;
  }
  EXPECT_EQ(functions["getppid_1000"], 1);
  EXPECT_EQ(getppid, 1000);
  // worker_job runs on the thread named kt-worker: its own container.
  bool worker_container = false;
  for (const auto& [container, fns] : by_thread)
    if (container.find("kt-worker") != std::string::npos) {
      worker_container = true;
      EXPECT_EQ(fns.at("worker_job"), 100);
      EXPECT_EQ(fns.count("sleeper"), 0u);
    }
  EXPECT_TRUE(worker_container) << "no container for the kt-worker thread";
}

TEST_F(ConvertPaje, NestedCallsHaveTheirDepth) {
  REQUIRE_TOOL("pj_dump");
  std::string trace = file("c.data"), paje = file("c.paje");
  Result r = record(trace, "leaf,middle,outer", {Paths::target_c, "20", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "paje", paje));
  Result d = run({"pj_dump", paje});
  ASSERT_TRUE(d.exited(0)) << d.describe();
  // The imbrication column: outer at 0, middle at 1, leaf at 2.
  std::map<std::string, std::set<int>> depth;
  std::istringstream in(d.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("State, ", 0) != 0 || line.find(", Function, ") == std::string::npos) continue;
    size_t v = line.rfind(", ");
    size_t i = line.rfind(", ", v - 1);
    depth[line.substr(v + 2)].insert(static_cast<int>(std::stod(line.substr(i + 2, v - i - 2))));
  }
  EXPECT_EQ(depth["outer"], std::set<int>{0});
  EXPECT_EQ(depth["middle"], std::set<int>{1});
  EXPECT_EQ(depth["leaf"], std::set<int>{2});
}

}  // namespace
}  // namespace atrace::it
