// Modules of a running process (/proc/PID/exe and /proc/PID/maps) or of a
// program about to be launched (its dynamic loader's --list, like ldd, run
// without a shell so nothing of the program itself executes).
#include "uprobes/proc_maps.h"

#include <fcntl.h>
#include <gelf.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"
#include "uprobes/elf_file.h"

extern char** environ;

namespace atrace::uprobes {

namespace {

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string strip_deleted(std::string path) {
  constexpr std::string_view suffix = " (deleted)";
  if (path.size() > suffix.size() &&
      path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
    path.resize(path.size() - suffix.size());
  return path;
}

std::string canonical(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

[[noreturn]] void proc_error(pid_t pid, const std::string& what, int err) {
  if (err == ENOENT || err == ESRCH)
    throw ProcessError("no process with pid " + std::to_string(pid));
  if (err == EACCES || err == EPERM)
    throw ProcessError("cannot read " + what +
                       ": permission denied (run as its user, as root or with CAP_SYS_PTRACE)");
  throw ProcessError("cannot read " + what + ": " + base::errno_text(err));
}

std::string read_exe_link(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  struct stat st;
  if (::stat(proc.c_str(), &st) != 0) proc_error(pid, proc, errno);
  const std::string link = proc + "/exe";
  std::string buf(PATH_MAX, '\0');
  ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
  if (n < 0) {
    int err = errno;
    // /proc/PID exists but exe does not: a kernel thread or a zombie.
    if (err == ENOENT)
      throw ProcessError("process " + std::to_string(pid) +
                         " has no executable (kernel thread or exited?)");
    proc_error(pid, link, err);
  }
  buf.resize(static_cast<size_t>(n));
  return strip_deleted(buf);
}

// One line of /proc/PID/maps, "start-end perms offset major:minor inode
// path", if it maps a file (its path starts with '/': not [vdso], [stack]
// or anonymous memory).
std::optional<FileMapping> parse_maps_line(const std::string& line) {
  unsigned long long start = 0, end = 0, offset = 0, ino = 0;
  unsigned major = 0, minor = 0;
  char perms[8] = {};
  int used = 0;
  if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset,
                  &major, &minor, &ino, &used) < 7 ||
      used <= 0)
    return std::nullopt;
  const size_t at = static_cast<size_t>(used);
  if (at >= line.size() || line[at] != '/') return std::nullopt;
  FileMapping m;
  m.start = start;
  m.end = end;
  m.offset = offset;
  m.exec = perms[2] == 'x';
  m.id = FileId{makedev(major, minor), ino};
  m.path = strip_deleted(line.substr(at));
  return m;
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// PT_INTERP of an executable, empty for a static one.
std::string interpreter_of(const std::string& exe) {
  detail::ElfFile file(exe);
  if (file.status() == detail::ElfFile::Status::CannotOpen) throw ProcessError(file.error());
  if (file.status() == detail::ElfFile::Status::NotElf)
    throw NotElfError(exe + ": not an ELF executable");
  size_t n = 0;
  if (elf_getphdrnum(file.elf(), &n) != 0) return {};
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(file.elf(), static_cast<int>(i), &ph) || ph.p_type != PT_INTERP) continue;
    if (ph.p_offset >= file.image_size() || ph.p_filesz == 0) break;
    size_t len = std::min<uint64_t>(ph.p_filesz, file.image_size() - ph.p_offset);
    std::string interp(reinterpret_cast<const char*>(file.image()) + ph.p_offset, len);
    interp.resize(std::strlen(interp.c_str()));  // drop the NUL terminator
    return interp;
  }
  return {};
}

// Runs ARGV (no shell, inherited environment) and returns its stdout; the
// first line of its stderr goes to `error` (kept in memory, so a chatty
// child cannot block on a pipe nobody reads yet).
std::string run_capture(const std::vector<std::string>& argv, int* exit_status,
                        std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw ProcessError(std::string("pipe: ") + base::errno_text(errno));
  detail::UniqueFd rd(fds[0]), wr(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, wr.get(), STDOUT_FILENO);
  detail::UniqueFd err(::memfd_create("atrace-stderr", MFD_CLOEXEC));
  if (err) posix_spawn_file_actions_adddup2(&actions, err.get(), STDERR_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t child = -1;
  int rc = ::posix_spawn(&child, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw ProcessError("cannot run " + argv[0] + ": " + base::errno_text(rc));
  wr.reset();  // our copy: EOF once the child exits

  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(rd.get(), buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  *exit_status = status;
  if (err) {
    char line[512] = {};
    const ssize_t n = ::pread(err.get(), line, sizeof line - 1, 0);
    if (n > 0) {
      *error = std::string(line, static_cast<size_t>(n));
      *error = error->substr(0, error->find('\n'));
    }
  }
  return out;
}

// One line of "ld.so --list": "\tlibc.so.6 => /lib/.../libc.so.6 (0x...)",
// "\t/lib64/ld-linux-x86-64.so.2 (0x...)", "\tlinux-vdso.so.1 (0x...)" or
// "\tlibfoo.so => not found". Returns false for lines that name no file.
bool parse_list_line(const std::string& exe, std::string_view line, std::string* reported,
                     std::string* path) {
  while (!line.empty() && (line.front() == '\t' || line.front() == ' ')) line.remove_prefix(1);
  size_t addr = line.rfind(" (0x");
  std::string_view head = addr == std::string_view::npos ? line : line.substr(0, addr);
  size_t arrow = head.find(" => ");
  if (arrow != std::string_view::npos) {
    std::string_view target = head.substr(arrow + 4);
    if (target == "not found")
      throw ProcessError("cannot launch " + exe + ": shared library " +
                         std::string(head.substr(0, arrow)) + " not found (check LD_LIBRARY_PATH)");
    *reported = std::string(head.substr(0, arrow));
    *path = std::string(target);
    return !path->empty() && path->front() == '/';
  }
  if (head.empty() || head.front() != '/') return false;  // linux-vdso.so.1, "statically linked"
  *reported = std::string(head);
  *path = std::string(head);
  return true;
}

}  // namespace

std::vector<Module> process_modules(pid_t pid) {
  const std::string exe_shown = read_exe_link(pid);
  const ProcessRoot root = ProcessRoot::of(pid);
  const std::vector<FileMapping> maps = file_mappings(pid);
  // The kernel's path is the process's own only where it shares atrace's
  // root; elsewhere the file is reached through the process's root, and
  // when that path leads to another file than the one mapped (the
  // process's root moved since), through the mapping itself.
  auto module_of = [&](const std::string& shown, const FileMapping* m) {
    Module mod;
    mod.path = root.host(root.from_kernel(shown));
    mod.name = basename_of(shown);
    if (m) {
      mod.id = m->id;
      struct stat st;
      if (!root.own() && (::stat(mod.path.c_str(), &st) != 0 || st.st_ino != m->id.ino)) {
        char range[64];
        std::snprintf(range, sizeof range, "/%llx-%llx", static_cast<unsigned long long>(m->start),
                      static_cast<unsigned long long>(m->end));
        mod.path = "/proc/" + std::to_string(pid) + "/map_files" + range;
      }
    }
    return mod;
  };
  const FileMapping* exe_map = nullptr;
  for (const auto& m : maps)
    if (m.path == exe_shown && !exe_map) exe_map = &m;
  std::vector<Module> mods{module_of(exe_shown, exe_map)};
  mods.front().is_main = true;
  std::set<std::string> seen{exe_shown};
  std::set<FileId> ids;
  if (exe_map) ids.insert(exe_map->id);
  for (const auto& m : maps) {
    if (!m.exec || !seen.insert(m.path).second || !ids.insert(m.id).second) continue;
    mods.push_back(module_of(m.path, &m));
  }
  return mods;
}

std::vector<FileMapping> file_mappings(pid_t pid) {
  const std::string maps_path = "/proc/" + std::to_string(pid) + "/maps";
  std::ifstream maps(maps_path);
  if (!maps) proc_error(pid, maps_path, errno);
  std::vector<FileMapping> out;
  std::string line;
  bool anonymous_dev = false;  // a file system without a device: tmpfs, overlay...
  while (std::getline(maps, line))
    if (auto m = parse_maps_line(line)) {
      anonymous_dev |= major(m->id.dev) == 0;
      out.push_back(std::move(*m));
    }
  if (!anonymous_dev) return out;
  // A file of an overlay gets the identity the kernel probes: its layer's.
  const OverlayLayers layers(pid);
  if (layers.empty()) return out;
  try {
    const ProcessRoot root = ProcessRoot::of(pid);
    for (auto& m : out)
      if (major(m.id.dev) == 0) m.id = layers.kernel_id(m.id, root.from_kernel(m.path));
  } catch (const ProcessError&) {
    // Gone meanwhile: the maps' own identities.
  }
  return out;
}

std::vector<Module> launch_modules(const std::string& exe_path,
                                   const std::optional<std::string>& ld_library_path) {
  std::vector<Module> mods;
  const std::string exe = canonical(exe_path);
  mods.push_back({exe, basename_of(exe_path), true});
  const std::string interp = interpreter_of(exe_path);
  if (interp.empty()) return mods;  // static

  int status = 0;
  // --library-path stands for LD_LIBRARY_PATH (ld.so(8)): the program's,
  // not the environment of atrace that runs the loader here.
  std::vector<std::string> argv = {interp, "--list", exe_path};
  if (ld_library_path) argv.insert(argv.begin() + 1, {"--library-path", *ld_library_path});
  std::string why;
  const std::string out = run_capture(argv, &status, &why);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw ProcessError("cannot list the libraries of " + exe_path + ": " + interp +
                       " --list failed" + (why.empty() ? "" : " (" + why + ")"));

  std::set<std::string> seen{exe};
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    std::string reported, path;
    if (parse_list_line(exe_path, std::string_view(out).substr(pos, end - pos), &reported, &path)) {
      path = canonical(path);
      if (seen.insert(path).second) mods.push_back({path, basename_of(reported), false});
    }
    pos = end + 1;
  }
  return mods;
}

std::string find_executable(const std::string& cmd) {
  if (cmd.empty()) throw ProcessError("command not found: ''");
  if (cmd.find('/') != std::string::npos) {
    struct stat st;
    if (::stat(cmd.c_str(), &st) != 0) throw ProcessError("command not found: " + cmd);
    if (!is_executable_file(cmd)) throw ProcessError("not an executable file: " + cmd);
    return cmd;
  }
  const char* env = std::getenv("PATH");
  std::string_view search = env ? env : "/usr/local/bin:/usr/bin:/bin";
  for (;;) {
    size_t colon = search.find(':');
    std::string dir(search.substr(0, colon));
    if (dir.empty()) dir = ".";  // an empty PATH element is the current directory
    std::string candidate = dir + "/" + cmd;
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    search.remove_prefix(colon + 1);
  }
  throw ProcessError("command not found: " + cmd);
}

}  // namespace atrace::uprobes
