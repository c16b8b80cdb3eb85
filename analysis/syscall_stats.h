// System calls per issuing function (`atrace report --syscalls`): count,
// total, max and errors per (function, system call number).
//
// Counted in dense tables, not maps (a trace can hold millions of system
// calls): one small table per function that made any, indexed by number.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/kernel_attribution.h"

namespace atrace::analysis {

struct SyscallCount {
  uint32_t key = 0;  // issuing function: profile slot + 1, 0 for none
  uint64_t nr = 0;
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  uint64_t errors = 0;
};

class SyscallTable {
 public:
  void add(const ClosedSyscall& c);
  // Every (function, number) seen, in no particular order.
  std::vector<SyscallCount> rows() const;

 private:
  struct PerFunction {
    std::vector<uint32_t> row_of_nr;  // nr -> index + 1 into rows (0: none yet)
    std::vector<SyscallCount> rows;
  };
  std::vector<uint32_t> table_of_key_;  // key -> index + 1 into tables_
  std::vector<PerFunction> tables_;
};

}  // namespace atrace::analysis
