// Selectors x modules -> probe sites.
#pragma once

#include <string>
#include <vector>

#include "uprobes/probe_site.h"
#include "uprobes/proc_maps.h"
#include "uprobes/selector.h"

namespace atrace::uprobes {

struct ResolveOptions {
  bool nop5_supported = true;  // optimized uprobes present (kernel feature)
};

// Every function of every module that some include selector matches and no
// exclude selector matches; ids dense from 1 in a stable order (module order,
// then address). Throws SelectorError "selector 'X' matches no function in M"
// for the first include selector that matched nothing (matches are counted
// before excludes apply); ElfError if the main executable has no symbols and a
// plain selector needs it. Libraries that cannot be read are skipped unless a
// selector then matches nothing (the reason joins the message).
std::vector<ProbeSite> resolve_probe_sites(const std::vector<Selector>& include,
                                           const std::vector<Selector>& exclude,
                                           const std::vector<Module>& modules,
                                           const ResolveOptions& opts = {});

}  // namespace atrace::uprobes
