#include "record/late_arrivals.h"

#include <string_view>

#include "uprobes/process_root.h"

namespace atrace {

LateArrivals::LateArrivals(const std::vector<uprobes::Module>& modules,
                           const std::vector<uprobes::ProbeSite>& sites,
                           const std::vector<uprobes::UsdtTarget>& usdt,
                           const std::vector<uprobes::Selector>& select) {
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
    if (!probed) continue;
    names_.push_back(m.name);
    ids_.push_back(m.id);
    std::string patterns;
    for (const auto& sel : select)
      if (!sel.module_glob.empty() && sel.matches_module(m.name, m.path, false))
        patterns += (patterns.empty() ? "" : ",") + sel.pattern;
    patterns_.push_back(patterns.empty() ? "..." : patterns);
  }
  arrived_.assign(names_.size(), false);
  instead_.resize(names_.size());
}

namespace {

// The name a library is asked for by: up to ".so" (libpython3.11.so.1.0
// and libpython3.11.so are one library in two versions of the name).
std::string_view library_stem(std::string_view name) {
  const size_t so = name.find(".so");
  return so == std::string_view::npos ? name : name.substr(0, so + 3);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void LateArrivals::link_map_changed(pid_t pid) {
  bool open = false;
  for (size_t i = 0; i < names_.size(); ++i) open |= !arrived_[i] && instead_[i].empty();
  if (!open) return;
  std::vector<uprobes::FileMapping> maps;
  try {
    maps = uprobes::file_mappings(pid);
  } catch (const uprobes::ProcessError&) {
    return;  // gone already
  }
  for (size_t i = 0; i < names_.size(); ++i) {
    if (arrived_[i] || !instead_[i].empty()) continue;
    for (const auto& m : maps) {
      if (m.id == ids_[i] || library_stem(base_name(m.path)) != library_stem(names_[i])) continue;
      const std::string seen = uprobes::seen_path(m.path);
      instead_[i] = "process " + std::to_string(pid) + " mapped " + seen + " instead: --select='" +
                    seen + ":" + patterns_[i] + "' probes that file";
      break;
    }
  }
}

std::vector<std::string> LateArrivals::never_seen() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < names_.size(); ++i)
    if (!arrived_[i])
      out.push_back(names_[i] + ", waited for, never ran: " +
                    (instead_[i].empty() ? "none of its probes fired (it was not loaded, or was "
                                           "loaded from another file)"
                                         : instead_[i]));
  return out;
}

}  // namespace atrace
