#include "record/usdt_attach.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "base/capabilities.h"
#include "bpf/atrace.h"

namespace atrace {

uint64_t usdt_cookie(uint32_t id, unsigned role, uint32_t string_mask) {
  return uint64_t{id} | uint64_t{role} << 32 | uint64_t{string_mask & 0x3f} << 40;
}

bool UsdtProbes::attach_one(bpf_program* prog, const uprobes::UsdtTarget& t,
                            const std::string& name, uint64_t cookie, std::string* error) {
  LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = cookie);
  bpf_link* l =
      bpf_program__attach_usdt(prog, pid_, t.path.c_str(), t.provider.c_str(), name.c_str(), &opts);
  if (!l) {
    int err = errno;
    *error = t.provider + ":" + name + " in " + t.module + ": " + std::strerror(err) +
             task_uprobe_privilege_hint(err);
    return false;
  }
  links_.emplace_back(l);
  return true;
}

std::vector<std::string> UsdtProbes::attach(const std::vector<uprobes::UsdtTarget>& targets) {
  std::vector<std::string> failures;
  for (const auto& t : targets) {
    std::string error;
    bool ok;
    if (t.kind == formats::ProbeKind::Interval) {
      // The end first: an interval may then lack its begin (ignored by the
      // analyses), never its end.
      ok =
          attach_one(prog_, t, t.name + "__end", usdt_cookie(t.id, ATRACE_USDT_END, 0), &error) &&
          attach_one(prog_, t, t.name + "__begin", usdt_cookie(t.id, ATRACE_USDT_BEGIN, 0), &error);
    } else {
      ok = attach_one(t.string_mask ? str_prog_ : prog_, t, t.name,
                      usdt_cookie(t.id, ATRACE_USDT_EVENT, t.string_mask), &error);
    }
    if (ok) attached_.push_back(t.id);
    else failures.push_back(error);
  }
  return failures;
}

}  // namespace atrace
