// What the integration tests need from the machine and the build: paths of
// atrace and the targets, whether real tracing can run here, temporary
// directories, and ways to look at processes and probes from outside.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace atrace::it {

// Set by tests/integration/CMakeLists.txt.
struct Paths {
  static constexpr const char* atrace = ATRACE_BIN;
  static constexpr const char* demo = ATRACE_DEMO_BIN;
  static constexpr const char* target_c = TARGET_C_BIN;
  static constexpr const char* target_cpp = TARGET_CPP_BIN;
  static constexpr const char* target_threads = TARGET_THREADS_BIN;
  static constexpr const char* target_lib = TARGET_LIB_BIN;
  static constexpr const char* target_kernel = TARGET_KERNEL_BIN;
  static constexpr const char* target_filter = TARGET_FILTER_BIN;
  static constexpr const char* target_filter_nop5 = TARGET_FILTER_NOP5_BIN;
  static constexpr const char* target_filter_singlestep = TARGET_FILTER_SINGLESTEP_BIN;
  static constexpr const char* target_generations = TARGET_GENERATIONS_BIN;
  static constexpr const char* target_detach_scale = TARGET_DETACH_SCALE_BIN;
  static constexpr const char* target_usdt = TARGET_USDT_BIN;
  static constexpr const char* target_args = TARGET_ARGS_BIN;
  static constexpr const char* target_stack = TARGET_STACK_BIN;
  static constexpr const char* target_dwarf = TARGET_DWARF_BIN;
  static constexpr const char* target_safety = TARGET_SAFETY_BIN;
  static constexpr const char* target_limits = TARGET_LIMITS_BIN;
  static constexpr const char* target_cold = TARGET_COLD_BIN;
  // target_c stripped: debuglink/, mini/ (MiniDebugInfo), bare/ (nothing).
  static constexpr const char* stripped = STRIPPED_DIR;
  // tests/integration/safety: the corpus's scripts and inputs.
  static constexpr const char* safety_inputs = SAFETY_INPUTS_DIR;
  static constexpr const char* target_exceptions = TARGET_EXCEPTIONS_BIN;
  static constexpr const char* target_unwind_c = TARGET_UNWIND_C_BIN;
  static constexpr const char* target_placement = TARGET_PLACEMENT_BIN;
  static constexpr const char* target_exceptions_cet = TARGET_EXCEPTIONS_CET_BIN;
  // target_dlopen loads libtarget_plugin.so (not linked to it) with dlopen.
  static constexpr const char* target_dlopen = TARGET_DLOPEN_BIN;
  static constexpr const char* target_plugin = TARGET_PLUGIN_LIB;
  // target_usdt_dlopen loads libtarget_usdt_plugin.so (USDT probes with
  // semaphores) with dlopen.
  static constexpr const char* target_usdt_dlopen = TARGET_USDT_DLOPEN_BIN;
  static constexpr const char* target_usdt_plugin = TARGET_USDT_PLUGIN_LIB;
  // target_lib without RUNPATH: libtarget_shared.so only by LD_LIBRARY_PATH.
  static constexpr const char* target_lib_norunpath = TARGET_LIB_NORUNPATH_BIN;
  static constexpr const char* target_shared = TARGET_SHARED_LIB;
};

// True when the environment variable CI is "true": then a test that cannot
// run must fail instead of being skipped.
bool in_ci();

// Empty when this process can trace (root, uprobe PMU, BTF, bpf() works);
// otherwise why not.
std::string tracing_unavailable_reason();

// ATRACE_KEEP_TMP=1: keep the files of failed tests.
bool keep_requested();

// A fresh directory under $TMPDIR (or /tmp), removed at destruction unless
// keep() was called (a failed test keeps its files for a look when
// ATRACE_KEEP_TMP=1 is set: keep_requested()).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

// A string unique to this test run, passed to targets as --tag=... so the
// test can find (and clean up) its own processes in /proc.
std::string unique_tag();

// Processes whose command line contains `needle` (zombies excluded).
std::vector<pid_t> pids_with_arg(const std::string& needle);
// Kills them (SIGKILL): cleanup after a test that found leftovers.
void kill_pids_with_arg(const std::string& needle);

// The state letter of /proc/PID/stat ('R', 'S', 't', 'T', 'Z', ...), or
// nullopt when there is no such process.
std::optional<char> process_state(pid_t pid);

// `len` bytes of the memory of process `pid` at `addr` (via /proc/PID/mem).
std::optional<std::vector<std::uint8_t>> read_process_memory(pid_t pid, std::uint64_t addr,
                                                             size_t len);

// Lines of the kernel's uprobe_events that name a file of this build's
// targets or demo: uprobes atrace created through tracefs and left behind.
// nullopt when no tracefs is mounted (nothing can be checked then).
std::optional<std::vector<std::string>> leftover_uprobe_events();

// atrace's BPF programs (by name: bpf/*.bpf.c, cut to the kernel's 15
// characters) that no process holds any more: what a recorder killed at a
// bad moment would leak. The kernel frees a dead process's objects a little
// later, so this waits up to `settle` for the list to empty. nullopt when
// `bpftool -j prog show` cannot run.
std::optional<std::vector<std::string>> unheld_atrace_bpf_programs(
    std::chrono::milliseconds settle = std::chrono::milliseconds(2000));

// The value of the first "key=value" line of a target's stdout.
std::optional<std::string> printed_value(const std::string& out, const std::string& key);
// The same, as a decimal count.
std::optional<long> printed_count(const std::string& out, const std::string& key);

}  // namespace atrace::it
