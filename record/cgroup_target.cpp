#include "record/cgroup_target.h"

#include <dirent.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "base/diagnostics.h"
#include "base/mountinfo.h"
#include "record/record_error.h"

namespace atrace {

namespace {

bool is_cgroup2(const std::string& path) {
  struct statfs fs {};
  return ::statfs(path.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

void collect(const std::string& dir, std::set<pid_t>& seen, std::vector<pid_t>& out) {
  std::ifstream procs(dir + "/cgroup.procs");
  for (pid_t pid; procs >> pid;)
    if (seen.insert(pid).second) out.push_back(pid);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;  // removed meanwhile
  while (const dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    collect(dir + "/" + e->d_name, seen, out);
  }
  ::closedir(d);
}

}  // namespace

std::string cgroup2_root() {
  for (const auto& m : base::read_mountinfo())
    if (m.type == "cgroup2" && m.root == "/") return m.point;
  return "";
}

CgroupTarget resolve_cgroup(const std::string& given) {
  const std::string root = cgroup2_root();
  if (root.empty())
    throw RecordError("--cgroup=" + given + ": no cgroup v2 file system is mounted");
  CgroupTarget cg;
  cg.path = given.front() == '/' ? given : root + "/" + given;
  struct stat st {};
  if (::stat(cg.path.c_str(), &st) != 0)
    throw RecordError("--cgroup=" + given + ": no such cgroup (" + cg.path + ": " +
                      base::errno_text(errno) + "; the cgroup v2 root is " + root + ")");
  if (!S_ISDIR(st.st_mode) || !is_cgroup2(cg.path))
    throw RecordError("--cgroup=" + given + ": " + cg.path +
                      " is not a cgroup v2 directory (the cgroup v2 root is " + root + ")");
  // Its place below the root: the depth the programs compare at.
  char real[PATH_MAX], real_root[PATH_MAX];
  if (!::realpath(cg.path.c_str(), real) || !::realpath(root.c_str(), real_root))
    throw RecordError("--cgroup=" + given + ": " + base::errno_text(errno));
  std::string rel = real + std::strlen(real_root);
  if (std::strncmp(real, real_root, std::strlen(real_root)) != 0 ||
      (!rel.empty() && rel.front() != '/'))
    throw RecordError("--cgroup=" + given + ": " + real + " is not below the cgroup v2 root " +
                      root + " (atrace is in another cgroup namespace?)");
  cg.shown = rel.empty() ? "/" : rel;
  for (char c : rel) cg.level += c == '/';
  // The kernel's cgroup id is the kernfs inode of the directory (64-bit).
  cg.id = st.st_ino;
  return cg;
}

std::vector<pid_t> cgroup_processes(const CgroupTarget& cg) {
  std::set<pid_t> seen;
  std::vector<pid_t> out;
  collect(cg.path, seen, out);
  return out;
}

}  // namespace atrace
