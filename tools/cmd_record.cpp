// atrace record: parse options, hand over to the recorder (record/recorder).
#include <memory>
#include <optional>
#include <string>

#include "base/diagnostics.h"
#include "base/duration.h"
#include "output/output.h"
#include "record/record.h"
#include "tools/commands.h"
#include "tools/option_values.h"
#include "tools/record_options.h"
#include "tools/series_load.h"

namespace atrace::tools {

namespace {

// --rotate, --rotate-keep, --load (docs/recording-long.md).
struct RotateArgs {
  std::string rotate, keep, load;
};

// A size a file is cut at, or a time: "64M", "1G", "30s", "500ms".
void parse_rotate(const std::string& text, RotateOptions& r) {
  if (!text.empty() && text.back() == 's') {
    r.ns = parse_duration("--rotate", text, base::BareNumber::Seconds, 100'000'000,
                          365ull * 24 * 3600 * 1'000'000'000);
    return;
  }
  r.bytes = parse_bytes("--rotate", text, 64 << 10, 1ull << 40);
}

// Checks the rotation options; sets up what becomes of each finished file.
// Throws OptionError.
std::unique_ptr<SeriesFiles> rotation_options(cli::Command cmd, const RotateArgs& a,
                                              RecordOptions& o) {
  const bool keep = cmd.given("--rotate-keep"), load = cmd.given("--load");
  if (!cmd.given("--rotate")) {
    if (keep || load)
      throw OptionError(std::string(load ? "--load" : "--rotate-keep") +
                        ": needs --rotate=SIZE|TIME (one file: atrace convert --to=clickhouse)");
    return nullptr;
  }
  parse_rotate(a.rotate, o.rotate);
  if (o.output == "-") throw OptionError("--rotate: writes files, not stdout (-o FILE)");
  std::optional<uint64_t> kept;
  if (keep) {
    kept = parse_count("--rotate-keep", a.keep, 1'000'000);
    if (*kept == 0 && !load)
      throw OptionError("--rotate-keep: 0 keeps no file: only with --load, which loads each first");
  }
  if (load) analysis::parse_clickhouse_url(a.load);  // a bad URL fails before the target runs
  auto files = std::make_unique<SeriesFiles>(load ? a.load : "", kept, o.verbose);
  if (load || keep)
    o.rotate.file_done = [f = files.get()](const std::string& path) { f->done(path); };
  return files;
}

}  // namespace

void add_record(cli::Command app, int& exit_status) {
  auto args = std::make_shared<RecordArgs>();
  cli::Command cmd = app.subcommand(
      "record", "Record the selected functions of a running (-p PID) or launched (-- CMD) process");
  cmd.option("-o,--output", args->opts.output,
             "Trace file to write ('-' for stdout); an existing one becomes FILE.old")
      .type_name("FILE")
      .default_text("atrace.data");
  add_recording_options(cmd, *args);
  auto rot = std::make_shared<RotateArgs>();
  cmd.option("--rotate", rot->rotate,
             "Write a series of files, the next begun once the current one holds SIZE (e.g. "
             "64M) or spans TIME (e.g. 30s): FILE, then FILE's name with .1, .2, ... before "
             "its extension; each is self-contained, FILE reads the whole series, FILE.N from N on "
             "(docs/recording-long.md)")
      .type_name("SIZE|TIME");
  cmd.option("--rotate-keep", rot->keep,
             "With --rotate: keep only the N newest finished files, deleting older ones (with "
             "--load, each once loaded; 0: every file once loaded)")
      .type_name("N");
  cmd.option("--load", rot->load,
             "With --rotate: load each finished file into ClickHouse at http://HOST:PORT/DB, in "
             "the background, as a trace of its own (docs/tables.md)")
      .type_name("URL");
  cmd.footer(
      "Examples:\n"
      "  atrace record --select='main,ns::*' -- ./prog arg\n"
      "  atrace record -p 1234 --select='libz.so*:deflate*' --duration=10\n"
      "  atrace record --usdt='myapp:request(str,int),libfoo.so*:foo:*' -- ./myapp\n"
      "  atrace record -p 1234 --select='app:*' --rotate=30s --load=http://127.0.0.1:8123/db\n"
      "Recording ends when the target exits, on SIGINT/SIGTERM, or after --duration;\n"
      "a launched command's exit status is passed on. After --duration a launched\n"
      "command runs on without probes and atrace waits for it (Ctrl-C passes on to it).\n"
      "An existing trace file is kept as FILE.old, as perf does.\n"
      "Functions detached by the relevance filter (default: --filter=absolute, 2us after\n"
      "1000 calls) are listed in OUTPUT.exclude, for --exclude=@OUTPUT.exclude next time.");
  cmd.callback([args, rot, cmd, &exit_status]() {
    // First: no stop signal may kill atrace or be lost from here on.
    StopSignals stop;
    if ((exit_status = finish_recording_options(cmd, *args, "record"))) return;
    std::unique_ptr<SeriesFiles> files;
    try {
      files = rotation_options(cmd, *rot, args->opts);
    } catch (const std::exception& e) {  // OptionError, LoadError: one line
      base::error("%s", e.what());
      exit_status = 2;
      return;
    }
    exit_status = run_recording(args->opts, stop);
    if (files && !files->finish() && exit_status == 0) exit_status = 1;
  });
}

}  // namespace atrace::tools
