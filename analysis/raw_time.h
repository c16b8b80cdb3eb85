// A merged trace's raw time stamps (docs/merge.md): the reader hands out
// every time on the corrected time line; this maps one back to the clock
// of the host that recorded it, through the inverse of that host's
// correction map (formats/corrections.h). For the typed tables
// (docs/tables.md), which keep both.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/corrections.h"

namespace atrace::analysis {

class RawClock {
 public:
  // nullptr (a single recording): raw and corrected are the same.
  explicit RawClock(const formats::Corrections* corrections);
  // `ts` on the corrected time line, of an event of recording `host`.
  uint64_t raw(uint16_t host, uint64_t ts) const;

 private:
  std::vector<sync::Segments> inverse_;  // by host; empty: identity
};

}  // namespace atrace::analysis
