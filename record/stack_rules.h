// `record --stack=SELECTORS`: which traced functions get their user call
// stack recorded at each entry (docs/stacks.md), and the bound on its depth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprobes/probe_site.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"

namespace atrace {

// Marks the sites of the functions `list` names (selectors separated by ';'
// or ','), and puts their entry probe back on the first instruction: the
// stack program reads the return address at [rsp], which is only there
// before the prefix pushes anything. Throws uprobes::SelectorError naming
// the item when one matches no function --select traces.
void apply_stack_rules(const std::string& list, uprobes::ResolveOptions ro,
                       const std::vector<uprobes::Module>& modules,
                       std::vector<uprobes::ProbeSite>& sites);

}  // namespace atrace
