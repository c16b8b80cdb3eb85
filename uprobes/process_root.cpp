#include "uprobes/process_root.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"
#include "base/mountinfo.h"
#include "base/unique_fd.h"
#include "uprobes/proc_maps.h"

namespace atrace::uprobes {

namespace {

// Links followed in one path before giving up, as the kernel's MAXSYMLINKS.
constexpr int kMaxLinks = 40;

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void push_parts(const std::string& path, std::deque<std::string>& parts) {
  std::deque<std::string> mine;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    if (slash > at) mine.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  parts.insert(parts.begin(), mine.begin(), mine.end());
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

}  // namespace

ProcessRoot ProcessRoot::of(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  struct stat self_ns, ns, self_root, root;
  const std::string root_link = proc + "/root";
  if (::stat(proc.c_str(), &root) != 0)
    throw ProcessError("no process with pid " + std::to_string(pid));
  if (::stat(root_link.c_str(), &root) != 0 || ::stat((proc + "/ns/mnt").c_str(), &ns) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ESRCH)
      throw ProcessError("no process with pid " + std::to_string(pid));
    throw ProcessError("cannot read the files of process " + std::to_string(pid) + " (" +
                       root_link + ": " + base::errno_text(err) +
                       "): run as its user, as root or with CAP_SYS_PTRACE");
  }
  ProcessRoot r;
  if (::stat("/proc/self/ns/mnt", &self_ns) == 0 && ::stat("/", &self_root) == 0 &&
      same_file(self_ns, ns) && same_file(self_root, root))
    return r;
  r.prefix_ = root_link;
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(root_link.c_str(), buf, sizeof buf - 1);
  r.shown_ = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "/";
  return r;
}

std::optional<std::string> ProcessRoot::reach(const std::string& seen) const {
  if (own()) {
    char buf[PATH_MAX];
    if (!::realpath(seen.c_str(), buf)) return std::nullopt;
    return std::string(buf);
  }
  // The walk realpath(3) does, with the process's root for "/": every
  // absolute link starts over there, ".." never climbs above it.
  std::deque<std::string> todo;
  push_parts(seen, todo);
  std::vector<std::string> done;
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    const std::string here = prefix_ + joined(done);
    struct stat st;
    if (::lstat(here.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISLNK(st.st_mode)) continue;
    if (++links > kMaxLinks) return std::nullopt;
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(here.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return std::nullopt;
    const std::string target(buf, static_cast<size_t>(n));
    done.pop_back();
    if (target[0] == '/') done.clear();
    push_parts(target, todo);
  }
  return prefix_ + joined(done);
}

std::string ProcessRoot::from_kernel(const std::string& shown) const {
  if (own() || shown_ == "/" || shown_.empty()) return shown;
  if (shown.size() > shown_.size() && shown.compare(0, shown_.size(), shown_) == 0 &&
      shown[shown_.size()] == '/')
    return shown.substr(shown_.size());
  return shown;
}

std::string seen_path(const std::string& path) {
  // "/proc/" digits "/root" then the process's own path: ProcessRoot::of's
  // prefix, the only one atrace makes.
  constexpr std::string_view proc = "/proc/", root = "/root";
  if (path.compare(0, proc.size(), proc) != 0) return path;
  size_t at = proc.size();
  while (at < path.size() && path[at] >= '0' && path[at] <= '9') ++at;
  if (at == proc.size() || path.compare(at, root.size(), root) != 0) return path;
  at += root.size();
  if (at == path.size()) return "/";
  return path[at] == '/' ? path.substr(at) : path;
}

std::string root_prefix(const std::string& path) {
  const std::string seen = seen_path(path);
  if (seen == path) return {};
  return path.substr(0, path.size() - (seen == "/" ? 0 : seen.size()));
}

std::string seen_text(std::string text, const std::string& path) {
  const std::string seen = seen_path(path);
  if (seen == path) return text;
  for (size_t at = text.find(path); at != std::string::npos; at = text.find(path, at + seen.size()))
    text.replace(at, path.size(), seen);
  return text;
}

namespace {

// "pid" of a "/proc/PID/root..." path, else atrace's own.
pid_t pid_of_root(const std::string& path) {
  const std::string prefix = root_prefix(path);
  return prefix.empty() ? ::getpid() : static_cast<pid_t>(std::atoi(prefix.c_str() + 6));
}

}  // namespace

std::vector<OverlayLayers::Mount> OverlayLayers::parse(const std::string& mountinfo) {
  std::vector<Mount> out;
  for (const auto& mount : base::parse_mountinfo(mountinfo)) {
    if (mount.type != "overlay") continue;
    Mount m;
    m.dev = mount.dev;
    m.root = mount.root;
    m.mount_point = mount.point;
    std::string upper;
    std::vector<std::string> lower;
    for (const auto& opt : base::split_field(mount.super_options, ',')) {
      if (opt.rfind("upperdir=", 0) == 0) upper = base::unescape_mountinfo(opt.substr(9));
      else if (opt.rfind("lowerdir=", 0) == 0)
        for (const auto& l : base::split_field(opt.substr(9), ':'))
          lower.push_back(base::unescape_mountinfo(l));
      else if (opt.rfind("lowerdir+=", 0) == 0)
        lower.push_back(base::unescape_mountinfo(opt.substr(10)));
    }
    if (!upper.empty()) m.layers.push_back(upper);
    m.layers.insert(m.layers.end(), lower.begin(), lower.end());
    if (!m.layers.empty()) out.push_back(std::move(m));
  }
  return out;
}

OverlayLayers::OverlayLayers(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/mountinfo");
  std::ostringstream text;
  text << in.rdbuf();
  mounts_ = parse(text.str());  // the text, not read_mountinfo: parse() is what is tested
}

FileId OverlayLayers::kernel_id(const FileId& shown, const std::string& seen) const {
  for (const auto& m : mounts_) {
    if (m.dev != shown.dev) continue;
    std::string rel;
    if (m.mount_point == "/") rel = seen;
    else if (seen.size() > m.mount_point.size() &&
             seen.compare(0, m.mount_point.size(), m.mount_point) == 0 &&
             seen[m.mount_point.size()] == '/')
      rel = seen.substr(m.mount_point.size());
    else continue;
    const std::string inside = (m.root == "/" ? "" : m.root) + rel;
    for (const auto& layer : m.layers) {
      struct stat st;
      // The inode number maps shows is the layer file's (an overlay on one
      // file system, or without xino): a file of another inode at that
      // path from here is not it.
      if (::stat((layer + inside).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          st.st_ino == shown.ino)
        return FileId{st.st_dev, st.st_ino};
    }
  }
  return shown;
}

std::optional<FileId> file_id(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return std::nullopt;
  // Only a mapping shows the inode the kernel probes (an overlay hands the
  // layer's file to mmap): map a page, read its line of our own maps.
  void* at = ::mmap(nullptr, 1, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (at == MAP_FAILED) return std::nullopt;
  std::optional<FileId> id;
  for (const auto& m : file_mappings(getpid()))
    if (m.start == reinterpret_cast<uintptr_t>(at)) id = m.id;
  ::munmap(at, 1);
  // A file of an overlay of the process's namespace, not atrace's: its
  // layers are in the process's mountinfo.
  if (id && major(id->dev) == 0 && !root_prefix(path).empty()) {
    const OverlayLayers layers(pid_of_root(path));
    if (!layers.empty()) id = layers.kernel_id(*id, seen_path(path));
  }
  return id;
}

}  // namespace atrace::uprobes
