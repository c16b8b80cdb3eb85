// CallTreeBuilder: per-thread call stacks whose frames point at tree nodes;
// closing a frame adds the call to its node. The stack rules and the kernel
// attribution are those of ProfileBuilder (profile.cpp), so that the tree
// and the per-function report always agree.
#include "userspace/call_tree.h"

#include <algorithm>
#include <map>
#include <set>

#include "formats/trace_reader.h"
#include "userspace/report_text.h"

namespace atrace::analysis {

namespace {
const std::string kEmpty;
constexpr uint32_t kNotAFunction = UINT32_MAX;  // a Thread node on a path
}  // namespace

const std::string& CallTree::name(uint32_t i) const {
  const CallNode& n = nodes_[i];
  if (n.kind == CallNode::Kind::Thread) {
    auto it = thread_names_.find(n.tid);
    return it == thread_names_.end() ? kEmpty : it->second;
  }
  if (n.kind == CallNode::Kind::Root) return kEmpty;
  return probes_.at(n.id).name;
}

const std::string& CallTree::module(uint32_t i) const {
  const CallNode& n = nodes_[i];
  return n.kind == CallNode::Kind::Function ? probes_.at(n.id).module : kEmpty;
}

const fmt::ProbeInfo* CallTree::probe(uint32_t i) const {
  const CallNode& n = nodes_[i];
  return n.kind == CallNode::Kind::Function ? &probes_.at(n.id) : nullptr;
}

std::string CallTree::label(uint32_t i) const {
  const CallNode& n = nodes_[i];
  if (n.kind == CallNode::Kind::Thread) {
    const std::string& nm = name(i);
    return nm.empty() ? std::to_string(n.tid) : nm + "-" + std::to_string(n.tid);
  }
  return display_name(name(i), module(i), main_module_);
}

std::vector<uint32_t> CallTree::path(uint32_t i) const {
  std::vector<uint32_t> out;
  for (; i != kRoot; i = nodes_[i].parent) out.push_back(i);
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> CallTree::path_names(uint32_t i) const {
  std::vector<std::string> out;
  for (uint32_t n : path(i)) out.push_back(label(n));
  return out;
}

std::vector<FunctionTotals> CallTree::functions() const {
  std::unordered_map<uint32_t, FunctionTotals> sums;
  // Open activations of each function on the path being walked: a node
  // counts in its function's total only when it is the outermost.
  std::unordered_map<uint32_t, uint32_t> open;
  std::vector<uint32_t> path_ids;  // the Function nodes' ids from the root down
  walk([&](uint32_t i, int depth) {
    const CallNode& n = nodes_[i];
    // Leave the nodes above this depth that are not its ancestors.
    while (path_ids.size() >= static_cast<size_t>(depth)) {
      open[path_ids.back()]--;
      path_ids.pop_back();
    }
    path_ids.push_back(n.kind == CallNode::Kind::Function ? n.id : kNotAFunction);
    open[path_ids.back()]++;
    if (n.kind != CallNode::Kind::Function) return true;
    FunctionTotals& f = sums[n.id];
    f.id = n.id;
    f.calls += n.calls;
    f.unfinished += n.unfinished;
    f.unwound += n.unwound;
    f.self_ns += n.self_ns;
    f.self_kernel += n.self_kernel;
    if (open[n.id] == 1) {
      f.total_ns += n.total_ns;
      f.kernel += n.kernel;
    }
    return true;
  });
  std::vector<FunctionTotals> out;
  out.reserve(sums.size());
  for (auto& [id, f] : sums) out.push_back(f);
  return out;
}

CallTreeBuilder::CallTreeBuilder(const fmt::TraceHeader& header,
                                 const std::vector<fmt::ProbeInfo>& probes,
                                 const CallTreeOptions& opt)
    : header_(header), opt_(opt) {
  for (const auto& p : probes) tree_.probes_[p.id] = p;
  tree_.per_thread_ = opt.per_thread;
  tree_.has_kernel_ = !header.kernel_events.empty();
  CallNode root;
  root.kind = CallNode::Kind::Root;
  tree_.nodes_.push_back(root);
}

CallTreeBuilder::ThreadState& CallTreeBuilder::thread(uint32_t tid) {
  // Events come in runs of one thread: remember the last one.
  if (last_thread_ && last_tid_ == tid) return *last_thread_;
  auto it = threads_.try_emplace(tid).first;
  last_tid_ = tid;
  last_thread_ = &it->second;  // node-based map: the address stays valid
  return *last_thread_;
}

uint32_t CallTreeBuilder::child(uint32_t parent, uint32_t id) {
  uint64_t key = static_cast<uint64_t>(parent) << 32 | id;
  auto [it, fresh] = index_.try_emplace(key, static_cast<uint32_t>(tree_.nodes_.size()));
  if (fresh) {
    if (!tree_.probes_.count(id)) {  // a damaged file: still a function
      fmt::ProbeInfo p;
      p.id = id;
      p.name = "<probe " + std::to_string(id) + ">";
      tree_.probes_[id] = std::move(p);
    }
    CallNode n;
    n.id = id;
    n.parent = parent;
    n.depth = tree_.nodes_[parent].depth + 1;
    tree_.nodes_.push_back(std::move(n));
  }
  return it->second;
}

void CallTreeBuilder::add(const fmt::Event& ev) {
  last_ts_ = std::max(last_ts_, ev.ts);
  if (ev.kind == fmt::EventKind::Detach) return;  // the recording's, no thread's stack
  switch (ev.kind) {
    case fmt::EventKind::FuncEntry: {
      ThreadState& t = thread(ev.tid);
      if (t.kernel.pending()) user_code(t, ev.ts);
      if (opt_.per_thread && t.base == CallTree::kRoot) {
        // Its Thread node, made at its first call: threads that called no
        // traced function have none.
        CallNode n;
        n.kind = CallNode::Kind::Thread;
        n.tid = ev.tid;
        n.depth = 1;
        t.base = static_cast<uint32_t>(tree_.nodes_.size());
        tree_.nodes_.push_back(n);
      }
      uint32_t parent = t.stack.empty() ? t.base : t.stack.back().node;
      t.stack.push_back(Frame{child(parent, ev.id), ev.ts, 0, t.kernel.totals()});
      break;
    }
    case fmt::EventKind::FuncExit: {
      ThreadState& t = thread(ev.tid);
      if (t.kernel.pending()) user_code(t, ev.ts);
      auto match = std::find_if(t.stack.rbegin(), t.stack.rend(), [&](const Frame& f) {
        return tree_.nodes_[f.node].id == ev.id;
      });
      if (match == t.stack.rend()) {
        tree_.orphan_exits_++;  // its entry happened before the recording started
        break;
      }
      // Frames above the match lost their exits (longjmp, exception).
      size_t depth = t.stack.size() - static_cast<size_t>(match - t.stack.rbegin());
      while (t.stack.size() >= depth) close_frame(t, ev.ts, End::Returned);
      break;
    }
    case fmt::EventKind::Unwind: {
      // The innermost open call of the function, wherever it is (profile.h).
      ThreadState& t = thread(ev.tid);
      if (t.kernel.pending()) user_code(t, ev.ts);
      auto match = std::find_if(t.stack.rbegin(), t.stack.rend(), [&](const Frame& f) {
        return tree_.nodes_[f.node].id == ev.id;
      });
      if (match != t.stack.rend())
        close_frame_at(t, t.stack.size() - 1 - static_cast<size_t>(match - t.stack.rbegin()), ev.ts,
                       End::Unwound);
      break;
    }
    case fmt::EventKind::ThreadExit: {
      ThreadState& t = thread(ev.tid);
      // Its open system call (exit) first: it belongs to the open frames.
      KernelTimes before = t.kernel.totals();
      t.kernel.exit(ev.ts);
      add_self_kernel(t, before);
      while (!t.stack.empty()) close_frame(t, ev.ts, End::Unfinished);
      break;
    }
    default:
      if (fmt::is_kernel_kind(ev.kind)) kernel_event(thread(ev.tid), ev);
      break;  // USDT, newer kinds: no call stack and no kernel interval
  }
}

// The kernel events move the thread's running totals (read by frames at
// entry and exit) and the innermost open call's self numbers, as in
// ProfileBuilder::add_kernel.
void CallTreeBuilder::kernel_event(ThreadState& t, const fmt::Event& ev) {
  KernelTracker& k = t.kernel;
  KernelTimes before = k.totals();
  switch (ev.kind) {
    case fmt::EventKind::SchedSwitchOut: k.switch_out(ev.ts, ev.flags); break;
    case fmt::EventKind::SchedSwitchIn: k.switch_in(ev.ts); break;
    case fmt::EventKind::SyscallEnter: k.syscall_enter(ev.ts, ev.arg0, 0); break;
    case fmt::EventKind::SyscallExit: k.syscall_exit(ev.ts, ev.arg0, ev.sarg1()); break;
    case fmt::EventKind::PageFault: k.fault(ev.ts); break;
    case fmt::EventKind::ProcExit: k.exit(ev.ts); break;
    case fmt::EventKind::Comm: t.comm = ev.text; break;
    default: break;  // wake-ups, migrations, fork, exec: nothing to attribute
  }
  add_self_kernel(t, before);
}

// A function event found an interval open: its closing event was lost.
void CallTreeBuilder::user_code(ThreadState& t, uint64_t ts) {
  KernelTimes before = t.kernel.totals();
  t.kernel.user_code(ts);
  add_self_kernel(t, before);
}

// No call enters or exits while an interval is open
// (kernel_attribution.h): what the totals gained since `before` is the
// innermost open call's own.
void CallTreeBuilder::add_self_kernel(ThreadState& t, const KernelTimes& before) {
  if (t.stack.empty()) return;
  tree_.nodes_[t.stack.back().node].self_kernel += t.kernel.totals() - before;
}

CallTreeBuilder::ProbeCost CallTreeBuilder::probe_cost(uint32_t id) {
  auto [it, fresh] = cost_.try_emplace(id, ProbeCost{0, 0});
  if (fresh) {
    auto probe = tree_.probes_.find(id);
    if (probe != tree_.probes_.end())
      it->second = {opt_.compensate.of(probe->second.path_kind),
                    opt_.compensate.inside_of(probe->second.path_kind)};
  }
  return it->second;
}

// Takes frame `index` of `t` off its stack (the innermost one but for an
// unwound call) and adds it to its node as ending at `ts`.
void CallTreeBuilder::close_frame_at(ThreadState& t, size_t index, uint64_t ts, End end) {
  Frame f = t.stack[index];
  t.stack.erase(t.stack.begin() + static_cast<std::ptrdiff_t>(index));
  Frame* caller = index > 0 ? &t.stack[index - 1] : nullptr;
  uint64_t dur = ts > f.start ? ts - f.start : 0;
  CallNode& n = tree_.nodes_[f.node];
  if (opt_.compensate.any()) {
    const ProbeCost c = probe_cost(n.id);
    if (caller) caller->nested_cost += f.nested_cost + c.whole;
    dur = compensate_duration(dur, c.inside, f.nested_cost, tree_.compensation_);
  }
  n.calls++;
  if (end == End::Unfinished) n.unfinished++;
  if (end == End::Unwound) n.unwound++;
  n.total_ns += dur;
  // Callee times exceed ours only with inconsistent timestamps: clamp.
  n.self_ns += dur > f.child_ns ? dur - f.child_ns : 0;
  n.kernel += t.kernel.totals() - f.kernel_at_entry;
  if (caller) caller->child_ns += dur;
}

CallTree CallTreeBuilder::finish(uint64_t end_ts, const std::vector<fmt::ThreadInfo>& threads) {
  uint64_t end = std::max(end_ts, last_ts_);
  std::map<uint32_t, ThreadState*> ordered;  // the same order on every run
  for (auto& [tid, t] : threads_) ordered[tid] = &t;
  for (auto& [tid, t] : ordered) {
    KernelTimes before = t->kernel.totals();
    t->kernel.finish(end);
    add_self_kernel(*t, before);
    while (!t->stack.empty()) close_frame(*t, end, End::Unfinished);
  }

  for (const auto& ti : threads) tree_.thread_names_[ti.tid] = ti.name;
  for (const auto& [tid, t] : ordered) {
    std::string& nm = tree_.thread_names_[tid];
    if (nm.empty()) nm = t->comm;
  }

  auto& nodes = tree_.nodes_;
  for (uint32_t i = 1; i < nodes.size(); ++i) nodes[nodes[i].parent].children.push_back(i);
  // Containers (root, threads) sum their children; children were created
  // after their parents, so a backwards pass sees every child first.
  for (uint32_t i = static_cast<uint32_t>(nodes.size()); i-- > 0;) {
    CallNode& n = nodes[i];
    if (n.kind == CallNode::Kind::Function) continue;
    for (uint32_t c : n.children) {
      const CallNode& ch = nodes[c];
      n.calls += ch.calls;
      n.unfinished += ch.unfinished;
      n.unwound += ch.unwound;
      n.total_ns += ch.total_ns;
      n.kernel += ch.kernel;
    }
  }
  std::set<uint32_t> called;
  for (const auto& n : nodes)
    if (n.kind == CallNode::Kind::Function) called.insert(n.id);
  std::vector<std::string> modules;
  for (uint32_t id : called) modules.push_back(tree_.probes_[id].module);
  tree_.main_module_ = analysis::main_module(header_, modules);

  for (auto& n : nodes) {
    std::sort(n.children.begin(), n.children.end(), [&](uint32_t a, uint32_t b) {
      if (nodes[a].total_ns != nodes[b].total_ns) return nodes[a].total_ns > nodes[b].total_ns;
      if (nodes[a].tid != nodes[b].tid) return nodes[a].tid < nodes[b].tid;
      if (tree_.name(a) != tree_.name(b)) return tree_.name(a) < tree_.name(b);
      return nodes[a].id < nodes[b].id;
    });
  }
  threads_.clear();
  last_thread_ = nullptr;
  return std::move(tree_);
}

CallTree build_call_tree(fmt::TraceReader& reader, const CallTreeOptions& opt) {
  CallTreeBuilder b(reader.header(), reader.probes(), opt);
  reader.rewind();
  fmt::Event ev;
  while (reader.next(ev)) b.add(ev);
  return b.finish(reader.header().end_mono_ns, reader.threads());
}

}  // namespace atrace::analysis
