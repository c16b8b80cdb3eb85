// Who hands data to whom (`atrace report --flows`, docs/flows.md): edges
// between traced functions from what the trace already holds, of three
// kinds, each counted where both ends are inside a traced call:
//
//   value   a value a call of F returned (record --retval) and a later call
//           of G, in any thread of the same process, took as an argument
//           (record --args, F@auto): F -> G per such argument. Only values
//           recorded as pointers or hex (/p, /x, pointer and reference
//           parameters of F@auto), never 0: an integer count equal to an
//           address is not a hand-off. The producer is the last call that
//           returned the value (a pointer malloc gave back twice belongs to
//           the second).
//   bytes   a message (record --kernel=+net: pipes, unix and TCP/UDP
//           sockets) sent inside F and received inside G, paired by
//           analysis/message_match.h (kernel object and offsets, sequence
//           numbers): F -> G, messages and bytes; across the hosts of a
//           merged trace too.
//   wakeup  a SCHED_WAKEUP of G's thread (asleep inside G) by a thread
//           inside F: F -> G, wake-ups and the time G's thread had been
//           asleep (record --kernel sched, on by default).
//
// The ends are kept at the finest grain, (host, pid, tid, function); views
// aggregate them per function, thread, process, module or host
// (flow_view.h). What could not be charged (an end outside every traced
// call, a waker that is not traced, a message whose other end is not in
// the trace) is counted, never guessed.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/call_replay.h"
#include "analysis/message_match.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

enum class FlowKind : uint8_t { Value = 0, Bytes = 1, Wakeup = 2 };
// "value", "bytes", "wakeup": the report's and the JSON's word.
const char* to_string(FlowKind k);

// One end: a traced function (probe id) in one thread.
struct FlowEnd {
  uint16_t host = 0;
  uint32_t pid = 0, tid = 0;
  uint32_t probe = 0;
  auto operator<=>(const FlowEnd&) const = default;
};

struct FlowStats {
  uint64_t count = 0;    // values handed, messages, wake-ups
  uint64_t bytes = 0;    // bytes: the bytes the two ends have in common
  uint64_t wait_ns = 0;  // wakeup: how long the woken thread had slept
};

struct FlowEdge {
  FlowEnd from, to;
  FlowKind kind = FlowKind::Value;
  FlowStats stats;
};

// What the trace showed that no edge holds.
struct FlowLeftOut {
  uint64_t wakeups_untraced = 0;    // waker or wakee outside every traced call
  uint64_t wakeups_unknown = 0;     // waker an interrupt, or a thread not traced
  uint64_t messages_untraced = 0;   // a matched pair with an end outside traced calls
  uint64_t messages_unmatched = 0;  // receives whose send is not in the trace
};

struct FlowGraph {
  std::vector<FlowEdge> edges;  // sorted by (from, to, kind)
  // Calls from one traced function into another on one thread (caller ->
  // callee, count): a call hands its arguments and result too, so the
  // function-level partition counts them (flow_partition.h).
  std::vector<FlowEdge> calls;
  // On-CPU self time per end (self minus self off-CPU): the work a split
  // puts on each side.
  std::map<FlowEnd, uint64_t> work_ns;
  FlowLeftOut left_out;
  // Whether the trace could show each kind at all: values need --args or
  // --retval of pointers, bytes the net group, wake-ups the sched group.
  bool values_recorded = false, bytes_recorded = false, wakeups_recorded = false;
};

// Listens to a call replay (call_replay.h) and builds the graph.
class FlowCollector : public ReplayListener {
 public:
  // `hosts`: TraceReader::hosts() (which hosts share kernel objects);
  // `kernel_events`: the header's groups ("sched,net", ...).
  FlowCollector(CallReplay& replay, const std::vector<formats::HostClocks>& hosts,
                const std::string& kernel_events);

  void on_call_begin(const ReplayThread& t, const OpenCall& c) override;
  void on_call_end(const ReplayThread& t, const ClosedCall& c) override;
  void on_interval_open(const ReplayThread& t, const KernelInterval& i) override;
  void on_interval_close(const ReplayThread& t, const KernelInterval& i,
                         const IntervalClose& c) override;
  void on_event(const formats::Event& ev, const ReplayThread* t) override;

  // After the replay's finish(): pairs the messages and returns the graph.
  FlowGraph result();

 private:
  struct Message {
    MessageEnd end;
    FlowEnd at;
    bool traced = false;  // a traced call was open at it
  };
  static FlowEnd end_of(const ReplayThread& t, uint32_t probe) {
    return {t.host, t.pid, t.tid, probe};
  }
  void add(const FlowEnd& from, const FlowEnd& to, FlowKind kind, uint64_t bytes, uint64_t wait_ns);

  CallReplay& replay_;
  std::vector<uint32_t> machines_;
  std::map<std::tuple<FlowEnd, FlowEnd, FlowKind>, FlowStats> edges_;
  std::map<std::pair<FlowEnd, FlowEnd>, uint64_t> calls_;
  std::map<FlowEnd, uint64_t> work_;
  // (host, pid, value) -> the call that last returned it.
  struct ValueKey {
    uint16_t host;
    uint32_t pid;
    uint64_t value;
    bool operator==(const ValueKey&) const = default;
  };
  struct ValueHash {
    size_t operator()(const ValueKey& k) const {
      return std::hash<uint64_t>()(k.value ^ (uint64_t{k.pid} << 20) ^ (uint64_t{k.host} << 52));
    }
  };
  std::unordered_map<ValueKey, FlowEnd, ValueHash> producers_;
  // Thread (formats::thread_key) -> when its open off-CPU period began.
  std::unordered_map<uint64_t, uint64_t> asleep_since_;
  std::vector<Message> messages_;
  FlowLeftOut left_;
  bool values_ = false, bytes_ = false, wakeups_ = false;
};

}  // namespace atrace::analysis
