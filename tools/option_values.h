// Numeric option values, parsed in one place with their ranges and units:
// an out-of-range, negative, NaN or malformed value is one error line
// naming the option and what it accepts, never a wrapped-around number, a
// silent NaN or a bound printed with 300 digits.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/duration.h"

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

// A duration: a number with a unit (ns, us, ms, s) or without one, in
// `bare`'s unit (base/duration.h), in [min_ns, max_ns].
uint64_t parse_duration(const std::string& option, const std::string& text, base::BareNumber bare,
                        uint64_t min_ns, uint64_t max_ns);
// What is wrong with a number in [min, max] (above min when `positive`):
// "'101' is out of range (a number from 0 to 100)", empty when it is right.
// parse_number throws it; the command line's checks (tools/cli.h) return it.
std::string number_problem(const std::string& text, double min, double max, bool positive = false);
// The same for a plain non-negative integer: "'1,2' is not a whole number
// (from 0 to 2147483647)".
std::string count_problem(const std::string& text, uint64_t max);

// "1G" for a byte bound, "2.5" for a number: how the messages show bounds.
std::string show_bytes(uint64_t bytes);

}  // namespace atrace::tools
