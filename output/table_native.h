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

#include <cstdint>
#include <string>
#include <vector>

#include "output/table_batch.h"

namespace atrace::analysis {

// Appends the block to `out`. An encoder keeps its sorting memory from one
// batch to the next.
class NativeEncoder {
 public:
  void append(const TableBatch& batch, std::string& out);

 private:
  void sort(const TableBatch& batch);
  void sort_numeric(const TableBatch& batch, const std::vector<size_t>& key);
  struct Keyed {
    uint64_t value;
    uint32_t row;
    bool operator<(const Keyed& o) const {
      return value != o.value ? value < o.value : row < o.row;
    }
  };
  std::vector<uint32_t> order_;  // the rows in the key's order; empty: as made
  std::vector<Keyed> keyed_;
  std::vector<uint32_t> starts_, buckets_;
};
void append_native(const TableBatch& batch, std::string& out);

}  // namespace atrace::analysis
