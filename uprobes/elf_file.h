// Private helper: an ELF file opened read-only with libelf, owning its fd and
// Elf* (RAII), mapped once so callers read symbols and code bytes from
// memory instead of issuing one read per symbol.
#pragma once

#include <libelf.h>

#include <cstddef>
#include <memory>
#include <string>

#include "userspace/unique_fd.h"

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
  // The whole file image (libelf's mapping) and its size.
  const unsigned char* image() const { return image_; }
  size_t image_size() const { return image_size_; }

 private:
  UniqueFd fd_;
  ElfPtr elf_;
  const unsigned char* image_ = nullptr;
  size_t image_size_ = 0;
  Status status_ = Status::Ok;
  std::string error_;
};

}  // namespace atrace::uprobes::detail
