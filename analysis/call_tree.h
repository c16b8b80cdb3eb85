// The context-sensitive call tree of a trace: one node per distinct call
// path (main > outer > middle), so the same function under two callers is
// two nodes. Each node holds the calls made along its path, their inclusive
// and self time, and what the kernel did during them (off-CPU time, system
// calls, faults: kernel_attribution.h). The `report --tree`, `--callers`,
// `--callees` views and the folded, callgrind and dot exports are built on
// it; so can a flame graph.
//
// Building: a listener on the call replay (call_replay.h), whose rules the
// profile follows too, so that the tree and the per-function report always
// agree: each call the replay closes is added to the node of its path.
// Calls still open at a thread's exit or at the end of the recording count
// as unfinished. Threads are merged into one tree, or (per_thread) each
// thread that made calls gets its own subtree under the root.
//
// Memory: the builder holds the nodes and each thread's open frames, never
// the events: it is bounded by the number of distinct call paths (and the
// deepest stack), not by the length of the trace.
//
// Recursion: a -> a -> a is three nodes on one path, each with its own
// times; the inner ones' time is inside the outer's. A function's total over
// the whole tree therefore counts only its nodes with no ancestor of the same
// function (functions() does this), which is the profile's rule: its
// numbers equal the report's per-function calls, total and self.
//
// Usage:
//   formats::TraceReader reader(path);
//   CallTree tree = build_call_tree(reader);
//   tree.walk([&](uint32_t i, int depth) {
//     const CallNode& n = tree.node(i);
//     std::cout << std::string(depth * 2, ' ') << tree.name(i) << ' ' << n.total_ns << '\n';
//     return true;  // false: skip n's children
//   });
//   tree.path_names(i);  // {"main", "outer", "middle"}
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/call_replay.h"
#include "analysis/kernel_attribution.h"
#include "analysis/profile.h"
#include "formats/trace_types.h"

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

struct CallNode {
  enum class Kind : uint8_t {
    // Root and Thread nodes hold the sums of their children (the top-level
    // calls): calls, unfinished, total_ns, kernel; no self numbers.
    Root,      // node 0: everything recorded
    Thread,    // per_thread trees only: one thread's calls
    Function,  // calls of probe `id` along the path from the root to here
  };
  Kind kind = Kind::Function;
  uint32_t id = 0;      // Function: the probe id (ProbeInfo::id)
  uint32_t tid = 0;     // Thread: the thread id
  uint32_t parent = 0;  // the root's parent is itself
  uint32_t depth = 0;   // the root is 0, its children 1
  uint64_t calls = 0;
  uint64_t unfinished = 0;  // of `calls`: closed at a thread's exit or the end
  uint64_t unwound = 0;     // of `calls`: closed by an Unwind event (call_replay.h)
  uint64_t abandoned = 0;   // of `calls`: left by longjmp (call_replay.h)
  uint64_t switched = 0;    // of `untimed`: open when their thread switched stacks
  uint64_t given_back = 0;  // of `untimed`: return address given back (the fast path)
  uint64_t untimed = 0;     // of `calls`: no duration (past the kernel's nested return probes)
  uint64_t total_ns = 0;    // inclusive
  uint64_t self_ns = 0;     // not inside traced callees
  KernelTimes kernel;       // during the calls, callees included
  KernelTimes self_kernel;  // while this node was the innermost open call
  std::vector<uint32_t> children;  // largest total first, then by name
};

// A function's numbers summed over the tree with the profile's recursion
// rule (see the file comment).
struct FunctionTotals {
  uint32_t id = 0;
  uint64_t calls = 0, unfinished = 0, unwound = 0, total_ns = 0, self_ns = 0;
  KernelTimes kernel, self_kernel;
};

class CallTree {
 public:
  static constexpr uint32_t kRoot = 0;

  size_t size() const { return nodes_.size(); }
  const CallNode& node(uint32_t i) const { return nodes_[i]; }
  const CallNode& root() const { return nodes_[kRoot]; }
  bool per_thread() const { return per_thread_; }
  // The trace recorded kernel events (header.kernel_events): the kernel
  // numbers mean something.
  bool has_kernel() const { return has_kernel_; }
  uint64_t orphan_exits() const { return orphan_exits_; }
  // Calls compensated below zero (CallTreeOptions::compensate), clamped at 0.
  const CompensationResidual& compensation() const { return compensation_; }

