#include "record/process_info.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <fstream>
#include <sstream>
#include <string_view>

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

// Where its root is as atrace sees it: readlink(/proc/PID/root), kept only
// when that directory is the same one (a chroot or a container's root
// mounted where atrace sees it); "" for atrace's own root.
std::string root_of(pid_t pid) {
  const std::string link = proc_path(pid, "root");
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string dir(buf, static_cast<size_t>(n));
  struct stat theirs, here, mine;
  if (dir[0] != '/' || ::stat(link.c_str(), &theirs) != 0 || ::stat(dir.c_str(), &here) != 0)
    return "";
  if (theirs.st_dev != here.st_dev || theirs.st_ino != here.st_ino) return "";
  if (::stat("/", &mine) == 0 && mine.st_dev == here.st_dev && mine.st_ino == here.st_ino)
    return "";
  return dir;
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
