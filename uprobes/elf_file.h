// Private helper: an ELF file opened read-only with libelf, owning its fd and
// Elf* (RAII), mapped once so callers read symbols and code bytes from
// memory instead of issuing one read per symbol.
#pragma once

#include <libelf.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/unique_fd.h"

namespace atrace::uprobes::detail {

using atrace::UniqueFd;

struct ElfDeleter {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfDeleter>;

// An opened ELF file. The constructor leaves elf() null, with status() and
// error() set, when the file cannot be opened or is not ELF; the caller picks
// the exception type.
class ElfFile {
 public:
  enum class Status { Ok, CannotOpen, NotElf };

  explicit ElfFile(const std::string& path);

  Status status() const { return status_; }
  const std::string& error() const { return error_; }  // "PATH: ..." message
  Elf* elf() const { return elf_.get(); }
  // The whole file image (libelf's mapping) and its size. Not for code
  // bytes: see read_code().
  const unsigned char* image() const { return image_; }
  size_t image_size() const { return image_size_; }
  // Up to `len` bytes of the file at `offset`, as on disk: the number read.
  // Code is read with pread(2), never through image(): once a uprobe is
  // registered on the file (bpftrace, another atrace), the kernel writes its
  // int3 into every executable-capable mapping of it, libelf's read-only one
  // included (uprobe_mmap), and the probed function would read as "int3".
  size_t read_code(uint64_t offset, uint8_t* buf, size_t len) const;

 private:
  UniqueFd fd_;
  ElfPtr elf_;
  const unsigned char* image_ = nullptr;
  size_t image_size_ = 0;
  Status status_ = Status::Ok;
  std::string error_;
};

// A PT_LOAD segment: where its bytes are in the file and in memory.
struct LoadSegment {
  uint64_t vaddr = 0, filesz = 0, offset = 0;
  bool exec = false;
};
// The file's PT_LOAD segments, executable ones first (code lives there, and
// a virtual address is looked up there first).
std::vector<LoadSegment> load_segments(Elf* elf);
// The file offset of the byte at `vaddr`, if a segment holds it on disk.
std::optional<uint64_t> file_offset_of(const std::vector<LoadSegment>& segs, uint64_t vaddr);

}  // namespace atrace::uprobes::detail
