// Opening ELF files once, with ownership of every resource (see elf_file.h).
#include "uprobes/elf_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <gelf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "base/diagnostics.h"

namespace atrace::uprobes::detail {

namespace {
// libelf requires elf_version() once per process before any other call.
void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}
}  // namespace

ElfFile::ElfFile(const std::string& path) {
  init_libelf();
  fd_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd_) {
    status_ = Status::CannotOpen;
    error_ = path + ": cannot open: " + base::errno_text(errno);
    return;
  }
  // ELF_C_READ_MMAP maps the file once; elf_rawfile() then gives the image.
  elf_.reset(elf_begin(fd_.get(), ELF_C_READ_MMAP, nullptr));
  if (!elf_ || elf_kind(elf_.get()) != ELF_K_ELF) {
    elf_.reset();
    status_ = Status::NotElf;
    error_ = path + ": not an ELF file";
    return;
  }
  image_ = reinterpret_cast<const unsigned char*>(elf_rawfile(elf_.get(), &image_size_));
  if (!image_) image_size_ = 0;
}

size_t ElfFile::read_code(uint64_t offset, uint8_t* buf, size_t len) const {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd_.get(), buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

std::vector<LoadSegment> load_segments(Elf* elf) {
  std::vector<LoadSegment> segs;
  size_t n = 0;
  if (elf_getphdrnum(elf, &n) != 0) return segs;
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    segs.push_back({ph.p_vaddr, ph.p_filesz, ph.p_offset, (ph.p_flags & PF_X) != 0});
  }
  std::stable_partition(segs.begin(), segs.end(), [](const LoadSegment& s) { return s.exec; });
  return segs;
}

std::optional<uint64_t> file_offset_of(const std::vector<LoadSegment>& segs, uint64_t vaddr) {
  for (const auto& s : segs)
    if (vaddr >= s.vaddr && vaddr < s.vaddr + s.filesz) return vaddr - s.vaddr + s.offset;
  return std::nullopt;
}

}  // namespace atrace::uprobes::detail
