// The constants of trace format 2 (formats/FORMAT.md), shared by the writer
// and the reader so the two cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>

namespace atrace::formats::v2 {

// The preamble is the same in every version (magic, u16 major, u16 minor), so
// any reader can name the version of any atrace file it is given.
constexpr char kMagic[8] = {'A', 'T', 'R', 'A', 'C', 'E', '\0', '\0'};
constexpr uint16_t kMajor = 2, kMinor = 0;
constexpr size_t kPreambleSize = 12;

// Every frame: "ATFR", u8 type, u8 codec, u16 ext_len, u32 stored_len,
// u32 raw_len, ext, payload, u64 XXH3-64 of all that precedes it.
constexpr uint8_t kFrameSync[4] = {'A', 'T', 'F', 'R'};
constexpr size_t kFrameHeadSize = 16;
constexpr size_t kFrameChecksumSize = 8;
// Sanity bound so a damaged length cannot make a reader allocate gigabytes.
constexpr uint32_t kMaxFramePayload = 256u << 20;
// A zstd frame's raw_len is at most this many times its stored_len (plus
// the frame head): the writer stores a frame that would compress better
// than that uncompressed, so a reader allocates at most this factor times
// the bytes it read, however a file is crafted.
constexpr uint64_t kMaxExpansion = 1024;
// Smallest frame: head + checksum; an index cannot list more frames than
// the file has room for.
constexpr size_t kMinFrameSize = 24;

enum FrameType : uint8_t {
  kFrameHeader = 1,
  kFrameStrings = 2,
  kFrameProbes = 3,
  kFrameEvents = 4,
  kFrameFooter = 5,
  // The traced processes as they saw themselves (namespaces, cgroup):
  // added after the first 2.0 writers, skipped by their readers.
  kFrameProcesses = 6,
  // The host's identity and clock snapshots (HostClocks): added for
  // `atrace merge`, skipped by older readers.
  kFrameClocks = 7,
  kFrameCorrections = 8,  // a merged trace's clock corrections and sync report
  // Which series of rotated files (record --rotate) and which file of it
  // (formats/series.h); skipped by older readers, which read the file alone.
  kFrameSeries = 9,
};

enum Codec : uint8_t {
  kCodecStored = 0,
  kCodecZstd = 1,
};

// EVENTS ext header: u32 tid, u32 pid, u64 first_ts, u64 last_ts, u32 count.
constexpr size_t kEventsExtSize = 28;

// Trailer: u64 offset of the FOOTER frame, then this magic. Last 16 bytes.
constexpr char kTrailerMagic[8] = {'A', 'T', 'R', 'A', 'C', 'E', 'N', 'D'};
constexpr size_t kTrailerSize = 16;

// Event kinds: the low 6 bits of an event's first byte.
constexpr uint8_t kKindMask = 0x3f;
constexpr uint8_t kFlagCpu = 0x40;       // a varint CPU number follows the delta
constexpr uint8_t kFlagReserved = 0x80;  // 0 in every 2.x file

// Compact kinds (1..15): fixed fields, known to every 2.x reader. Only a new
// major version may define more of them.
enum CompactKind : uint8_t {
  kFuncEntry = 1,   // varint probe id
  kFuncExit = 2,    // varint probe id
  kThreadExit = 3,  // no fields
  kFuncReturn = 4,  // no fields: exit of the innermost open entry of the block
};
constexpr uint8_t kFirstPayloadKind = 16;

// Payload kinds (16..63): a varint byte length then the payload, so any
// reader can skip them. Defined in 2.0 (FORMAT.md gives their fields),
// produced by later atrace versions; 34..63 are free for minor versions.
enum PayloadKind : uint8_t {
  kSchedSwitchOut = 16,
  kSchedSwitchIn = 17,
  kSchedWakeup = 18,
  kSchedMigrate = 19,
  kSyscallEnter = 20,
  kSyscallExit = 21,
  kPageFault = 22,
  kProcFork = 23,
  kProcExec = 24,
  kProcExit = 25,
  kComm = 26,
  kDetach = 27,
  kLost = 28,
  kUsdt = 29,
  kUnwind = 30,
  kModuleLoad = 31,
  kModuleUnload = 32,
  kGap = 33,
  // Not an event: the arguments or return value of the FUNC_ENTRY /
  // FUNC_EXIT / FUNC_RETURN just before it in the block (delta 0). The
  // reader puts them in that event's args; older readers skip it.
  kFuncValues = 34,
  // Not an event: the user call stack at the FUNC_ENTRY before it (after
  // its FUNC_VALUES, if any), delta 0. The reader puts it in that event's
  // stack; older readers skip it.
  kFuncStack = 35,
  // A message sent or received (record --kernel=+net): trace_types.h's
  // NetMessage.
  kMessage = 36,
};
constexpr uint8_t kLastDefinedKind = kMessage;
// The last payload kind the in-memory API (trace_types.h) represents; the
// reader skips defined kinds above it, and LOST (the footer has the totals).
// MESSAGE (36) is an API kind too, after the two that are not events.
constexpr uint8_t kLastApiKind = kGap;
constexpr bool is_api_payload_kind(uint8_t kind) {
  return (kind <= kLastApiKind && kind != kLost) || kind == kMessage;
}

// Defaults of the writer (FORMAT.md does not constrain them).
constexpr size_t kDefaultBlockBytes = 64 * 1024;
constexpr uint64_t kDefaultMaxAgeNs = 1000000000ull;
constexpr int kDefaultZstdLevel = 3;

}  // namespace atrace::formats::v2
