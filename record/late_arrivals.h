// The modules a recording waited for (uprobes/late_modules.h): which of
// them showed up, judged by their probes firing, so that the end of the
// recording can say which never did (a library never loaded, or loaded by
// another path than the one probed).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "uprobes/probe_site.h"
#include "uprobes/proc_maps.h"
#include "uprobes/selector.h"
#include "uprobes/usdt_select.h"

namespace atrace {

class LateArrivals {
 public:
  LateArrivals() = default;
  // `select`: --select's selectors, whose patterns the note about a file
  // mapped instead repeats with that file's path.
  LateArrivals(const std::vector<uprobes::Module>& modules,
               const std::vector<uprobes::ProbeSite>& sites,
               const std::vector<uprobes::UsdtTarget>& usdt,
               const std::vector<uprobes::Selector>& select = {});

  // Each recorded event: a function entry (or an interval's begin) or a
  // USDT hit of a waited-for module marks it arrived.
  void saw(const formats::Event& ev) {
    if (module_of_.empty() ||
        (ev.kind != formats::EventKind::FuncEntry && ev.kind != formats::EventKind::Usdt))
      return;
    auto it = module_of_.find(ev.id);
    if (it != module_of_.end()) arrived_[it->second] = true;
  }

  // The dynamic linker of process `pid` changed its list of loaded
  // objects (a MODULE record of index ATRACE_MODULE_LINK_MAP): a file of
  // a waited-for module's name that the process maps from elsewhere (a
  // copy on another LD_LIBRARY_PATH, pyenv's libpython beside the
  // system's) is the one it uses, and is named at the end.
  void link_map_changed(pid_t pid);

  // One line for each waited-for module none of whose probes fired.
  std::vector<std::string> never_seen() const;

 private:
  std::vector<std::string> names_;        // waited-for modules with probes
  std::vector<uprobes::FileId> ids_;      // by index in names_
  std::vector<std::string> patterns_;     // by index: "f,g" of the selectors naming it
  std::vector<std::string> instead_;      // by index: "process P (comm) mapped PATH"
  std::vector<bool> arrived_;             // by index in names_
  std::map<uint32_t, size_t> module_of_;  // probe id -> index in names_
};

}  // namespace atrace
