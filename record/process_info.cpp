#include "record/process_info.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "base/mountinfo.h"

namespace atrace {

namespace {

std::string proc_path(pid_t pid, const char* what) {
  return "/proc/" + std::to_string(pid) + "/" + what;
}

// The last number of the status file's "NSpid:" line: the pid in the
// innermost namespace (the line lists it from atrace's outwards in).
uint32_t ns_pid_of(pid_t pid) {
  std::ifstream in(proc_path(pid, "status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream words(line.substr(6));
    uint64_t last = 0;
    for (uint64_t v; words >> v;) last = v;
    return last <= UINT32_MAX ? static_cast<uint32_t>(last) : 0;
  }
  return 0;
}

uint64_t ns_inode(pid_t pid, const char* ns) {
  struct stat st;
  return ::stat(proc_path(pid, ns).c_str(), &st) == 0 ? st.st_ino : 0;
}

// The "0::PATH" line: the unified (v2) hierarchy, as seen from atrace's
// cgroup namespace.
std::string cgroup_of(pid_t pid) {
  std::ifstream in(proc_path(pid, "cgroup"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

bool same_dir(const struct stat& a, const std::string& path) {
  struct stat b;
  return ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The directory of atrace's namespace that is the process's root, from
// the mounts: its "/" is a file system's directory ROOT (a container's
// root file system, a bind mount of a directory); where atrace's
// namespace mounts that file system at POINT with its directory R above
// ROOT, the process's root is POINT + (ROOT less R). Kept only when it is
// that same directory. What readlink(/proc/PID/root) cannot tell across
// mount namespaces (it says "/").
std::string root_by_mounts(pid_t pid, const struct stat& theirs) {
  std::optional<base::Mount> top;
  for (auto& m : base::read_mountinfo(pid))
    if (m.point == "/") top = m;  // the last one mounted there is the one seen
  if (!top) return "";
  std::string best;
  size_t best_len = 0;
  for (const auto& m : base::read_mountinfo()) {
    if (m.dev != top->dev) continue;
    const std::string& r = m.root;
    const bool under = r == "/" || (top->root.compare(0, r.size(), r) == 0 &&
                                    (top->root.size() == r.size() || top->root[r.size()] == '/'));
    if (!under || (!best.empty() && r.size() < best_len)) continue;
    std::string rest = r == "/" ? top->root : top->root.substr(r.size());  // "" or "/..."
    if (rest == "/") rest.clear();
    std::string dir = (m.point == "/" ? "" : m.point) + rest;
    if (dir.empty()) dir = "/";
    if (same_dir(theirs, dir)) {
      best = dir;
      best_len = r.size();
    }
  }
  return best;
}

// Where its root is as atrace sees it: readlink(/proc/PID/root) (a
// chroot), or found from the mounts (a container's own mount namespace),
// kept only when that directory is the same one; "" for atrace's own root
// or none found.
std::string root_of(pid_t pid) {
  const std::string link = proc_path(pid, "root");
  struct stat theirs, mine;
  if (::stat(link.c_str(), &theirs) != 0) return "";
  if (::stat("/", &mine) == 0 && mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino)
    return "";
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n > 0 && buf[0] == '/') {
    const std::string dir(buf, static_cast<size_t>(n));
    if (dir != "/" && same_dir(theirs, dir)) return dir;
  }
  const std::string dir = root_by_mounts(pid, theirs);
  return dir == "/" ? "" : dir;
}

bool all_hex(std::string_view s) {
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return !s.empty();
}

constexpr size_t kShortId = 12;  // `podman ps`, `docker ps`

// A container engine's id in one part of a cgroup path, or "".
std::string container_id(std::string_view part) {
  constexpr std::string_view kPrefixes[] = {"libpod-", "docker-", "cri-containerd-", "crio-",
                                            "containerd-"};
  constexpr std::string_view kScope = ".scope";
  if (part.size() > kScope.size() && part.substr(part.size() - kScope.size()) == kScope)
    part.remove_suffix(kScope.size());
  for (std::string_view prefix : kPrefixes) {
    if (part.substr(0, prefix.size()) != prefix) continue;
    std::string_view id = part.substr(prefix.size());
    if (id.size() >= kShortId && all_hex(id)) return std::string(id.substr(0, kShortId));
  }
  if (part.size() == 64 && all_hex(part)) return std::string(part.substr(0, kShortId));
  return "";
}

}  // namespace

std::string cgroup_name(const std::string& cgroup) {
  std::string_view rest = cgroup;
  std::string service;
  while (!rest.empty()) {
    const size_t slash = rest.rfind('/');
    std::string_view part = slash == std::string_view::npos ? rest : rest.substr(slash + 1);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(0, slash);
    if (auto id = container_id(part); !id.empty()) return id;
    constexpr std::string_view kService = ".service";
    if (service.empty() && part.size() > kService.size() &&
        part.substr(part.size() - kService.size()) == kService)
      service = part;
  }
  return service;
}

formats::ProcessInfo process_info(pid_t pid) {
  formats::ProcessInfo p;
  p.pid = static_cast<uint32_t>(pid);
  p.ns_pid = ns_pid_of(pid);
  p.pid_ns = ns_inode(pid, "ns/pid");
  p.mnt_ns = ns_inode(pid, "ns/mnt");
  p.cgroup = cgroup_of(pid);
  p.name = cgroup_name(p.cgroup);
  p.root = root_of(pid);
  return p;
}

bool ProcessTable::note(pid_t pid) {
  if (pid <= 0 || !seen_.insert(pid).second) return false;
  all_.push_back(process_info(pid));
  return true;
}

std::vector<formats::ProcessInfo> ProcessTable::take_new() {
  std::vector<formats::ProcessInfo> fresh(all_.begin() + static_cast<ptrdiff_t>(taken_),
                                          all_.end());
  taken_ = all_.size();
  return fresh;
}

}  // namespace atrace
