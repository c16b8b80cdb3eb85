#include "record/uprobe_multi.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace atrace {

namespace {

constexpr int kBpfLinkCreate = 28;          // BPF_LINK_CREATE
constexpr uint32_t kUprobeMultiReturn = 1;  // BPF_F_UPROBE_MULTI_RETURN

// union bpf_attr, link_create variant for uprobe_multi (include/uapi/linux/bpf.h).
struct LinkCreateUprobeMulti {
  uint32_t prog_fd;
  uint32_t target_fd;
  uint32_t attach_type;
  uint32_t flags;
  struct {
    uint64_t path;
    uint64_t offsets;
    uint64_t ref_ctr_offsets;
    uint64_t cookies;
    uint32_t cnt;
    uint32_t flags;
    uint32_t pid;
  } uprobe_multi;
};

}  // namespace

int uprobe_multi_link_create(int prog_fd, const std::string& path,
                             const std::vector<uint64_t>& offsets,
                             const std::vector<uint64_t>& cookies, bool ret, pid_t pid,
                             const std::vector<uint64_t>& ref_ctr_offsets) {
  // The kernel reads a full bpf_attr; zeroed tail fields must stay zero.
  alignas(8) unsigned char attr_bytes[144];
  std::memset(attr_bytes, 0, sizeof attr_bytes);
  auto* attr = reinterpret_cast<LinkCreateUprobeMulti*>(attr_bytes);
  attr->prog_fd = static_cast<uint32_t>(prog_fd);
  attr->attach_type = kBpfTraceUprobeMulti;
  attr->uprobe_multi.path = reinterpret_cast<uintptr_t>(path.c_str());
  attr->uprobe_multi.offsets = reinterpret_cast<uintptr_t>(offsets.data());
  if (!ref_ctr_offsets.empty())
    attr->uprobe_multi.ref_ctr_offsets = reinterpret_cast<uintptr_t>(ref_ctr_offsets.data());
  attr->uprobe_multi.cookies = reinterpret_cast<uintptr_t>(cookies.data());
  attr->uprobe_multi.cnt = static_cast<uint32_t>(offsets.size());
  attr->uprobe_multi.flags = ret ? kUprobeMultiReturn : 0;
  attr->uprobe_multi.pid = static_cast<uint32_t>(pid);
  long fd = syscall(__NR_bpf, kBpfLinkCreate, attr_bytes, sizeof attr_bytes);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

}  // namespace atrace
