// A program run in a root directory that only it sees, as a container
// runs one (issue 30), without a container engine: `unshare --mount --pid
// --fork --propagation private`, a tmpfs mounted on an empty directory of
// the host (the host keeps seeing it empty), the program, the libraries
// `ldd` lists for it, the dynamic loader and any other file copied (or
// bind-mounted: the host's file itself) into it, optionally the root's own
// /etc/ld.so.cache made by `ldconfig -r`, then `chroot` and exec. The
// program is its pid namespace's init; the test knows it by its host pid.
// The destructor kills it; its namespace, tmpfs and copies go with it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/integration/run.h"

namespace atrace::it {

// A host file and the path it gets in the root.
struct RootFile {
  std::string host;
  std::string inside;
};

struct PrivateRootSpec {
  std::string program;  // host path; its libraries (ldd) come along
  std::string inside;   // its path in the root, e.g. "/opt/app/target_cont"
  std::vector<std::string> args;
  std::vector<RootFile> copies;  // copied (each copy a file of its own)
  std::vector<RootFile> binds;   // bind-mounted: one file shared with the host
  // Directories of the root that are an overlayfs whose lower layer is the
  // host's directory (upper and work directories in the root's tmpfs), as
  // a container's image layers are; mounted before anything is copied.
  std::vector<RootFile> overlays;
  // Non-empty: the root's /etc/ld.so.conf lists these directories and
  // `ldconfig -r ROOT` writes the root's own /etc/ld.so.cache.
  std::vector<std::string> ld_conf_dirs;
  std::string ld_library_path;  // the program's LD_LIBRARY_PATH ("": unset)
};

class PrivateRoot {
 public:
  // Builds the root on `mountpoint` (an empty directory of the host, made
  // when missing) and starts the program; waits until it printed a line
  // starting with `ready` (then it runs inside its root).
  PrivateRoot(const std::string& mountpoint, const PrivateRootSpec& spec,
              const std::string& ready = "ready=");
  ~PrivateRoot();
  PrivateRoot(const PrivateRoot&) = delete;
  PrivateRoot& operator=(const PrivateRoot&) = delete;

  // "" when the program runs in its root; else what went wrong, with the
  // output of the commands.
  const std::string& error() const { return error_; }
  // The program's pid as the host (and atrace) sees it.
  pid_t host_pid() const { return host_pid_; }
  // Its pid in its own namespace (1).
  pid_t ns_pid() const { return ns_pid_; }
  // How the host reaches a path of the root: /proc/HOSTPID/root/PATH.
  std::string reach(const std::string& inside) const;
  // The mountpoint on the host, where the host sees no file of the root.
  const std::string& mountpoint() const { return mountpoint_; }

  // Waits for the program's end (the unshare around it ends with it).
  Result wait(milliseconds timeout) { return child_->wait(timeout); }

 private:
  std::string mountpoint_;
  std::unique_ptr<Child> child_;
  pid_t host_pid_ = -1;
  pid_t ns_pid_ = -1;
  std::string error_;
};

// The files a program needs to run: what `ldd PROGRAM` lists with a path
// (the dynamic loader included), "not found" ones left out (they are the
// root's own). Host paths.
std::vector<std::string> ldd_files(const std::string& program);

}  // namespace atrace::it
