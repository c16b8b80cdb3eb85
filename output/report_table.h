// The text reports' tables: columns padded to their widest cell, numbers
// right-aligned, names left-aligned. The last column is never padded, so
// long names do not push trailing blanks into every line.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace atrace::analysis {

class Table {
 public:
  // Columns left-aligned besides the last (which always is).
  explicit Table(std::vector<size_t> left_columns = {}) : left_(std::move(left_columns)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // The first row (the column names) in bold (--color; widths unchanged).
  void bold_header(bool on) { bold_ = on; }
  void print(std::ostream& out) const {
    std::vector<size_t> width;
    for (const auto& r : rows_)
      for (size_t i = 0; i < r.size(); i++) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], r[i].size());
      }
    for (size_t n = 0; n < rows_.size(); n++) {
      const auto& r = rows_[n];
      std::string line = n == 0 && bold_ ? "\x1b[1m" : "";
      for (size_t i = 0; i < r.size(); i++) {
        if (i) line += "  ";
        std::string pad(width[i] - r[i].size(), ' ');
        if (i + 1 == r.size()) line += r[i];
        else if (std::find(left_.begin(), left_.end(), i) != left_.end()) line += r[i] + pad;
        else line += pad + r[i];
      }
      out << line << (n == 0 && bold_ ? "\x1b[0m\n" : "\n");
    }
  }

 private:
  std::vector<size_t> left_;
  bool bold_ = false;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace atrace::analysis
