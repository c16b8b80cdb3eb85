// Durations as every option writes them ("2us", "500ns", "1.5ms", "2s"):
// record's --duration and --filter-threshold, top's --interval, and the
// read filters' --time of report, script and convert, parsed by one rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace atrace::base {

// What a number without a unit means: nanoseconds for a threshold
// (--filter-threshold=300), seconds for a length of time (--duration=2).
enum class BareNumber : uint64_t { Nanoseconds = 1, Seconds = 1'000'000'000 };

// A non-negative decimal number with an optional unit (ns, us, ms, s), in
// nanoseconds, rounded to the nearest; nullopt for anything else: a sign,
// a space, another unit, NaN, or more than 2^63 ns (292 years).
std::optional<uint64_t> parse_duration_ns(std::string_view text,
                                          BareNumber bare = BareNumber::Nanoseconds);

// The largest unit that shows `ns` exactly: "2s", "100ms", "40us", "7ns",
// how messages show a bound.
std::string show_duration(uint64_t ns);

}  // namespace atrace::base
