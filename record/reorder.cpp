#include "record/reorder.h"

#include <algorithm>
#include <utility>

namespace atrace {

void Reorderer::push(formats::Event&& ev) {
  if (released_until_ && ev.ts <= released_until_) ++late_;
  held_.push_back(std::move(ev));
}

std::vector<formats::Event> Reorderer::take_until(uint64_t cutoff) {
  auto split = std::stable_partition(held_.begin(), held_.end(),
                                     [cutoff](const formats::Event& e) { return e.ts <= cutoff; });
  std::vector<formats::Event> out(std::make_move_iterator(held_.begin()),
                                  std::make_move_iterator(split));
  held_.erase(held_.begin(), split);
  std::stable_sort(out.begin(), out.end(),
                   [](const formats::Event& a, const formats::Event& b) { return a.ts < b.ts; });
  if (cutoff != UINT64_MAX) released_until_ = std::max(released_until_, cutoff);
  else if (!out.empty()) released_until_ = std::max(released_until_, out.back().ts);
  return out;
}

formats::Event* Reorderer::find_held(uint32_t tid, uint64_t ts, formats::EventKind kind,
                                     uint32_t id) {
  // From the newest: the event was pushed moments before.
  for (auto it = held_.rbegin(); it != held_.rend(); ++it)
    if (it->tid == tid && it->ts == ts && it->kind == kind && it->id == id) return &*it;
  return nullptr;
}

}  // namespace atrace
