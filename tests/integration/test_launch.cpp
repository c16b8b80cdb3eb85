// Launch mode: the command is held before exec while probes are attached,
// so calls from its first instructions on are recorded; atrace waits for it
// and exits with its exit status.
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class Launch : public IntegrationTest {};

TEST_F(Launch, RecordsCallsBeforeMain) {
  std::string out = file("early.data");
  Result r = record(out, "ns::early_init", {Paths::target_cpp, tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // The target confirms the call ran in a global constructor, before main.
  ASSERT_EQ(printed_count(r.out, "early_init_before_main"), 1) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "ns::early_init"), 1) << function_names(*rep);
  EXPECT_EQ(function_field(*rep, "ns::early_init", "unfinished"), 0);
  EXPECT_EQ((*rep)["lost_events"], 0);
}

TEST_F(Launch, PassesExitStatusOn) {
  std::string out = file("exit3.data");
  Result r = record(out, "leaf", {Paths::target_c, "2", "--exit=3", tag_arg()});
  EXPECT_TRUE(r.exited(3)) << "atrace must exit with the target's status\n" << r.describe();
  EXPECT_EQ(printed_count(r.out, "leaf"), 6) << "the target's stdout passes through";
  // A non-zero target status is not a recording failure: the file is whole.
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "leaf"), 6);
}

TEST_F(Launch, PassesArgumentsAndStdoutThrough) {
  std::string out = file("args.data");
  Result r = record(out, "middle", {Paths::target_c, "7", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(printed_count(r.out, "middle"), 7) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "middle"), 7);
}

TEST_F(Launch, DefaultOutputFileIsAtraceData) {
  // No -o: atrace.data in the working directory (here: the temp dir, via sh -c).
  std::string cmd = "cd '" + tmp_->path().string() + "' && exec '" + Paths::atrace +
                    "' record --select=outer -- '" + Paths::target_c + "' 3 " + tag_arg();
  Result r = run({"/bin/sh", "-c", cmd});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(file("atrace.data"));
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "outer"), 1);
}

// -v names each start-up and teardown phase once, in the order they
// happen, with its time (bench/startup.sh reads these lines); the
// recording is the same as without -v.
TEST_F(Launch, VerboseNamesEveryPhase) {
  std::string out = file("phases.data");
  Result r = record(out, "middle", {Paths::target_c, "7", tag_arg()}, {"-v"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const char* phases[] = {"features",    "plan",   "load+verify", "calibration", "attach",
                          "first event", "detach", "write",       "teardown"};
  size_t at = 0;
  for (const char* name : phases) {
    const std::string line = std::string("\natrace: phase ") + name + ": ";
    const size_t found = r.err.find(line, at);
    ASSERT_NE(found, std::string::npos) << "no line for phase " << name << " after the last\n"
                                        << r.err;
    EXPECT_EQ(r.err.find(line, found + 1), std::string::npos) << name << " twice";
    // "12.3 ms" after the name.
    const size_t ms = r.err.find(" ms", found + line.size());
    EXPECT_LT(ms, r.err.find('\n', found + 1)) << name << " without a time";
    at = found + 1;
  }
  // The calibration says where its costs came from.
  EXPECT_TRUE(r.err.find("atrace: phase calibration: ") != std::string::npos &&
              (r.err.find(" ms (cached)\n") != std::string::npos ||
               r.err.find(" ms (measured)\n") != std::string::npos))
      << r.err;
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "middle"), 7);
}

}  // namespace
}  // namespace atrace::it
