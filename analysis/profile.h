// Per-function profile built from a trace's events: calls, inclusive
// (total) and exclusive (self) time, min/max, unfinished calls, and from the
// kernel events of the same threads the off-CPU time, system calls and page
// faults of each call (kernel_attribution.h) and per thread. The analysis
// every report is built from.
//
// The calls come from the call replay (call_replay.h: its rules for
// mismatched, orphan and unwound exits and unfinished calls). Calls still
// open at a thread's exit or at the end count as calls and as `unfinished`.
// Recursion: total_ns counts only the outermost activation of a function on
// a thread, so it never exceeds wall time; calls, min and max count every
// activation. The inclusive kernel numbers (`kernel`) follow total_ns:
// outermost activation only; the self ones (`self_kernel`) are what
// happened while the function was the innermost open call, in every
// activation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/call_counts.h"
#include "analysis/call_replay.h"
#include "analysis/compensation.h"
#include "analysis/function_names.h"
#include "analysis/kernel_attribution.h"
#include "analysis/message_stats.h"
#include "analysis/syscall_stats.h"
#include "formats/trace_types.h"

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

struct FunctionStats {
  uint32_t id = 0;
  std::string name;
  std::string module;
  uint32_t tid = 0;   // 0 in the all-threads profile
  uint16_t host = 0;  // per_thread rows: the thread's host (Event::host)
  uint64_t calls = 0;
  uint64_t unfinished = 0;
  uint64_t unwound = 0;    // of `calls`: left by an exception or forced unwind (Unwind events)
  uint64_t abandoned = 0;  // of `calls`: left by longjmp, closed where the thread was seen below
  // Of `calls`: no duration, their return could not be seen (past the
  // kernel's 64 nested return probes); total, self, min and max leave them out.
  uint64_t untimed = 0;
  uint64_t switched = 0;    // of `untimed`: open when their thread switched stacks
  uint64_t given_back = 0;  // of `untimed`: return address given back (the fast path)
  uint64_t total_ns = 0;
  uint64_t self_ns = 0;
  uint64_t min_ns = 0;  // of finished calls; 0 when there is none
  uint64_t max_ns = 0;
  KernelTimes kernel;       // inclusive: during the calls, callees included
  KernelTimes self_kernel;  // exclusive: not inside traced callees
  // A relevance filter removed the function's probes while recording, at
  // detached_ns (CLOCK_MONOTONIC; the first decision): the numbers above
  // are partial, counted up to then.
  bool detached = false;
  uint64_t detached_ns = 0;
  // Events were lost (ring buffer full) on a CPU where its thread ran (in
  // the all-threads row: one of its threads): some of its calls may lack
  // their entry or exit, so its numbers may be incomplete.
  bool partial = false;
  // Of the timed calls, those whose end was seen (returned, unwound or
  // abandoned): Min, Avg and Max are theirs alone, as uftrace's are. An
  // unfinished call's duration is only a lower bound (the recording
  // stopped, its thread exited): it counts in Total and Self, never in
  // them (a sleep still running at --duration's end was Min 34 ms).
  uint64_t finished_ns = 0;  // total_ns's part from finished calls
  uint64_t timed_calls() const { return calls - untimed; }
  uint64_t finished_calls() const { return calls - untimed - unfinished; }
  uint64_t avg_ns() const { return finished_calls() ? finished_ns / finished_calls() : 0; }
};

// One relevance-filter decision (a DETACH event): the function whose probes
// were removed, when, by which rule, and the filter's counts until then.
struct DetachedFunction {
  uint32_t id = 0;
  std::string name;
  std::string module;
  uint64_t ts = 0;                                                 // CLOCK_MONOTONIC ns
  formats::DetachReason reason = formats::DetachReason::Absolute;  // may be a value unknown here
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  formats::ProbePath path = formats::ProbePath::Unknown;  // its entry probe's
  uint64_t mean_ns() const { return calls ? total_ns / calls : 0; }
  // The mean the filter judged: net of what the probes add on its path.
  uint64_t net_mean_ns(const formats::ProbeCosts& costs) const {
    const uint64_t floor = costs.floor_of(path);
    return mean_ns() > floor ? mean_ns() - floor : 0;
  }
};

// A USDT probe's hits (Usdt events): how often it fired, and when it had
// a string argument, how often with each value of the first one.
struct ProbeHits {
  uint32_t id = 0;
  std::string provider;  // "app" of "app:request"
  std::string name;      // "request"
  std::string module;
  uint64_t count = 0;
  bool has_values = false;
  std::map<std::string, uint64_t> values;  // first string argument -> hits
};

