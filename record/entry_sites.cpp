#include "record/entry_sites.h"

namespace atrace {

size_t at_entry_sites(const std::vector<uprobes::Selector>& selectors, uprobes::ResolveOptions ro,
                      const std::vector<uprobes::Module>& modules,
                      std::vector<uprobes::ProbeSite>& sites,
                      const std::function<void(uprobes::ProbeSite&)>& mark) {
  ro.move_probes = false;
  std::vector<uprobes::ProbeSite> at_entry;
  try {
    at_entry = uprobes::resolve_probe_sites(selectors, {}, modules, ro);
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
