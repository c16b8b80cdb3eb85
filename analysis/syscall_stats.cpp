#include "analysis/syscall_stats.h"

#include <algorithm>

namespace atrace::analysis {

namespace {
// Real numbers stay below a few hundred; larger ones (a damaged or hostile
// file) are searched for linearly instead of growing the index.
constexpr uint64_t kMaxDenseNr = 1024;
}  // namespace

void SyscallTable::add(const ClosedSyscall& c) {
  if (c.key >= table_of_key_.size()) table_of_key_.resize(c.key + 1, 0);
  uint32_t& table = table_of_key_[c.key];
  if (!table) {
    tables_.emplace_back();
    table = static_cast<uint32_t>(tables_.size());
  }
  PerFunction& f = tables_[table - 1];

  SyscallCount* row = nullptr;
  if (c.nr < kMaxDenseNr) {
    if (c.nr >= f.row_of_nr.size()) f.row_of_nr.resize(c.nr + 1, 0);
    uint32_t& index = f.row_of_nr[c.nr];
    if (!index) {
      f.rows.push_back(SyscallCount{c.key, c.nr, 0, 0, 0, 0});
      index = static_cast<uint32_t>(f.rows.size());
    }
    row = &f.rows[index - 1];
  } else {
    auto it = std::find_if(f.rows.begin(), f.rows.end(),
                           [&](const SyscallCount& r) { return r.nr == c.nr; });
    if (it == f.rows.end()) {
      f.rows.push_back(SyscallCount{c.key, c.nr, 0, 0, 0, 0});
      it = f.rows.end() - 1;
    }
    row = &*it;
  }
  row->count++;
  row->total_ns += c.ns;
  row->max_ns = std::max(row->max_ns, c.ns);
  if (c.error) row->errors++;
}

std::vector<SyscallCount> SyscallTable::rows() const {
  std::vector<SyscallCount> out;
  for (const auto& f : tables_) out.insert(out.end(), f.rows.begin(), f.rows.end());
  return out;
}

}  // namespace atrace::analysis
