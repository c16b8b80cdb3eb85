// `atrace report --html=FILE` (docs/report-html.md): one self-contained
// HTML page with the summary table of functions (sortable), a flame graph
// of the call tree (click to zoom) and a timeline of the threads (function
// calls by depth, system calls and off-CPU periods beneath; drag to pan,
// wheel to zoom). No server, no network: the script, the style and the
// data are all inside the page.
//
//   report_html.cpp       the document: the page's skeleton, its script
//                         and style (userspace/html/, embedded at build
//                         time) and the data as one JSON blob
//   report_html_data.cpp  the data: the profile's rows, the call tree's
//                         nodes and the downsampled timeline
//                         (timeline_downsample.h), read in one pass
#pragma once

#include <cstdint>
#include <string>

#include "userspace/report.h"

namespace atrace::fmt {
class TraceReader;
}

namespace atrace::analysis {

struct HtmlOptions {
  // Timeline: the longest spans kept; the others become busy cells of
  // `buckets` per row across the recording.
  size_t max_spans = 100000;
  uint32_t buckets = 2000;
  size_t max_cells = 200000;  // busy cells in all (wider buckets past it)
  // Flame graph: the heaviest call paths kept (the others are left out,
  // and the page says how many).
  size_t max_tree_nodes = 20000;
};

// The page's data as JSON (see docs/report-html.md for its members): reads
// every event of `reader` again (the call tree and the timeline, in one
// pass); `in` is the profile already built from it, with `opt`'s sort,
// per-thread (--threads: a flame graph per thread) and compensation. Throws
// fmt::TraceError when the trace cannot be read. Not yet safe inside a
// <script> element: see script_safe().
std::string html_report_data(fmt::TraceReader& reader, const ReportInput& in,
                             const ReportOptions& opt, const HtmlOptions& html = {});

// JSON text made safe to sit inside a <script> element: every '<' becomes
// the JSON escape \u003c, so neither "</script>" nor "<!--" can appear in
// it, whatever the names in the trace. JSON has '<' only inside strings,
// where the escape means the same character: JSON.parse gives back the
// same value.
std::string script_safe(std::string json);

// The whole page for `data` (html_report_data's JSON).
std::string html_page(const std::string& data);

}  // namespace atrace::analysis
