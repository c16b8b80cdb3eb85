// "1 function", "2 functions": counts in messages agree with their noun.
#pragma once

#include <cstdint>
#include <string>

namespace atrace::base {

// `n` and the noun in the number it takes: plural(1, "function") is
// "1 function", plural(2, "function") "2 functions"; `many` for nouns whose
// plural is not the singular + "s".
inline std::string plural(uint64_t n, const std::string& one, const std::string& many = "") {
  return std::to_string(n) + " " + (n == 1 ? one : many.empty() ? one + "s" : many);
}

}  // namespace atrace::base
