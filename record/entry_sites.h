// The traced functions a later option names (--args, --retval, --stack),
// with their entry probe put back on the first instruction: the one rule
// both the values and the stack programs need, since a probe placed
// further (uprobes/placement.h) may run after the prefix has overwritten
// an argument register or pushed over the return address at [rsp].
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "uprobes/probe_site.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"

namespace atrace {

// Each site of `sites` that `selectors` name gets its entry probe at +0 and
// then `mark`; returns how many. A selector that resolves to nothing
// counts none (the caller says so in its option's words).
size_t at_entry_sites(const std::vector<uprobes::Selector>& selectors, uprobes::ResolveOptions ro,
                      const std::vector<uprobes::Module>& modules,
                      std::vector<uprobes::ProbeSite>& sites,
                      const std::function<void(uprobes::ProbeSite&)>& mark);

}  // namespace atrace
