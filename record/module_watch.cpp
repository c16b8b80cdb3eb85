#include "record/module_watch.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <set>

#include "bpf/atrace.h"
#include "record/probe_links.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/module_hooks.h"
#include "uprobes/proc_maps.h"

namespace atrace {

std::vector<WatchedModule> watched_modules(const std::vector<uprobes::ProbeSite>& sites,
                                           const std::vector<uprobes::UsdtTarget>& usdt,
                                           const std::vector<uprobes::Module>& modules) {
  std::vector<WatchedModule> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& path, const std::string& build_id) {
    if (!seen.insert(path).second) return;
    uprobes::FileId id;
    for (const auto& m : modules)
      if (m.path == path) id = m.id;
    out.push_back({path, build_id, id});
  };
  for (const auto& s : sites) add(s.path, s.build_id);
  for (const auto& t : usdt) add(t.path, t.build_id);
  return out;
}

ModuleWatch::ModuleWatch(bpf_program* program, const std::vector<WatchedModule>& modules, pid_t pid,
                         const std::string& dynamic_linker) {
  for (uint32_t i = 0; i < modules.size() && i <= ATRACE_MODULE_INDEX_MASK; ++i) {
    const uprobes::ModuleHooks hooks = uprobes::module_hooks(modules[i].path);
    bool watched = hooks.init.present && hooks.fini.present;
    for (const uprobes::ModuleHook* h : {&hooks.init, &hooks.fini}) {
      if (!watched) break;
      const uint64_t cookie =
          i | (h == &hooks.fini ? ATRACE_MODULE_UNLOAD : 0) | (h->from_base << 32);
      UprobeRequest r;
      r.prog = program;
      r.path = modules[i].path;
      r.offsets = {h->offset};
      r.cookies = {cookie};
      r.pid = pid;
      if (attach_uprobes(r, links_) != 0) watched = false;
    }
    unwatched_ += !watched;
  }
  if (dynamic_linker.empty()) return;
  // glibc's r_brk, which debuggers stop at: exported (GLIBC_PRIVATE) by
  // every ld.so since 2.0. A loader without it only loses the note.
  try {
    for (const auto& f : uprobes::read_functions(dynamic_linker)) {
      if (f.mangled != "_dl_debug_state" &&
          std::find(f.aliases.begin(), f.aliases.end(), "_dl_debug_state") == f.aliases.end())
        continue;
      UprobeRequest r;
      r.prog = program;
      r.path = dynamic_linker;
      r.offsets = {f.offset};
      r.cookies = {ATRACE_MODULE_LINK_MAP};
      r.pid = pid;
      attach_uprobes(r, links_);
      break;
    }
  } catch (const uprobes::Error&) {
  }
}

formats::Event module_event(const std::vector<WatchedModule>& modules, formats::EventKind kind,
                            uint32_t index, uint64_t base) {
  formats::Event ev;
  ev.kind = kind;
  ev.arg0 = base;
  if (index < modules.size()) {
    ev.text = uprobes::seen_path(modules[index].path);
    formats::set_module_build_id(ev, modules[index].build_id);
  } else {
    static const std::string unknown = "?";
    ev.text = unknown;
    formats::set_module_build_id(ev, {});
  }
  return ev;
}

std::vector<formats::Event> modules_mapped_now(const std::vector<WatchedModule>& modules, pid_t pid,
                                               uint64_t ts) {
  std::vector<formats::Event> out;
  std::vector<uprobes::FileMapping> mappings;
  try {
    mappings = uprobes::file_mappings(pid);
  } catch (const uprobes::ProcessError&) {
    return out;  // gone already: its exit ends the recording
  }
  // The lowest mapping of each file is its base (as the hooks compute it).
  std::set<uprobes::FileId> seen;
  for (const auto& m : mappings) {
    if (!seen.insert(m.id).second) continue;
    for (uint32_t i = 0; i < modules.size(); ++i) {
      if (!(modules[i].id == m.id)) continue;
      formats::Event ev = module_event(modules, formats::EventKind::ModuleLoad, i, m.start);
      ev.ts = ts;
      ev.pid = ev.tid = static_cast<uint32_t>(pid);
      out.push_back(std::move(ev));
    }
  }
  return out;
}

}  // namespace atrace
