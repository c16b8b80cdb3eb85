#include "record/late_arrivals.h"

namespace atrace {

LateArrivals::LateArrivals(const std::vector<uprobes::Module>& modules,
                           const std::vector<uprobes::ProbeSite>& sites) {
  for (const auto& m : modules) {
    if (!m.waiting) continue;
    bool probed = false;
    for (const auto& s : sites) {
      if (s.path != m.path) continue;
      module_of_[s.id] = names_.size();
      probed = true;
    }
    if (probed) names_.push_back(m.name);
  }
  arrived_.assign(names_.size(), false);
}

std::vector<std::string> LateArrivals::never_seen() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < names_.size(); ++i)
    if (!arrived_[i])
      out.push_back(names_[i] +
                    ", waited for, never ran: none of its probed functions was called (it was "
                    "not loaded, or was loaded from another file)");
  return out;
}

}  // namespace atrace
