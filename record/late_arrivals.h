// The modules a recording waited for (uprobes/late_modules.h): which of
// them showed up, judged by their probes firing, so that the end of the
// recording can say which never did (a library never loaded, or loaded by
// another path than the one probed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "uprobes/probe_site.h"
#include "uprobes/proc_maps.h"
#include "uprobes/usdt_select.h"

namespace atrace {

class LateArrivals {
 public:
  LateArrivals() = default;
  LateArrivals(const std::vector<uprobes::Module>& modules,
               const std::vector<uprobes::ProbeSite>& sites,
               const std::vector<uprobes::UsdtTarget>& usdt);

  // Each recorded event: a function entry (or an interval's begin) or a
  // USDT hit of a waited-for module marks it arrived.
  void saw(const formats::Event& ev) {
    if (module_of_.empty() ||
        (ev.kind != formats::EventKind::FuncEntry && ev.kind != formats::EventKind::Usdt))
      return;
    auto it = module_of_.find(ev.id);
    if (it != module_of_.end()) arrived_[it->second] = true;
  }

  // One line for each waited-for module none of whose probes fired.
  std::vector<std::string> never_seen() const;

 private:
  std::vector<std::string> names_;        // waited-for modules with probes
  std::vector<bool> arrived_;             // by index in names_
  std::map<uint32_t, size_t> module_of_;  // probe id -> index in names_
};

}  // namespace atrace
