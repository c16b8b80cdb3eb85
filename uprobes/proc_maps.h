// The modules (executable file mappings) of a process or of a program about
// to be launched.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprobes/error.h"
#include "uprobes/process_root.h"

namespace atrace::uprobes {

// A process or program whose modules cannot be listed (no such pid, no
// permission, not an executable, command not found).
class ProcessError : public Error {
 public:
  using Error::Error;
};

// A program that is not ELF (a script): launch mode follows it to the
// program it execs (record/exec_follow.h).
class NotElfError : public ProcessError {
 public:
  using ProcessError::ProcessError;
};

struct Module {
  // What atrace opens and probes: the file as the process maps it
  // ("/usr/lib/x86_64-linux-gnu/libc.so.6"), reached through the process's
  // root ("/proc/PID/root/usr/lib/...") when it is not atrace's
  // (process_root.h: seen_path() is the process's view); launch_modules():
  // the realpath of what the loader reports.
  std::string path;
  std::string name;  // basename ("libc.so.6"; launch: of the name as reported)
  bool is_main = false;
  // Not mapped by the process (yet): a file found on disk that a selector
  // names (uprobes/late_modules.h). Its probes are bound to the file and
  // take effect when the process maps it.
  bool waiting = false;
  // The inode the kernel probes (process_root.h): the module's identity,
  // never its path. {0, 0} where not known (launch mode).
  FileId id;
};

// Main executable first (from /proc/PID/exe), then every other file with an
// executable mapping, each file once, their paths reached through the
// process's root (process_root.h). Throws ProcessError ("no process with
// pid N", "... permission denied ...", a kernel thread has no executable).
std::vector<Module> process_modules(pid_t pid);

// One file mapping of /proc/PID/maps: where it is, the file offset it
// maps, the file's identity, and its path as the kernel shows it to atrace
// ("(deleted)" taken off; ProcessRoot::from_kernel gives the process's).
struct FileMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  bool exec = false;
  FileId id;
  std::string path;
};
// Every file mapping, in address order: the one reader of /proc/PID/maps.
// A file of an overlay has its layer's identity (OverlayLayers), not the
// one maps shows. Throws ProcessError like process_modules().
std::vector<FileMapping> file_mappings(pid_t pid);

// For launch mode, before the program runs: the executable itself, then the
// shared libraries its dynamic loader would load (asks the program's own
// PT_INTERP loader with --list, as ldd does; nothing of the program runs).
// Static executables give just themselves. Throws ProcessError when the file
// is not ELF, or a needed library is "not found". `ld_library_path` is the
// LD_LIBRARY_PATH the program will run with (nullopt: atrace's own, which a
// command it launches inherits).
std::vector<Module> launch_modules(const std::string& exe_path,
                                   const std::optional<std::string>& ld_library_path = {});

// Resolves a command name like execvp would (PATH search); throws ProcessError
// "command not found: NAME".
std::string find_executable(const std::string& cmd);

}  // namespace atrace::uprobes
