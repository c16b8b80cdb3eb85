// Byte-level encoding shared by the writer and the reader: little-endian
// fixed-width integers, unsigned LEB128 varints, zigzag for signed values,
// and strings as varint length + bytes (formats/FORMAT.md, "Conventions").
//
// ByteReader never reads past its span: a field that would runs throws
// Malformed, which the reader turns into a "damaged" warning or error.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace atrace::formats {

struct Malformed {};

inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

class ByteWriter {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      buf_.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    buf_.push_back(static_cast<uint8_t>(v));
  }
  void svarint(int64_t v) { varint(zigzag(v)); }
  void str(std::string_view s) {
    varint(s.size());
    bytes(s.data(), s.size());
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  size_t size() const { return buf_.size(); }
  uint8_t* data() { return buf_.data(); }
  const std::vector<uint8_t>& buf() const { return buf_; }
  std::vector<uint8_t>& buf() { return buf_; }
  void clear() { buf_.clear(); }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; i++) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> buf_;
};

// A length-prefixed entry (varint length, then what `fill` writes), so
// later minor versions can append fields to it: every table's rows.
template <typename Fill>
void entry(ByteWriter& out, Fill fill) {
  ByteWriter e;
  fill(e);
  out.varint(e.size());
  out.bytes(e.buf().data(), e.size());
}

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(std::span<const uint8_t> b) : p_(b.data()), end_(b.data() + b.size()) {}
  uint8_t u8() {
    need(1);
    return *p_++;
  }
  // The next byte without consuming it; -1 at the end.
  int peek_u8() const { return p_ < end_ ? *p_ : -1; }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  // Hot path of the reader: one byte is the common case.
  uint64_t varint() {
    if (end_ - p_ >= 2) {
      // Deltas take one or two bytes about equally often: decode both cases
      // without a branch on the length, which would mispredict half the time.
      uint64_t b0 = p_[0], b1 = p_[1];
      uint64_t more = b0 >> 7;
      if (!(more & (b1 >> 7))) {
        p_ += 1 + more;
        return (b0 & 0x7f) | (((b1 & 0x7f) << 7) & (0 - more));
      }
    } else if (p_ < end_ && *p_ < 0x80) {
      return *p_++;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    throw Malformed{};  // more than 10 bytes
  }
  uint32_t varint32() {
    uint64_t v = varint();
    if (v > UINT32_MAX) throw Malformed{};
    return static_cast<uint32_t>(v);
  }
  int64_t svarint() { return unzigzag(varint()); }
  std::string str() {
    uint64_t n = varint();
    need(n);
    std::string s(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  std::span<const uint8_t> take(uint64_t n) {
    need(n);
    std::span<const uint8_t> s(p_, static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  void skip(uint64_t n) { take(n); }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  bool empty() const { return p_ == end_; }

 private:
  void need(uint64_t n) const {
    if (n > left()) throw Malformed{};
  }
  uint64_t le(int n) {
    need(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += n;
    return v;
  }
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
};

}  // namespace atrace::formats
