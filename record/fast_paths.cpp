#include "record/fast_paths.h"

#include <algorithm>

namespace atrace {

// `f` on every install, the first first.
template <typename F>
void FastPaths::each(F&& f) const {
  f(first_);
  for (const auto& m : more_) f(*m);
}

void FastPaths::on_kernel_event(const formats::Event& ev) {
  each([&](FastPath& p) { p.on_kernel_event(ev); });
}

bool FastPaths::forked(pid_t child) {
  bool taken = false;
  each([&](FastPath& p) { taken = taken || p.forked(child); });
  return taken;
}

void FastPaths::drain(std::vector<formats::Event>& out) {
  each([&](FastPath& p) { p.drain(out); });
  std::erase_if(more_, [this](const std::unique_ptr<FastPath>& p) {
    if (!p->finished()) return false;
    finished_ += p->stats();
    return true;
  });
}

uint64_t FastPaths::complete_until_ns() const {
  uint64_t until = UINT64_MAX;
  each([&](const FastPath& p) { until = std::min(until, p.complete_until_ns()); });
  return until;
}

bool FastPaths::drained() const {
  bool all = true;
  each([&](const FastPath& p) { all = all && p.drained(); });
  return all;
}

void FastPaths::uninstall() {
  each([](FastPath& p) { p.uninstall(); });
}

FastPathStats FastPaths::stats() const {
  FastPathStats sum = finished_;
  each([&](const FastPath& p) { sum += p.stats(); });
  return sum;
}

}  // namespace atrace
