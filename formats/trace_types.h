// The in-memory vocabulary of a trace: what the writer takes and the reader
// gives back. Independent of BPF and of the on-disk encoding, so the file
// format can change (issue: compact format) without touching the recorder or
// the reports.
//
//   EventKind      what happened (function entry/exit, thread exit, ...)
//   Event          one timestamped event of one thread
//   ProbeKind      how a probe was placed (uprobe entry+return, ...)
//   ProbeInfo      one row of the probe table: id -> name, module, address
//   ThreadInfo     one row of the thread table: tid -> name, first/last seen
//   TraceHeader    who/what/when was recorded
//   LostCounts     events the kernel could not hand over, per CPU
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace atrace::fmt {

enum class EventKind : uint8_t {
  FuncEntry = 1,
  FuncExit = 2,
  ThreadExit = 3,
};

struct Event {
  uint64_t ts = 0;  // CLOCK_MONOTONIC ns
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t id = 0;  // probe id for FuncEntry/FuncExit, 0 otherwise
  uint16_t cpu = 0;
  EventKind kind = EventKind::FuncEntry;
};

enum class ProbeKind : uint8_t {
  Function = 1,  // entry uprobe + uretprobe
};

// Which way the kernel runs the entry probe: the main factor of its cost.
enum class ProbePath : uint8_t {
  Unknown = 0,
  SingleStep = 1,  // instruction copied out of line and single-stepped
  Emulated = 2,    // kernel emulates the instruction (push, 1-byte nop, ...)
  Nop5 = 3,        // 5-byte NOP: optimized uprobe (call to trampoline)
  Refused = 4,     // the kernel will not probe this instruction (never attached)
};

struct ProbeInfo {
  uint32_t id = 0;
  ProbeKind kind = ProbeKind::Function;
  std::string name;    // demangled
  std::string module;  // file name of the module (e.g. "libc.so.6", "demo")
  std::string path;    // full path of the module
  uint64_t address = 0;  // ELF virtual address (st_value) in the module
  uint64_t offset = 0;   // file offset where the uprobe sits
  ProbePath path_kind = ProbePath::Unknown;
  std::string build_id;  // GNU build-id of the module, lowercase hex; empty if none
};

struct ThreadInfo {
  uint32_t tid = 0;
  uint32_t pid = 0;
  std::string name;
  uint64_t first_ts = 0;
  uint64_t last_ts = 0;
  uint64_t events = 0;
};

struct TraceHeader {
  std::string atrace_version;
  std::string command_line;  // atrace's own command line
  std::string target_command;  // the traced program's command line
  uint32_t target_pid = 0;
  std::string host;
  std::string kernel;
  uint32_t clock_id = 1;  // CLOCK_MONOTONIC
  uint64_t start_mono_ns = 0, start_real_ns = 0;
  uint64_t end_mono_ns = 0, end_real_ns = 0;
};

struct LostCounts {
  std::vector<uint64_t> per_cpu;  // index = CPU
  uint64_t total() const {
    uint64_t t = 0;
    for (auto v : per_cpu) t += v;
    return t;
  }
};

const char* to_string(EventKind k);
const char* to_string(ProbePath p);

}  // namespace atrace::fmt
