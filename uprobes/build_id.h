// The GNU build-id of an ELF file (.note.gnu.build-id): which exact build of
// a module a trace's probe addresses belong to, so a later reader can tell a
// rebuilt binary from the traced one.
#pragma once

#include <libelf.h>

#include <string>

namespace atrace::uprobes {

// Lower-case hex, or "" when the file has no build-id or is unreadable.
std::string read_build_id(const std::string& path);
// The same of a file already open with libelf.
std::string build_id_of(Elf* elf);

}  // namespace atrace::uprobes
