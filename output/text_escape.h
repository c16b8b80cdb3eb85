// Escaping for the formats that quote (JSON, CSV, Paje), shared by the
// exporters and the HTML report, with the numbers and time units they write
// and an output buffer that goes to the stream in large writes.
//
// Names come from the traced program (demangled symbols, thread names, file
// names): any byte can be in them, including invalid UTF-8, quotes and
// newlines. Every writer here produces a valid field whatever the input:
// invalid UTF-8 becomes U+FFFD, so JSON parsers and pandas (UTF-8 by
// default) accept the file.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace atrace::analysis {

// `s` with every invalid UTF-8 sequence replaced by U+FFFD (EF BF BD).
void append_utf8(std::string& out, std::string_view s);

// A JSON string literal, quotes included (RFC 8259): ", \ and control
// characters escaped, invalid UTF-8 replaced.
void append_json_string(std::string& out, std::string_view s);

// One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF,
// quotes doubled; invalid UTF-8 replaced.
void append_csv_field(std::string& out, std::string_view s);

// A Paje string field: always double-quoted. Paje has no escape sequence,
// so a double quote becomes ' and control characters become blanks.
void append_paje_string(std::string& out, std::string_view s);

// Decimal integers.
void append_uint(std::string& out, uint64_t v);
void append_int(std::string& out, int64_t v);
// "0x" and lowercase hex.
void append_hex(std::string& out, uint64_t v);

// Nanoseconds as microseconds with three decimals: 1234567 -> "1234.567"
// (Chrome's unit, exact to the nanosecond).
void append_us(std::string& out, uint64_t ns);
// Nanoseconds as seconds with nine decimals: 1500000000 -> "1.500000000".
void append_seconds(std::string& out, uint64_t ns);

// Text (or bytes) collected in memory and handed to the stream every
// kChunk bytes: the exporters append small pieces, the stream sees few
// large writes. ok() turns false once the stream failed, so an exporter can
// stop early (the caller reports the failure).
class ChunkedWriter {
 public:
  static constexpr size_t kChunk = 64 * 1024;
  explicit ChunkedWriter(std::ostream& out) : out_(out) { buf_.reserve(kChunk + 4096); }
  ~ChunkedWriter() { flush(); }
  ChunkedWriter(const ChunkedWriter&) = delete;
  ChunkedWriter& operator=(const ChunkedWriter&) = delete;

  std::string& buf() { return buf_; }
  // Call after each record: writes when the buffer is full enough.
  void maybe_flush() {
    if (buf_.size() >= kChunk) flush();
  }
  void flush();
  bool ok() const { return static_cast<bool>(out_); }

 private:
  std::ostream& out_;
  std::string buf_;
};

}  // namespace atrace::analysis
