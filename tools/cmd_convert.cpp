// `atrace convert`: a trace in a format other tools read (docs/convert.md).
// The formats are rows of kFormats: a name, the exporter (output/export.h
// gives them all one signature), whether the output is binary, the options
// of its own it takes, and a line for --help. Adding a format is adding a
// row; an option given to a format that does not take it is an error.
//
// The output goes to stdout or to -o FILE, created by base/new_file.h's
// rule (0600, the sudo caller's; a link, device or FIFO refused). FILE gets
// its name only once the conversion is complete: one that fails half way
// (unreadable trace, disk full) leaves FILE as it was, never a truncated
// file that looks complete, and says so in its one error line.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>

#include "base/diagnostics.h"
#include "base/new_file.h"
#include "formats/trace_reader.h"
#include "output/output.h"
#include "tools/commands.h"
#include "tools/convert_tables.h"
#include "tools/filter_options.h"
#include "tools/option_values.h"

namespace atrace::tools {
namespace {

using Exporter = void (*)(formats::TraceReader&, std::ostream&, const analysis::ExportOptions&);

// The options only some formats take.
enum FormatOption : unsigned {
  kWeight = 1,
  kMinPct = 2,
  kThreads = 4,
  kLongNames = 8,
  kSliceArgs = 16,
  kCluster = 32
};
struct OptionName {
  FormatOption bit;
  const char* name;
};
const OptionName kFormatOptions[] = {{kWeight, "--weight"},        {kMinPct, "--min-pct"},
                                     {kThreads, "--threads"},      {kLongNames, "--long-names"},
                                     {kSliceArgs, "--slice-args"}, {kCluster, "--cluster"}};

struct Format {
  const char* name;
  Exporter write;
  bool binary;       // refused on a terminal
  unsigned options;  // the FormatOptions it takes
  const char* what;  // --help: what it is and what opens it
};

const Format kFormats[] = {
    {"chrome", analysis::export_chrome, false, kLongNames | kSliceArgs,
     "Chrome Trace Event JSON: ui.perfetto.dev, speedscope (docs/export-chrome.md)"},
    {"perfetto", analysis::export_perfetto, true, kLongNames,
     "Perfetto protobuf trace: ui.perfetto.dev, trace_processor (docs/export-perfetto.md)"},
    {"paje", analysis::export_paje, false, kLongNames,
     "Paje trace: ViTE, pajeng's pj_dump (docs/export-paje.md)"},
    // CSV always has the full names.
    {"csv", analysis::export_csv, false, 0,
     "one event a line: spreadsheets, pandas.read_csv (docs/export-csv.md)"},
    {"folded", analysis::export_folded, false, kWeight | kThreads | kLongNames,
     "folded stacks: flamegraph.pl, inferno, speedscope (docs/export-folded.md)"},
    {"callgrind", analysis::export_callgrind, false, kLongNames,
     "callgrind profile: kcachegrind, callgrind_annotate (docs/export-callgrind.md)"},
    {"dot", analysis::export_dot, false, kWeight | kMinPct | kLongNames,
     "call graph: Graphviz dot -Tsvg (docs/export-dot.md)"},
    {"flows-dot", analysis::export_flows_dot, false, kLongNames,
     "who hands data to whom, per function: Graphviz dot -Tsvg (docs/flows.md)"},
    // No exporter: a directory or a server, tools/convert_tables.cpp.
    {"tables", nullptr, false, 0,
     "typed tables, TSV files and schema.sql in directory -o DIR: ClickHouse, DuckDB "
     "(docs/tables.md)"},
    {"clickhouse", nullptr, false, kCluster,
     "the typed tables loaded into ClickHouse, -o http://HOST:PORT/DATABASE (docs/tables.md)"},
};

const Format* find_format(const std::string& name) {
  for (const auto& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

std::string format_names(const char* sep) {
  std::string s;
  for (const auto& f : kFormats) s += (s.empty() ? "" : sep) + std::string(f.name);
  return s;
}

// "folded, dot": the formats that take `bit`.
std::string formats_taking(FormatOption bit) {
  std::string s;
  for (const auto& f : kFormats)
    if (f.options & bit) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

struct ConvertArgs {
  std::string input = "atrace.data";
  std::string output = "-";
  std::string to;
  analysis::ExportOptions options;
  std::string cluster;  // --to=clickhouse --cluster
  FilterArgs filter;
};

// An unbuffered streambuf over a file descriptor (the exporters hand it 64
// KiB at a time) that keeps the errno of a failed write for the message.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) {}
  int error() const { return error_; }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::streamsize done = 0;
    while (done < n && !error_) {
      ssize_t w = ::write(fd_, s + done, static_cast<size_t>(n - done));
      if (w < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        break;
      }
      done += w;
    }
    return done;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }

 private:
  int fd_;
  int error_ = 0;
};

// Where the conversion goes: stdout, or a new file (base/new_file.h: 0600,
// the sudo caller's, never through a link or into a device or FIFO) that
// gets the name FILE only once complete.
class Output {
 public:
  // Returns false (and prints the error line) when FILE cannot be created.
  bool open(const std::string& path) {
    try {
      file_.emplace(path, IfExists::Replace);
      return true;
    } catch (const NewFileError& e) {
      base::error("%s", e.what());
      return false;
    }
  }
  int fd() const { return file_->fd(); }
  bool is_file() const { return !file_->is_stdout(); }
  std::string name() const { return file_->display(); }
  // Names FILE; false after printing the error line.
  bool commit() {
    try {
      file_->commit();
      return true;
    } catch (const NewFileError& e) {
      base::error("%s", e.what());
      return false;
    }
  }
  // After a failure: what the message says of FILE (left as it was).
  std::string discarded() const {
    return is_file() ? " (nothing written to " + file_->path() + ")" : "";
  }

 private:
  std::optional<NewFile> file_;
};

void warn_from(const formats::TraceReader& reader, size_t first) {
  const auto& w = reader.warnings();
  for (size_t i = first; i < w.size(); ++i) base::warning("%s", w[i].c_str());
}

int run_convert(const ConvertArgs& args, const cli::Command& cmd) {
  const Format* format = find_format(args.to);
  if (!format) {
    base::error("--to: unknown format '%s' (known: %s)", args.to.c_str(),
                format_names(", ").c_str());
    return 2;
  }
  for (const auto& o : kFormatOptions)
    if (cmd.given(o.name) && !(format->options & o.bit)) {
      base::error("%s does not apply to --to=%s (only to %s)", o.name, format->name,
                  formats_taking(o.bit).c_str());
      return 2;
    }
  if (format->binary && args.output == "-" && ::isatty(STDOUT_FILENO)) {
    base::error("--to=%s writes binary data: give -o FILE or redirect stdout", format->name);
    return 2;
  }
  formats::EventFilter filter;
  try {
    filter = parse_filter(args.filter);
  } catch (const OptionError& e) {
    base::error("%s", e.what());
    return 2;
  }
  // A closed pipe must show up as EPIPE from write(), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<formats::TraceReader> reader;
  try {
    reader = std::make_unique<formats::TraceReader>(args.input);
    if (filter.any()) reader->select(filter);
  } catch (const formats::FilterError& e) {
    base::error("%s", e.what());
    return 2;
  } catch (const formats::TraceError& e) {
    base::error("%s", e.what());
    return 1;
  }
  if (!format->write)
    return convert_tables(*reader, format->name, args.output,
                          args.filter.tid + "|" + args.filter.pid + "|" + args.filter.comm + "|" +
                              args.filter.time + "|" + args.filter.function + "|" +
                              args.filter.kind + "|" + args.filter.host,
                          args.cluster);
  // The trace is readable: only now is the output created.
  Output out;
  if (!out.open(args.output)) return 1;
  warn_from(*reader, 0);
  size_t warned = reader->warnings().size();
  if (uint64_t lost = reader->lost().total())
    base::warning(
        "%llu events were lost while recording (ring buffers full): "
        "some calls lack their entry or exit",
        static_cast<unsigned long long>(lost));

  FdBuf buf(out.fd());
  std::ostream stream(&buf);
  try {
    format->write(*reader, stream, args.options);
    stream.flush();
  } catch (const std::exception& e) {  // TraceError: the trace; anything else: no memory, ...
    base::error("%s%s", e.what(), out.discarded().c_str());
    return 1;
  }
  if (buf.error() == EPIPE && !out.is_file()) return 0;  // the reader has seen enough
  if (buf.error() || !stream) {
    int err = buf.error() ? buf.error() : EIO;
    base::error("%s: write failed: %s%s", out.name().c_str(), base::errno_text(err).c_str(),
                out.discarded().c_str());
    return 1;
  }
  if (!out.commit()) return 1;
  warn_from(*reader, warned);
  return reader->damaged() ? 3 : 0;  // every readable event is converted, but the file is damaged
}

}  // namespace

void add_convert(cli::Command app, int& exit_status) {
  auto args = std::make_shared<ConvertArgs>();
  cli::Command cmd =
      app.subcommand("convert", "Write a trace in a format other tools read (docs/convert.md)");
  cmd.option("-i,--input", args->input, "Trace file to read ('-' reads stdin)")
      .capture_default()
      .type_name("FILE");
  cmd.option("--to", args->to, "Output format: " + format_names(", "))
      .required()
      .type_name("FORMAT")
      .completes(format_names(", "), false);
  cmd.option("-o,--output", args->output,
             "File to write ('-' writes stdout); --to=tables: a directory, --to=clickhouse: "
             "http://HOST:PORT/DATABASE")
      .capture_default()
      .type_name("FILE");
  cmd.option("--weight", args->options.weight,
             "What the stacks or edges weigh: time (ns) or calls (" + formats_taking(kWeight) + ")")
      .one_of({"time", "calls"})
      .capture_default();
  cmd.option("--min-pct", args->options.min_pct,
             "Leave out what weighs less than this percentage of the total (" +
                 formats_taking(kMinPct) + ")")
      .range(0.0, 100.0)
      .capture_default();
  cmd.flag("--threads", args->options.threads,
           "Each stack starts with its thread (NAME-TID) instead of all merged (" +
               formats_taking(kThreads) + ")");
  cmd.flag("--long-names", args->options.long_names,
           "Full demangled names (return type, parameters, template arguments) instead of "
           "short ones (all but csv, whose names are always full)");
  cmd.flag("--slice-args", args->options.slice_args,
           "Each call, system call and off-CPU slice with its details as args (module, "
           "system call number and return value, how it ended), for Perfetto's UI; "
           "speedscope then tells frames apart by them (" +
               formats_taking(kSliceArgs) + ")");
  cmd.option("--cluster", args->cluster,
             "Load into a ClickHouse cluster of the servers' remote_servers: MergeTree tables "
             "on every shard, Distributed ones over them; -o lists every shard's server, "
             "http://H1:P1,H2:P2/DATABASE (" +
                 formats_taking(kCluster) + ", docs/tables.md)")
      .type_name("NAME");
  add_filter_options(cmd, args->filter, false);
  std::string footer = "Formats:\n";
  for (const auto& f : kFormats) footer += "  " + std::string(f.name) + ": " + f.what + "\n";
  cmd.footer(footer);
  cmd.callback([args, cmd, &exit_status] { exit_status = run_convert(*args, cmd); });
}

}  // namespace atrace::tools
