// Selectors x modules -> probe sites. Symbols are read only from modules that
// some selector can reach by module, once per file; every include selector
// must match something, so a typo is an error and never an empty trace.
#include "uprobes/resolve.h"

#include <set>

#include "uprobes/build_id.h"
#include "uprobes/demangle.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/insn_class.h"

namespace atrace::uprobes {

namespace {

std::string main_description(const std::vector<Module>& modules) {
  for (const auto& m : modules)
    if (m.is_main) return "the main executable (" + m.path + ")";
  return "the main executable (none given)";
}

fmt::ProbePath entry_path(const ElfFunction& f, const ResolveOptions& opts) {
  fmt::ProbePath p = classify_entry(f.first_bytes, f.first_len);
  // The kernel optimizes a NOP5 only when it does not cross a page (file
  // offsets and addresses are congruent modulo the page size).
  constexpr uint64_t kPage = 4096;
  if (p == fmt::ProbePath::Nop5 && (!opts.nop5_supported || f.offset % kPage > kPage - 5))
    p = fmt::ProbePath::Emulated;
  return p;
}

}  // namespace

std::vector<ProbeSite> resolve_probe_sites(const std::vector<Selector>& include,
                                           const std::vector<Selector>& exclude,
                                           const std::vector<Module>& modules,
                                           const ResolveOptions& opts) {
  std::vector<ProbeSite> sites;
  std::vector<size_t> matched(include.size(), 0);         // functions per include selector
  std::vector<size_t> modules_hit(include.size(), 0);     // modules per include selector
  std::vector<std::string> module_errors(include.size());  // first unreadable module per selector
  std::vector<std::string> ifunc_seen(include.size());     // first IFUNC a selector matched
  std::set<std::string> done;  // each path is read and probed once

  for (const auto& mod : modules) {
    if (!done.insert(mod.path).second) continue;
    std::vector<size_t> inc;  // indices of the include selectors reaching mod
    std::vector<const Selector*> exc;
    for (size_t i = 0; i < include.size(); ++i) {
      if (include[i].matches_module(mod.name, mod.path, mod.is_main)) {
        inc.push_back(i);
        ++modules_hit[i];
      }
    }
    if (inc.empty()) continue;
    for (const auto& s : exclude)
      if (s.matches_module(mod.name, mod.path, mod.is_main)) exc.push_back(&s);

    std::vector<ElfFunction> funcs;
    try {
      funcs = read_functions(mod.path);
    } catch (const ElfError& e) {
      // The main executable named by a plain selector must be readable;
      // libraries reached by a glob may be skipped (reported if needed).
      bool main_selector = false;
      for (size_t i : inc) main_selector |= include[i].module_glob.empty();
      if (mod.is_main && main_selector) throw;
      for (size_t i : inc)
        if (module_errors[i].empty()) module_errors[i] = e.what();
      continue;
    }

    std::string build_id;  // read once per module, only if something matched
    for (const auto& f : funcs) {
      const std::string base = base_name(f.demangled);
      bool wanted = false;
      for (size_t i : inc) {
        if (!include[i].matches_name(f.demangled, base)) continue;
        // An IFUNC symbol names its resolver, which runs once at load: a
        // probe there would count no calls of the function people mean.
        if (f.ifunc) {
          if (ifunc_seen[i].empty()) ifunc_seen[i] = f.demangled;
          continue;
        }
        ++matched[i];
        wanted = true;
      }
      if (!wanted) continue;
      bool excluded = false;
      for (const Selector* s : exc) {
        if (s->matches_name(f.demangled, base)) {
          excluded = true;
          break;
        }
      }
      if (excluded) continue;
      ProbeSite site;
      site.id = static_cast<uint32_t>(sites.size() + 1);
      site.name = f.demangled;
      site.mangled = f.mangled;
      site.module = mod.name;
      site.path = mod.path;
      site.address = f.address;
      site.size = f.size;
      site.offset = f.offset;
      site.entry_path = entry_path(f, opts);
      if (build_id.empty()) build_id = read_build_id(mod.path);
      site.build_id = build_id;
      sites.push_back(std::move(site));
    }
  }

  for (size_t i = 0; i < include.size(); ++i) {
    if (matched[i] > 0) continue;
    const Selector& s = include[i];
    if (!s.module_glob.empty() && modules_hit[i] == 0)
      throw SelectorError("selector '" + s.text + "': no loaded module matches '" + s.module_glob + "'");
    std::string where = s.module_glob.empty()
                            ? main_description(modules)
                            : "any loaded module matching '" + s.module_glob + "'";
    std::string msg = "selector '" + s.text + "' matches no function in " + where;
    if (!module_errors[i].empty()) msg += " (" + module_errors[i] + ")";
    if (!ifunc_seen[i].empty())
      msg += " but the IFUNC resolver '" + ifunc_seen[i] +
             "', which runs once at load: select the implementation it picks instead "
             "(from the library's symbols or its debug symbols)";
    throw SelectorError(msg);
  }
  return sites;
}

}  // namespace atrace::uprobes
