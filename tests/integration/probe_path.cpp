#include "tests/integration/probe_path.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "tests/integration/env.h"

namespace atrace::it {

namespace {

// The tests of the corpus suites the fast path does not pass yet, each with
// the limit that keeps it out (docs/fast-path.md, "What it guarantees, and
// its limits"). Remove a line when its limit goes.
const std::map<std::string, std::string>& left_out() {
  // The ring is in the process's memory: the records written after the
  // last drain go with a process that exits right after its work. These
  // pass once the ring outlives the process (shared with atrace: checked
  // by delaying each program's exit 50 ms with a preloaded destructor).
  static const std::string at_exit =
      "the records written after the last drain go with the exiting process (the ring is in its "
      "memory until it is shared with atrace)";
  static const std::string forks =
      "--follow-forks is refused with --fast-path (each process would need its own ring and "
      "install)";
  static const std::string placement =
      "kernel probe placement (moved probes, perf links): the fast path patches at +0 and refuses "
      "a function with a branch into its first 5 bytes (pl_loop_into_prefix)";
  static const std::string walk =
      "backtrace() through patched frames, launched: 9 of the 10 walks' chains count as stack "
      "switches (not timed) and one stays unfinished, with the stack-walk trampoline of the "
      "unwind work (exact with the earlier unwinder trampoline; not diagnosed yet)";
  static const std::string uretprobe =
      "kernel only: the target waits for the kernel's uretprobe trampoline ([uprobes]) in its own "
      "return address";
  static const std::map<std::string, std::string> list = {
      {"Safety.SetjmpLongjmpAndSigsetjmpSiglongjmp", at_exit},
      {"Safety.GetcontextSwapcontextSetcontext", at_exit},
      {"Safety.BacktraceLeavesEveryReturnProbeWorking", walk},
      {"Safety.StackWalkLeftByLongjmp", walk},
      {"Safety.ColdFragmentsGetNoProbe", at_exit},
      {"StackSwitch.ContextStackInTheCallersFrame", at_exit},
      {"StackSwitch.ContextOnAHeapStack", at_exit},
      {"StackSwitch.PingPongOfTwoContexts", at_exit},
      {"Exceptions.ThrowCatchRethrowNestedAllTraced", at_exit},
      {"Exceptions.ThrowWithPerfLinks", at_exit},
      {"Exceptions.ThrowWithTheCxxRuntimeTraced", at_exit},
      {"Exceptions.ScriptShowsEachUnwoundCall", at_exit},
      {"Exceptions.PthreadCancelInsideTracedFrames", at_exit},
      {"Exceptions.PthreadExitFromTracedDepth", at_exit},
      {"Exceptions.ForcedUnwindsInAProgramWithoutLibgcc", at_exit},
      {"Placement.ExceptionsThroughMovedProbes", at_exit},
      {"Safety.BashScriptUnderLibcFollowingForks", forks},
      {"Safety.VforkAndPosixSpawn", forks},
      {"Safety.ForkReturnsInBothProcesses", forks},
      {"Safety.ForkUnderLibcFollowingForks", forks},
      {"Safety.FollowForksThenPidOnOneFunction", forks},
      {"Safety.BpftraceThenAtraceOnOneFunction",
       "a function with another tool's uprobe on its entry is not patched (one path or the "
       "other)"},
      {"OpenAtStop.AttachDurationThenThrowExitCancel", uretprobe},
      {"OpenAtStop.AttachSigintThenThrowExitCancel", uretprobe},
      {"OpenAtStop.LaunchDurationThenThrowExitCancel", uretprobe},
      {"Placement.CountsExactAndOutputUnchangedWithMovedProbes", placement},
      {"Placement.SameCountsWithEveryProbeAtEntry", placement},
      {"Placement.CountsExactWithPerfLinks", placement},
      {"Placement.FilterDetachesMovedProbes",
       "kernel only: the relevance filters do not judge patched functions (every call is kept)"},
  };
  return list;
}

}  // namespace

bool fast_path_run() {
  const char* v = std::getenv("ATRACE_TEST_PROBES");
  return v && std::strcmp(v, "fast-path") == 0;
}

std::vector<std::string> with_probe_path(std::vector<std::string> argv) {
  if (!fast_path_run() || argv.size() < 2 || argv[0] != Paths::atrace || argv[1] != "record")
    return argv;
  argv.insert(argv.begin() + 2, "--fast-path");
  return argv;
}

std::string fast_path_left_out(const std::string& test) {
  // Runs the whole list anyway: to see which limits are gone.
  if (std::getenv("ATRACE_TEST_FAST_PATH_ALL")) return {};
  auto it = left_out().find(test);
  return it == left_out().end() ? std::string() : it->second;
}

}  // namespace atrace::it
