#include "record/entry_sites.h"

#include <algorithm>

namespace atrace {

size_t at_entry_sites(const std::vector<uprobes::Selector>& selectors, uprobes::ResolveOptions ro,
                      const std::vector<uprobes::Module>& modules,
                      std::vector<uprobes::ProbeSite>& sites,
                      const std::function<void(uprobes::ProbeSite&)>& mark) {
  ro.move_probes = false;
  // These options name functions --select traces: a name without a module
  // is looked for in every module --select matched, not in the main
  // executable only as --select's own would be (issue 31: --args=F needed
  // the library again after --select=LIB:F).
  std::vector<uprobes::Module> traced;
  for (const auto& m : modules)
    if (std::any_of(sites.begin(), sites.end(),
                    [&](const uprobes::ProbeSite& s) { return s.path == m.path; }))
      traced.push_back(m);
  std::vector<uprobes::Selector> named = selectors;
  for (auto& sel : named)
    if (sel.module_glob.empty()) sel.module_glob.push_back('*');
  std::vector<uprobes::ProbeSite> at_entry;
  try {
    at_entry = uprobes::resolve_probe_sites(named, {}, traced, ro);
  } catch (const uprobes::Error&) {
    return 0;
  }
  size_t matched = 0;
  for (const auto& e : at_entry)
    for (auto& site : sites) {
      if (site.path != e.path || site.address != e.address) continue;
      site.offset = e.offset;
      site.entry_delta = 0;
      site.entry_path = e.entry_path;
      mark(site);
      matched++;
    }
  return matched;
}

}  // namespace atrace
