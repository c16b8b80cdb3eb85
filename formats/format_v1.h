// The constants of trace format 1 (formats/FORMAT.md), shared by the writer
// and the reader so the two cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>

namespace atrace::fmt::v1 {

constexpr char kMagic[8] = {'A', 'T', 'R', 'A', 'C', 'E', '\0', '\0'};
constexpr uint16_t kMajor = 1, kMinor = 0;
constexpr size_t kPreambleSize = 12;     // magic + major + minor
constexpr size_t kSectionHeadSize = 16;  // type + flags + length
constexpr size_t kEventRecordSize = 24;

enum SectionType : uint32_t {
  kHeader = 1,
  kProbes = 2,
  kEvents = 3,
  kThreads = 4,
  kLost = 5,
  kFinalHeader = 6,
  kEnd = 7,
};

}  // namespace atrace::fmt::v1
