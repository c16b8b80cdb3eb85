#include "record/record_plan.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <utility>

#include "base/diagnostics.h"
#include "base/plural.h"
#include "record/calibrate.h"
#include "record/entry_sites.h"
#include "record/exec_follow.h"
#include "record/features.h"
#include "record/kernel_groups.h"
#include "record/stack_rules.h"
#include "record/unwind_guard.h"
#include "uprobes/dwarf_params.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/late_modules.h"
#include "uprobes/library_search.h"
#include "uprobes/process_root.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"
#include "uprobes/value_spec.h"

namespace atrace {

namespace {

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// A library a selector names that the program has not mapped may never
// come: the program may have the same functions itself (Debian's perl
// exports Perl_pp_* from its executable; libperl.so.5.36 is on disk all
// the same). One note naming the module that has them, and the selector
// that would probe them there (issue 31).
void say_stand_ins(const RecordOptions& o, const RecordPlan& plan, const uprobes::Module& late) {
  if (o.select.empty()) return;
  for (const auto& sel : uprobes::parse_selectors(o.select)) {
    if (sel.module_glob.empty() || !sel.matches_module(late.name, late.path, false)) continue;
    for (const auto& m : plan.modules) {
      if (m.waiting || !m.is_main) continue;  // a program's own copy, not libc's '*'
      std::vector<uprobes::ElfFunction> fns;
      try {
        fns = uprobes::read_functions(m.path);
      } catch (const uprobes::Error&) {
        continue;
      }
      size_t n = 0;
      std::string first;
      for (const auto& f : fns)
        if (sel.matches_name(f.demangled) && n++ == 0) first = f.demangled;
      if (n == 0) continue;
      base::note(
          "%s itself has %s matching '%s' (%s%s): if it never loads "
          "%s, --select='%s:%s' probes its own",
          m.name.c_str(), base::plural(n, "function").c_str(), sel.pattern.c_str(), first.c_str(),
          n > 1 ? ", ..." : "", late.name.c_str(), m.name.c_str(), sel.pattern.c_str());
      return;
    }
  }
}

// One line per module not mapped yet that has probes (functions or USDT):
// they wait for it.
void say_waiting(const RecordOptions& o, const RecordPlan& plan) {
  for (const auto& m : plan.modules) {
    if (!m.waiting) continue;
    size_t n = 0;
    for (const auto& s : plan.sites) n += s.path == m.path;
    for (const auto& t : plan.usdt) n += t.path == m.path;
    if (n)
      base::progress(
          "%s is not loaded yet: waiting for it (%zu %s on %s, in place "
          "when the process maps it)",
          m.name.c_str(), n, n == 1 ? "probe" : "probes", uprobes::seen_path(m.path).c_str());
    if (n) say_stand_ins(o, plan, m);
  }
}

// The LD_LIBRARY_PATH a launched program runs with: a followed command's
// process stopped at its exec (a wrapper may have set it), or atrace's
// own, which a command it launches inherits.
std::string launch_ld_library_path(const ExecMatch* execd) {
  if (execd) return uprobes::ld_library_path_of(execd->pid);
  const char* env = std::getenv("LD_LIBRARY_PATH");
  return env ? env : "";
}

// What --select and --usdt name: the modules to find.
std::vector<uprobes::Selector> named_modules(const RecordOptions& o,
                                             const std::vector<uprobes::UsdtSpec>& usdt) {
  std::vector<uprobes::Selector> named;
  if (!o.select.empty()) named = uprobes::parse_selectors(o.select);
  for (const auto& spec : usdt) named.push_back(spec.module_selector());
  return named;
}

bool known(const uprobes::FileId& id) { return id.dev || id.ino; }

// Whether a process has exited (gone, or a zombie not yet reaped).
bool exited(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z' ||
         stat[paren + 2] == 'X';
}

// Attach mode: each process's mapped files as it sees them (its own root),
// then, for a file --select or --usdt names that none of them maps, the
// search each process's dynamic linker would do (its root, its
// LD_LIBRARY_PATH): a name found in any of them is found. `skip_exited`
// (--cgroup): a process that exited since the cgroup was read is left out.
std::vector<uprobes::Module> attached_modules(std::vector<pid_t> pids,
                                              const std::vector<uprobes::Selector>& named,
                                              bool skip_exited) {
  std::vector<std::vector<uprobes::Module>> each;
  std::vector<uprobes::Module> all;
  for (auto it = pids.begin(); it != pids.end();) {
    try {
      each.push_back(uprobes::process_modules(*it));
    } catch (const uprobes::ProcessError&) {
      if (!skip_exited || !exited(*it)) throw;
      it = pids.erase(it);
      continue;
    }
    merge_modules(all, each.back());
    ++it;
  }
  for (const auto& sel : named) {
    const bool mapped = std::any_of(all.begin(), all.end(), [&](const uprobes::Module& m) {
      return sel.matches_module(m.name, m.path, m.is_main);
    });
    if (mapped) continue;
    std::exception_ptr first;
    bool found = false;
    for (size_t i = 0; i < pids.size(); ++i) {
      std::vector<uprobes::Module> mods = each[i];
      const size_t before = mods.size();
      try {
        uprobes::add_late_modules({sel}, mods, uprobes::ld_library_path_of(pids[i]),
                                  uprobes::ProcessRoot::of(pids[i]));
      } catch (const uprobes::SelectorError&) {
        if (!first) first = std::current_exception();
        continue;
      }
      found = true;
      merge_modules(all, {mods.begin() + static_cast<std::ptrdiff_t>(before), mods.end()});
    }
    if (!found && first) std::rethrow_exception(first);
  }
  return all;
}

// FUNC@auto: the function's parameters from its debug information, named
// in the probe table; those not read are said, one line each.
std::vector<uprobes::ArgSpec> auto_args(const uprobes::ValueRule& rule, uprobes::ProbeSite& site) {
  auto params = uprobes::dwarf_params(site.path, site.build_id, site.address);
  if (!params)
    throw uprobes::ValueSpecError("--args: '" + rule.text + "': no debug information for " +
                                  site.name + " in " + site.module +
                                  " (build it with -g, or name its arguments: FUNC@arg1/TYPE,...)");
  for (const auto& note : params->notes)
    base::progress("--args=%s@auto: %s", site.name.c_str(), note.c_str());
  site.arg_names.clear();
  for (const auto& a : params->args) {
    if (site.arg_names.size() < a.slot) site.arg_names.resize(a.slot);
    site.arg_names[a.slot - 1] = a.name;
  }
  return params->args;
}

// --args/--retval: each rule's functions among the traced ones get its
// values, and their entry probe goes back to the first instruction: a probe
// placed further (uprobes/placement.h) may run after the prefix has
// overwritten an argument register (`xor %edi,%edi`). A rule that names no
// traced function is an error.
void apply_value_rules(const RecordOptions& o, uprobes::ResolveOptions ro, RecordPlan& plan,
                       std::vector<uprobes::ProbeSite>& sites) {
  std::vector<uprobes::ValueRule> rules = uprobes::parse_arg_rules(o.args);
  for (auto& r : uprobes::parse_retval_rules(o.retval)) rules.push_back(std::move(r));
  for (const auto& rule : rules) {
    const size_t matched =
        at_entry_sites(rule.selectors, ro, plan.modules, sites, [&](uprobes::ProbeSite& site) {
          site.with_values = true;
          uprobes::FuncValues& v = plan.values[site.id];
          if (rule.has_retval) {
            v.has_retval = true;
            v.retval = rule.retval;
          } else if (rule.auto_args) {
            v.args = auto_args(rule, site);
          } else {
            v.args = rule.args;
          }
        });
    if (!matched)
      throw uprobes::ValueSpecError(std::string(rule.has_retval ? "--retval" : "--args") + ": '" +
                                    rule.text + "' matches no function --select traces");
  }
}

std::vector<uprobes::ProbeSite> resolve_sites(const RecordOptions& o, const KernelFeatures& f,
                                              RecordPlan& plan) {
  std::vector<uprobes::Selector> include = uprobes::parse_selectors(o.select), exclude;
  if (!o.exclude.empty()) exclude = uprobes::parse_selectors_with_files(o.exclude);
  uprobes::ResolveOptions ro;
  ro.nop5_supported = f.uprobe_syscall;
  ro.move_probes = !o.probe_at_entry;
  uprobes::ResolveNotes notes;
  auto sites = uprobes::resolve_probe_sites(include, exclude, plan.modules, ro, &notes);
  refuse_go_programs(sites);  // an error: before any status line
  for (const auto& line : notes.lines(include)) base::progress("%s", line.c_str());
  for (const auto& site : sites) plan.max_id = std::max(plan.max_id, site.id);
  if (!o.filter.keep.empty()) {
    // Same modules, same matching: a keep selector names functions the
    // way --select does (and one that matches nothing is an error).
    auto keep =
        uprobes::resolve_probe_sites(uprobes::parse_selectors(o.filter.keep), {}, plan.modules, ro);
    for (const auto& k : keep)
      for (const auto& site : sites)
        if (site.path == k.path && site.offset == k.offset) plan.keep_ids.push_back(site.id);
  }
  if (!o.args.empty() || !o.retval.empty()) apply_value_rules(o, ro, plan, sites);
  if (!o.stack.empty()) apply_stack_rules(o.stack, ro, plan.modules, sites);
  return sites;
}

}  // namespace

RecordPlan plan_recording(const RecordOptions& o, const KernelFeatures& f, const ExecMatch* execd) {
  RecordPlan plan;
  const bool probes = !o.select.empty() || !o.usdt.empty();
  // The target's modules: the running processes' mappings, or what a
  // launched program's loader would load.
  if (o.pid <= 0) plan.exe_path = execd ? execd->exe : uprobes::find_executable(o.command.at(0));
  const std::string ld_library_path = o.pid > 0 ? "" : launch_ld_library_path(execd);
  if (probes && o.pid <= 0) plan.modules = uprobes::launch_modules(plan.exe_path, ld_library_path);
  if ((!o.args.empty() || !o.retval.empty()) && o.select.empty())
    throw uprobes::ValueSpecError(std::string(o.args.empty() ? "--retval" : "--args") +
                                  " needs --select: it names some of the traced functions");
  const std::vector<uprobes::UsdtSpec> usdt = uprobes::parse_usdt_specs(o.usdt);
  // The modules --select and --usdt name that the processes have not
  // mapped, found by one search (uprobes/late_modules.h).
  if (probes && o.pid > 0)
    plan.modules = attached_modules(traced_pids(o), named_modules(o, usdt), !o.cgroup.empty());
  else if (probes) uprobes::add_late_modules(named_modules(o, usdt), plan.modules, ld_library_path);
  if (!o.stack.empty() && o.select.empty())
    throw uprobes::SelectorError("--stack needs --select: it names some of the traced functions");
  if (!o.select.empty()) plan.sites = resolve_sites(o, f, plan);
  // A module not loaded yet is probed like a mapped one, USDT probes too:
  // the kernel sets a semaphore (uprobe ref_ctr_offset) in each mapping of
  // the file it probes, when the file is mapped.
  if (!usdt.empty()) plan.usdt = uprobes::resolve_usdt(usdt, plan.modules, plan.max_id + 1);
  say_waiting(o, plan);
  return plan;
}

namespace {

// A module's file as the kernel's uprobes know it: launch mode's modules
// and those found on disk carry no identity from a maps file.
std::map<std::string, uprobes::FileId> identities(const std::vector<uprobes::Module>& modules) {
  std::map<std::string, uprobes::FileId> id_of;
  for (const auto& m : modules)
    id_of[m.path] = known(m.id) ? m.id : uprobes::file_id(m.path).value_or(uprobes::FileId{});
  return id_of;
}

}  // namespace

std::set<std::pair<uprobes::FileId, uint64_t>> probed_places(
    const std::vector<uprobes::Module>& modules, const std::vector<uprobes::ProbeSite>& sites) {
  auto id_of = identities(modules);
  std::set<std::pair<uprobes::FileId, uint64_t>> places;
  for (const auto& s : sites) places.insert({id_of[s.path], s.offset});
  return places;
}

ResolvedModules resolved_modules(const std::vector<uprobes::Module>& modules) {
  ResolvedModules done;
  for (const auto& [path, id] : identities(modules)) {
    const bool is_main = std::any_of(modules.begin(), modules.end(), [&](const uprobes::Module& m) {
      return m.path == path && m.is_main;
    });
    done.insert({id, is_main});
  }
  return done;
}

std::vector<uprobes::ProbeSite> plan_exec(
    const RecordOptions& o, const KernelFeatures& f, const ExecMatch& execd, uint32_t first_id,
    const std::set<std::pair<uprobes::FileId, uint64_t>>& probed, ResolvedModules& resolved,
    std::vector<uprobes::Module>& modules) {
  if (o.select.empty()) return {};
  // What it maps now (its program and its interpreter), then what a
  // selector names by module that its dynamic linker will load; a name
  // its linker would not find is no error here either.
  modules = uprobes::process_modules(execd.pid);
  const std::string ld_library_path = uprobes::ld_library_path_of(execd.pid);
  const auto root = uprobes::ProcessRoot::of(execd.pid);
  for (const auto& sel : named_modules(o, {})) {
    try {
      uprobes::add_late_modules({sel}, modules, ld_library_path, root);
    } catch (const uprobes::SelectorError&) {
    }
  }
  // A file resolved before in the same role (main program or not) gives
  // the same functions again: not read again (libc, for every program).
  auto id_of = identities(modules);
  std::vector<uprobes::Module> fresh_modules;
  for (auto& m : modules)
    if (resolved.insert({id_of[m.path], m.is_main}).second) fresh_modules.push_back(std::move(m));
  modules = std::move(fresh_modules);
  if (modules.empty()) return {};
  std::vector<uprobes::Selector> include = uprobes::parse_selectors(o.select), exclude;
  if (!o.exclude.empty()) exclude = uprobes::parse_selectors_with_files(o.exclude);
  uprobes::ResolveOptions ro;
  ro.nop5_supported = f.uprobe_syscall;
  ro.move_probes = !o.probe_at_entry;
  ro.allow_unmatched = true;
  auto sites = uprobes::resolve_probe_sites(include, exclude, modules, ro);
  std::vector<uprobes::ProbeSite> fresh;
  for (auto& site : sites) {
    if (probed.count({id_of[site.path], site.offset}) ||
        site.entry_path == formats::ProbePath::Refused)
      continue;
    site.id = first_id++;
    fresh.push_back(std::move(site));
  }
  return fresh;
}

void merge_modules(std::vector<uprobes::Module>& into, std::vector<uprobes::Module> more) {
  for (auto& m : more) {
    auto same = std::find_if(into.begin(), into.end(), [&](const uprobes::Module& k) {
      return known(m.id) ? k.id == m.id : k.path == m.path;
    });
    if (same == into.end()) {
      into.push_back(std::move(m));
      continue;
    }
    const bool is_main = same->is_main || m.is_main;
    if (same->waiting && !m.waiting) *same = std::move(m);  // mapped by one of them
    same->is_main = is_main;
  }
}

std::vector<pid_t> traced_pids(const RecordOptions& o) {
  if (!o.pids.empty()) return o.pids;
  if (o.pid > 0) return {o.pid};
  return {};
}

formats::ProbeInfo probe_info(const uprobes::ProbeSite& s) {
  formats::ProbeInfo p;
  p.id = s.id;
  p.name = s.name;
  p.module = s.module;
  p.path = uprobes::seen_path(s.path);
  p.address = s.address;
  p.offset = s.offset;
  p.path_kind = s.entry_path;
  p.build_id = s.build_id;
  p.entry_delta = s.entry_delta;
  p.arg_names = s.arg_names;
  return p;
}

formats::ProbeInfo probe_info(const uprobes::UsdtTarget& t) {
  formats::ProbeInfo p;
  p.id = t.id;
  p.kind = t.kind;
  p.name = t.display_name();
  p.module = t.module;
  p.path = uprobes::seen_path(t.path);
  p.address = t.sites.front().address;
  p.offset = t.sites.front().offset;
  p.path_kind = t.sites.front().path_kind;
  p.build_id = t.build_id;
  return p;
}

formats::TraceHeader trace_header(const RecordOptions& o, const KernelFeatures& f,
                                  const ProbeCost& cost, pid_t pid, std::string target_command) {
  formats::TraceHeader h;
  h.atrace_version = ATRACE_VERSION;
  h.command_line = o.atrace_command_line;
  h.target_command = std::move(target_command);
  h.target_pid = static_cast<uint32_t>(pid);
  h.host = hostname();
  h.kernel = f.release;
  h.clock_id = CLOCK_MONOTONIC;
  h.kernel_events = kernel_groups_string(o.kernel_groups);
  formats::set_probe_costs(h, cost.table());
  h.kernel_limits = f.limits();
  return h;
}

}  // namespace atrace
