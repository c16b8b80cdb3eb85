// Reading what atrace wrote: `atrace report --format=json` parsed with
// nlohmann::json, and functions looked up by their demangled names.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace atrace::it {

// Runs `atrace report -i FILE --format=json [extra...]` and parses stdout.
// On a non-zero exit or unparsable output it records a test failure (with
// the command and its output) and returns nullopt.
std::optional<nlohmann::json> report_json(const std::string& file,
                                          const std::vector<std::string>& extra = {});

// "int ns::add<int>(int, int)" -> "ns::add<int>": the name without its
// parameter list and without a leading return type (templates have one).
std::string base_name(std::string_view demangled);

// The entry of `functions` whose name is `name` exactly or whose base_name
// is `name`; nullptr when there is none. Several matches are a test failure
// (the name is ambiguous) and give nullptr.
const nlohmann::json* find_function(const nlohmann::json& report, std::string_view name);

// find_function(...)[field] as an integer, -1 when the function is missing.
long long function_field(const nlohmann::json& report, std::string_view name, const char* field);
inline long long calls_of(const nlohmann::json& report, std::string_view name) {
  return function_field(report, name, "calls");
}

// The names in `functions`, for messages.
std::string function_names(const nlohmann::json& report);

}  // namespace atrace::it
