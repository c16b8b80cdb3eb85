// Selectors x modules -> probe sites. Symbols are read only from modules that
// some selector can reach by module, once per file; every include selector
// must match something, so a typo is an error and never an empty trace.
#include "uprobes/resolve.h"

#include <map>
#include <memory>
#include <set>

#include "uprobes/build_id.h"
#include "uprobes/demangle.h"
#include "uprobes/elf_file.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/ifunc.h"
#include "uprobes/placement.h"
#include "uprobes/probe_policy.h"
#include "uprobes/process_root.h"
#include "uprobes/unwind_points.h"

namespace atrace::uprobes {

namespace {

std::string main_description(const std::vector<Module>& modules) {
  for (const auto& m : modules)
    if (m.is_main) return "the main executable (" + seen_path(m.path) + ")";
  return "the main executable (none given)";
}

// `base` and `short_form` are f.demangled's (base/symbol_name.h).
bool matches(const Selector& s, const ElfFunction& f, const std::string& base,
             const std::string& short_form) {
  if (s.matches_name(f.demangled, base, short_form)) return true;
  for (const auto& a : f.aliases)
    if (s.matches_name(a)) return true;
  return false;
}

// An IFUNC as the implementation it resolves to here, with the IFUNC's
// public name; false when that cannot be known.
bool at_implementation(ElfFunction& f, const std::string& path) {
  auto impl = resolve_ifunc_here(path, f.mangled);
  if (!impl) return false;
  f.address = impl->address;
  f.offset = impl->offset;
  f.size = 0;  // the implementation's symbol is not in the dynamic symbols
  detail::ElfFile file(path);
  f.first_len = file.status() == detail::ElfFile::Status::Ok
                    ? file.read_code(f.offset, f.first_bytes, sizeof f.first_bytes)
                    : 0;
  return true;
}

// Places the entry probes of one module's functions (uprobes/placement.h).
// The file is opened and the module's code entries are decoded only when
// some probe may move. The unwinder's points keep +0: the unwind guard's own
// probe sits there, and its order with atrace's probes stays what it was.
class ModulePlacer {
 public:
  ModulePlacer(const std::string& path, const std::vector<ElfFunction>& funcs,
               const ResolveOptions& opts)
      : path_(path), funcs_(funcs), opts_(opts) {}

  void place(ProbeSite& site, const ElfFunction& f) {
    EntryPlacement pl =
        place_entry(f.first_bytes, f.first_len, f.offset, opts_.nop5_supported, false);
    if (opts_.move_probes && f.size > 0 && pl.path != formats::ProbePath::Nop5 &&
        !unwind_role(f.mangled)) {
      if (!file_) file_ = std::make_unique<detail::ElfFile>(path_);
      std::vector<uint8_t> code(f.size);
      if (file_->status() == detail::ElfFile::Status::Ok &&
          file_->read_code(f.offset, code.data(), code.size()) == code.size()) {
        EntryPlacement moved =
            place_entry(code.data(), code.size(), f.offset, opts_.nop5_supported);
        if (moved.delta > 0 && !entries().any_in(f.address, f.address + moved.delta)) pl = moved;
      }
    }
    site.entry_delta = pl.delta;
    site.offset = f.offset + pl.delta;
    site.entry_path = pl.path;
  }

 private:
  const CodeEntries& entries() {
    if (!entries_) {
      std::vector<uint64_t> starts;
      starts.reserve(funcs_.size());
      for (const auto& g : funcs_) starts.push_back(g.address);
      entries_ = std::make_unique<CodeEntries>(path_, std::move(starts));
    }
    return *entries_;
  }

  const std::string& path_;
  const std::vector<ElfFunction>& funcs_;
  const ResolveOptions& opts_;
  std::unique_ptr<detail::ElfFile> file_;
  std::unique_ptr<CodeEntries> entries_;
};

}  // namespace

std::vector<std::string> ResolveNotes::lines(const std::vector<Selector>& include) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < include.size(); ++i) {
    std::vector<const SkippedFunction*> mine;
    for (const auto& s : skipped)
      if (s.selector == i) mine.push_back(&s);
    if (mine.empty()) continue;
    // Name a few; every reason once.
    std::string names;
    std::set<std::string> reasons;
    size_t shown = 0;
    for (const auto* s : mine) {
      reasons.insert(s->reason);
      if (shown < 6) names += (shown++ ? ", " : "") + s->site.name;
    }
    if (mine.size() > shown) names += ", ...";
    std::string why;
    for (const auto& r : reasons) why += (why.empty() ? "" : "; ") + r;
    out.push_back("selector '" + include[i].text + "': " + std::to_string(mine.size()) +
                  " matched function(s) get no probe, a probe there would break the program (" +
                  names + ": " + why + "); `atrace list` shows each");
  }
  if (!unresolved_ifuncs.empty()) {
    std::string names;
    for (const auto& n : unresolved_ifuncs) names += (names.empty() ? "" : ", ") + n;
    out.push_back(std::to_string(unresolved_ifuncs.size()) +
                  " IFUNC symbol(s) matched are not traced: their implementation is chosen at "
                  "load time and atrace cannot tell which (" +
                  names + ")");
  }
  return out;
}

