#include "analysis/stack_callers.h"

#include <algorithm>

namespace atrace::analysis {

StackCallers::StackCallers(CallReplay& replay, const std::vector<formats::ProbeInfo>& probes,
                           FrameResolver frames)
    : frames_(std::move(frames)) {
  for (const auto& p : probes)
    if (p.kind == formats::ProbeKind::Function) traced_.insert({p.name, p.module});
  replay.listen(*this);
}

// Each address is named once: a caller makes its call from few places.
const StackCallers::Key& StackCallers::caller_at(uint32_t pid, uint64_t address) {
  auto [it, added] = named_.try_emplace({pid, address});
  if (added) {
    StackFrame f = frames_.resolve(pid, address);
    it->second = {f.function, f.module};
  }
  return it->second;
}

void StackCallers::on_event(const formats::Event& ev, const ReplayThread*) {
  if (ev.kind != formats::EventKind::FuncEntry || ev.stack.empty()) return;
  stacks_[ev.id]++;
  // Frame 0 is in the function itself; frame 1 returns into its caller.
  if (ev.stack.size() >= 2) calls_[ev.id][caller_at(ev.pid, ev.stack[1])]++;
}

std::vector<StackCaller> StackCallers::callers_of(uint32_t id) const {
  std::vector<StackCaller> out;
  auto it = calls_.find(id);
  if (it == calls_.end()) return out;
  for (const auto& [key, n] : it->second)
    out.push_back({key.first, key.second, n, traced_.count(key) > 0});
  std::stable_sort(out.begin(), out.end(),
                   [](const StackCaller& a, const StackCaller& b) { return a.calls > b.calls; });
  return out;
}

uint64_t StackCallers::stacks_of(uint32_t id) const {
  auto it = stacks_.find(id);
  return it == stacks_.end() ? 0 : it->second;
}

}  // namespace atrace::analysis
