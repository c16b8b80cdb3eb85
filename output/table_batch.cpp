// A table's batch, column by column (table_batch.h).
#include "output/table_batch.h"

#include <charconv>
#include <stdexcept>

namespace atrace::analysis {
namespace {

TableBatch::Column column_of(const TableColumn& c) {
  using Kind = TableBatch::Column::Kind;
  const std::string_view type = c.type;
  TableBatch::Column col{Kind::String};
  if (type == "String") return col;
  const bool is_signed = type.substr(0, 3) == "Int";
  const std::string_view bits = type.substr(is_signed ? 3 : 4);
  col.kind = is_signed ? Kind::Signed : Kind::Unsigned;
  if (bits == "8") col.width = 1;
  else if (bits == "16") col.width = 2;
  else if (bits == "32") col.width = 4;
  else if (bits == "64") col.width = 8;
  else throw std::logic_error(std::string("table column of type ") + c.type);
  return col;
}

}  // namespace

TableBatch::TableBatch(const TableDef& def) : def_(&def) {
  for (const auto& c : def.columns) columns_.push_back(column_of(c));
  // "a, b, c": each a column's name.
  const std::string_view order = def.order_by;
  for (size_t at = 0; at < order.size();) {
    size_t comma = order.find(',', at);
    if (comma == std::string_view::npos) comma = order.size();
    std::string_view name = order.substr(at, comma - at);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    size_t i = 0;
    while (i < def.columns.size() && name != def.columns[i].name) ++i;
    if (i == def.columns.size())
      throw std::logic_error("sorting key of " + std::string(def.name) + " names no column");
    key_.push_back(i);
    at = comma + 1;
  }
}

void TableBatch::clear() {
  for (auto& c : columns_) {
    c.nums.clear();
    c.ends.clear();
    c.chars.clear();
  }
  rows_ = 0;
}

TableBatch::Row::~Row() {
  assert(col_ == b_.columns_.size());  // every column given a value
  b_.rows_++;
}

void append_tsv_field(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '\0': out += "\\0"; break;
      default: out += c;
    }
  }
}

void append_tsv(const TableBatch& batch, std::string& out) {
  using Kind = TableBatch::Column::Kind;
  for (size_t r = 0; r < batch.rows(); ++r) {
    for (size_t c = 0; c < batch.columns(); ++c) {
      if (c) out += '\t';
      const TableBatch::Column& col = batch.column(c);
      char buf[24];
      std::to_chars_result end{};
      switch (col.kind) {
        case Kind::String: append_tsv_field(out, batch.str(c, r)); continue;
        case Kind::Unsigned: end = std::to_chars(buf, buf + sizeof buf, col.nums[r]); break;
        case Kind::Signed:
          end = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(col.nums[r]));
          break;
      }
      out.append(buf, end.ptr);
    }
    out += '\n';
  }
}

}  // namespace atrace::analysis
