// Numeric option values, parsed in one place with their ranges and units:
// an out-of-range, negative, NaN or malformed value is one error line
// naming the option and what it accepts, never a wrapped-around number, a
// silent NaN or a bound printed with 300 digits.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace atrace::tools {

// "OPTION: what is wrong (what is accepted)"; the caller prefixes "atrace: ".
class OptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Bytes: "4096", "512k", "8M", "1G" (also KiB/MiB/GiB), in [min, max].
uint64_t parse_bytes(const std::string& option, const std::string& text, uint64_t min,
                     uint64_t max);
// A plain non-negative integer (no sign, no unit), at most `max`.
uint64_t parse_count(const std::string& option, const std::string& text, uint64_t max);
// A finite decimal number in [min, max]; `positive` excludes min itself.
double parse_number(const std::string& option, const std::string& text, double min, double max,
                    bool positive = false);

// "1G" for a byte bound, "2.5" for a number: how the messages show bounds.
std::string show_bytes(uint64_t bytes);

}  // namespace atrace::tools
