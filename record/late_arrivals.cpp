#include "record/late_arrivals.h"

namespace atrace {

LateArrivals::LateArrivals(const std::vector<uprobes::Module>& modules,
                           const std::vector<uprobes::ProbeSite>& sites,
                           const std::vector<uprobes::UsdtTarget>& usdt) {
  for (const auto& m : modules) {
    if (!m.waiting) continue;
    bool probed = false;
    auto probe = [&](const std::string& path, uint32_t id) {
      if (path != m.path) return;
      module_of_[id] = names_.size();
      probed = true;
    };
    for (const auto& s : sites) probe(s.path, s.id);
    for (const auto& t : usdt) probe(t.path, t.id);
    if (probed) names_.push_back(m.name);
  }
  arrived_.assign(names_.size(), false);
}

std::vector<std::string> LateArrivals::never_seen() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < names_.size(); ++i)
    if (!arrived_[i])
      out.push_back(names_[i] +
                    ", waited for, never ran: none of its probes fired (it was not loaded, or "
                    "was loaded from another file)");
  return out;
}

}  // namespace atrace
