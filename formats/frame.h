// Frames: the self-delimiting, checksummed unit of a v2 trace file
// (formats/FORMAT.md, "Frames"). Every section and every event block is a
// frame, so one scanner walks any file and one checksum rule covers all.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "formats/file_source.h"
#include "formats/format_v2.h"

namespace atrace::formats {

struct ZstdCCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// Builds frames. The compression context is kept between frames: creating
// one per block would cost more than compressing a small block.
class FrameEncoder {
 public:
  explicit FrameEncoder(int zstd_level);
  // Appends a frame to out. The payload is zstd-compressed when `compress`
  // and that makes it smaller, stored otherwise.
  void append(std::vector<uint8_t>& out, uint8_t type, std::span<const uint8_t> ext,
              std::span<const uint8_t> payload, bool compress);

 private:
  std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree> cctx_;
  int level_;
  std::vector<uint8_t> scratch_;
};

struct FrameHead {
  uint8_t type = 0;
  uint8_t codec = 0;
  uint16_t ext_len = 0;
  uint32_t stored_len = 0;
  uint32_t raw_len = 0;
  uint64_t size() const {
    return v2::kFrameHeadSize + ext_len + uint64_t{stored_len} + v2::kFrameChecksumSize;
  }
};

enum class FrameStatus {
  Ok,
  NoSync,       // no frame starts here
  BadHead,      // impossible lengths or codec
  Incomplete,   // the frame runs past the end of the file
  BadChecksum,  // the bytes do not match their checksum
};

// One frame read from a file, checksum verified.
struct Frame {
  FrameHead head;
  uint64_t offset = 0;
  std::vector<uint8_t> bytes;  // the whole frame
  std::span<const uint8_t> ext() const { return {bytes.data() + v2::kFrameHeadSize, head.ext_len}; }
  std::span<const uint8_t> stored() const {
    return {bytes.data() + v2::kFrameHeadSize + head.ext_len, head.stored_len};
  }
};

// Reads and verifies the frame at `off`. On anything but Ok, `f` is unusable.
FrameStatus read_frame(const FileSource& src, uint64_t off, Frame& f);

// Decompresses (or copies) a verified frame's payload into `raw`.
// Throws Malformed when the payload does not decode to raw_len bytes.
class FrameDecoder {
 public:
  FrameDecoder();
  void payload(const Frame& f, std::vector<uint8_t>& raw);

 private:
  std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree> dctx_;
};

}  // namespace atrace::formats
