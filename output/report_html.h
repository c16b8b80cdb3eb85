// `atrace report --html=FILE` (docs/report-html.md): one self-contained
// HTML page with the summary table of functions (sortable), a flame graph
// of the call tree (click to zoom) and a timeline of the threads (function
// calls by depth, system calls and off-CPU periods beneath; drag to pan,
// wheel to zoom). No server, no network: the script, the style and the
// data are all inside the page.
//
//   report_html.cpp       the document: the page's skeleton, its script
//                         and style (output/html/, embedded at build
//                         time) and the data as one JSON blob
//   report_html_data.cpp  the data: the profile's rows, the call tree's
//                         nodes and the downsampled timeline
//                         (timeline_downsample.h), listeners on the same
//                         call replay as the profile: one pass
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "analysis/analysis.h"
#include "output/report.h"

namespace atrace::formats {
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

// The page's views on a call replay shared with the profile (call_replay.h):
// its call tree (per thread with opt.threads; compensated as the replay is)
// and its timeline, filled while the replay reads the trace. The
// timeline's buckets are laid over the header's time range; a trace whose
// events reach beyond it (truncated: no end) has its timeline read again.
class HtmlViews {
 public:
  HtmlViews(CallReplay& replay, const formats::TraceReader& reader, const ReportOptions& opt,
            const HtmlOptions& html = {});
  // After the replay's finish(): the page's data as JSON (see
  // docs/report-html.md for its members); `in` is the profile built on the
  // same replay. Call once. Not yet safe inside a <script> element: see
  // script_safe().
  std::string data(formats::TraceReader& reader, const ReportInput& in, const ReportOptions& opt);

 private:
  DownsampleOptions downsample_options(std::pair<uint64_t, uint64_t> range) const;

  HtmlOptions html_;
  CallTreeBuilder tree_;
  TraceNames names_;
  std::pair<uint64_t, uint64_t> range_;  // the timeline's [t0, t1]
  std::unique_ptr<TimelineDownsampler> sampler_;
  std::unique_ptr<Timeline> timeline_;
  CallReplay& replay_;
  FlowCollector flows_;  // the Flows section (docs/flows.md)
};

// The same with a replay of its own over every event of `reader` (`in` is
// the profile already built from it, with `opt`'s sort, per-thread and
// compensation). Throws formats::TraceError when the trace cannot be read.
std::string html_report_data(formats::TraceReader& reader, const ReportInput& in,
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
