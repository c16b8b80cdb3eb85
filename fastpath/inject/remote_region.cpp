#include "fastpath/inject/remote_region.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "base/whole_file.h"
#include "fastpath/inject/inject_error.h"
#include "fastpath/inject/remote_memfd.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

namespace atrace::fastpath {

namespace {

constexpr uint64_t kPage = 4096;

uint64_t page_up(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }

uint64_t min_mmap_address() {
  std::ifstream in("/proc/sys/vm/mmap_min_addr");
  uint64_t v = 65536;
  in >> v;
  return std::max<uint64_t>(v, kPage);
}

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::vector<MapsEntry> read_maps(pid_t pid) {
  // Read without throwing: the process may go between the open and the read.
  auto text = base::read_whole_file("/proc/" + std::to_string(pid) + "/maps");
  if (!text) throw ProcessGone("no process with pid " + std::to_string(pid));
  return parse_maps(*text);
}

RemoteRegion RemoteRegion::map_near(RemoteSyscall& sys, AddressRange module, uint64_t size,
                                    int prot, const std::string& name) {
  RemoteRegion region =
      place_near(sys, module, page_up(size), prot, MAP_PRIVATE | MAP_ANONYMOUS, ~uint64_t{0});
  region.name_it(sys, name);
  return region;
}

// The memfd's name shows in /proc/PID/maps (/memfd:NAME (deleted)): no
// PR_SET_VMA name, which is for anonymous memory only.
RemoteRegion RemoteRegion::map_file_near(RemoteSyscall& sys, AddressRange module, uint64_t size,
                                         int prot, const std::string& name, uint64_t scratch) {
  size = page_up(size);
  RemoteMemfd file(sys, name, size, scratch);
  RemoteRegion region = place_near(sys, module, size, prot, MAP_PRIVATE, file.target_fd());
  region.file_ = std::make_shared<const UniqueFd>(file.take());
  return region;
}

RemoteRegion RemoteRegion::place_near(RemoteSyscall& sys, AddressRange module, uint64_t size,
                                      int prot, int flags, uint64_t fd) {
  pid_t pid = sys.memory().pid();
  std::vector<uint64_t> candidates =
      near_candidates(read_maps(pid), module, size, min_mmap_address());
  unsigned tried = 0;
  for (uint64_t at : candidates) {
    if (++tried > 16) break;
    long r = sys.call(SYS_mmap, at, size, static_cast<uint64_t>(prot),
                      static_cast<uint64_t>(flags) | MAP_FIXED_NOREPLACE, fd, 0);
    if (r == -EEXIST) continue;  // taken since the maps were read
    if (r < 0 && r > -4096)
      throw InjectError(errno_message("cannot map " + std::to_string(size) + " bytes in process " +
                                          std::to_string(pid) + " at " + hex(at),
                                      static_cast<int>(-r)));
    if (static_cast<uint64_t>(r) != at) {
      // A kernel without MAP_FIXED_NOREPLACE took the address as a hint.
      sys.call(SYS_munmap, static_cast<uint64_t>(r), size);
      continue;
    }
    return RemoteRegion(at, size, prot);
  }
  throw InjectError("no free address range of " + std::to_string(size) + " bytes within 2 GiB of " +
                    hex(module.start) + "-" + hex(module.end) + " in process " +
                    std::to_string(pid) + " (" + std::to_string(tried) + " tried)");
}

RemoteRegion RemoteRegion::map_anywhere(RemoteSyscall& sys, uint64_t size, int prot,
                                        const std::string& name) {
  size = page_up(size);
  uint64_t at = sys.checked("mmap", SYS_mmap, 0, size, static_cast<uint64_t>(prot),
                            MAP_PRIVATE | MAP_ANONYMOUS, ~uint64_t{0}, 0);
  RemoteRegion region(at, size, prot);
  region.name_it(sys, name);
  return region;
}

// PR_SET_VMA_ANON_NAME (Linux 5.17, CONFIG_ANON_VMA_NAME) takes the name
// from the process's memory: it is written into the fresh region itself,
// then cleared. Without the kernel's support the region stays unnamed.
void RemoteRegion::name_it(RemoteSyscall& sys, const std::string& name) const {
  if (name.empty() || name.size() >= 80 || name.size() + 1 > size_) return;
  std::vector<std::byte> text(name.size() + 1);
  std::memcpy(text.data(), name.data(), name.size());
  ProcessMemory& memory = sys.memory();
  memory.write_any(address_, text);
  sys.call(SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, address_, size_, address_);
  std::fill(text.begin(), text.end(), std::byte{0});
  memory.write_any(address_, text);
}

void RemoteRegion::check(uint64_t offset, size_t length) const {
  if (offset > size_ || length > size_ - offset)
    throw InjectError("access beyond the region at " + hex(address_) + " (" +
                      std::to_string(size_) + " bytes): offset " + std::to_string(offset) + ", " +
                      std::to_string(length) + " bytes");
}

void RemoteRegion::write(const ProcessMemory& memory, uint64_t offset,
                         std::span<const std::byte> bytes) const {
  check(offset, bytes.size());
  if (file_) {
    const auto n = pwrite(file_->get(), bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n != static_cast<ssize_t>(bytes.size()))
      throw InjectError(errno_message("write into the code region's memfd", n < 0 ? errno : EIO));
    return;
  }
  if (prot_ & PROT_WRITE) memory.write(address_ + offset, bytes);
  else memory.write_any(address_ + offset, bytes);
}

void RemoteRegion::read(const ProcessMemory& memory, uint64_t offset,
                        std::span<std::byte> out) const {
  check(offset, out.size());
  if (prot_ & PROT_READ) memory.read(address_ + offset, out);
  else memory.read_any(address_ + offset, out);
}

void RemoteRegion::advise(RemoteSyscall& sys, uint64_t offset, uint64_t length, int advice) const {
  check(offset, length);
  sys.checked("madvise", SYS_madvise, address_ + offset, length, static_cast<uint64_t>(advice));
}

void RemoteRegion::unmap(RemoteSyscall& sys) {
  if (size_ == 0) return;
  sys.checked("munmap", SYS_munmap, address_, size_);
  size_ = 0;
}

}  // namespace atrace::fastpath
