#include "userspace/attach.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "userspace/uprobe_multi.h"

namespace atrace {

void LinkDeleter::operator()(bpf_link* l) const { bpf_link__destroy(l); }

namespace {

constexpr int kENOTSUPP = 524;  // kernel-internal: the instruction cannot be probed

std::string describe(int error) {
  if (error == kENOTSUPP) return "the kernel cannot probe the instruction there";
  return std::strerror(error);
}

LinkPtr attach_one(bpf_program* prog, pid_t pid, const uprobes::ProbeSite& site, bool ret,
                   std::string& err, int& error) {
  LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = site.id, .retprobe = ret);
  bpf_link* l = bpf_program__attach_uprobe_opts(prog, pid, site.path.c_str(), site.offset, &opts);
  if (!l) {
    error = errno;
    err = std::string(ret ? "return probe: " : "entry probe: ") + describe(error);
    return nullptr;
  }
  return LinkPtr(l);
}

}  // namespace

std::string FunctionProbes::attach_perf(const uprobes::ProbeSite& site, int& error) {
  std::string err;
  LinkPtr exit = attach_one(exit_prog_, pid_, site, true, err, error);
  if (!exit) return err;
  LinkPtr entry = attach_one(entry_prog_, pid_, site, false, err, error);
  if (!entry) return err;  // `exit` is destroyed on return
  exits_.push_back(std::move(exit));
  entries_.push_back(std::move(entry));
  return {};
}

std::string FunctionProbes::attach_multi(const std::vector<const uprobes::ProbeSite*>& group,
                                         int& error) {
  std::vector<uint64_t> offsets, cookies;
  for (const auto* s : group) {
    offsets.push_back(s->offset);
    cookies.push_back(s->id);
  }
  const std::string& path = group.front()->path;
  int ret_fd = uprobe_multi_link_create(bpf_program__fd(exit_prog_), path, offsets, cookies,
                                        true, pid_ > 0 ? pid_ : 0);
  if (ret_fd < 0) {
    error = -ret_fd;
    return std::string("return probe: ") + describe(error);
  }
  UniqueFd exit(ret_fd);
  int entry_fd = uprobe_multi_link_create(bpf_program__fd(entry_prog_), path, offsets, cookies,
                                          false, pid_ > 0 ? pid_ : 0);
  if (entry_fd < 0) {
    error = -entry_fd;
    return std::string("entry probe: ") + describe(error);
  }
  multi_exits_.push_back(std::move(exit));
  multi_entries_.emplace_back(entry_fd);
  return {};
}

std::vector<AttachFailure> FunctionProbes::attach(const std::vector<uprobes::ProbeSite>& sites) {
  std::vector<AttachFailure> failures;
  if (!multi_) {
    for (const auto& s : sites) {
      int error = 0;
      if (auto err = attach_perf(s, error); !err.empty()) failures.push_back({&s, err, error});
    }
    return failures;
  }
  std::map<std::string, std::vector<const uprobes::ProbeSite*>> by_module;
  for (const auto& s : sites) by_module[s.path].push_back(&s);
  for (const auto& [path, group] : by_module) attach_multi_split(group, failures);
  return failures;
}

// One site the kernel refuses fails its whole link. Halving the group finds
// it in O(log n) failed attempts and keeps the rest in few links; trying
// sites one by one would leave one link per site, and each link costs a
// grace period (~0.1 s) when it is closed.
void FunctionProbes::attach_multi_split(const std::vector<const uprobes::ProbeSite*>& group,
                                        std::vector<AttachFailure>& failures) {
  int error = 0;
  std::string err = attach_multi(group, error);
  if (err.empty()) return;
  if (group.size() == 1) {
    failures.push_back({group.front(), err, error});
    return;
  }
  auto mid = group.begin() + static_cast<std::ptrdiff_t>(group.size() / 2);
  attach_multi_split({group.begin(), mid}, failures);
  attach_multi_split({mid, group.end()}, failures);
}

void FunctionProbes::detach_all() {
  multi_entries_.clear();
  entries_.clear();
  multi_exits_.clear();
  exits_.clear();
}

}  // namespace atrace
