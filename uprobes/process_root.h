// How a traced process sees the file system, and the one way atrace reaches
// the files it names from its own namespace: a process in a container (its
// own mount namespace, a chroot) names "/opt/app/libfoo.so", a file that
// atrace's "/opt/app/libfoo.so" is not (or is another build of). Every
// path a process gives (its maps, its exe, its ld.so cache and search
// directories, a selector's path) goes through here before atrace opens it
// or hands it to the kernel to probe; what atrace writes into a trace and
// says to the user is the process's own view.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace atrace::uprobes {

// A file's identity for the kernel's uprobes (they are bound to inodes):
// two paths with the same one are one module, two files at the same path in
// two containers are two.
struct FileId {
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
  bool operator<(const FileId& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
};

class ProcessRoot {
 public:
  // atrace's own root: paths are used as they are.
  ProcessRoot() = default;
  // The root of process `pid`: its own when it sees another file system
  // than atrace (another mount namespace or a chroot), else atrace's.
  // Throws ProcessError when the process's root cannot be reached (no
  // such process, no permission to look into it).
  static ProcessRoot of(pid_t pid);

  // "" for atrace's own root, else "/proc/PID/root": what a path the
  // process names is prefixed with to reach its file from here.
  const std::string& prefix() const { return prefix_; }
  bool own() const { return prefix_.empty(); }

  // The path atrace opens for `seen`, a path as the process names it,
  // symbolic links resolved inside the process's root (an absolute link
  // there is the container's, never the host's): nullopt when a part of
  // it does not exist. For atrace's own root, realpath(3).
  std::optional<std::string> reach(const std::string& seen) const;
  // Only the prefix, no link resolved: for paths the kernel gave (maps),
  // which have none.
  std::string host(const std::string& seen) const { return prefix_ + seen; }

  // A path as /proc/PID/maps or /proc/PID/exe show it to atrace, turned
  // into the process's own view: the kernel writes a file of a root atrace
  // cannot reach as the path from the root of its mount namespace (a
  // chroot's directory included), which is what readlink(/proc/PID/root)
  // gives too.
  std::string from_kernel(const std::string& shown) const;

 private:
  std::string prefix_;  // "/proc/PID/root" or ""
  std::string shown_;   // readlink(/proc/PID/root) ("/" or "" for own)
};

// The process's view of `path`, a path atrace reaches a process's file by
// (ProcessRoot::reach or host): without its "/proc/PID/root" prefix. What
// traces and messages show.
std::string seen_path(const std::string& path);
// Its "/proc/PID/root" prefix: "" for a path of atrace's own root.
std::string root_prefix(const std::string& path);
// `text` (an error message about the file at `path`) with `path` written
// as the process sees it: what a message that quotes a reached path says.
std::string seen_text(std::string text, const std::string& path);

// The identity the kernel's uprobes give the file at `path`: the inode it
// maps, which for a file of an overlay (a container's layers) is the
// layer's file, shared by every container made from that layer, where
// stat(2) and /proc/PID/maps give each overlay mount an identity of its
// own (OverlayLayers). nullopt when the file cannot be opened or mapped.
std::optional<FileId> file_id(const std::string& path);

// The overlay mounts of a process's mount namespace (a container's image
// layers, as /proc/PID/mountinfo names them). maps shows a file of an
// overlay with the overlay's device, one per container, and the layer
// file's inode number; the kernel probes the layer's file, one for every
// container made from that layer.
class OverlayLayers {
 public:
  // None when the process has no overlay or cannot be read.
  explicit OverlayLayers(pid_t pid);
  // The identity of the layer's file behind `shown` (a maps identity) that
  // the process names `seen`: the first layer (upper first) that has a
  // regular file of that inode number there. `shown` for any other file,
  // or when the layers are not reachable from here.
  FileId kernel_id(const FileId& shown, const std::string& seen) const;
  bool empty() const { return mounts_.empty(); }

  struct Mount {
    uint64_t dev = 0;
    std::string mount_point;  // as the process sees it
    std::string root;         // the directory of the overlay mounted there
    std::vector<std::string> layers;
  };
  // The overlay mounts of a mountinfo text (exposed for the unit tests).
  static std::vector<Mount> parse(const std::string& mountinfo);

 private:
  std::vector<Mount> mounts_;
};

}  // namespace atrace::uprobes
