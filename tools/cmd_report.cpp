// `atrace report`: reads a trace once, builds the per-function profile (and
// the view asked for) and prints it as a text table or as JSON (the stable
// interface, docs/report-json.md); `--syscalls` prints the system calls per
// issuing function instead.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "analysis/analysis.h"
#include "base/diagnostics.h"
#include "formats/trace_reader.h"
#include "output/output.h"
#include "tools/commands.h"
#include "tools/filter_options.h"
#include "tools/option_values.h"
#include "tools/report_html_option.h"
#include "tools/report_view_options.h"
#include "tools/table_options.h"
#include "tools/terminal.h"

namespace atrace::tools {
namespace {

struct ReportArgs {
  std::string input = "atrace.data";
  TableArgs table;  // --sort, --fields
  std::string format = "text";
  bool threads = false;
  bool syscalls = false;
  bool compensate = false;
  bool long_names = false;
  std::string group_by;   // --group-by=arg1..arg6|retval|NAME (from @auto)
  ReportViewArgs views;   // --tree, --callers, --callees, --diff
  std::string html;       // --html=FILE
  FilterArgs filter;      // --tid, --pid, --comm, --time, --function
  TerminalArgs terminal;  // --color, --no-pager
};

int run_report(const ReportArgs& args) {
  analysis::ReportOptions opt;
  formats::EventFilter filter;
  try {
    filter = parse_filter(args.filter);
    apply_table_options(args.table, opt);
  } catch (const OptionError& e) {
    base::error("%s", e.what());
    return 2;
  }
  std::optional<uint8_t> group_slot;
  if (!args.group_by.empty()) group_slot = analysis::parse_group_key(args.group_by);
  try {
    formats::TraceReader reader(args.input);
    // A name --args=F@auto recorded (issue 31) stands for its slot, where
    // every function that has it has it at the same one.
    if (!args.group_by.empty() && !group_slot) {
      std::set<uint8_t> slots;
      for (const auto& p : reader.probes())
        for (size_t i = 0; i < p.arg_names.size(); ++i)
          if (p.arg_names[i] == args.group_by) slots.insert(static_cast<uint8_t>(i + 1));
      if (slots.size() != 1) {
        base::error(
            "--group-by: '%s' is not a recorded value (arg1 to arg6, retval, or "
            "an argument's name from --args=F@auto%s)",
            args.group_by.c_str(),
            slots.empty() ? "" : "; this name is not the same argument everywhere");
        return 2;
      }
      group_slot = *slots.begin();
    }
    if (filter.any()) reader.select(filter);
    // Compensation needs the costs calibrated when recording: without them
    // (older traces, failed calibration) the report stays raw and says so.
    const bool compensate = args.compensate && analysis::probe_costs(reader.header()).any();
    if (args.compensate && !compensate)
      base::warning(
          "--compensate: the trace has no calibrated probe "
          "costs; durations are not compensated");
    opt.threads = args.threads;
    opt.syscalls = args.syscalls;
    opt.compensated = compensate;
    opt.long_names = args.long_names;
    opt.color = args.format == "text" && use_color(args.terminal);

    // One pass over the trace whatever is printed: the profile and the
    // views asked for all listen to one replay.
    analysis::CallReplay replay(reader.probes());
    if (compensate) replay.compensate(analysis::probe_costs(reader.header()));
    analysis::ProfileBuilder profile_builder(replay, reader.probes());
    profile_builder.long_names(opt.long_names);
    profile_builder.per_thread_rows(opt.threads);  // only --threads shows them
    profile_builder.hosts(reader.hosts());
    std::optional<analysis::ValueGrouper> grouper;
    if (group_slot) grouper.emplace(replay, *group_slot);
    ReportViewArgs views = args.views;
    views.filter = filter;
    ReportView view(views, replay, reader, opt);
    std::optional<analysis::HtmlViews> html;
    if (!args.html.empty()) html.emplace(replay, reader, opt);
    reader.rewind();
    formats::Event ev;
    while (reader.next(ev)) replay.add(ev);
    replay.finish(reader.header().end_mono_ns);
    analysis::Profile profile = profile_builder.result(reader.threads(), reader.lost());

    // After reading: damage found in the events is warned about too.
    for (const auto& w : reader.warnings()) base::warning("%s", w.c_str());
    std::optional<analysis::ValueGroups> groups;
    if (grouper) groups = grouper->result();
    analysis::ReportInput in{reader.header(), profile, reader.warnings(),
                             groups ? &*groups : nullptr, &reader.processes()};
    in.hosts = analysis::host_labels(reader.hosts());
    if (html)
      return !write_report_html(args.html, html->data(reader, in, opt)) ? 1
             : reader.damaged()                                         ? 3
                                                                        : 0;
    auto rendered = view.render(args.input, reader, in, opt, args.format == "json");
    Pager pager(args.terminal);
    bool written = true;
    if (!rendered && args.format == "json") {
      // Streamed: with --threads it can be gigabytes (docs/report-json.md).
      analysis::write_json(in, opt, [&written](std::string_view piece) {
        if (written && std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size())
          written = false;
      });
    } else if (!rendered) {
      // std::cout writes through stdout (synced with stdio), the pager's pipe.
      analysis::write_text(in, opt, std::cout);
      written = static_cast<bool>(std::cout.flush());
    } else {
      written = std::fputs(rendered->c_str(), stdout) >= 0;
    }
    if (!written || std::fflush(stdout) != 0) {
      base::error("stdout: write failed: %s", base::errno_text(errno).c_str());
      return 1;
    }
    return reader.damaged() ? 3 : 0;  // the report is printed, but from a damaged file
  } catch (const formats::FilterError& e) {
    base::error("%s", e.what());
    return 2;
  } catch (const formats::TraceError& e) {
    base::error("%s", e.what());
    return 1;
  }
}

}  // namespace

void add_report(cli::Command app, int& exit_status) {
  auto args = std::make_shared<ReportArgs>();
  cli::Command cmd = app.subcommand(
      "report", "Per-function profile of a trace: calls, total (inclusive) and self time");
  cmd.option("-i,--input", args->input, "Trace file to read ('-' reads stdin)")
      .capture_default()
      .type_name("FILE");
  add_table_options(cmd, args->table);
  cmd.flag("--threads", args->threads,
           "One table per thread instead of all threads merged (with kernel events: "
           "each thread's on-CPU, off-CPU and system call totals too)");
  cmd.flag("--syscalls", args->syscalls,
           "Table of system calls per issuing function (count, total, avg, max, errors) "
           "instead of the function table; the JSON report has it as `syscalls`");
  cmd.flag("--compensate", args->compensate,
           "Take the probe cost of nested traced calls (calibrated when recording) out of "
           "durations; the report states the per-hit costs used");
  cmd.flag("--long-names", args->long_names,
           "Full demangled names (return type, parameters, template arguments) instead of "
           "short ones; the JSON report has both");
  cmd.option("--group-by", args->group_by,
             "Also the calls of each function that recorded it (record --args/--retval) "
             "grouped by one value: arg1 to arg6, retval, or an argument's name that "
             "--args=F@auto recorded; calls, total and avg per value");
  cmd.option("--format", args->format, "Output format: text or json")
      .type_name("FORMAT")
      .one_of({"text", "json"})
      .capture_default();
  add_filter_options(cmd, args->filter, false);
  add_terminal_options(cmd, args->terminal);
  add_report_view_options(cmd, args->views);
  add_report_html_option(cmd, args->html);
  cmd.callback([args, &exit_status] { exit_status = run_report(*args); });
}

}  // namespace atrace::tools
