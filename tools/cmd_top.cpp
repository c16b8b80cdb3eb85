// atrace top: records as `record` does (the same options, the same
// recorder) and shows the per-function table live while it runs: a
// refreshed screen on a terminal (top_screen.h), one table per interval
// otherwise. The events go to top's sink (top_sink.h), and to a trace file
// only with -o.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "base/diagnostics.h"
#include "record/record.h"
#include "tools/commands.h"
#include "tools/option_values.h"
#include "tools/record_options.h"
#include "tools/table_options.h"
#include "tools/top_screen.h"
#include "tools/top_sink.h"

namespace atrace::tools {

namespace {

// --interval: from a tenth of a second to an hour.
constexpr uint64_t kMinIntervalNs = 100'000'000, kMaxIntervalNs = 3600'000'000'000;

struct TopArgs {
  RecordArgs record;
  TableArgs table;  // --sort, --fields
  std::string interval = "1";
  bool long_names = false;
};

// Without a terminal: each frame after a line saying when, then a blank line.
class PrintedView : public TopView {
 public:
  size_t max_rows() override { return 0; }
  void show(const TopFrame& frame) override {
    std::printf("== %s ==\n%s\n", frame.title.c_str(),
                frame.table.empty() ? "no call ended yet\n" : frame.table.c_str());
    std::fflush(stdout);
  }
};

int run_top(TopArgs& args, StopSignals& stop) {
  analysis::ReportOptions opt;
  uint64_t interval_ns = 0;
  try {
    apply_table_options(args.table, opt);
    interval_ns = parse_duration("--interval", args.interval, base::BareNumber::Seconds,
                                 kMinIntervalNs, kMaxIntervalNs);
  } catch (const OptionError& e) {
    base::error("%s", e.what());
    return 2;
  }
  if (args.record.opts.output == "-") {
    base::error("top -o -: stdout shows the table; give a file");
    return 2;
  }
  opt.long_names = args.long_names;
  const bool live = isatty(STDOUT_FILENO);
  std::unique_ptr<TopView> view;
  if (live) view = std::make_unique<TopScreen>();
  else view = std::make_unique<PrintedView>();
  TopSink sink(*view, interval_ns, opt);
  return run_recording(args.record.opts, stop, &sink);
}

}  // namespace

void add_top(cli::Command app, int& exit_status) {
  auto args = std::make_shared<TopArgs>();
  args->record.opts.output.clear();  // no trace file unless -o
  cli::Command cmd = app.subcommand(
      "top",
      "Show the selected functions of a running (-p PID) or launched (-- CMD) process live: "
      "a per-function table refreshed while recording");
  cmd.option("-o,--output", args->record.opts.output,
             "Also write the trace to FILE, as record does (default: no file)")
      .type_name("FILE");
  cmd.option("--interval", args->interval,
             "Time between refreshes, 100ms to 3600s (seconds without a unit)")
      .type_name("TIME")
      .default_text("1");
  add_table_options(cmd, args->table);
  cmd.flag("--long-names", args->long_names,
           "Full demangled names (parameters, templates) instead of short ones");
  add_recording_options(cmd, args->record);
  cmd.footer(
      "Examples:\n"
      "  atrace top -p 1234 --select='ns::*'\n"
      "  atrace top --select='main,compute*' --sort=self -- ./prog arg\n"
      "The table counts the calls that ended since the recording began (off-CPU time\n"
      "with the sched kernel group, on by default). On a terminal it is redrawn every\n"
      "--interval; q quits (Ctrl-C too). Otherwise one table is printed per interval,\n"
      "after a line giving its time, until --duration, Ctrl-C/SIGTERM or the target's\n"
      "exit; the last one is the whole recording's. A launched command runs on\n"
      "untraced after top ends, and top waits for it, as record does.");
  cmd.callback([args, cmd, &exit_status]() {
    // First: no stop signal may kill atrace or be lost from here on.
    StopSignals stop;
    if ((exit_status = finish_recording_options(cmd, args->record, "top"))) return;
    exit_status = run_top(*args, stop);
  });
}

}  // namespace atrace::tools
