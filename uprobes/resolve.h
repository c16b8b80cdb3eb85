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
  // Entry probes on the cheapest instruction of the function's prefix
  // (uprobes/placement.h); false: on the first instruction, as other tracers.
  bool move_probes = true;
  // A selector that matches nothing here is no error: --follow-forks
  // resolves the selectors again for each program a traced process execs,
  // which may have some of the functions or none.
  bool allow_unmatched = false;
};

// A function a selector matched that gets no probe (probe_policy.h).
struct SkippedFunction {
  ProbeSite site;       // id 0: never attached
  std::string reason;   // ProbePolicy::reason
  size_t selector = 0;  // index of the first include selector that matched it
};

// What resolving decided besides the sites, for the status output and
// `atrace list`.
struct ResolveNotes {
  std::vector<SkippedFunction> skipped;
  // IFUNC symbols matched whose implementation could not be found
  // ("libfoo.so:fast_copy"): not traced, named in one warning.
  std::vector<std::string> unresolved_ifuncs;
  // The status lines: one per include selector that matched functions it
  // does not probe, and one naming the unresolved IFUNCs. Empty when there
  // is nothing to say.
  std::vector<std::string> lines(const std::vector<Selector>& include) const;
};

// Every function of every module that some include selector matches (by its
// name or any alias) and no exclude selector matches, named by its public
// name; ids dense from 1 in a stable order (module order, then address).
// Functions probe_policy() refuses go to notes->skipped instead; an IFUNC
// becomes a site at the implementation this machine's loader picks
// (uprobes/ifunc.h), or, when that cannot be known, a notes entry. Throws SelectorError "selector
// 'X' matches no function in M" for the first include selector that matched nothing (matches are
// counted before excludes apply); ElfError if the main executable has no symbols and a plain
// selector needs it. Libraries that cannot be read are skipped unless a selector then matches
// nothing (the reason joins the message).
std::vector<ProbeSite> resolve_probe_sites(const std::vector<Selector>& include,
                                           const std::vector<Selector>& exclude,
                                           const std::vector<Module>& modules,
                                           const ResolveOptions& opts = {},
                                           ResolveNotes* notes = nullptr);

}  // namespace atrace::uprobes
