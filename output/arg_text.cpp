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

// Hex shows the bits the type keeps.
uint64_t kept_bits(const formats::ProbeArg& a) {
  return a.size < 8 ? a.value & ((uint64_t{1} << (8 * a.size)) - 1) : a.value;
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
    append_hex(out, kept_bits(a));
  } else if (a.is_signed) {
    out += std::to_string(a.svalue());
  } else {
    out += std::to_string(a.value);
  }
}

std::string arg_name(const formats::ProbeArg& a) { return slot_name(a.slot); }

std::string values_text(const std::vector<formats::ProbeArg>& args) {
  std::string s;
  for (const formats::ProbeArg& a : args) {
    if (!s.empty()) s += ' ';
    s += arg_name(a);
    s += '=';
    append_arg_value(s, a);
  }
  return s;
}

void append_value_args(std::vector<InstantArg>& out, const std::vector<formats::ProbeArg>& args) {
  using T = InstantArg::Type;
  for (const formats::ProbeArg& a : args) {
    InstantArg& o = out.emplace_back();
    o.key = arg_name(a);
    if (a.is_string) {
      o.type = T::Text;
      if (a.str_state == formats::StrState::Ok) o.text = a.str;
      else append_arg_value(o.text, a);
    } else if (a.format != formats::ArgFormat::Decimal) {
      o.type = T::Hex;
      o.value = kept_bits(a);
    } else {
      o.type = a.is_signed ? T::Int : T::Uint;
      o.value = a.is_signed ? static_cast<uint64_t>(a.svalue()) : a.value;
    }
  }
}

std::string arg_name(const formats::ProbeArg& a, const std::vector<std::string>& names) {
  if (a.slot != formats::kArgRetval && a.slot <= names.size() && !names[a.slot - 1].empty())
    return names[a.slot - 1];
  return arg_name(a);
}

}  // namespace atrace::analysis
