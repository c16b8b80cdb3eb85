#include "uprobes/usdt_semaphore.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "base/unique_fd.h"

namespace atrace::uprobes {

std::optional<uint16_t> read_semaphore(pid_t pid, const std::string& module_path,
                                       uint64_t file_offset) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode path
    std::istringstream in(line);
    std::string range, perms, dev, path;
    uint64_t offset = 0, inode = 0;
    in >> range >> perms >> std::hex >> offset >> dev >> std::dec >> inode;
    std::getline(in >> std::ws, path);
    if (path != module_path) continue;
    size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    uint64_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    uint64_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (file_offset < offset || file_offset + 2 > offset + (end - start)) continue;
    atrace::UniqueFd mem(
        open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
    if (mem.get() < 0) return std::nullopt;
    uint16_t v = 0;
    off_t at = static_cast<off_t>(start + (file_offset - offset));
    if (pread(mem.get(), &v, sizeof v, at) != static_cast<ssize_t>(sizeof v)) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

}  // namespace atrace::uprobes
