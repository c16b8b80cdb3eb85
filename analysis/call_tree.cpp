// CallTreeBuilder: mirrors each thread's stack of open calls (call_replay.h)
// with the tree nodes of their paths; a closed call is added to its node.
#include "analysis/call_tree.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/function_names.h"
#include "formats/trace_reader.h"

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

const formats::ProbeInfo* CallTree::probe(uint32_t i) const {
  const CallNode& n = nodes_[i];
  return n.kind == CallNode::Kind::Function ? &probes_.at(n.id) : nullptr;
}

std::string CallTree::label(uint32_t i) const {
  const CallNode& n = nodes_[i];
  if (n.kind == CallNode::Kind::Thread) {
    const std::string& nm = name(i);
    return nm.empty() ? std::to_string(n.tid) : nm + "-" + std::to_string(n.tid);
  }
  return display_name(names_, name(i), module(i), main_module_);
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

CallTreeBuilder::CallTreeBuilder(const formats::TraceHeader& header,
                                 const std::vector<formats::ProbeInfo>& probes,
                                 const CallTreeOptions& opt)
    : CallTreeBuilder(std::make_unique<CallReplay>(probes), nullptr, header, probes, opt) {
  own_->compensate(opt.compensate);
}

CallTreeBuilder::CallTreeBuilder(CallReplay& replay, const formats::TraceHeader& header,
                                 const std::vector<formats::ProbeInfo>& probes,
                                 const CallTreeOptions& opt)
    : CallTreeBuilder(nullptr, &replay, header, probes, opt) {}

CallTreeBuilder::CallTreeBuilder(std::unique_ptr<CallReplay> own, CallReplay* shared,
                                 const formats::TraceHeader& header,
                                 const std::vector<formats::ProbeInfo>& probes,
                                 const CallTreeOptions& opt)
    : own_(std::move(own)), replay_(own_ ? *own_ : *shared), header_(header), opt_(opt) {
  for (const auto& p : probes) tree_.probes_[p.id] = p;
  tree_.names_ = FunctionNames(probes, opt.long_names);
  tree_.per_thread_ = opt.per_thread;
  tree_.has_kernel_ = !header.kernel_events.empty();
  CallNode root;
  root.kind = CallNode::Kind::Root;
  tree_.nodes_.push_back(root);
  replay_.listen(*this);
}

uint32_t CallTreeBuilder::child(uint32_t parent, uint32_t id) {
  uint64_t key = static_cast<uint64_t>(parent) << 32 | id;
  auto [it, fresh] = index_.try_emplace(key, static_cast<uint32_t>(tree_.nodes_.size()));
  if (fresh) {
    if (!tree_.probes_.count(id)) {  // a damaged file: still a function
      formats::ProbeInfo p;
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

void CallTreeBuilder::on_call_begin(const ReplayThread& rt, const OpenCall& c) {
  if (rt.index >= threads_.size()) threads_.resize(rt.index + 1);
  ThreadState& t = threads_[rt.index];
  if (opt_.per_thread && t.base == CallTree::kRoot) {
    // Its Thread node, made at its first call: threads that called no
    // traced function have none.
    CallNode n;
    n.kind = CallNode::Kind::Thread;
    n.tid = rt.tid;
    n.depth = 1;
    t.base = static_cast<uint32_t>(tree_.nodes_.size());
    tree_.nodes_.push_back(n);
  }
  uint32_t parent = t.nodes.empty() ? t.base : t.nodes.back();
  t.nodes.push_back(child(parent, c.id));
}

void CallTreeBuilder::on_call_end(const ReplayThread& rt, const ClosedCall& c) {
  ThreadState& t = threads_[rt.index];  // its call began: the state exists
  CallNode& n = tree_.nodes_[t.nodes[c.index]];
  t.nodes.erase(t.nodes.begin() + static_cast<std::ptrdiff_t>(c.index));
  n.calls++;
  if (unfinished(c.how)) n.unfinished++;
  if (c.how == CallEnd::Unwound) n.unwound++;
  if (c.how == CallEnd::Abandoned) n.abandoned++;
  if (!timed(c.how)) n.untimed++;
  if (c.untimed == UntimedReason::StackSwitch) n.switched++;
  if (c.untimed == UntimedReason::GivenBack) n.given_back++;
  n.total_ns += c.dur;
  n.self_ns += c.self_ns;
  n.kernel += c.kernel;
  n.self_kernel += c.self_kernel;
}

CallTree CallTreeBuilder::finish(uint64_t end_ts, const std::vector<formats::ThreadInfo>& threads) {
  own_->finish(end_ts);
  return result(threads);
}

CallTree CallTreeBuilder::result(const std::vector<formats::ThreadInfo>& threads) {
  tree_.orphan_exits_ = replay_.orphan_exits();
  tree_.compensation_ = replay_.compensation();
  for (const auto& ti : threads) tree_.thread_names_[ti.tid] = ti.name;
  for (const auto& [key, t] : replay_.threads()) {
    std::string& nm = tree_.thread_names_[t.tid];
    if (nm.empty()) nm = t.comm;
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
      n.abandoned += ch.abandoned;
      n.untimed += ch.untimed;
      n.switched += ch.switched;
      n.given_back += ch.given_back;
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
  return std::move(tree_);
}

CallTree build_call_tree(formats::TraceReader& reader, const CallTreeOptions& opt) {
  CallTreeBuilder b(reader.header(), reader.probes(), opt);
  reader.rewind();
  formats::Event ev;
  while (reader.next(ev)) b.add(ev);
  return b.finish(reader.header().end_mono_ns, reader.threads());
}

}  // namespace atrace::analysis
