// The atrace subcommands: one file each (cmd_<name>.cpp), each adding itself
// to the command line (tools/cli.h). A subcommand's callback sets the
// process exit status through `exit_status`; errors meant for the user are
// printed as one line "atrace: ..." on stderr by the subcommand itself.
#pragma once

#include <string>

#include "tools/cli.h"

namespace atrace::tools {

// atrace's own command line, for trace headers.
const std::string& invocation();

void add_record(cli::Command app, int& exit_status);
void add_report(cli::Command app, int& exit_status);
void add_script(cli::Command app, int& exit_status);
void add_convert(cli::Command app, int& exit_status);
void add_info(cli::Command app, int& exit_status);
void add_merge(cli::Command app, int& exit_status);
void add_list(cli::Command app, int& exit_status);
void add_top(cli::Command app, int& exit_status);

}  // namespace atrace::tools
