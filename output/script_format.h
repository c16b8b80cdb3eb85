// `atrace script`: one line of text per event, in the spirit of perf script
// (the format, field by field, is in docs/script.md):
//
//             demo    4242 [001]  1234.000001000: entry:        compute(int)
//
//   ScriptField          a column: comm, tid, pid, cpu, time, kind, details
//   parse_script_fields  "--fields=" text -> columns (perf's +f/-f edits too)
//   ScriptFormatter      event -> line; keeps what a line needs from earlier
//                        events (thread names, pending system calls), and
//                        listens to a call replay (call_replay.h) for the
//                        call stacks: indentation and durations
//
// The formatter holds per-thread state only, never the events: the command
// streams a file of any size through it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/analysis.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

// In the order edits of the default list (+pid) keep them.
enum class ScriptField : uint8_t { Comm, Tid, Pid, Cpu, Time, Kind, Details };

// comm, tid, cpu, time, kind, details: perf script's default columns.
std::vector<ScriptField> default_script_fields();

// "comm,tid,time" picks and orders columns; "+pid" or "-cpu,-comm" (every
// item signed) edits the default list. On a bad list returns nullopt and sets
// `error` to one line naming the culprit and the known fields.
std::optional<std::vector<ScriptField>> parse_script_fields(std::string_view spec,
                                                            std::string& error);
// "comm, tid, pid, ...": the fields parse_script_fields knows.
std::string script_field_names();

// Deeper calls are indented as at this depth: a trace with lost exits must
// not make every later line longer.
constexpr size_t kMaxIndentDepth = 64;

class ScriptFormatter : private ReplayListener {
 public:
  // The tables are copied: they need not outlive the formatter.
  ScriptFormatter(const formats::TraceHeader& header, const std::vector<formats::ProbeInfo>& probes,
                  const std::vector<formats::ThreadInfo>& threads,
                  std::vector<ScriptField> fields = default_script_fields());

  // The trace's process table (TraceReader::processes): a forked process
  // is named with its pid in its own namespace too.
  void set_processes(const std::vector<formats::ProcessInfo>& processes);
  // A merged trace's recordings (TraceReader::hosts()): with more than one,
  // every line starts with its host (host_labels, process_text.h), padded
  // to the longest, so the same pid on two hosts is told apart. One host:
  // lines as they were.
  void set_hosts(const std::vector<formats::HostClocks>& hosts);
  // "# pid 14235 (1 in its namespace), cgroup ..., container ...\n" for
  // each process of the threads given that the table says more about than
  // its host pid (process_text.h), written before the first event; "" when
  // none.
  std::string preamble() const;

  // Appends the line of `ev` (ending in '\n') to `out`. Events are expected
  // in time order per thread, as TraceReader::next gives them.
  void format(const formats::Event& ev, std::string& out);
  // --color: the kind column in colour (calls green, system calls yellow,
  // faults red, scheduling blue, the rest magenta); widths unchanged.
  void color(bool on) { color_ = on; }
  // What names the code at a fault's ip (the caller knows the modules and
  // reads their symbols): " leaf+0x10 (target_c)", or "" when it cannot.
  using CodeNamer = std::function<std::string(const formats::Event& fault)>;
  void name_code(CodeNamer namer) { name_code_ = std::move(namer); }

 private:
  bool color_ = false;
  CodeNamer name_code_;
  struct Thread {
    std::string comm;
    bool in_syscall = false;  // entered syscall_nr at syscall_ts, not yet left
    uint64_t syscall_nr = 0;
    uint64_t syscall_ts = 0;
  };
  struct Function {
    std::string name;                    // with " [module]" when not the main module's
    size_t bare = 0;                     // the length of the name without that tag
    std::vector<std::string> arg_names;  // ProbeInfo::arg_names
  };

  Thread& thread(const formats::Event& ev);
  const std::string& function(uint32_t id);
  const std::string& syscall(uint64_t nr);
  void details(const formats::Event& ev, Thread& t, std::string& out);
  void function_details(const formats::Event& ev, std::string& out);
  void syscall_exit_details(const formats::Event& ev, Thread& t, std::string& out);
  void usdt_details(const formats::Event& ev, std::string& out);
  void module_details(const formats::Event& ev, std::string& out);
  void message_details(const formats::Event& ev, std::string& out);
  void on_call_end(const ReplayThread& t, const ClosedCall& c) override;
  void on_event(const formats::Event& ev, const ReplayThread* t) override;
  void detach_details(const formats::Event& ev, std::string& out);

  CallReplay replay_;
  // What the replay said about the event being formatted: the depth of the
  // call it began or ended (the thread's depth otherwise), when that call
  // began, and how many calls a thread's exit left unfinished.
  size_t depth_ = 0;
  std::optional<uint64_t> call_start_;
  bool ended_ = false;  // the event being formatted ended a call
  uint64_t unfinished_ = 0;
  std::vector<ScriptField> fields_;
  std::unordered_map<uint32_t, Function> functions_;
  std::unordered_map<uint64_t, std::string> table_names_;    // thread_key -> name in the file
  std::vector<formats::ProcessInfo> processes_;              // set_processes
  std::unordered_set<uint32_t> pids_;                        // of the threads given
  std::unordered_map<uint64_t, Thread> threads_;             // by thread_key
  std::unordered_map<uint64_t, std::string> syscall_names_;  // cache: names are built
  uint64_t last_tid_ = 0;                                    // thread_key
  Thread* last_thread_ = nullptr;
  std::vector<std::string> host_names_;  // set_hosts: empty for one host
  size_t host_width_ = 0;
  std::string details_;  // scratch, reused so a line costs no allocation
};

}  // namespace atrace::analysis
