#include "record/kernel_groups.h"

#include <stdexcept>

namespace atrace {

namespace {

struct Named {
  const char* name;
  KernelGroup bit;
};
constexpr Named kGroups[] = {
    {"sched", kKernelSched}, {"syscalls", kKernelSyscalls}, {"faults", kKernelFaults},
    {"proc", kKernelProc},   {"net", kKernelNet},
};

}  // namespace

unsigned default_kernel_groups(bool probes_code) {
  return probes_code ? kKernelAll & ~kKernelSyscalls : kKernelAll;
}

unsigned parse_kernel_groups(std::string_view list, unsigned defaults) {
  unsigned plain = 0, added = 0, removed = 0;
  bool any_plain = false, any_signed = false;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    const char sign = item.front() == '+' || item.front() == '-' ? item.front() : 0;
    const std::string_view name = sign ? item.substr(1) : item;
    unsigned bit = name == "all" ? static_cast<unsigned>(kKernelAll) : 0u;
    for (const auto& g : kGroups)
      if (name == g.name) bit = g.bit;
    if (!bit)
      throw std::invalid_argument("unknown kernel event group '" + std::string(name) +
                                  "' (groups: " + kernel_group_names() + ")");
    (sign ? any_signed : any_plain) = true;
    if (sign == '+') added |= bit;
    else if (sign == '-') removed |= bit;
    else plain |= bit;
  }
  if (any_plain && any_signed)
    throw std::invalid_argument(
        "either name the groups (sched,faults) or change the default ones (+syscalls,-faults), "
        "not both");
  return any_signed ? (defaults | added) & ~removed : plain;
}

std::string kernel_group_names() {
  std::string s;
  for (const auto& g : kGroups) s += g.name + std::string(", ");
  return s + "all";
}

std::string kernel_groups_string(unsigned mask) {
  std::string s;
  for (const auto& g : kGroups)
    if (mask & g.bit) s += (s.empty() ? "" : ",") + std::string(g.name);
  return s;
}

}  // namespace atrace
