// `atrace script`: every event of a trace in global time order, one a line,
// perf-script style (docs/script.md). It streams: the reader merges the
// threads' blocks in bounded memory and lines leave in 64 KiB writes, so
// `atrace script | head` prints at once and stops as soon as head is done.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "base/diagnostics.h"
#include "formats/trace_reader.h"
#include "output/output.h"
#include "tools/commands.h"
#include "tools/filter_options.h"
#include "tools/frame_symbols.h"
#include "tools/option_values.h"
#include "tools/terminal.h"

namespace atrace::tools {
namespace {

struct ScriptArgs {
  std::string input = "atrace.data";
  std::string fields;
  FilterArgs filter;
  TerminalArgs terminal;
};

enum class WriteStatus { Ok, Closed, Failed };

// A reader that went away (head, less quitting) closes the pipe: that ends
// the output, it is not an error worth a message.
WriteStatus write_all(const std::string& buf) {
  const char* p = buf.data();
  size_t left = buf.size();
  while (left) {
    ssize_t n = ::write(STDOUT_FILENO, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) return WriteStatus::Closed;
      base::error("stdout: write failed: %s", base::errno_text(errno).c_str());
      return WriteStatus::Failed;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return WriteStatus::Ok;
}

void warn_from(const formats::TraceReader& reader, size_t first) {
  const auto& w = reader.warnings();
  for (size_t i = first; i < w.size(); ++i) base::warning("%s", w[i].c_str());
}

int run_script(const ScriptArgs& args) {
  auto fields = analysis::default_script_fields();
  if (!args.fields.empty()) {
    std::string error;
    auto parsed = analysis::parse_script_fields(args.fields, error);
    if (!parsed) {
      base::error("%s", error.c_str());
      return 1;
    }
    fields = std::move(*parsed);
  }
  formats::EventFilter filter;
  try {
    filter = parse_filter(args.filter);
  } catch (const OptionError& e) {
    base::error("%s", e.what());
    return 2;
  }
  // A closed pipe must show up as EPIPE from write(), not kill the process
  // with a status the shell may complain about.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    formats::TraceReader reader(args.input);
    if (filter.any()) reader.select(filter);
    // Damage found at open is said before the events; more can turn up while
    // blocks are decoded, said at the end (as `atrace report` does).
    warn_from(reader, 0);
    size_t warned = reader.warnings().size();
    if (uint64_t lost = reader.lost().total())
      base::warning(
          "%llu events were lost while recording (ring buffers full): "
          "some calls lack their entry or exit",
          static_cast<unsigned long long>(lost));

    analysis::ScriptFormatter formatter(reader.header(), reader.probes(), reader.threads(),
                                        std::move(fields));
    formatter.color(use_color(args.terminal));
    formatter.set_processes(reader.processes());
    formatter.set_hosts(reader.hosts());
    // Stack frames and fault ips are named against the modules mapped so
    // far (record --stack; a fault in a recorded module).
    const analysis::FrameResolver frames = trace_frames(reader);
    formatter.name_code([&frames](const formats::Event& fault) {
      analysis::StackFrame f = frames.resolve(fault.pid, fault.arg1);
      return f.function.empty() ? std::string() : " " + analysis::frame_text(f);
    });
    Pager pager(args.terminal);
    constexpr size_t kChunk = 64 * 1024;
    std::string buf = formatter.preamble();
    buf.reserve(kChunk + 4096);
    WriteStatus status = WriteStatus::Ok;
    formats::Event ev;
    while (reader.next(ev)) {
      formatter.format(ev, buf);
      if (!ev.stack.empty()) analysis::append_stack_lines(frames.resolve(ev), buf);
      if (buf.size() >= kChunk) {
        status = write_all(buf);
        buf.clear();
        if (status != WriteStatus::Ok) break;
      }
    }
    if (status == WriteStatus::Ok) status = write_all(buf);
    if (status == WriteStatus::Closed) return 0;  // the reader has seen enough
    if (status == WriteStatus::Failed) return 1;
    warn_from(reader, warned);
    return reader.damaged() ? 3 : 0;  // every readable event is printed, but the file is damaged
  } catch (const formats::FilterError& e) {
    base::error("%s", e.what());
    return 2;
  } catch (const formats::TraceError& e) {
    base::error("%s", e.what());
    return 1;
  }
}

}  // namespace

void add_script(cli::Command app, int& exit_status) {
  auto args = std::make_shared<ScriptArgs>();
  cli::Command cmd = app.subcommand(
      "script", "Every event in time order, one a line (perf script style; docs/script.md)");
  cmd.option("-i,--input", args->input, "Trace file to read ('-' reads stdin)")
      .capture_default()
      .type_name("FILE");
  cmd.option("-F,--fields", args->fields,
             "Columns, in order: comm,tid,pid,cpu,time,kind,details (default all but pid); "
             "+FIELD/-FIELD edit the default")
      .type_name("FIELDS")
      .completes(analysis::script_field_names(), true, true);
  add_filter_options(cmd, args->filter, true);
  add_terminal_options(cmd, args->terminal);
  cmd.callback([args, &exit_status] { exit_status = run_script(*args); });
}

}  // namespace atrace::tools
