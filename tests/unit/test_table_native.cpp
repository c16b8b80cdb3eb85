// A table's batch as a ClickHouse Native block (output/table_native.h):
// decoded here byte by byte, its rows must be the batch's rows, in the
// order of the table's sorting key (what lets the server skip its sort),
// each value in its column's width. tests/integration/test_tables*.cpp
// load real recordings into real servers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "output/output.h"

using namespace atrace;

namespace {

// Reads a Native block back: the columns' names, types and values (an
// integer widened to 64 bits, a string as it is).
struct Decoded {
  std::vector<std::string> names, types;
  std::vector<std::vector<std::string>> strings;  // by column: its rows
  std::vector<std::vector<uint64_t>> ints;
  size_t rows = 0;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<uint8_t>(s_.at(at_++));
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::string str() {
    const size_t n = varint();
    std::string out = s_.substr(at_, n);
    at_ += n;
    return out;
  }
  uint64_t fixed(size_t width) {
    uint64_t v = 0;
    std::memcpy(&v, s_.data() + at_, width);
    at_ += width;
    return v;
  }
  bool done() const { return at_ == s_.size(); }

 private:
  const std::string& s_;
  size_t at_ = 0;
};

Decoded decode(const std::string& block) {
  Reader r(block);
  Decoded d;
  const size_t columns = r.varint();
  d.rows = r.varint();
  d.strings.resize(columns);
  d.ints.resize(columns);
  for (size_t c = 0; c < columns; ++c) {
    d.names.push_back(r.str());
    d.types.push_back(r.str());
    const std::string& t = d.types.back();
    const size_t width = t == "String"                       ? 0
                         : t.find("64") != std::string::npos ? 8
                         : t.find("32") != std::string::npos ? 4
                         : t.find("16") != std::string::npos ? 2
                                                             : 1;
    for (size_t row = 0; row < d.rows; ++row) {
      if (width) d.ints[c].push_back(r.fixed(width));
      else d.strings[c].push_back(r.str());
    }
  }
  EXPECT_TRUE(r.done()) << "bytes after the block";
  return d;
}

const analysis::TableDef kDef = {"t",
                                 {{"trace_id", "UInt64"},
                                  {"kind", "String"},
                                  {"fn", "UInt32"},
                                  {"start", "UInt64"},
                                  {"delta", "Int64"},
                                  {"flag", "UInt8"},
                                  {"host", "UInt16"}},
                                 "trace_id, kind, fn, start"};

}  // namespace

TEST(TableNative, RowsInSortingKeyOrderEachValueInItsWidth) {
  analysis::TableBatch b(kDef);
  // (kind, fn, start) out of order; the trace id is the same in every row.
  const struct {
    const char* kind;
    uint32_t fn;
    uint64_t start;
    int64_t delta;
  } rows[] = {{"syscall", 2, 50, -1}, {"offcpu", 7, 10, 2},   {"syscall", 1, 90, -3},
              {"offcpu", 2, 30, 4},   {"syscall", 1, 20, -5}, {"offcpu", 2, 5, 6},
              {"a\tb\n", 9, 1, 0}};
  for (const auto& x : rows)
    b.row().u(77).s(x.kind).u(x.fn).u(x.start).i(x.delta).u(x.fn == 9 ? 255 : 1).u(65535);
  ASSERT_EQ(b.rows(), 7u);

  std::string block;
  analysis::append_native(b, block);
  const Decoded d = decode(block);
  ASSERT_EQ(d.rows, 7u);
  EXPECT_EQ(d.names,
            (std::vector<std::string>{"trace_id", "kind", "fn", "start", "delta", "flag", "host"}));
  EXPECT_EQ(d.types[4], "Int64");
  EXPECT_EQ(d.strings[1], (std::vector<std::string>{"a\tb\n", "offcpu", "offcpu", "offcpu",
                                                    "syscall", "syscall", "syscall"}));
  EXPECT_EQ(d.ints[2], (std::vector<uint64_t>{9, 2, 2, 7, 1, 1, 2}));
  EXPECT_EQ(d.ints[3], (std::vector<uint64_t>{1, 5, 30, 10, 20, 90, 50}));
  std::vector<int64_t> deltas;
  for (uint64_t v : d.ints[4]) deltas.push_back(static_cast<int64_t>(v));
  EXPECT_EQ(deltas, (std::vector<int64_t>{0, 6, 4, 2, -5, -3, -1}));
  EXPECT_EQ(d.ints[5], (std::vector<uint64_t>{255, 1, 1, 1, 1, 1, 1}));  // one byte each
  EXPECT_EQ(d.ints[6], std::vector<uint64_t>(7, 65535));
  EXPECT_EQ(d.ints[0], std::vector<uint64_t>(7, 77));

  // The text of the same batch keeps the order the rows were made in.
  std::string tsv;
  analysis::append_tsv(b, tsv);
  EXPECT_EQ(tsv.substr(0, tsv.find('\n')), "77\tsyscall\t2\t50\t-1\t1\t65535");
  EXPECT_NE(tsv.find("77\ta\\tb\\n\t9\t1\t0\t255\t65535\n"), std::string::npos);
}

TEST(TableNative, NumericKeysAndRowsAlreadyInOrder) {
  // Two numeric keys (the packed sort) with ties, and a batch in order.
  const analysis::TableDef def = {"calls",
                                  {{"trace_id", "UInt64"},
                                   {"function_id", "UInt32"},
                                   {"start_ns", "UInt64"},
                                   {"call_id", "UInt64"}},
                                  "trace_id, function_id, start_ns"};
  analysis::TableBatch b(def);
  const uint64_t calls[][3] = {{3, 100, 1}, {1, 200, 2}, {3, 50, 3}, {1, 200, 4}, {2, 0, 5}};
  for (const auto& c : calls) b.row().u(1).u(c[0]).u(c[1]).u(c[2]);
  std::string block;
  analysis::append_native(b, block);
  Decoded d = decode(block);
  EXPECT_EQ(d.ints[1], (std::vector<uint64_t>{1, 1, 2, 3, 3}));
  EXPECT_EQ(d.ints[2], (std::vector<uint64_t>{200, 200, 0, 50, 100}));
  EXPECT_EQ(d.ints[3], (std::vector<uint64_t>{2, 4, 5, 3, 1}));  // ties in the order made

  // A first key of values far apart (not counted into ranges): the same
  // order.
  b.clear();
  const uint64_t wide[][3] = {
      {3000000, 100, 1}, {1, 200, 2}, {3000000, 50, 3}, {1, 200, 4}, {2, 0, 5}};
  for (const auto& c : wide) b.row().u(1).u(c[0]).u(c[1]).u(c[2]);
  block.clear();
  analysis::append_native(b, block);
  d = decode(block);
  EXPECT_EQ(d.ints[1], (std::vector<uint64_t>{1, 1, 2, 3000000, 3000000}));
  EXPECT_EQ(d.ints[3], (std::vector<uint64_t>{2, 4, 5, 3, 1}));

  b.clear();
  EXPECT_EQ(b.rows(), 0u);
  for (uint64_t i = 0; i < 4; ++i) b.row().u(1).u(i / 2).u(i).u(i + 10);
  block.clear();
  analysis::append_native(b, block);
  d = decode(block);
  EXPECT_EQ(d.ints[3], (std::vector<uint64_t>{10, 11, 12, 13}));
}
