#include "record/clock_evidence.h"

#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "base/clock.h"

namespace atrace {

namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Tries per snapshot: each takes about 100 ns; the narrowest wins.
constexpr int kTries = 5;

}  // namespace

formats::HostClocks host_identity() {
  formats::HostClocks h;
  h.boot_id = first_line("/proc/sys/kernel/random/boot_id");
  h.machine_id = first_line("/etc/machine-id");
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) h.host_name = name;
  return h;
}

formats::ClockSnapshot read_clocks(formats::ClockSnapshot::When when) {
  formats::ClockSnapshot best;
  best.when = when;
  for (int i = 0; i < kTries; ++i) {
    formats::ClockSnapshot s;
    s.mono_before_ns = now_ns(CLOCK_MONOTONIC);
    s.real_ns = now_ns(CLOCK_REALTIME);
    s.boot_ns = now_ns(CLOCK_BOOTTIME);
    s.mono_after_ns = now_ns(CLOCK_MONOTONIC);
    if (i == 0 || s.width_ns() < best.width_ns()) {
      s.when = when;
      best = s;
    }
  }
  struct timex tx {};
  const int state = adjtimex(&tx);  // modes 0: read only
  if (state >= 0) {
    best.maxerror_us = static_cast<uint64_t>(tx.maxerror);
    best.esterror_us = static_cast<uint64_t>(tx.esterror);
    best.status = static_cast<uint32_t>(tx.status);
    best.freq = tx.freq;
    best.synchronised = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
  }
  return best;
}

void ClockEvidence::start() {
  auto s = read_clocks(formats::ClockSnapshot::When::Start);
  next_ns_ = s.mono_after_ns + period_ns_;
  pending_.snapshots.push_back(s);
}

bool ClockEvidence::due(uint64_t now) {
  if (next_ns_ == 0 || now < next_ns_) return false;
  auto s = read_clocks(formats::ClockSnapshot::When::Periodic);
  next_ns_ = s.mono_after_ns + period_ns_;
  pending_.snapshots.push_back(s);
  return true;
}

void ClockEvidence::stop() {
  pending_.snapshots.push_back(read_clocks(formats::ClockSnapshot::When::Stop));
  next_ns_ = 0;
}

formats::HostClocks ClockEvidence::take() {
  if (!have_identity_) {
    const auto id = host_identity();
    pending_.boot_id = id.boot_id;
    pending_.machine_id = id.machine_id;
    pending_.host_name = id.host_name;
    have_identity_ = true;
  }
  formats::HostClocks out = pending_;
  pending_.snapshots.clear();
  return out;
}

}  // namespace atrace
