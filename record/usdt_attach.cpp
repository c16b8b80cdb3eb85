#include "record/usdt_attach.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "base/capabilities.h"
#include "base/diagnostics.h"
#include "bpf/atrace.h"
#include "record/probe_links.h"

namespace atrace {

uint64_t usdt_cookie(uint32_t id, unsigned role, uint32_t string_mask) {
  return uint64_t{id} | uint64_t{role} << 32 | uint64_t{string_mask & 0x3f} << 40;
}

bool UsdtProbes::attach_one(bpf_program* prog, const uprobes::UsdtTarget& t,
                            const std::string& name, const std::vector<uprobes::UsdtProbe>& sites,
                            uint64_t cookie, std::string* error) {
  std::string why;
  const bool ok = specs_ ? attach_multi(prog, t, sites, cookie, &why)
                         : attach_perf(prog, t, name, cookie, &why);
  if (!ok) *error = t.provider + ":" + name + " in " + t.module + ": " + why;
  return ok;
}

bool UsdtProbes::attach_perf(bpf_program* prog, const uprobes::UsdtTarget& t,
                             const std::string& name, uint64_t cookie, std::string* error) {
  LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = cookie);
  bpf_link* l =
      bpf_program__attach_usdt(prog, pid_, t.path.c_str(), t.provider.c_str(), name.c_str(), &opts);
  if (!l) {
    int err = errno;
    *error = base::errno_text(err) + task_uprobe_privilege_hint(err);
    return false;
  }
  OwnedLink link;
  link.link.reset(l);
  links_.push_back(std::move(link));
  return true;
}

// Every site of the probe on one link; the link cookie of a site is the
// index of its spec, which carries `cookie` for bpf_usdt_cookie().
bool UsdtProbes::attach_multi(bpf_program* prog, const uprobes::UsdtTarget& t,
                              const std::vector<uprobes::UsdtProbe>& sites, uint64_t cookie,
                              std::string* error) {
  std::vector<uint64_t> offsets, spec_ids, semaphores;
  for (const auto& site : sites) {
    auto id = specs_->add(site, cookie, error);
    if (!id) return false;
    offsets.push_back(site.offset);
    spec_ids.push_back(*id);
    semaphores.push_back(site.semaphore ? site.semaphore_offset : 0);
  }
  if (offsets.empty()) {
    *error = "no site";
    return false;
  }
  UprobeRequest r;
  r.prog = prog;
  r.path = t.path;
  r.offsets = std::move(offsets);
  r.cookies = std::move(spec_ids);
  r.ref_ctr_offsets = std::move(semaphores);
  r.pid = pid_;
  r.multi = true;
  if (int err = attach_uprobes(r, links_)) {
    *error = base::errno_text(err);
    return false;
  }
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
      ok = attach_one(prog_, t, t.name + "__end", t.end_sites,
                      usdt_cookie(t.id, ATRACE_USDT_END, 0), &error) &&
           attach_one(prog_, t, t.name + "__begin", t.sites,
                      usdt_cookie(t.id, ATRACE_USDT_BEGIN, 0), &error);
    } else {
      ok = attach_one(t.string_mask ? str_prog_ : prog_, t, t.name, t.sites,
                      usdt_cookie(t.id, ATRACE_USDT_EVENT, t.string_mask), &error);
    }
    if (ok) attached_.push_back(t.id);
    else failures.push_back(error);
  }
  return failures;
}

}  // namespace atrace
