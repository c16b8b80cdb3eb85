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

}  // namespace

// The rows' order by the table's sorting key, in order_: empty when they
// are in that order already. Key columns that hold one value in the whole
// batch (the trace id always) do not take part.
void NativeEncoder::sort(const TableBatch& b) {
  order_.clear();
  const size_t n = b.rows();
  std::vector<size_t> key;
  for (size_t c : b.key()) {
    const TableBatch::Column& col = b.column(c);
    bool constant = true;
    for (size_t r = 1; r < n && constant; ++r)
      constant = col.kind == Kind::String ? b.str(c, r) == b.str(c, 0) : col.nums[r] == col.nums[0];
    if (!constant) key.push_back(c);
  }
  if (key.empty()) return;
  const bool numeric = std::none_of(key.begin(), key.end(),
                                    [&](size_t c) { return b.column(c).kind == Kind::String; });
  if (numeric && key.size() <= 2) {
    sort_numeric(b, key);
    return;
  }
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
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
  if (std::is_sorted(order_.begin(), order_.end(), less)) order_.clear();
  else std::stable_sort(order_.begin(), order_.end(), less);
}

// The common case (calls: function, start; messages: host, time): one or
// two integer keys. When the first takes few values (a batch's functions,
// hosts), the rows are counted into one range per value, in the order
// made, and each range is sorted by the second key alone; otherwise both
// keys are packed next to the row and sorted in one pass.
void NativeEncoder::sort_numeric(const TableBatch& b, const std::vector<size_t>& key) {
  const size_t n = b.rows();
  const TableBatch::Column& first = b.column(key[0]);
  const TableBatch::Column* second = key.size() > 1 ? &b.column(key[1]) : nullptr;
  uint64_t lo = UINT64_MAX, hi = 0;
  bool in_order = true;
  for (size_t r = 0; r < n; ++r) {
    const uint64_t a = sort_value(first, r);
    lo = std::min(lo, a);
    hi = std::max(hi, a);
    if (r && in_order) {
      const uint64_t prev = sort_value(first, r - 1);
      in_order = prev < a ||
                 (prev == a && (!second || sort_value(*second, r - 1) <= sort_value(*second, r)));
    }
  }
  if (in_order) return;
  keyed_.resize(n);
  if (hi - lo < n) {
    starts_.assign(hi - lo + 2, 0);
    for (size_t r = 0; r < n; ++r) starts_[sort_value(first, r) - lo + 1]++;
    for (size_t v = 1; v < starts_.size(); ++v) starts_[v] += starts_[v - 1];
    std::vector<uint32_t>& at = buckets_;
    at.assign(starts_.begin(), starts_.end());
    for (size_t r = 0; r < n; ++r)
      keyed_[at[sort_value(first, r) - lo]++] = {second ? sort_value(*second, r) : 0,
                                                 static_cast<uint32_t>(r)};
    if (second)
      for (size_t v = 0; v + 1 < starts_.size(); ++v)
        std::sort(keyed_.begin() + starts_[v], keyed_.begin() + starts_[v + 1]);
  } else {
    // Both keys in one: the first's rank is not known, so sort on pairs of
    // (first, row) then by the second within equal firsts.
    for (size_t r = 0; r < n; ++r) keyed_[r] = {sort_value(first, r), static_cast<uint32_t>(r)};
    std::sort(keyed_.begin(), keyed_.end());
    if (second)
      for (size_t from = 0; from < n;) {
        size_t to = from + 1;
        while (to < n && keyed_[to].value == keyed_[from].value) ++to;
        for (size_t i = from; i < to; ++i) keyed_[i].value = sort_value(*second, keyed_[i].row);
        std::sort(keyed_.begin() + from, keyed_.begin() + to);
        from = to;
      }
  }
  order_.resize(n);
  for (size_t r = 0; r < n; ++r) order_[r] = keyed_[r].row;
}

namespace {

template <unsigned Width>
void put_integers(std::string& out, const std::vector<uint64_t>& nums,
                  const std::vector<uint32_t>& order) {
  const size_t n = nums.size();
  const size_t at = out.size();
  out.resize(at + n * Width);
  char* p = out.data() + at;
  if (order.empty()) {
    for (size_t r = 0; r < n; ++r, p += Width) std::memcpy(p, &nums[r], Width);
    return;
  }
  // A gather: the reads ahead are asked for early (the loop waited on
  // each one, most of the encoding's time).
  constexpr size_t kAhead = 16;
  for (size_t r = 0; r < n; ++r, p += Width) {
    if (r + kAhead < n) __builtin_prefetch(&nums[order[r + kAhead]]);
    std::memcpy(p, &nums[order[r]], Width);
  }
}

}  // namespace

void append_native(const TableBatch& batch, std::string& out) {
  NativeEncoder().append(batch, out);
}

void NativeEncoder::append(const TableBatch& batch, std::string& out) {
  sort(batch);
  const std::vector<uint32_t>& order = order_;
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
