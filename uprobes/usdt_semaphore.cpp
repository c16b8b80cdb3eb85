#include "uprobes/usdt_semaphore.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "uprobes/proc_maps.h"
#include "uprobes/process_root.h"

namespace atrace::uprobes {

std::optional<uint16_t> read_semaphore(pid_t pid, const std::string& module_path,
                                       uint64_t file_offset) {
  const std::optional<FileId> id = file_id(module_path);
  if (!id) return std::nullopt;
  std::vector<FileMapping> maps;
  try {
    maps = file_mappings(pid);
  } catch (const ProcessError&) {
    return std::nullopt;
  }
  for (const auto& m : maps) {
    if (!(m.id == *id) || file_offset < m.offset || file_offset + 2 > m.offset + (m.end - m.start))
      continue;
    atrace::UniqueFd mem(
        open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
    if (mem.get() < 0) return std::nullopt;
    uint16_t v = 0;
    off_t at = static_cast<off_t>(m.start + (file_offset - m.offset));
    if (pread(mem.get(), &v, sizeof v, at) != static_cast<ssize_t>(sizeof v)) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

}  // namespace atrace::uprobes
