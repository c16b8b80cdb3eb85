// atrace record: parse options, hand over to the recorder (record/recorder).
#include <memory>

#include "record/record.h"
#include "tools/commands.h"
#include "tools/record_options.h"

namespace atrace::tools {

void add_record(cli::Command app, int& exit_status) {
  auto args = std::make_shared<RecordArgs>();
  cli::Command cmd = app.subcommand(
      "record", "Record the selected functions of a running (-p PID) or launched (-- CMD) process");
  cmd.option("-o,--output", args->opts.output,
             "Trace file to write ('-' for stdout); an existing one becomes FILE.old")
      .type_name("FILE")
      .default_text("atrace.data");
  add_recording_options(cmd, *args);
  cmd.footer(
      "Examples:\n"
      "  atrace record --select='main,ns::*' -- ./prog arg\n"
      "  atrace record -p 1234 --select='libz.so*:deflate*' --duration=10\n"
      "  atrace record --usdt='myapp:request(str,int),libfoo.so*:foo:*' -- ./myapp\n"
      "Recording ends when the target exits, on SIGINT/SIGTERM, or after --duration;\n"
      "a launched command's exit status is passed on. After --duration a launched\n"
      "command runs on without probes and atrace waits for it (Ctrl-C passes on to it).\n"
      "An existing trace file is kept as FILE.old, as perf does.\n"
      "Functions detached by the relevance filter (default: --filter=absolute, 2us after\n"
      "1000 calls) are listed in OUTPUT.exclude, for --exclude=@OUTPUT.exclude next time.");
  cmd.callback([args, cmd, &exit_status]() {
    // First: no stop signal may kill atrace or be lost from here on.
    StopSignals stop;
    if ((exit_status = finish_recording_options(cmd, *args, "record"))) return;
    exit_status = run_recording(args->opts, stop);
  });
}

}  // namespace atrace::tools
