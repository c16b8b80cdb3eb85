// The protobuf wire format (https://protobuf.dev/programming-guides/encoding/),
// written by hand for the Perfetto exporter: varints, tags, and
// length-delimited fields. No generated code and no libprotobuf: the few
// messages atrace writes are built field by field (export_perfetto.cpp).
//
//   tag      = (field_number << 3) | wire_type, as a varint
//   wire type 0 (VARINT): integers, bools, enums; negative int32/int64 as
//            their 64-bit two's complement (10 bytes)
//   wire type 1 (I64):    fixed64, 8 bytes little-endian
//   wire type 2 (LEN):    strings, bytes, nested messages: a varint length,
//            then the bytes
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace atrace::analysis::proto {

// Base-128, least significant group first, high bit = more to come.
inline void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

enum WireType : uint8_t { kVarint = 0, kI64 = 1, kLen = 2 };

inline void append_tag(std::string& out, uint32_t field, WireType type) {
  append_varint(out, (uint64_t{field} << 3) | type);
}

// One message being built: fields are appended in the order called.
class Message {
 public:
  Message& uint(uint32_t field, uint64_t v) {
    append_tag(buf_, field, kVarint);
    append_varint(buf_, v);
    return *this;
  }
  // int32/int64 fields (not sint: no zigzag).
  Message& sint64(uint32_t field, int64_t v) { return uint(field, static_cast<uint64_t>(v)); }
  // fixed64 fields: 8 bytes, little-endian.
  Message& fixed64(uint32_t field, uint64_t v) {
    append_tag(buf_, field, kI64);
    for (int i = 0; i < 8; i++) buf_ += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
  Message& bytes(uint32_t field, std::string_view v) {
    append_tag(buf_, field, kLen);
    append_varint(buf_, v.size());
    buf_.append(v);
    return *this;
  }
  Message& message(uint32_t field, const Message& m) { return bytes(field, m.buf_); }

  const std::string& data() const { return buf_; }
  bool empty() const { return buf_.empty(); }
  void clear() { buf_.clear(); }  // keeps the capacity: messages are reused

 private:
  std::string buf_;
};

}  // namespace atrace::analysis::proto
