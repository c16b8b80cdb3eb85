// The mounts a process sees (/proc/PID/mountinfo), read in one place: the
// cgroup v2 root (--cgroup), a container's root as atrace's namespace
// reaches it (the process table's root hint) and the layers of its
// overlays (a module's identity) all come from here.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace atrace::base {

// One line: "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] -
// TYPE SOURCE SUPER_OPTIONS", its fields unescaped (the kernel writes
// space, tab, newline and backslash as \ooo).
struct Mount {
  uint64_t dev = 0;           // makedev(MAJ, MIN)
  std::string root;           // the directory of the file system mounted there
  std::string point;          // where, as the process sees it
  std::string type;           // "overlay", "cgroup2", ...
  std::string super_options;  // "rw,lowerdir=...,upperdir=..."
};

// The mounts of a mountinfo text, in its order (the last mounted on a
// point is the one seen there).
std::vector<Mount> parse_mountinfo(const std::string& text);
// Of process `pid` (0: atrace's own); none when it cannot be read.
std::vector<Mount> read_mountinfo(pid_t pid = 0);
// A mountinfo field unescaped.
std::string unescape_mountinfo(const std::string& field);
// A field's parts between `sep`s (super options by ',', overlay layers by
// ':'), empty ones kept.
std::vector<std::string> split_field(const std::string& field, char sep);

}  // namespace atrace::base
