// Escaping and number formatting for the exporters (text_escape.h). Numbers
// go through std::to_chars: exporters write tens of millions of them.
#include "output/text_escape.h"

#include <charconv>

namespace atrace::analysis {

namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence at s[i] (1 to 4), or 0 when the bytes
// there are not one (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF).
size_t utf8_length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t left = s.size() - i;
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && continuation(b(1)) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !continuation(b(1)) || !continuation(b(2))) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !continuation(b(1)) || !continuation(b(2)) || !continuation(b(3))) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

// Calls `ascii(c)` for each ASCII byte and appends valid multi-byte
// sequences as they are, U+FFFD for invalid ones.
template <typename Ascii>
void for_each_char(std::string& out, std::string_view s, Ascii ascii) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(s, i);
    if (n == 1) {
      ascii(static_cast<unsigned char>(s[i]));
    } else if (n == 0) {
      out += kReplacement;
      n = 1;
    } else {
      out.append(s.data() + i, n);
    }
    i += n;
  }
}

}  // namespace

void append_utf8(std::string& out, std::string_view s) {
  for_each_char(out, s, [&](unsigned char c) { out += static_cast<char>(c); });
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for_each_char(out, s, [&](unsigned char c) {
    switch (c) {
      case '"': out += "\\\""; return;
      case '\\': out += "\\\\"; return;
      case '\n': out += "\\n"; return;
      case '\r': out += "\\r"; return;
      case '\t': out += "\\t"; return;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  });
  out += '"';
}

void append_csv_field(std::string& out, std::string_view s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string_view::npos;
  if (!quote) {
    append_utf8(out, s);
    return;
  }
  out += '"';
  for_each_char(out, s, [&](unsigned char c) {
    if (c == '"') out += '"';
    out += static_cast<char>(c);
  });
  out += '"';
}

void append_paje_string(std::string& out, std::string_view s) {
  out += '"';
  for_each_char(out, s, [&](unsigned char c) {
    if (c == '"') out += '\'';
    else if (c < 0x20 || c == 0x7f) out += ' ';
    else out += static_cast<char>(c);
  });
  out += '"';
}

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_hex(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  out += "0x";
  out.append(buf, r.ptr);
}

namespace {
// whole "." fraction, the fraction zero-padded to `digits`.
void append_fixed(std::string& out, uint64_t whole, uint64_t fraction, size_t digits) {
  append_uint(out, whole);
  out += '.';
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, fraction);
  auto len = static_cast<size_t>(r.ptr - buf);
  if (len < digits) out.append(digits - len, '0');
  out.append(buf, r.ptr);
}
}  // namespace

void append_us(std::string& out, uint64_t ns) { append_fixed(out, ns / 1000, ns % 1000, 3); }

void append_seconds(std::string& out, uint64_t ns) {
  append_fixed(out, ns / 1000000000, ns % 1000000000, 9);
}

void ChunkedWriter::flush() {
  if (!buf_.empty() && out_) out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
}

}  // namespace atrace::analysis
