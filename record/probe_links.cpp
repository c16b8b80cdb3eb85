#include "record/probe_links.h"

#include <bpf/libbpf.h>

#include <cerrno>

#include "record/uprobe_multi.h"

namespace atrace {

void LinkDeleter::operator()(bpf_link* l) const { bpf_link__destroy(l); }

int attach_uprobes(const UprobeRequest& r, std::vector<OwnedLink>& out) {
  const bool one = r.pid > 0;
  auto cookie = [&r](size_t i) { return i < r.cookies.size() ? r.cookies[i] : 0; };
  if (r.multi) {
    std::vector<uint64_t> cookies(r.offsets.size());
    for (size_t i = 0; i < cookies.size(); ++i) cookies[i] = cookie(i);
    const int fd = uprobe_multi_link_create(bpf_program__fd(r.prog), r.path, r.offsets, cookies,
                                            r.ret, one ? r.pid : 0, r.ref_ctr_offsets);
    if (fd < 0) return -fd;
    OwnedLink l;
    l.fd.reset(fd);
    out.push_back(std::move(l));
    return 0;
  }
  std::vector<OwnedLink> made;
  for (size_t i = 0; i < r.offsets.size(); ++i) {
    LIBBPF_OPTS(bpf_uprobe_opts, opts,
                .ref_ctr_offset =
                    static_cast<size_t>(i < r.ref_ctr_offsets.size() ? r.ref_ctr_offsets[i] : 0),
                .bpf_cookie = cookie(i), .retprobe = r.ret);
    bpf_link* link = bpf_program__attach_uprobe_opts(r.prog, one ? r.pid : -1, r.path.c_str(),
                                                     r.offsets[i], &opts);
    if (!link) return errno;  // `made` closes what this request attached
    OwnedLink l;
    l.link.reset(link);
    made.push_back(std::move(l));
  }
  for (auto& l : made) out.push_back(std::move(l));
  return 0;
}

}  // namespace atrace
