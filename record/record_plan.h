// What a recording will probe, resolved from the user's selectors before
// the target is touched (everything that can fail on the user's input
// fails here), and what the trace's header and probe table say about it.
// Functions without side effects on any recorder state: the recorder
// builds each of these once.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "formats/trace_types.h"
#include "record/recorder.h"
#include "uprobes/probe_site.h"
#include "uprobes/proc_maps.h"
#include "uprobes/usdt_select.h"
#include "uprobes/value_spec.h"

namespace atrace {

struct ExecMatch;
struct KernelFeatures;
struct ProbeCost;

struct RecordPlan {
  std::string exe_path;  // launch mode: the program to execute
  std::vector<uprobes::Module> modules;
  std::vector<uprobes::ProbeSite> sites;           // --select: ids dense from 1
  std::vector<uprobes::UsdtTarget> usdt;           // --usdt: ids after the functions'
  std::vector<uint32_t> keep_ids;                  // --filter-keep
  std::map<uint32_t, uprobes::FuncValues> values;  // --args/--retval, by function id
  uint32_t max_id = 0;                             // largest function id
};

// Throws for a request that cannot be recorded (selectors matching
// nothing, a missing program, a Go program, ...); says the resolver's
// notes on stderr ("atrace: ..."). In launch mode the program is the
// command's, or `execd`'s when given (a program the command exec'd,
// stopped at its exec: exec_follow.h), whose libraries are searched with
// the LD_LIBRARY_PATH that process has; selectors this program cannot
// match throw uprobes::NoMatchError, a program that is not ELF
// uprobes::NotElfError.
RecordPlan plan_recording(const RecordOptions& o, const KernelFeatures& f,
                          const ExecMatch* execd = nullptr);

// The files whose functions the selectors were resolved against, each by
// its identity and whether it was the main program (unqualified
// selectors match the main program's).
using ResolvedModules = std::set<std::pair<uprobes::FileId, bool>>;
ResolvedModules resolved_modules(const std::vector<uprobes::Module>& modules);

// --follow-forks: the selectors resolved again for the program a traced
// process exec'd (`execd`, stopped just after its exec): its modules as
// that process sees them (process_root.h), with the libraries --select
// names found as its dynamic linker would find them, less those in
// `resolved` (added to it). Only the functions not probed already
// (`probed`: file identity and offset; probes are per inode, in every
// process) are returned, with ids from `first_id`; a selector that matches
// nothing there is no error. `modules` gets the modules resolved. No
// --args, --retval or --stack rules (their ids are the first plan's).
std::vector<uprobes::ProbeSite> plan_exec(
    const RecordOptions& o, const KernelFeatures& f, const ExecMatch& execd, uint32_t first_id,
    const std::set<std::pair<uprobes::FileId, uint64_t>>& probed, ResolvedModules& resolved,
    std::vector<uprobes::Module>& modules);

// Each site's (module file identity, offset): what plan_exec() leaves out.
std::set<std::pair<uprobes::FileId, uint64_t>> probed_places(
    const std::vector<uprobes::Module>& modules, const std::vector<uprobes::ProbeSite>& sites);

// The processes -p names (or --cgroup's, once resolved); empty in launch
// mode. The first is the trace's target_pid.
std::vector<pid_t> traced_pids(const RecordOptions& o);

// `more` added to `into` by identity (uprobes::Module::id): a file several
// processes map is one module, probed once (the kernel's uprobes are per
// inode; the programs keep the traced processes' hits), and two files at
// one path in two containers are two. A file one process maps and another
// only would load (waiting) is the mapped one; main executable in one of
// them, it stays one.
void merge_modules(std::vector<uprobes::Module>& into, std::vector<uprobes::Module> more);

// A row of the trace's probe table.
formats::ProbeInfo probe_info(const uprobes::ProbeSite& s);
formats::ProbeInfo probe_info(const uprobes::UsdtTarget& t);

// The trace's header: who recorded what, on which kernel, at what probe
// cost. Its start and end times are stamped when they happen.
formats::TraceHeader trace_header(const RecordOptions& o, const KernelFeatures& f,
                                  const ProbeCost& cost, pid_t pid, std::string target_command);

}  // namespace atrace
