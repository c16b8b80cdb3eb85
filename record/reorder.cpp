#include "record/reorder.h"

#include <algorithm>
#include <utility>

namespace atrace {

void Reorderer::push(formats::Event&& ev) {
  if (released_until_ && ev.ts <= released_until_) ++late_;
  keys_.push_back({ev.ts, first_seq_ + store_.size()});
  store_.push_back(std::move(ev));
  taken_.push_back(0);
}

std::vector<formats::Event> Reorderer::take_until(uint64_t cutoff) {
  sort_new_keys();
  const auto split = std::upper_bound(keys_.begin(), keys_.end(), Key{cutoff, UINT64_MAX});
  std::vector<formats::Event> out;
  out.reserve(static_cast<size_t>(split - keys_.begin()));
  for (auto k = keys_.begin(); k != split; ++k) {
    const size_t i = k->seq - first_seq_;
    out.push_back(std::move(store_[i]));
    taken_[i] = 1;
  }
  keys_.erase(keys_.begin(), split);
  sorted_ = keys_.size();
  compact();
  if (cutoff != UINT64_MAX) released_until_ = std::max(released_until_, cutoff);
  else if (!out.empty()) released_until_ = std::max(released_until_, out.back().ts);
  return out;
}

// The keys pushed since the last take are a few runs already in order (one
// per ring drained, each ring being nearly in order): merge the runs, and
// sort only when there are many; then merge them into the sorted keys.
void Reorderer::sort_new_keys() {
  constexpr size_t kMaxRuns = 16;
  const auto first = keys_.begin() + static_cast<std::ptrdiff_t>(sorted_);
  std::vector<std::vector<Key>::iterator> starts;  // of the runs after the first
  for (auto k = first; k != keys_.end() && starts.size() <= kMaxRuns; ++k)
    if (k != first && *k < *(k - 1)) starts.push_back(k);
  if (starts.size() > kMaxRuns) {
    std::sort(first, keys_.end());
  } else {
    for (size_t r = 0; r < starts.size(); ++r)
      std::inplace_merge(first, starts[r], r + 1 < starts.size() ? starts[r + 1] : keys_.end());
  }
  std::inplace_merge(keys_.begin(), first, keys_.end());
}

// Frees the taken events at the front; the vector itself is compacted only
// once they are half of it, so that compaction moves each event at most
// once on average.
void Reorderer::compact() {
  while (head_ < taken_.size() && taken_[head_]) ++head_;
  if (head_ == store_.size()) {
    first_seq_ += store_.size();
    store_.clear();
    taken_.clear();
    head_ = 0;
  } else if (head_ > store_.size() / 2) {
    store_.erase(store_.begin(), store_.begin() + static_cast<std::ptrdiff_t>(head_));
    taken_.erase(taken_.begin(), taken_.begin() + static_cast<std::ptrdiff_t>(head_));
    first_seq_ += head_;
    head_ = 0;
  }
}

formats::Event* Reorderer::find_held(uint32_t tid, uint64_t ts, formats::EventKind kind,
                                     uint32_t id) {
  // From the newest: the event was pushed moments before.
  for (size_t i = store_.size(); i-- > head_;) {
    formats::Event& e = store_[i];
    if (!taken_[i] && e.tid == tid && e.ts == ts && e.kind == kind && e.id == id) return &e;
  }
  return nullptr;
}

}  // namespace atrace
