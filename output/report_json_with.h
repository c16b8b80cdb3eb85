// render_json_with: the report's JSON document with one more member, which
// the views' JSON forms (report_tree.cpp, report_callers.cpp) are. Private
// to output/: nlohmann/json.hpp costs every file that includes it about
// 2 s of CPU to compile, so render_views.h, which output.h and every
// command's file include, does not include it (docs/BENCHMARKS.md,
// "make demo").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "output/render_views.h"

namespace atrace::analysis {

// render_json(in, opt) with one more top-level member (`tree`, ...).
std::string render_json_with(const ReportInput& in, const ReportOptions& opt,
                             const std::string& member, nlohmann::ordered_json value);
// The same with several members, in order.
std::string render_json_with(const ReportInput& in, const ReportOptions& opt,
                             std::vector<std::pair<std::string, nlohmann::ordered_json>> members);

}  // namespace atrace::analysis
