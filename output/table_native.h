// A table's batch (table_batch.h) as one block of ClickHouse's Native
// format, what `INSERT INTO db.table FORMAT Native` reads over HTTP: the
// column and row counts, then each column's name, type and values (an
// integer in its width, little-endian; a string as its length, a varint,
// and its bytes).
//
// The rows go in the order of the table's sorting key: a MergeTree server
// that receives a block already sorted skips sorting it (ClickHouse's
// isAlreadySorted; measured on 18.16, a third of its CPU for `calls`,
// docs/BENCHMARKS.md). The rows are the same; only their order differs,
// which a MergeTree does not keep anyway.
#pragma once

#include <string>

#include "output/table_batch.h"

namespace atrace::analysis {

// Appends the block to `out`.
void append_native(const TableBatch& batch, std::string& out);

}  // namespace atrace::analysis
