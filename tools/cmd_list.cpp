// atrace list: the functions a selector would probe, with the path the
// kernel takes for each probe (single-step, emulated, nop5) — what a probe
// hit will cost before anything is attached; with --fast-path, also whether
// `record --fast-path` can patch each one and why not; with --usdt, the USDT
// probes of the executable and its libraries instead.
#include <fnmatch.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/diagnostics.h"
#include "base/plural.h"
#include "fastpath/site_verdict.h"
#include "record/record.h"
#include "tools/commands.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/late_modules.h"
#include "uprobes/library_search.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"
#include "uprobes/usdt_notes.h"
#include "uprobes/usdt_semaphore.h"

namespace atrace::tools {

namespace {

struct ListArgs {
  pid_t pid = 0;
  std::string binary;
  std::string pattern = "*";
  bool usdt = false;
  bool at_entry = false;   // --probe-at-entry
  bool fast_path = false;  // --fast-path
};

// One line per probe site: path of its instruction, address, semaphore
// (for a running process: its value now, "on(N)" while N tracers have it
// on), module, provider:name and the note's argument locations.
int list_usdt(const ListArgs& a, const std::vector<uprobes::Module>& modules) {
  size_t sites = 0, fast = 0, with_sem = 0;
  std::string rows;
  for (const auto& m : modules) {
    std::vector<uprobes::UsdtProbe> probes;
    try {
      probes = uprobes::read_usdt_probes(m.path);
    } catch (const uprobes::ElfError& e) {
      if (m.is_main) throw;
      continue;  // a library we cannot read has no probes we could attach
    }
    for (const auto& p : probes) {
      std::string full = p.provider + ":" + p.name;
      if (fnmatch(a.pattern.c_str(), full.c_str(), 0) != 0 &&
          fnmatch(a.pattern.c_str(), (m.name + ":" + full).c_str(), 0) != 0)
        continue;
      std::string sem = "-";
      if (p.semaphore) {
        with_sem++;
        sem = "yes";
        if (a.pid > 0) {
          auto v = uprobes::read_semaphore(a.pid, m.path, p.semaphore_offset);
          sem = !v ? "?" : *v ? "on(" + std::to_string(*v) + ")" : "off";
        }
      }
      sites++;
      fast += p.path_kind == formats::ProbePath::Nop5;
      char row[1024];
      std::snprintf(row, sizeof row, "%-9s 0x%016" PRIx64 "  %-7s  %-20s  %-30s %s\n",
                    formats::to_string(p.path_kind), p.address, sem.c_str(), m.name.c_str(),
                    full.c_str(), p.args.c_str());
      rows += row;
    }
  }
  // Nothing to list is an answer the user did not expect: one line, as an
  // unmatched function selector gets, not an empty table.
  if (sites == 0) {
    std::string where = modules.empty() ? "" : modules.front().name;
    if (modules.size() > 1)
      where += " or its " + base::plural(modules.size() - 1, "library", "libraries");
    if (a.pattern == "*") base::error("no USDT probes in %s", where.c_str());
    else
      base::error("no USDT probe matches '%s' in %s (provider:name, or MODULE:provider:name)",
                  a.pattern.c_str(), where.c_str());
    return 1;
  }
  std::printf("%-9s %18s  %-7s  %-20s  %-30s %s\n", "PLACE", "ADDRESS", "SEM", "MODULE", "PROBE",
              "ARGUMENTS");
  std::fputs(rows.c_str(), stdout);
  std::printf("\n%s: %zu nop5 (optimized uprobe), %zu with a semaphore\n",
              base::plural(sites, "USDT probe site").c_str(), fast, with_sem);
  if (a.pid > 0 && with_sem)
    std::printf(
        "SEM: the semaphore's value in process %d now: on(N) while N uprobes use it "
        "(a tracer adds one per site of the probe)\n",
        a.pid);
  return 0;
}

int run_list(const ListArgs& a) {
  using namespace uprobes;
  std::vector<Module> modules;
  if (a.pid > 0) {
    modules = process_modules(a.pid);
  } else {
    std::string exe = find_executable(a.binary);
    modules = launch_modules(exe);
  }
  if (a.usdt) return list_usdt(a, modules);
  KernelFeatures f = detect_kernel_features();
  ResolveOptions ro;
  ro.nop5_supported = f.uprobe_syscall;
  ro.move_probes = !a.at_entry;
  ResolveNotes notes;
  const auto selectors = parse_selectors(a.pattern);
  // Libraries not loaded yet, where the dynamic linker would find them, as
  // `record` finds them (docs/selectors.md).
  const char* env = std::getenv("LD_LIBRARY_PATH");
  const std::string ld_path = a.pid > 0 ? ld_library_path_of(a.pid) : env ? env : "";
  add_late_modules(selectors, modules, ld_path,
                   a.pid > 0 ? uprobes::ProcessRoot::of(a.pid) : uprobes::ProcessRoot());
  auto sites = resolve_probe_sites(selectors, {}, modules, ro, &notes);
  size_t by_path[5] = {}, moved = 0;
  // PLACE: where the entry probe sits (bytes past the function's first
  // instruction) and how the kernel runs it there (uprobes/placement.h).
  // PROBES: what `record` would attach: "entry+ret" (an entry uprobe and a
  // return probe), or "none" with the reason (uprobes/probe_policy.h).
  // FAST (--fast-path): "patch" when `record --fast-path` can patch the
  // function, "no" with the reason after its name (fastpath/site_verdict.h).
  std::vector<std::string> verdicts =
      a.fast_path ? fastpath::fast_path_verdicts(sites) : std::vector<std::string>();
  // record --fast-path offers the fast path only what it would probe.
  for (size_t i = 0; i < verdicts.size(); i++)
    if (sites[i].entry_path == formats::ProbePath::Refused)
      verdicts[i] = "record leaves out what the kernel cannot probe";
  auto fast_column = [&](std::string value) {
    if (!a.fast_path) return std::string();
    value.resize(std::max<size_t>(value.size(), 5), ' ');
    return value + "  ";
  };
  std::printf("%-15s %18s %8s  %-9s  %s%-20s %s\n", "PLACE", "ADDRESS", "SIZE", "PROBES",
              fast_column("FAST").c_str(), "MODULE", "FUNCTION");
  size_t fast = 0;
  for (size_t i = 0; i < sites.size(); i++) {
    const auto& s = sites[i];
    by_path[static_cast<size_t>(s.entry_path) % 5]++;
    moved += s.entry_delta > 0;
    const bool refused = s.entry_path == formats::ProbePath::Refused;
    std::string why = refused ? "  (no instruction of its prefix can be probed safely)" : "";
    if (a.fast_path && !verdicts[i].empty()) why += "  (fast path: " + verdicts[i] + ")";
    fast += a.fast_path && verdicts[i].empty();
    std::printf("%-15s 0x%016" PRIx64 " %8" PRIu64 "  %-9s  %s%-20s %s%s\n",
                formats::probe_place(s.entry_path, s.entry_delta).c_str(), s.address, s.size,
                refused ? "none" : "entry+ret",
                fast_column(a.fast_path && verdicts[i].empty() ? "patch" : "no").c_str(),
                s.module.c_str(), s.name.c_str(), why.c_str());
  }
  // Matched but given no probe: not patched either (record --fast-path
  // patches the functions it would probe).
  for (const auto& k : notes.skipped) {
    const auto& s = k.site;
    std::printf("%-15s 0x%016" PRIx64 " %8" PRIu64 "  %-9s  %s%-20s %s  (%s)\n",
                formats::probe_place(s.entry_path, s.entry_delta).c_str(), s.address, s.size,
                "none", fast_column("no").c_str(), s.module.c_str(), s.name.c_str(),
                k.reason.c_str());
  }
  auto n = [&](formats::ProbePath p) { return by_path[static_cast<size_t>(p)]; };
  std::printf("\n%s: %zu nop5 (optimized uprobe), %zu emulated, %zu single-step",
              base::plural(sites.size(), "function").c_str(), n(formats::ProbePath::Nop5),
              n(formats::ProbePath::Emulated), n(formats::ProbePath::SingleStep));
  if (n(formats::ProbePath::Refused))
    std::printf(", %zu refused by the kernel (cannot be traced)", n(formats::ProbePath::Refused));
  if (moved) std::printf("; %zu probed past their first instruction, where it is cheaper", moved);
  if (!notes.skipped.empty())
    std::printf(
        "; %zu more matched get no probe (PROBES none: a probe there would break the "
        "program)",
        notes.skipped.size());
  std::printf("\n");
  if (a.fast_path)
    std::printf(
        "fast path (record --fast-path): %zu of %s can be patched; FAST no: the reason follows "
        "the name (docs/fast-path.md)\n",
        fast, base::plural(sites.size() + notes.skipped.size(), "function").c_str());
  for (const auto& line : notes.lines({}))  // the unresolved IFUNCs, if any
    std::printf("%s\n", line.c_str());
  if (!f.uprobe_syscall)
    std::printf("kernel %s has no optimized uprobes: nop5 entries are emulated\n",
                f.release.c_str());
  return 0;
}

}  // namespace

void add_list(cli::Command app, int& exit_status) {
  auto args = std::make_shared<ListArgs>();
  cli::Command cmd =
      app.subcommand("list", "List the functions a selector matches and how each would be probed");
  cmd.option("-p,--pid", args->pid, "A running process (its executable and libraries)");
  cmd.option("binary", args->binary, "An executable (and the libraries it loads)");
  cmd.option("pattern", args->pattern,
             "Selector, as for record --select (default '*'); with --usdt a glob over "
             "provider:name or MODULE:provider:name");
  cmd.flag("--usdt", args->usdt,
           "List the USDT probes (provider:name, module, argument locations, semaphore) "
           "instead of functions");
  cmd.flag("--probe-at-entry", args->at_entry,
           "Show the probes on each function's first instruction, as `record "
           "--probe-at-entry` would place them");
  cmd.flag("--fast-path", args->fast_path,
           "Also say whether `record --fast-path` can patch each function, and why not");
  cmd.callback([args, &exit_status]() {
    // With -p the first positional is the pattern.
    if (args->pid > 0 && !args->binary.empty()) {
      if (args->pattern != "*") {
        base::error("list takes -p PID or a BINARY, not both");
        exit_status = 2;
        return;
      }
      args->pattern = args->binary;
      args->binary.clear();
    }
    if (args->pid <= 0 && args->binary.empty()) {
      base::error("list needs -p PID or a BINARY");
      exit_status = 2;
      return;
    }
    try {
      exit_status = run_list(*args);
    } catch (const std::exception& e) {
      base::error("%s", e.what());
      exit_status = 1;
    }
  });
}

}  // namespace atrace::tools
