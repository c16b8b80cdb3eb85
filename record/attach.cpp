#include "record/attach.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>
#include <utility>

#include "base/diagnostics.h"

namespace atrace {

namespace {

constexpr int kENOTSUPP = 524;  // kernel-internal: the instruction cannot be probed

// An attach failure's errno, with what ENOTSUPP means for a uprobe.
std::string describe(int error) {
  if (error == kENOTSUPP) return "the kernel cannot probe the instruction there";
  return base::errno_text(error);
}

uint64_t cookie(const uprobes::ProbeSite& s, uint32_t gen) {
  return static_cast<uint64_t>(s.id) | static_cast<uint64_t>(gen) << 32;
}

// Closing a perf-event link waits for RCU grace periods (tracepoint
// unregistration) inside the kernel's event_mutex, about 0.1 s each, and
// closing from many threads gains nothing (the mutex serialises them).
// Expedited grace periods (/sys/kernel/rcu_expedited) would shorten the
// wait, but a SIGKILLed atrace would leave that system-wide setting
// changed: atrace does not touch it (kernel-notes/uprobe-multi.md).

}  // namespace

// A group's sites all have values or none has, and all stacks or none
// (attach()). The stack program runs the values program's entry part too.
bpf_program* FunctionProbes::program(const Group& g, bool ret) const {
  const bool stack = !g.sites.empty() && g.sites.front().with_stack && stack_entry_prog_;
  if (stack && !ret) return stack_entry_prog_;
  const bool values = !g.sites.empty() && g.sites.front().with_values && values_entry_prog_;
  if (values) return ret ? values_exit_prog_ : values_entry_prog_;
  return ret ? exit_prog_ : entry_prog_;
}

// Return probes first (see attach.h). A group of perf links has one site.
std::string FunctionProbes::attach_group(Group& g, int& error) {
  UprobeRequest r;
  r.path = g.sites.front().path;
  r.pid = pid_;
  r.multi = multi_;
  for (const auto& s : g.sites) {
    r.offsets.push_back(s.offset);
    r.cookies.push_back(cookie(s, g.gen));
  }
  for (bool ret : {true, false}) {
    r.prog = program(g, ret);
    r.ret = ret;
    std::vector<OwnedLink> links;
    error = attach_uprobes(r, links);
    if (error) {
      g.exit.close();
      return std::string(ret ? "return probe: " : "entry probe: ") + describe(error);
    }
    (ret ? g.exit : g.entry) = std::move(links.front());
  }
  return {};
}

std::vector<AttachFailure> FunctionProbes::attach(const std::vector<uprobes::ProbeSite>& sites) {
  std::vector<AttachFailure> failures;
  if (!multi_) {
    for (const auto& s : sites) {
      Group g;
      g.sites = {s};
      int error = 0;
      if (auto err = attach_group(g, error); !err.empty()) failures.push_back({&s, err, error});
      else groups_.push_back(std::move(g));
    }
    return failures;
  }
  std::map<std::tuple<std::string, bool, bool>, std::vector<const uprobes::ProbeSite*>> by_module;
  for (const auto& s : sites) by_module[{s.path, s.with_values, s.with_stack}].push_back(&s);
  for (auto& [path, group] : by_module)
    for (size_t i = 0; i < group.size(); i += kGroupFunctions) {
      auto first = group.begin() + static_cast<std::ptrdiff_t>(i);
      auto last =
          group.begin() + static_cast<std::ptrdiff_t>(std::min(group.size(), i + kGroupFunctions));
      attach_multi_split({first, last}, failures);
    }
  return failures;
}

// One site the kernel refuses fails its whole link. Halving the group finds
// it in O(log n) failed attempts and keeps the rest in few links; trying
// sites one by one would leave one link per site, and each link costs a
// grace period (~0.1 s) when it is closed.
void FunctionProbes::attach_multi_split(std::vector<const uprobes::ProbeSite*> sites,
                                        std::vector<AttachFailure>& failures) {
  Group g;
  for (const auto* s : sites) g.sites.push_back(*s);
  int error = 0;
  std::string err = attach_group(g, error);
  if (err.empty()) {
    groups_.push_back(std::move(g));
    return;
  }
  if (sites.size() == 1) {
    failures.push_back({sites.front(), err, error});
    return;
  }
  auto mid = sites.begin() + static_cast<std::ptrdiff_t>(sites.size() / 2);
  attach_multi_split({sites.begin(), mid}, failures);
  attach_multi_split({mid, sites.end()}, failures);
}

int FunctionProbes::group_of(uint32_t id) const {
  for (size_t g = 0; g < groups_.size(); ++g)
    for (const auto& s : groups_[g].sites)
      if (s.id == id) return static_cast<int>(g);
  return -1;
}

RetiredLinks FunctionProbes::rebuild_without(
    int gi, const std::function<bool(uint32_t)>& drop,
    const std::function<void(uint32_t, uint32_t)>& switch_gen, std::string& error) {
  RetiredLinks retired;
  if (gi < 0 || static_cast<size_t>(gi) >= groups_.size()) return retired;
  Group& old = groups_[static_cast<size_t>(gi)];
  Group fresh;
  fresh.gen = ++last_gen_;  // never reused, even after a failed rebuild
  for (const auto& s : old.sites)
    if (!drop(s.id)) fresh.sites.push_back(s);
  if (!fresh.sites.empty()) {
    int err = 0;
    error = attach_group(fresh, err);
    if (!error.empty()) return retired;  // the old links stay
    for (const auto& s : fresh.sites) switch_gen(s.id, fresh.gen);
  }
  retired.entry = std::move(old.entry);
  retired.exit = std::move(old.exit);
  old = std::move(fresh);  // an emptied group stays, without links or sites
  return retired;
}

// Returns first, then entries (attach.h): a return link that outlived its
// entry link would take over the returns of calls whose entry program no
// longer runs. Each kind all at once, each link on a thread of its own: a
// close waits for grace periods that concurrent closes share, and for the
// traced threads to stop creating return instances (record/detacher.h),
// which they do once every return link has removed its probes; one after
// the other, 64 links would take 64 such waits. Perf-event links close in
// order: each close holds the kernel's event_mutex through its waits, so
// threads gain nothing.
void FunctionProbes::detach_all() {
  for (bool ret : {true, false}) {
    std::vector<std::thread> closers;
    for (auto& g : groups_) {
      OwnedLink& l = ret ? g.exit : g.entry;
      if (!l) continue;
      if (!multi_) l.close();
      else closers.emplace_back([link = std::move(l)]() mutable { link.close(); });
    }
    for (auto& t : closers) t.join();
  }
  groups_.clear();
}

}  // namespace atrace
