#include "fastpath/tsc_clock.h"

#include <x86intrin.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>

namespace atrace::fastpath {

namespace {

// The words of the first "flags" line of /proc/cpuinfo (every CPU has the
// same in practice; the kernel clears constant_tsc system-wide if not).
bool has_flag(std::string_view cpuinfo, std::string_view flag) {
  size_t at = cpuinfo.find("\nflags");
  if (at == std::string_view::npos) {
    if (!cpuinfo.starts_with("flags")) return false;
    at = 0;
  }
  const size_t colon = cpuinfo.find(':', at);
  const size_t end = cpuinfo.find('\n', at + 1);
  if (colon == std::string_view::npos || colon > end) return false;
  std::istringstream words(std::string(cpuinfo.substr(colon + 1, end - colon - 1)));
  for (std::string w; words >> w;)
    if (w == flag) return true;
  return false;
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

}  // namespace

std::string tsc_refusal(std::string_view cpuinfo) {
  if (!has_flag(cpuinfo, "constant_tsc"))
    return "the CPU's TSC lacks constant_tsc (/proc/cpuinfo): its rate follows the CPU's "
           "frequency, so its time stamps cannot be converted to CLOCK_MONOTONIC";
  if (!has_flag(cpuinfo, "nonstop_tsc"))
    return "the CPU's TSC lacks nonstop_tsc (/proc/cpuinfo): it stops in deep idle states, so "
           "its time stamps cannot be converted to CLOCK_MONOTONIC";
  if (!has_flag(cpuinfo, "rdtscp"))
    return "the CPU lacks rdtscp (/proc/cpuinfo), which the fast path's records are stamped with";
  return "";
}

std::string tsc_refusal() {
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && text.str().empty()) return "/proc/cpuinfo is not readable: the TSC cannot be checked";
  return tsc_refusal(text.str());
}

uint64_t read_tsc() {
  _mm_lfence();
  const uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

ClockPair read_pair(int tries) {
  ClockPair best{};
  for (int i = 0; i < std::max(tries, 1); ++i) {
    ClockPair p;
    p.before = read_tsc();
    p.ns = monotonic_ns();
    p.after = read_tsc();
    if (i == 0 || p.after - p.before < best.after - best.before) best = p;
  }
  return best;
}

void TscClock::add(const ClockPair& p) {
  const Anchor a{p.before + p.after, p.ns};
  if (p.after < p.before) return;
  if (!anchors_.empty() && (a.tsc2 <= anchors_.back().tsc2 || a.ns <= anchors_.back().ns)) return;
  if (ready()) {
    const uint64_t mapped = to_ns(a.tsc2 / 2);
    error_.residual_ns =
        std::max(error_.residual_ns, mapped > a.ns ? mapped - a.ns : a.ns - mapped);
    ++error_.checked;
  }
  anchors_.push_back(a);
  widest_ = std::max(widest_, p.after - p.before);
  forget_old();
}

// The oldest anchor goes once the segment after it ends `keep_ns` before
// the newest anchor and before the oldest time stamp still to come.
void TscClock::forget_old() {
  const uint64_t until =
      hold_tsc_ == UINT64_MAX ? anchors_.back().ns : std::min(anchors_.back().ns, to_ns(hold_tsc_));
  while (anchors_.size() > 2 && until >= anchors_[1].ns && until - anchors_[1].ns >= keep_ns_)
    anchors_.pop_front();
}

ConversionError TscClock::error() const {
  ConversionError e = error_;
  if (ready()) {
    const Anchor& a = anchors_.front();
    const Anchor& b = anchors_.back();
    e.bracket_ns = static_cast<uint64_t>(static_cast<unsigned __int128>(widest_) * 2 *
                                         (b.ns - a.ns) / (b.tsc2 - a.tsc2));
  }
  return e;
}

void TscClock::refresh() { add(read_pair()); }

uint64_t TscClock::to_ns(uint64_t tsc) const {
  if (!ready()) return 0;
  // The segment around tsc, or the first or last one beyond the anchors.
  const __int128 t2 = static_cast<__int128>(tsc) * 2;
  auto it = std::upper_bound(anchors_.begin(), anchors_.end(), t2,
                             [](__int128 v, const Anchor& a) { return v < a.tsc2; });
  size_t i = it == anchors_.begin() ? 0 : size_t(it - anchors_.begin()) - 1;
  i = std::min(i, anchors_.size() - 2);
  const Anchor& a = anchors_[i];
  const Anchor& b = anchors_[i + 1];
  const __int128 dt = t2 - a.tsc2;
  const __int128 span = b.tsc2 - a.tsc2;
  // Floor division (towards minus infinity) keeps the map monotonic below
  // the first anchor too.
  __int128 num = dt * __int128(b.ns - a.ns);
  __int128 q = num / span;
  if (num % span != 0 && (num < 0)) --q;
  const __int128 ns = __int128(a.ns) + q;
  return ns < 0 ? 0 : static_cast<uint64_t>(ns);
}

uint64_t TscClock::ticks(uint64_t ns) const {
  if (!ready()) return 0;
  const Anchor& a = anchors_[anchors_.size() - 2];
  const Anchor& b = anchors_.back();
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * (b.tsc2 - a.tsc2) /
                               (2 * (b.ns - a.ns)));
}

}  // namespace atrace::fastpath
