// The dynamic linker's cache (/etc/ld.so.cache, written by ldconfig): the
// library names it knows and the files they stand for, read the way ld.so
// reads it, without running `ldconfig -p`.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace atrace::uprobes {

// (name, path) pairs in the cache's order ("libz.so.1",
// "/lib/x86_64-linux-gnu/libz.so.1"). Empty when the file is missing or
// not a cache in the "glibc-ld.so.cache1.1" format (alone or after the old
// "ld.so-1.7.0" one): the cache is one place among several to look.
std::vector<std::pair<std::string, std::string>> read_ld_cache(
    const std::string& file = "/etc/ld.so.cache");

}  // namespace atrace::uprobes
