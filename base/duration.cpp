#include "base/duration.h"

#include <cmath>
#include <cstdlib>

namespace atrace::base {

std::optional<uint64_t> parse_duration_ns(std::string_view s, BareNumber bare) {
  const size_t unit = s.find_first_not_of("0123456789.");
  const std::string number(s.substr(0, unit));
  const std::string_view suffix = unit == std::string_view::npos ? "" : s.substr(unit);
  double scale = 0;
  if (suffix.empty()) scale = static_cast<double>(static_cast<uint64_t>(bare));
  else if (suffix == "ns") scale = 1;
  else if (suffix == "us") scale = 1e3;
  else if (suffix == "ms") scale = 1e6;
  else if (suffix == "s") scale = 1e9;
  else return std::nullopt;
  if (number.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (!end || *end != '\0' || !std::isfinite(v) || v < 0 || v * scale >= 9.2e18)
    return std::nullopt;
  return static_cast<uint64_t>(std::llround(v * scale));
}

std::string show_duration(uint64_t ns) {
  struct Unit {
    uint64_t ns;
    const char* name;
  };
  for (Unit u : {Unit{1'000'000'000, "s"}, Unit{1'000'000, "ms"}, Unit{1'000, "us"}})
    if (ns >= u.ns && ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  return std::to_string(ns) + "ns";
}

}  // namespace atrace::base
