// Typed tables from a trace (docs/tables.md): `atrace convert --to=tables`
// writes them as TSV files, `--to=clickhouse` inserts them into a server
// (clickhouse_load.h). One row per recording, process, thread, function,
// call, kernel interval, message, matched send/receive pair and
// relevance-filter decision, each keyed by the trace's id, so that many
// traces live in the same tables.
//
// The rows come from the one call replay (analysis/call_replay.h): a call's
// duration, self time and end are the ones `atrace report` counts, so SQL
// over `calls` gives report's numbers. Rows are handed to a TableSink in
// batches, the `traces` row last: a sink that stops half way leaves rows
// without their `traces` row, which is how a half load is told apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "output/table_batch.h"

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

// Every table, in the order their rows are handed over (`traces` last).
const std::vector<TableDef>& table_defs();

// `CREATE TABLE IF NOT EXISTS` statements, one per table and each ending
// in ";\n", for database `db` ("": unqualified names). Every table is a
// MergeTree partitioned by trace_id (a trace's rows are dropped as one
// partition).
std::string table_schema(const TableDef& t, const std::string& db);
std::string tables_schema_sql(const std::string& db);

// The trace's id: XXH3-64 of what identifies the recording (its header,
// every host's identity, its probe table, its event count) and of `salt`
// (the read filters, so a filtered read is another trace). The same file
// read with the same filters always gives the same id.
uint64_t trace_id(formats::TraceReader& reader, const std::string& salt);

// Where the rows go.
class TableSink {
 public:
  virtual ~TableSink() = default;
  // A batch of one table's rows (its def()), in the order they were made;
  // the exporter empties it once this returns.
  virtual void rows(const TableBatch& batch) = 0;
};

// Rows handed over per table.
struct TableCounts {
  std::vector<uint64_t> rows;  // by table_defs()'s index
  uint64_t of(const char* table) const;
};

// Reads every event of `reader` (from its first) and hands `sink` each
// table's rows in batches of about `batch_rows`, the `traces` row(s) last.
// Throws what the reader or the sink throws.
TableCounts export_tables(formats::TraceReader& reader, uint64_t trace_id, TableSink& sink,
                          size_t batch_rows = 100000);

}  // namespace atrace::analysis
