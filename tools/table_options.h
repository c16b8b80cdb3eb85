// --sort and --fields, the function table's options, shared by `report`
// and `top` (the same table): one help text, one parser.
#pragma once

#include <string>

#include "output/output.h"
#include "tools/cli.h"

namespace atrace::tools {

struct TableArgs {
  std::string sort = "total";
  std::string fields;  // comma-separated; empty: the default columns
};

void add_table_options(cli::Command cmd, TableArgs& args);

// Sets opt.sort, opt.then_sort and opt.fields; throws OptionError naming
// the option and what it takes.
void apply_table_options(const TableArgs& args, analysis::ReportOptions& opt);

}  // namespace atrace::tools
