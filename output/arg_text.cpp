#include "output/arg_text.h"

#include <cinttypes>
#include <cstdio>

namespace atrace::analysis {

namespace {

void append_hex(std::string& out, uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  out += buf;
}

void append_quoted(std::string& out, const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      if (c == '"' || c == '\\') out += '\\';
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace

void append_arg_value(std::string& out, const formats::ProbeArg& a) {
  if (a.is_string) {
    switch (a.str_state) {
      case formats::StrState::Null: out += "NULL"; return;
      case formats::StrState::Unreadable:
        out += "<unreadable ";
        append_hex(out, a.value);
        out += '>';
        return;
      case formats::StrState::Cut:
        append_quoted(out, a.str);
        out += "...";
        return;
      case formats::StrState::Ok: append_quoted(out, a.str); return;
    }
    append_quoted(out, a.str);  // a state from a newer writer
    return;
  }
  if (a.format != formats::ArgFormat::Decimal) {
    uint64_t v = a.value;
    if (a.size < 8) v &= (uint64_t{1} << (8 * a.size)) - 1;  // hex shows the bits kept
    append_hex(out, v);
  } else if (a.is_signed) {
    out += std::to_string(a.svalue());
  } else {
    out += std::to_string(a.value);
  }
}

std::string arg_name(const formats::ProbeArg& a) {
  return a.slot == formats::kArgRetval ? "retval" : "arg" + std::to_string(a.slot);
}

std::string arg_name(const formats::ProbeArg& a, const std::vector<std::string>& names) {
  if (a.slot != formats::kArgRetval && a.slot <= names.size() && !names[a.slot - 1].empty())
    return names[a.slot - 1];
  return arg_name(a);
}

}  // namespace atrace::analysis
