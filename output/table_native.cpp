// A batch as a Native block in its sorting key's order (table_native.h).
#include "output/table_native.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <vector>

namespace atrace::analysis {
namespace {

static_assert(std::endian::native == std::endian::little,
              "Native integers are little-endian: copied as they are in memory");

using Kind = TableBatch::Column::Kind;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_string(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

// An integer column as the server orders it: a signed one's bits with the
// sign flipped compare as unsigned numbers do.
uint64_t sort_value(const TableBatch::Column& c, size_t row) {
  return c.kind == Kind::Signed ? c.nums[row] ^ (uint64_t{1} << 63) : c.nums[row];
}

// The rows' order by the table's sorting key: empty when they are in that
// order already. Key columns that hold one value in the whole batch (the
// trace id always) do not take part.
std::vector<uint32_t> sorted_order(const TableBatch& b) {
  const size_t n = b.rows();
  std::vector<size_t> key;
  for (size_t c : b.key()) {
    const TableBatch::Column& col = b.column(c);
    bool constant = true;
    for (size_t r = 1; r < n && constant; ++r)
      constant = col.kind == Kind::String ? b.str(c, r) == b.str(c, 0) : col.nums[r] == col.nums[0];
    if (!constant) key.push_back(c);
  }
  if (key.empty()) return {};
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const bool numeric = std::none_of(key.begin(), key.end(),
                                    [&](size_t c) { return b.column(c).kind == Kind::String; });
  if (numeric && key.size() <= 2) {
    // The common case (calls: function, start): the keys packed next to
    // the row, sorted in one pass over contiguous memory.
    struct Packed {
      uint64_t a, b;
      uint32_t row;
    };
    std::vector<Packed> packed(n);
    const TableBatch::Column& first = b.column(key[0]);
    const TableBatch::Column* second = key.size() > 1 ? &b.column(key[1]) : nullptr;
    bool in_order = true;
    for (size_t r = 0; r < n; ++r) {
      packed[r] = {sort_value(first, r), second ? sort_value(*second, r) : 0,
                   static_cast<uint32_t>(r)};
      if (r && (packed[r].a < packed[r - 1].a ||
                (packed[r].a == packed[r - 1].a && packed[r].b < packed[r - 1].b)))
        in_order = false;
    }
    if (in_order) return {};
    std::sort(packed.begin(), packed.end(), [](const Packed& x, const Packed& y) {
      return x.a != y.a ? x.a < y.a : x.b != y.b ? x.b < y.b : x.row < y.row;
    });
    for (size_t r = 0; r < n; ++r) order[r] = packed[r].row;
    return order;
  }
  auto less = [&](uint32_t x, uint32_t y) {
    for (size_t c : key) {
      const TableBatch::Column& col = b.column(c);
      if (col.kind == Kind::String) {
        const int cmp = b.str(c, x).compare(b.str(c, y));
        if (cmp) return cmp < 0;
      } else if (col.nums[x] != col.nums[y]) {
        return sort_value(col, x) < sort_value(col, y);
      }
    }
    return false;
  };
  if (std::is_sorted(order.begin(), order.end(), less)) return {};
  std::stable_sort(order.begin(), order.end(), less);
  return order;
}

template <unsigned Width>
void put_integers(std::string& out, const std::vector<uint64_t>& nums,
                  const std::vector<uint32_t>& order) {
  const size_t n = nums.size();
  const size_t at = out.size();
  out.resize(at + n * Width);
  char* p = out.data() + at;
  for (size_t r = 0; r < n; ++r, p += Width) {
    const uint64_t v = nums[order.empty() ? r : order[r]];
    std::memcpy(p, &v, Width);
  }
}

}  // namespace

void append_native(const TableBatch& batch, std::string& out) {
  const std::vector<uint32_t> order = sorted_order(batch);
  const size_t n = batch.rows();
  size_t size = out.size() + 16;  // one allocation for the block
  for (size_t c = 0; c < batch.columns(); ++c) {
    const TableBatch::Column& col = batch.column(c);
    size += 64 + (col.kind == Kind::String ? col.chars.size() + 10 * n : col.width * n);
  }
  out.reserve(size);
  put_varint(out, batch.columns());
  put_varint(out, n);
  for (size_t c = 0; c < batch.columns(); ++c) {
    const TableColumn& def = batch.def().columns[c];
    put_string(out, def.name);
    put_string(out, def.type);
    const TableBatch::Column& col = batch.column(c);
    switch (col.kind) {
      case Kind::String:
        for (size_t r = 0; r < n; ++r) put_string(out, batch.str(c, order.empty() ? r : order[r]));
        break;
      case Kind::Unsigned:
      case Kind::Signed:
        switch (col.width) {
          case 1: put_integers<1>(out, col.nums, order); break;
          case 2: put_integers<2>(out, col.nums, order); break;
          case 4: put_integers<4>(out, col.nums, order); break;
          default: put_integers<8>(out, col.nums, order); break;
        }
        break;
    }
  }
}

}  // namespace atrace::analysis
