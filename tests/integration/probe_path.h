// The probe path the integration tests record with. The Safety,
// StackSwitch, Exceptions, OpenAtStop and Placement suites run twice
// (tests/integration/CMakeLists.txt): on the kernel's probes, and with
// ATRACE_TEST_PROBES=fast-path, where every `atrace record` a test starts
// gets --fast-path (docs/fast-path.md) and the same assertions must hold:
// the program's output byte-identical to an untraced run, exact counts.
// A test the fast path cannot pass is left out of the second run by name,
// with the reason, in tests/integration/CMakeLists.txt (one list).
#pragma once

#include <string>
#include <vector>

namespace atrace::it {

// ATRACE_TEST_PROBES=fast-path.
bool fast_path_run();

// `argv` with --fast-path after "record" when it runs atrace record and
// this is the fast-path run; unchanged otherwise.
std::vector<std::string> with_probe_path(std::vector<std::string> argv);

}  // namespace atrace::it
