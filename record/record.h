// record/: the public face of the recording engine, for tools/ (the one
// header a file outside record/ includes; tests/check_layering.py).
//
//   recorder.h      RecordOptions, Recorder::run: one recording end to end
//   event_sink.h    what gets a recording's events besides the file (top)
//   stop_signals.h  SIGINT/SIGTERM/SIGHUP blocked from the first instant
//   features.h      what the running kernel offers (`atrace info`, `list`)
//   kernel_groups.h the kernel event groups (--kernel) and their parsing
#pragma once

#include "record/event_sink.h"
#include "record/features.h"
#include "record/kernel_groups.h"
#include "record/recorder.h"
#include "record/stop_signals.h"
