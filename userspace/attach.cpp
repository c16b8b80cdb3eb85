#include "userspace/attach.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

namespace atrace {

void LinkDeleter::operator()(bpf_link* l) const { bpf_link__destroy(l); }

namespace {

LinkPtr attach_one(bpf_program* prog, pid_t pid, const uprobes::ProbeSite& site, bool ret,
                   std::string& err) {
  LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = site.id, .retprobe = ret);
  bpf_link* l = bpf_program__attach_uprobe_opts(prog, pid, site.path.c_str(), site.offset, &opts);
  if (!l) {
    int e = errno;
    err = std::string(ret ? "return probe: " : "entry probe: ") + std::strerror(e);
    return nullptr;
  }
  return LinkPtr(l);
}

}  // namespace

std::string FunctionProbes::attach(const uprobes::ProbeSite& site) {
  // Return probe first: a call racing with attach then yields at worst an
  // exit without entry (ignored by analyses), never an entry without exit.
  std::string err;
  LinkPtr exit = attach_one(exit_prog_, pid_, site, true, err);
  if (!exit) return err;
  LinkPtr entry = attach_one(entry_prog_, pid_, site, false, err);
  if (!entry) return err;  // `exit` is destroyed on return
  entries_.push_back(std::move(entry));
  exits_.push_back(std::move(exit));
  return {};
}

void FunctionProbes::detach_all() {
  entries_.clear();
  exits_.clear();
}

}  // namespace atrace
