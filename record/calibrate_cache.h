// The probe-cost calibration (calibrate.h) cached per boot: measuring
// takes 20-60 ms of every start-up, and the costs only change with the
// machine (boot, kernel, CPU model) and with atrace's own programs. A
// measurement is reused only when every part of its key matches, and only
// from a directory and a file that no one but root can write: a root
// recorder must not take numbers (which move every duration in
// `report --compensate` and decide the filters) from an unprivileged user.
//
//   CalibrationKey key = CalibrationKey::current(multi, programs_id);
//   if (auto cost = load_cached_cost(kCalibrationCacheDir, key)) ... else
//     store_cached_cost(kCalibrationCacheDir, key, measured);
#pragma once

#include <optional>
#include <string>

#include "record/calibrate.h"

namespace atrace {

// Emptied at every boot (a tmpfs): a stale file rarely survives even
// before its key is checked.
inline constexpr const char* kCalibrationCacheDir = "/run/atrace";

struct CalibrationKey {
  std::string boot_id;    // /proc/sys/kernel/random/boot_id
  std::string kernel;     // uname -r and -v: a rebuilt kernel of one release differs
  std::string cpu_model;  // /proc/cpuinfo's first "model name"
  std::string version;    // atrace's version and its BPF programs' hash
  bool multi = false;     // uprobe_multi links or perf-event links

  // This machine's, now.
  static CalibrationKey current(bool multi, const std::string& programs_id);
  bool operator==(const CalibrationKey&) const = default;
};

// The cached costs when the file exists, is safe to trust (a directory
// and a regular file owned by root, writable by no one else, no symlink)
// and has this very key; nullopt otherwise, with the reason in `why` when
// given ("stale: boot id", "not root's: ...").
std::optional<ProbeCost> load_cached_cost(const std::string& dir, const CalibrationKey& key,
                                          std::string* why = nullptr);

// Stores a complete measurement (no error) for the next recordings: the
// directory is created 0700, the file 0600, replaced atomically. Only
// root stores; a failure only costs the next start-up a calibration.
// Returns whether it was stored.
bool store_cached_cost(const std::string& dir, const CalibrationKey& key, const ProbeCost& cost);

// ---- pure parts (unit-tested) ----
std::string cost_cache_text(const CalibrationKey& key, const ProbeCost& cost);
// nullopt when the text is not a cache file or its key differs (`why`).
std::optional<ProbeCost> parse_cost_cache(const std::string& text, const CalibrationKey& key,
                                          std::string* why = nullptr);

}  // namespace atrace
