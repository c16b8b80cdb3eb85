// The exporters behind `atrace convert --to=FORMAT` (docs/convert.md): each
// one reads a trace through TraceReader and writes one format that another
// tool reads (a viewer, a spreadsheet, a profiler's front end).
//
// All exporters share one signature, so `atrace convert` keeps them in a
// table (tools/cmd_convert.cpp: adding a format is one row there):
//
//   void export_NAME(formats::TraceReader& reader, std::ostream& out,
//                    const ExportOptions& options);
//
// An exporter reads the events from the reader's position to the end, in the
// order next() gives them, and writes to `out` as it goes. It holds per-thread
// state (open calls, pending system calls), never the events, unless its
// format needs the whole trace (its doc says so). It throws formats::TraceError
// when the trace cannot be read; a failed write is left in `out`'s state for
// the caller to notice. It prints nothing: warnings are the caller's.
#pragma once

#include <iosfwd>
#include <string>

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

struct ExportOptions {
  // What a value measures in the formats that weigh stacks or edges (folded,
  // dot): "time" (nanoseconds) or "calls". Checked by `atrace convert`.
  std::string weight = "time";
  // Pruning (dot): leave out what weighs less than this percentage of the
  // total. 0 keeps everything.
  double min_pct = 0;
  // folded: each stack starts with its thread instead of all threads merged.
  bool threads = false;
  // Full demangled names instead of short ones (analysis/function_names.h).
  bool long_names = false;
  // chrome: the slices' details as args (module, system call number and
  // return value, how it ended), which speedscope folds into frame names.
  bool slice_args = false;
};

// Chrome Trace Event JSON (docs/export-chrome.md).
void export_chrome(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options);
// Perfetto protobuf trace, TrackEvent slices (docs/export-perfetto.md).
void export_perfetto(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options);
// Paje trace for pajeng and ViTE (docs/export-paje.md).
void export_paje(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options);
// One event a line, RFC 4180 (docs/export-csv.md).
void export_csv(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options);

}  // namespace atrace::analysis