std::vector<ProbeSite> resolve_probe_sites(const std::vector<Selector>& include,
                                           const std::vector<Selector>& exclude,
                                           const std::vector<Module>& modules,
                                           const ResolveOptions& opts, ResolveNotes* notes) {
  ResolveNotes local_notes;
  if (!notes) notes = &local_notes;
  std::vector<ProbeSite> sites;
  std::vector<size_t> matched(include.size(), 0);          // functions per include selector
  std::vector<size_t> modules_hit(include.size(), 0);      // modules per include selector
  std::vector<std::string> module_errors(include.size());  // first unreadable module per selector
  std::vector<std::string> ifunc_seen(include.size());  // first unresolved IFUNC a selector matched
  std::vector<std::string> skipped_seen(include.size());  // first skipped function, with why
  std::set<std::string> done;                             // each path is read and probed once

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
      if (mod.is_main && main_selector) {
        // The next step: its libraries' functions are selectable
        // (issue 31: a distribution's stripped program was a dead end).
        std::string libs, first;
        size_t n = 0;
        for (const auto& m : modules) {
          if (m.is_main || m.waiting) continue;
          if (n++ < 6) libs += (libs.empty() ? "" : ", ") + m.name;
          if (first.empty()) first = m.name;
        }
        if (n > 6) libs += ", ...";
        const std::string what = seen_text(e.what(), mod.path);
        if (libs.empty()) throw ElfError(what);
        throw ElfError(what + "; its libraries have symbols, selected as " + "LIBRARY:PATTERN ('" +
                       first + ":*'): " + libs);
      }
      for (size_t i : inc)
        if (module_errors[i].empty()) module_errors[i] = seen_text(e.what(), mod.path);
      continue;
    }

    std::string build_id;                // read once per module, only if something matched
    std::map<uint64_t, size_t> site_at;  // file offset -> index in sites: one probe per place
    ModulePlacer placer(mod.path, funcs, opts);
    for (auto& f : funcs) {
      const std::string base = base_name(f.demangled);
      const std::string short_form = base::short_name(f.demangled);
      int first = -1;  // the first include selector matching f
      for (size_t i : inc) {
        if (matches(include[i], f, base, short_form)) {
          first = static_cast<int>(i);
          break;
        }
      }
      if (first < 0) continue;
      bool excluded = false;
      for (const Selector* s : exc) {
        if (matches(*s, f, base, short_form)) {
          excluded = true;
          break;
        }
      }
      // An IFUNC symbol names its resolver, which runs once at load: the
      // probe goes to the implementation it picks.
      if (f.ifunc && !at_implementation(f, mod.path)) {
        for (size_t i : inc)
          if (ifunc_seen[i].empty() && matches(include[i], f, base, short_form))
            ifunc_seen[i] = f.demangled;
        if (!excluded) notes->unresolved_ifuncs.push_back(mod.name + ":" + f.demangled);
        continue;
      }
      ProbeSite site;
      site.name = f.demangled;
      site.mangled = f.mangled;
      site.module = mod.name;
      site.path = mod.path;
      site.address = f.address;
      site.size = f.size;
      site.offset = f.offset;
      site.entry_path = path_at(f.first_bytes, f.first_len, f.offset, opts.nop5_supported);
      const ProbePolicy policy = probe_policy(f);
      if (!policy.entry) {
        for (size_t i : inc)
          if (skipped_seen[i].empty() && matches(include[i], f, base, short_form))
            skipped_seen[i] = f.demangled + ": " + policy.reason;
        if (!excluded)
          notes->skipped.push_back({std::move(site), policy.reason, static_cast<size_t>(first)});
        continue;
      }
      // Matches are counted before excludes apply.
      for (size_t i : inc)
        if (matches(include[i], f, base, short_form)) ++matched[i];
      if (excluded) continue;
      placer.place(site, f);
      if (build_id.empty()) build_id = read_build_id(mod.path);
      site.build_id = build_id;
      // Two IFUNCs may resolve to one implementation (memcpy, memmove):
      // the first name selected names it.
      if (!site_at.emplace(site.offset, sites.size()).second) continue;
      site.id = static_cast<uint32_t>(sites.size() + 1);
      sites.push_back(std::move(site));
    }
  }

  if (opts.allow_unmatched) return sites;
  for (size_t i = 0; i < include.size(); ++i) {
    if (matched[i] > 0) continue;
    const Selector& s = include[i];
    if (!s.module_glob.empty() && modules_hit[i] == 0)
      throw NoMatchError("selector '" + s.text + "': no loaded module matches '" + s.module_glob +
                         "'");
    if (!skipped_seen[i].empty())
      throw SelectorError("selector '" + s.text +
                          "' matches only functions atrace does not probe (" + skipped_seen[i] +
                          ")");
    std::string where = s.module_glob.empty()
                            ? main_description(modules)
                            : "any loaded module matching '" + s.module_glob + "'";
    std::string msg = "selector '" + s.text + "' matches no function in " + where;
    if (!module_errors[i].empty()) msg += " (" + module_errors[i] + ")";
    if (!ifunc_seen[i].empty())
      msg += " but the IFUNC resolver '" + ifunc_seen[i] +
             "', which runs once at load: select the implementation it picks instead "
             "(from the library's symbols or its debug symbols)";
    throw NoMatchError(msg);
  }
  return sites;
}

}  // namespace atrace::uprobes
