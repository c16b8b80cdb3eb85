#include "tools/option_values.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace atrace::tools {

namespace {

[[noreturn]] void bad(const std::string& option, const std::string& text, const std::string& why) {
  throw OptionError(option + ": '" + text + "' " + why);
}

std::string show_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string show_bytes(uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return std::to_string(b >> 30) + "G";
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return std::to_string(b >> 10) + "k";
  return std::to_string(b);
}

uint64_t parse_bytes(const std::string& option, const std::string& text, uint64_t min,
                     uint64_t max) {
  const std::string range = "(from " + show_bytes(min) + " to " + show_bytes(max) + ", e.g. 8M)";
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (end == text.data()) bad(option, text, "is not a size " + range);
  const std::string unit(end, text.data() + text.size());
  unsigned shift = 0;
  if (unit == "k" || unit == "K" || unit == "KiB") shift = 10;
  else if (unit == "m" || unit == "M" || unit == "MiB") shift = 20;
  else if (unit == "g" || unit == "G" || unit == "GiB") shift = 30;
  else if (!unit.empty()) bad(option, text, "has an unknown unit " + range);
  if (ec == std::errc::result_out_of_range || v > (max >> shift))
    bad(option, text, "is too large " + range);
  v <<= shift;
  if (v < min) bad(option, text, "is too small " + range);
  return v;
}

std::string count_problem(const std::string& text, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string bounds = "from 0 to " + std::to_string(max) + ")";
  if (end != text.data() + text.size() || text.empty())
    return "'" + text + "' is not a whole number (" + bounds;
  const std::string range = "(a whole number " + bounds;
  if (ec == std::errc::result_out_of_range || v > max)
    return "'" + text + "' is too large " + range;
  return {};
}

uint64_t parse_count(const std::string& option, const std::string& text, uint64_t max) {
  if (std::string why = count_problem(text, max); !why.empty())
    throw OptionError(option + ": " + why);
  return std::stoull(text);
}

std::string number_problem(const std::string& text, double min, double max, bool positive) {
  std::string range =
      std::string("(a number ") + (positive ? "above " : "from ") + show_number(min);
  if (std::isfinite(max)) range += (positive ? " up to " : " to ") + show_number(max);
  else if (!positive) range = "(a number of at least " + show_number(min);
  range += ")";
  double v = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::fixed);
  if (text.empty() || end != text.data() + text.size() || ec != std::errc() || !std::isfinite(v))
    return "'" + text + "' is not a number " + range;
  if (v < min || v > max || (positive && v == min))
    return "'" + text + "' is out of range " + range;
  return {};
}

double parse_number(const std::string& option, const std::string& text, double min, double max,
                    bool positive) {
  if (std::string why = number_problem(text, min, max, positive); !why.empty())
    throw OptionError(option + ": " + why);
  return std::strtod(text.c_str(), nullptr);
}

uint64_t parse_duration(const std::string& option, const std::string& text, base::BareNumber bare,
                        uint64_t min_ns, uint64_t max_ns) {
  std::string range = "(a number of ns, us, ms or s, ";
  range += bare == base::BareNumber::Seconds ? "seconds" : "nanoseconds";
  range += " without a unit";
  if (min_ns > 1) range += ", from " + base::show_duration(min_ns);
  else if (min_ns == 1) range += ", above 0";
  if (max_ns < UINT64_MAX) range += (min_ns ? " up to " : ", up to ") + base::show_duration(max_ns);
  range += ")";
  const auto ns = base::parse_duration_ns(text, bare);
  if (!ns) bad(option, text, "is not a duration " + range);
  if (*ns < min_ns || *ns > max_ns) bad(option, text, "is out of range " + range);
  return *ns;
}

}  // namespace atrace::tools
