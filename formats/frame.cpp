#include "formats/frame.h"

#include <xxhash.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "formats/error.h"
#include "formats/varint.h"

namespace atrace::formats {

using namespace v2;  // NOLINT: the format's constants

FrameEncoder::FrameEncoder(int zstd_level) : cctx_(ZSTD_createCCtx()), level_(zstd_level) {
  if (!cctx_) throw Error("zstd: cannot create a compression context");
}

void FrameEncoder::append(std::vector<uint8_t>& out, uint8_t type, std::span<const uint8_t> ext,
                          std::span<const uint8_t> payload, bool compress) {
  std::span<const uint8_t> stored = payload;
  uint8_t codec = kCodecStored;
  if (compress && !payload.empty()) {
    scratch_.resize(ZSTD_compressBound(payload.size()));
    size_t n = ZSTD_compressCCtx(cctx_.get(), scratch_.data(), scratch_.size(), payload.data(),
                                 payload.size(), level_);
    if (ZSTD_isError(n)) throw Error(std::string("zstd: ") + ZSTD_getErrorName(n));
    // Better than kMaxExpansion: stored as is, so readers can bound memory.
    if (n < payload.size() && n * kMaxExpansion >= payload.size()) {
      stored = {scratch_.data(), n};
      codec = kCodecZstd;
    }
  }
  if (ext.size() > UINT16_MAX || payload.size() > kMaxFramePayload)
    throw std::logic_error("trace frame too large");
  size_t start = out.size();
  ByteWriter head;
  head.bytes(kFrameSync, sizeof kFrameSync);
  head.u8(type);
  head.u8(codec);
  head.u16(static_cast<uint16_t>(ext.size()));
  head.u32(static_cast<uint32_t>(stored.size()));
  head.u32(static_cast<uint32_t>(payload.size()));
  out.insert(out.end(), head.buf().begin(), head.buf().end());
  out.insert(out.end(), ext.begin(), ext.end());
  out.insert(out.end(), stored.begin(), stored.end());
  uint64_t sum = XXH3_64bits(out.data() + start, out.size() - start);
  for (int i = 0; i < 8; i++) out.push_back(static_cast<uint8_t>(sum >> (8 * i)));
}

FrameStatus read_frame(const FileSource& src, uint64_t off, Frame& f) {
  uint8_t h[kFrameHeadSize];
  size_t got = src.read_at(off, h, sizeof h);
  if (got >= sizeof kFrameSync && std::memcmp(h, kFrameSync, sizeof kFrameSync) != 0)
    return FrameStatus::NoSync;
  if (got < sizeof h) return FrameStatus::Incomplete;
  ByteReader r(std::span<const uint8_t>(h + 4, sizeof h - 4));
  f.head.type = r.u8();
  f.head.codec = r.u8();
  f.head.ext_len = r.u16();
  f.head.stored_len = r.u32();
  f.head.raw_len = r.u32();
  f.offset = off;
  if (f.head.codec > kCodecZstd || f.head.stored_len > kMaxFramePayload ||
      f.head.raw_len > kMaxFramePayload ||
      (f.head.codec == kCodecStored && f.head.stored_len != f.head.raw_len) ||
      uint64_t{f.head.raw_len} > uint64_t{f.head.stored_len} * kMaxExpansion)
    return FrameStatus::BadHead;
  uint64_t size = f.head.size();
  if (size > src.size() - off) return FrameStatus::Incomplete;
  f.bytes.resize(static_cast<size_t>(size));
  std::memcpy(f.bytes.data(), h, sizeof h);
  size_t rest = f.bytes.size() - sizeof h;
  if (src.read_at(off + sizeof h, f.bytes.data() + sizeof h, rest) != rest)
    return FrameStatus::Incomplete;
  size_t body = f.bytes.size() - kFrameChecksumSize;
  ByteReader sum(std::span<const uint8_t>(f.bytes.data() + body, kFrameChecksumSize));
  if (sum.u64() != XXH3_64bits(f.bytes.data(), body)) return FrameStatus::BadChecksum;
  return FrameStatus::Ok;
}

FrameDecoder::FrameDecoder() : dctx_(ZSTD_createDCtx()) {
  if (!dctx_) throw Error("zstd: cannot create a decompression context");
}

void FrameDecoder::payload(const Frame& f, std::vector<uint8_t>& raw) {
  auto stored = f.stored();
  if (f.head.codec == kCodecZstd &&
      ZSTD_getFrameContentSize(stored.data(), stored.size()) != f.head.raw_len)
    throw Malformed{};  // before allocating what the head claims
  raw.resize(f.head.raw_len);
  if (f.head.codec == kCodecStored) {
    if (!stored.empty()) std::memcpy(raw.data(), stored.data(), stored.size());
    return;
  }
  size_t n = ZSTD_decompressDCtx(dctx_.get(), raw.data(), raw.size(), stored.data(), stored.size());
  if (ZSTD_isError(n) || n != raw.size()) throw Malformed{};
}

}  // namespace atrace::formats
