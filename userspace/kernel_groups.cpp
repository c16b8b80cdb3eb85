#include "userspace/kernel_groups.h"

#include <stdexcept>

namespace atrace {

namespace {

struct Named {
  const char* name;
  KernelGroup bit;
};
constexpr Named kGroups[] = {
    {"sched", kKernelSched},
    {"syscalls", kKernelSyscalls},
    {"faults", kKernelFaults},
    {"proc", kKernelProc},
};

}  // namespace

unsigned parse_kernel_groups(std::string_view list) {
  unsigned mask = 0;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    bool known = false;
    for (const auto& g : kGroups) {
      if (item == g.name) {
        mask |= g.bit;
        known = true;
      }
    }
    if (item == "all") {
      mask |= kKernelAll;
      known = true;
    }
    if (!known)
      throw std::invalid_argument("unknown kernel event group '" + std::string(item) +
                                  "' (groups: sched, syscalls, faults, proc)");
  }
  return mask;
}

std::string kernel_groups_string(unsigned mask) {
  std::string s;
  for (const auto& g : kGroups)
    if (mask & g.bit) s += (s.empty() ? "" : ",") + std::string(g.name);
  return s;
}

}  // namespace atrace
