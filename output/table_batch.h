// One batch of a typed table's rows (export_tables.h), held column by
// column in the columns' own types, and written out as TabSeparated text
// (`--to=tables`'s files) or as one block of ClickHouse's Native format
// (`--to=clickhouse`, table_native.h).
//
// Why columns and not text: the loader sends Native, which the server
// takes without parsing (measured on ClickHouse 18.16, docs/BENCHMARKS.md:
// a million calls cost it 1.2 CPU-s as TSV, 0.6 as sorted Native), and
// numbers appended to a column cost far less than printed ones (printing
// was half of the loader's CPU).
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace atrace::analysis {

struct TableColumn {
  const char* name;
  const char* type;  // ClickHouse 18.16's type name
};

struct TableDef {
  const char* name;
  std::vector<TableColumn> columns;
  const char* order_by;  // the MergeTree sorting key
};

class TableBatch {
 public:
  // What a column holds: an integer of `width` bytes (its ClickHouse type
  // UInt8..UInt64 or Int8..Int64) or a String.
  struct Column {
    enum class Kind { Unsigned, Signed, String } kind;
    unsigned width = 8;          // bytes of an integer on the wire
    std::vector<uint64_t> nums;  // integers (a signed one's bits)
    std::vector<uint32_t> ends;  // strings: where each row's ends in `chars`
    std::string chars;
  };

  // The row being appended: one value per column, in the table's column
  // order (a value of another kind than its column's is a bug, caught in
  // debug builds); the row counts once it is destroyed.
  class Row {
   public:
    explicit Row(TableBatch& b) : b_(b) {}
    ~Row();
    Row(const Row&) = delete;
    Row& operator=(const Row&) = delete;
    // Inline: a call's row is 27 of these.
    Row& u(uint64_t v) {
      Column& c = next();
      assert(c.kind == Column::Kind::Unsigned);
      c.nums.push_back(v);
      return *this;
    }
    Row& i(int64_t v) {
      Column& c = next();
      assert(c.kind == Column::Kind::Signed);
      c.nums.push_back(static_cast<uint64_t>(v));
      return *this;
    }
    Row& s(std::string_view v) {
      Column& c = next();
      assert(c.kind == Column::Kind::String);
      c.chars.append(v);
      c.ends.push_back(static_cast<uint32_t>(c.chars.size()));
      return *this;
    }

   private:
    Column& next() {
      assert(col_ < b_.columns_.size());
      return b_.columns_[col_++];
    }
    TableBatch& b_;
    size_t col_ = 0;
  };

  explicit TableBatch(const TableDef& def);
  TableBatch(const TableBatch&) = delete;
  TableBatch& operator=(const TableBatch&) = delete;

  const TableDef& def() const { return *def_; }
  size_t rows() const { return rows_; }
  Row row() { return Row(*this); }
  // Empties the batch, keeping its memory for the next one.
  void clear();

  const Column& column(size_t c) const { return columns_[c]; }
  size_t columns() const { return columns_.size(); }
  std::string_view str(size_t c, size_t row) const {
    const Column& col = columns_[c];
    const uint32_t begin = row ? col.ends[row - 1] : 0;
    return std::string_view(col.chars).substr(begin, col.ends[row] - begin);
  }
  // The columns of the table's sorting key (its `order_by`), in order.
  const std::vector<size_t>& key() const { return key_; }

 private:
  const TableDef* def_;
  std::vector<Column> columns_;
  std::vector<size_t> key_;
  size_t rows_ = 0;
};

// The batch's rows as TabSeparated lines in the order they were added
// (tab, newline, carriage return, backslash and NUL escaped as ClickHouse
// reads them), appended to `out`.
void append_tsv(const TableBatch& batch, std::string& out);

// TabSeparated escaping of one field.
void append_tsv_field(std::string& out, std::string_view s);

}  // namespace atrace::analysis
