#include "record/stack_rules.h"

#include <algorithm>

#include "uprobes/selector.h"

namespace atrace {

namespace {

// ';' separates items as in --args; each item is a --select list.
std::vector<uprobes::Selector> stack_selectors(std::string list) {
  std::replace(list.begin(), list.end(), ';', ',');
  try {
    return uprobes::parse_selectors(list);
  } catch (const uprobes::SelectorError& e) {
    throw uprobes::SelectorError(std::string("--stack: ") + e.what());
  }
}

}  // namespace

void apply_stack_rules(const std::string& list, uprobes::ResolveOptions ro,
                       const std::vector<uprobes::Module>& modules,
                       std::vector<uprobes::ProbeSite>& sites) {
  ro.move_probes = false;
  for (const auto& sel : stack_selectors(list)) {
    std::vector<uprobes::ProbeSite> at_entry;
    try {
      at_entry = uprobes::resolve_probe_sites({sel}, {}, modules, ro);
    } catch (const uprobes::Error&) {
      at_entry.clear();  // said below, in the option's words
    }
    size_t matched = 0;
    for (const auto& e : at_entry)
      for (auto& site : sites) {
        if (site.path != e.path || site.address != e.address) continue;
        site.offset = e.offset;
        site.entry_delta = 0;
        site.entry_path = e.entry_path;
        site.with_stack = true;
        matched++;
      }
    if (!matched)
      throw uprobes::SelectorError("--stack: '" + sel.text +
                                   "' matches no function --select traces");
  }
}

}  // namespace atrace
