// The options `record` and `top` share: the target (-p PID or -- CMD), what
// to trace, the kernel events, the buffers and the relevance filters; and
// the one way a recording is run and its outcome said. One place, so the
// two commands take the same options with the same meaning and checks.
#pragma once

#include <set>
#include <string>

#include "record/record.h"
#include "tools/cli.h"

namespace atrace::tools {

struct RecordArgs {
  RecordOptions opts;
  std::string pid;
  std::string duration;
  std::string filter_min_calls;  // empty: 1000, with the early rule
  std::string filter_max_calls = "0";
  std::string filter_budget;  // empty: the default, 0 with --filter=off
  std::string buffer_size = "8M";
  std::string fast_path_buffer = "256M";
  std::string stack_depth = "32";
  std::string kernel;  // empty: not given, default_kernel_groups()
  bool no_kernel = false;
  std::string filter = "absolute";
  std::string filter_threshold = "2us";
  std::string attach = "auto";
  std::string fast_path;  // --fast-path[=all|hot]; empty: not given
  std::string full_command_line;
  std::set<std::string> given;  // the list options given, even empty
};

// Adds the shared options to `cmd` (the command's own, such as -o, before).
void add_recording_options(cli::Command cmd, RecordArgs& args);

// After parsing: checks and converts the values into args.opts; a bad one
// is one line on stderr and returns 2 (0: ready). `command` names the
// command in messages.
int finish_recording_options(cli::Command cmd, RecordArgs& args, const char* command);

// Records (record/recorder.h, with `sink` when given), then says what was
// lost and, when a file was written, what it holds; returns the exit
// status (a launched target's, 128 + signal when interrupted before the
// start, 1 on an error, said in one line).
int run_recording(const RecordOptions& opts, StopSignals& stop, EventSink* sink = nullptr);

}  // namespace atrace::tools
