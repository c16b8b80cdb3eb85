// `atrace convert --to=clickhouse -o http://HOST:PORT/DB`: the typed tables
// (export_tables.h) inserted into a ClickHouse server over its HTTP
// interface (docs/tables.md), ClickHouse 18.16 (Debian 12's) and later.
//
// The load: the database and tables are created when missing, and an
// existing table must have exactly atrace's columns; a trace whose id is in
// `traces` already is not loaded again; rows go in batches of about
// 100,000 per INSERT, the `traces` row last. Every table is partitioned by
// trace_id, so what a failed load left is dropped as one partition per
// table, before the error is told, and again before any load of that trace
// (a load killed half way is cleaned up by the next). A connection refused
// is retried a few times; an error once data was sent is not (MergeTree
// does not deduplicate a repeated INSERT).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "output/export_tables.h"

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

// A load failed: one line for the user.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// http://HOST[:PORT][,HOST[:PORT]...][/DB]: the servers and the database
// ("atrace" when the URL names none). Several servers are a cluster's
// shards (--cluster): each one's HTTP interface. Throws LoadError for
// another scheme or a database name that is not [A-Za-z0-9_]+.
struct ClickHouseUrl {
  std::string server;                // the first: "http://127.0.0.1:8123"
  std::vector<std::string> servers;  // all of them, the first first
  std::string db;
};
ClickHouseUrl parse_clickhouse_url(const std::string& url);

struct LoadResult {
  uint64_t trace_id = 0;
  bool already_loaded = false;  // nothing was inserted
  TableCounts counts;           // rows inserted per table
};

// Loads every event of `reader` (its read filters applied; `salt` names
// them for the trace id). Throws LoadError, for the server's errors and
// the reader's alike, once what it inserted is removed (its message says
// so, or what was left when the server could not be asked to).
//
// `cluster` (--cluster=NAME, a cluster of the servers' `remote_servers`):
// the URL lists every shard's server; each gets the MergeTree tables as
// NAME_local and a Distributed table NAME over the cluster (so queries
// read the same names), the rows go through the first server's
// Distributed tables (insert_distributed_sync: an INSERT returns once
// every shard holds its rows), and a failed load's rows are dropped on
// every shard. "" loads into plain MergeTree tables of one server.
LoadResult load_clickhouse(formats::TraceReader& reader, const std::string& url,
                           const std::string& salt, size_t batch_rows = 100000,
                           const std::string& cluster = "");

}  // namespace atrace::analysis
