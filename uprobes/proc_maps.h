// The modules (executable file mappings) of a process or of a program about
// to be launched.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprobes/error.h"

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
  std::string path;  // as mapped ("/usr/lib/x86_64-linux-gnu/libc.so.6");
                     // launch_modules(): the realpath of what the loader reports
  std::string name;  // basename ("libc.so.6"; launch: of the name as reported)
  bool is_main = false;
  // Not mapped by the process (yet): a file found on disk that a selector
  // names (uprobes/late_modules.h). Its probes are bound to the file and
  // take effect when the process maps it.
  bool waiting = false;
};

// Main executable first (from /proc/PID/exe), then every other file with an
// executable mapping, each once. Throws ProcessError ("no process with pid N",
// "... permission denied ...", a kernel thread has no executable).
std::vector<Module> process_modules(pid_t pid);

// One file mapping of /proc/PID/maps: where it starts, the file offset it
// maps, and the file ("(deleted)" taken off).
struct FileMapping {
  uint64_t start = 0;
  uint64_t offset = 0;
  std::string path;
};
// Every file mapping, in address order; throws ProcessError like
// process_modules().
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
