// `atrace convert --to=tables -o DIR` and `--to=clickhouse -o URL`: the
// typed tables (docs/tables.md) as files or into a server. The formats
// whose output is not one stream: tools/cmd_convert.cpp's rows for them
// have no exporter and land here once the trace is open.
#pragma once

#include <string>

namespace atrace::formats {
class TraceReader;
}

namespace atrace::tools {

// `format`: "tables" or "clickhouse"; `filters`: the read filters as given
// (part of the trace id); `cluster`: --cluster. Prints its own lines;
// returns the exit status.
int convert_tables(formats::TraceReader& reader, const std::string& format,
                   const std::string& output, const std::string& filters,
                   const std::string& cluster = "");

}  // namespace atrace::tools
