#include "record/stack_rules.h"

#include <algorithm>

#include "record/entry_sites.h"
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
  for (const auto& sel : stack_selectors(list)) {
    const size_t matched = at_entry_sites({sel}, ro, modules, sites,
                                          [](uprobes::ProbeSite& site) { site.with_stack = true; });
    if (!matched)
      throw uprobes::SelectorError("--stack: '" + sel.text +
                                   "' matches no function --select traces");
  }
}

}  // namespace atrace