struct ThreadSummary {
  uint16_t host = 0;  // a merged trace's recording (Event::host)
  uint32_t tid = 0;
  uint32_t pid = 0;
  std::string name;
  uint64_t events = 0;
  // The thread's span in the recording (its first event to its exit, or to
  // the end) minus its off-CPU time; 0 for a thread without events.
  uint64_t oncpu_ns = 0;
  KernelTimes kernel;
  // Events were lost on a CPU it ran on (FunctionStats::partial).
  bool partial = false;
};

// One row of `atrace report --syscalls`: a system call number as issued by
// one function (the innermost traced function open at its entry).
inline constexpr const char* kNoFunction = "(no traced function)";
struct SyscallStats {
  std::string function;  // kNoFunction when no traced function was open
  std::string module;
  uint64_t nr = 0;
  std::string name;  // syscall_name(nr)
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  uint64_t errors = 0;  // returned -4095..-1
  uint64_t avg_ns() const { return count ? total_ns / count : 0; }
};

// One row of the messages table (record --kernel=+net): what one function
// (the innermost traced function open at the send or receive) exchanged
// with one peer over one protocol.
struct MessageStats {
  uint16_t host = 0;     // a merged trace's recording of the thread
  std::string function;  // kNoFunction when no traced function was open
  std::string module;
  std::string protocol;  // formats::to_string(NetProto)
  std::string peer;      // "127.0.0.1:5000", "[::1]:5000", "unix:INODE", "pipe:INODE"
  uint64_t sent = 0, sent_bytes = 0;
  uint64_t received = 0, received_bytes = 0;
  // Matched with their other end (analysis/message_match.h), and the
  // one-way latency of the pairs (MessageCount): none when latencies == 0.
  uint64_t sent_matched = 0, received_matched = 0;
  uint64_t latencies = 0;
  int64_t latency_p50_ns = 0, latency_p99_ns = 0;
};

struct Profile {
  std::vector<FunctionStats> functions;   // all threads merged
  std::vector<FunctionStats> per_thread;  // one row per (tid, function)
  std::vector<ThreadSummary> threads;
  std::vector<SyscallStats> syscalls;      // by total_ns, largest first
  std::vector<MessageStats> messages;      // by bytes (sent + received), largest first
  std::vector<DetachedFunction> detached;  // in time order
  std::vector<ProbeHits> probes;           // USDT probes that fired, most hits first
  uint64_t events = 0;
  uint64_t orphan_exits = 0;  // exits whose entry was not recorded
  uint64_t lost_events = 0;
  // False when the recorder died before counting its losses (no footer):
  // lost_events is then 0 but means "unknown".
  bool lost_known = true;
  uint64_t first_ts = 0, last_ts = 0;
  CompensationResidual compensation;  // --compensate: calls clamped at 0
  // The names its views show (short, from the probe table; the report
  // sets --long-names on it).
  FunctionNames names;
};

// The profile's listener on a call replay (call_replay.h, which has the
// rules for imperfect traces: mismatched and orphan exits, unwinds,
// unfinished calls, recursion, kernel intervals, compensation). DETACH
// events go to Profile.detached and mark the function's rows.
// Profile.functions is sorted by total_ns, largest first; per_thread by host, tid,
// then total_ns, and only made when asked (per_thread_rows()). The builder
// keeps copies of what it needs: the probe vector need not outlive it.
//
// Memory: bounded by what the profile shows, not by the trace's calls nor
// by threads x functions. It holds one CallCounts per function called, one
// bit per (thread, function up to the highest it called) for the rows'
// `partial` marks, and, with per_thread_rows(true) only, one CallCounts per
// (thread, function it called): the rows --threads prints.
//
// Alone (its own replay): add() every event, then finish() once. On a
// shared replay (one pass for several views): construct it with the
// replay, feed the replay, call replay.finish(), then result() once.
class ProfileBuilder : public ReplayListener {
 public:
  explicit ProfileBuilder(const std::vector<formats::ProbeInfo>& probes);
  ProfileBuilder(CallReplay& replay, const std::vector<formats::ProbeInfo>& probes);
  ProfileBuilder(const ProfileBuilder&) = delete;  // the replay holds its address
  ProfileBuilder& operator=(const ProfileBuilder&) = delete;
  // --compensate, own replay only (call before the first add()): each
  // call's duration loses its own probes' inside cost and the whole probe
  // cost of every traced call nested in it (compensation.h). Self times
  // follow. min, max, total and self all use the compensated durations
  // (clamped at 0, counted in Profile::compensation); kernel numbers are
  // unchanged.
  void compensate(const ProbeCosts& costs) { own_->compensate(costs); }
  // --long-names: Profile::names shows the full demangled names.
  void long_names(bool on) { long_names_ = on; }
  // --threads: also Profile::per_thread, a row per (thread, function it
  // called); without it that vector stays empty and nothing is kept per
  // thread but the called bits. Call before the first event.
  void per_thread_rows(bool on) { per_thread_ = on; }
  // The CallCounts held now (all-threads and per-thread ones): what the
  // builder's memory grows with, for tests that it stays bounded.
  size_t counts_held() const { return merged_.size() + thread_rows_.size(); }
  // The recordings of the trace (TraceReader::hosts()): messages pair
  // through loopback and local channels only within one machine.
  void hosts(const std::vector<formats::HostClocks>& hosts) {
    messages_.machines(host_machines(hosts));
  }
  void add(const formats::Event& ev) { own_->add(ev); }
  // end_ts closes unfinished calls (the recording's end); an end_ts before
  // the last event (0: unknown, truncated trace) means the last event's time.
  Profile finish(uint64_t end_ts, const std::vector<formats::ThreadInfo>& threads,
                 const formats::LostCounts& lost);
  // After the shared replay's finish(), once.
  Profile result(const std::vector<formats::ThreadInfo>& threads, const formats::LostCounts& lost);
  // While the replay runs, any number of times (`atrace top`): the
  // functions' rows (merged and per thread) of the calls that ended so far.
  Profile snapshot();

