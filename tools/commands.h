// The atrace subcommands: one file each (cmd_<name>.cpp), each adding itself
// to the CLI11 app. A subcommand's callback sets the process exit status
// through `exit_status`; errors meant for the user are printed as one line
// "atrace: ..." on stderr by the subcommand itself.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace atrace::tools {

// atrace's own command line, for trace headers.
const std::string& invocation();

void add_record(CLI::App& app, int& exit_status);
void add_report(CLI::App& app, int& exit_status);
void add_script(CLI::App& app, int& exit_status);
void add_convert(CLI::App& app, int& exit_status);
void add_info(CLI::App& app, int& exit_status);
void add_list(CLI::App& app, int& exit_status);

}  // namespace atrace::tools
