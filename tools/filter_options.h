// The read filters' options (--tid, --pid, --comm, --time, --function and,
// for script, --kind): added to report, script and convert by one
// function, parsed by one, applied by the reader (formats/event_filter.h).
#pragma once

#include <string>

#include "formats/event_filter.h"
#include "tools/cli.h"

namespace atrace::tools {

struct FilterArgs {
  std::string tid, pid, comm, time, function, kind, host;
};

// `kinds`: the command has --kind (script).
void add_filter_options(cli::Command cmd, FilterArgs& args, bool kinds);
// Throws OptionError (tools/option_values.h) naming the option.
formats::EventFilter parse_filter(const FilterArgs& args);

}  // namespace atrace::tools