  void on_call_end(const ReplayThread& t, const ClosedCall& c) override;
  void on_syscall(const ClosedSyscall& c) override { syscalls_.add(c); }
  void on_event(const formats::Event& ev, const ReplayThread* t) override;

 private:
  ProfileBuilder(std::unique_ptr<CallReplay> own, CallReplay* shared,
                 const std::vector<formats::ProbeInfo>& probes);
  void function_rows(Profile& p, const formats::LostCounts& lost);
  std::vector<SyscallStats> syscall_rows() const;
  std::vector<MessageStats> message_rows() const;
  void name_attributed(uint64_t key, std::string& function, std::string& module) const;
  void mark_detached(Profile& p);
  void count_probe(const formats::Event& ev);
  std::vector<ProbeHits> probe_rows();

  std::unique_ptr<CallReplay> own_;  // alone: its replay
  CallReplay& replay_;
  std::map<uint32_t, formats::ProbeInfo> probes_;
  bool long_names_ = false;
  bool per_thread_ = false;
  // Slot -> the function's numbers on all threads (calls == 0: never
  // called, no row).
  std::vector<CallCounts> merged_;
  std::vector<uint16_t> slot_host_;  // slot -> its host (merged traces)
  // Thread index -> slot -> whether the thread called it (a row is partial
  // when one of its threads may lack events).
  std::vector<std::vector<bool>> called_;
  // per_thread_rows(true): (thread index << 32 | slot) -> its row in
  // thread_rows_; sparse, so a thread costs only the functions it called.
  struct ThreadRow {
    uint32_t thread = 0, slot = 0;
    CallCounts counts;
  };
  std::unordered_map<uint64_t, uint32_t> thread_row_of_;
  std::vector<ThreadRow> thread_rows_;
  SyscallTable syscalls_;
  MessageTable messages_;
  std::vector<DetachedFunction> detached_;
  std::map<uint32_t, ProbeHits> probe_hits_;
  uint64_t events_ = 0, first_ts_ = 0, last_ts_ = 0;
};

// Orders of report rows (`atrace report --sort=KEY`). The kernel keys sort
// by inclusive numbers: off-CPU time, system call time, system calls, faults.
enum class SortKey {
  Calls,
  Total,
  Self,
  Avg,
  Min,
  Max,
  Name,
  Offcpu,
  SelfOffcpu,
  SysTime,
  SelfSysTime,
  Syscalls,
  Faults
};
// "calls", "total", "self", "avg", "min", "max", "name", "offcpu",
// "selfoff", "systime", "selfsys", "syscalls", "faults"; nullopt otherwise.
std::optional<SortKey> parse_sort_key(std::string_view s);
// The names parse_sort_key takes, ", "-separated (for messages).
const char* sort_key_names();
// Largest first for numbers, alphabetical for names; equal rows by the
// next key of `then`, and at last by name, module.
void sort_functions(std::vector<FunctionStats>& rows, SortKey key,
                    const std::vector<SortKey>& then = {});

// Wall time of the recording: the header's end - start clocks, or from the
// start to the last event when the end is missing (truncated trace).
uint64_t recording_duration_ns(const formats::TraceHeader& h, const Profile& p);

// Reads every event of `reader` (from its first) into a profile, closing
// unfinished calls at the recording's end; `compensate`: with the header's
// calibrated probe costs (none in the file: the plain profile, see
// probe_costs(header).any()).
Profile build_profile(formats::TraceReader& reader, bool compensate = false,
                      bool long_names = false);

}  // namespace atrace::analysis