  // A Function node's probe name ("<probe N>" if the table lacks it) and
  // module; a Thread node's thread name and ""; the root's "" and "".
  const std::string& name(uint32_t i) const;
  const std::string& module(uint32_t i) const;
  // A Function node's row of the probe table (path, address, ...); nullptr
  // for the root and Thread nodes.
  const formats::ProbeInfo* probe(uint32_t i) const;
  // The module most of the probes come from (the traced program, see
  // report_text.h's main_module): views show other modules' names tagged.
  const std::string& main_module() const { return main_module_; }
  // The names shown (function_names.h): short unless
  // CallTreeOptions::long_names.
  const FunctionNames& names() const { return names_; }
  // The shown name of name(i), tagged " [module]" when outside the main
  // module; a thread "NAME-TID" (or "TID" without a name).
  std::string label(uint32_t i) const;

  // The nodes from the root's child down to i (the root itself excluded).
  std::vector<uint32_t> path(uint32_t i) const;
  // label() of each node of path(i).
  std::vector<std::string> path_names(uint32_t i) const;

  // Depth-first, parents before children, children in their order.
  // visit(index, depth) returns false to skip that node's children. The
  // root is not visited; its children have depth 1.
  template <class Visit>
  void walk(Visit&& visit) const {
    std::vector<uint32_t> todo(root().children.rbegin(), root().children.rend());
    while (!todo.empty()) {
      uint32_t i = todo.back();
      todo.pop_back();
      if (!visit(i, static_cast<int>(nodes_[i].depth))) continue;
      const auto& c = nodes_[i].children;
      todo.insert(todo.end(), c.rbegin(), c.rend());
    }
  }

  // Per-function sums (the report's numbers), one per probe id that was
  // called, in no particular order.
  std::vector<FunctionTotals> functions() const;

 private:
  friend class CallTreeBuilder;
  std::vector<CallNode> nodes_;
  std::unordered_map<uint32_t, formats::ProbeInfo> probes_;
  std::unordered_map<uint32_t, std::string> thread_names_;
  std::string main_module_;
  FunctionNames names_;
  bool per_thread_ = false;
  bool has_kernel_ = false;
  uint64_t orphan_exits_ = 0;
  CompensationResidual compensation_;
};

struct CallTreeOptions {
  bool per_thread = false;  // a subtree per thread instead of all merged
  // Take the probes' cost out of durations, as `report --compensate` does
  // (compensation.h): the costs calibrated when recording (all 0: nothing
  // is taken out).
  ProbeCosts compensate;
  bool long_names = false;  // full demangled names in label() (--long-names)
};

// Grows the tree from the calls of a replay. Alone (its own replay): add()
// events in time order (any mix of threads), then finish() once. On a
// shared replay: construct it with the replay (whose compensation it
// gets: opt.compensate is for its own replay only), feed the replay, call
// replay.finish(), then result() once.
class CallTreeBuilder : public ReplayListener {
 public:
  CallTreeBuilder(const formats::TraceHeader& header, const std::vector<formats::ProbeInfo>& probes,
                  const CallTreeOptions& opt = {});
  CallTreeBuilder(CallReplay& replay, const formats::TraceHeader& header,
                  const std::vector<formats::ProbeInfo>& probes, const CallTreeOptions& opt = {});
  CallTreeBuilder(const CallTreeBuilder&) = delete;  // the replay holds its address
  CallTreeBuilder& operator=(const CallTreeBuilder&) = delete;
  void add(const formats::Event& ev) { own_->add(ev); }
  // Closes open calls at end_ts (or at the last event, if later) and
  // orders the children. Call once.
  CallTree finish(uint64_t end_ts, const std::vector<formats::ThreadInfo>& threads);
  // After the shared replay's finish().
  CallTree result(const std::vector<formats::ThreadInfo>& threads);

  void on_call_begin(const ReplayThread& t, const OpenCall& c) override;
  void on_call_end(const ReplayThread& t, const ClosedCall& c) override;

 private:
  struct ThreadState {
    std::vector<uint32_t> nodes;      // the node of each open call of its stack
    uint32_t base = CallTree::kRoot;  // where its calls hang: root or its Thread node
  };
  CallTreeBuilder(std::unique_ptr<CallReplay> own, CallReplay* shared,
                  const formats::TraceHeader& header, const std::vector<formats::ProbeInfo>& probes,
                  const CallTreeOptions& opt);
  uint32_t child(uint32_t parent, uint32_t id);

  std::unique_ptr<CallReplay> own_;  // alone: its replay
  CallReplay& replay_;
  CallTree tree_;
  formats::TraceHeader header_;  // the main module is the traced command's
  CallTreeOptions opt_;
  // (parent << 32 | probe id) -> child node: finding a call's node is one
  // lookup whatever the number of siblings.
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<ThreadState> threads_;  // by ReplayThread::index
};

// Reads every event of `reader` (from the first) into a tree.
CallTree build_call_tree(formats::TraceReader& reader, const CallTreeOptions& opt = {});

}  // namespace atrace::analysis
