// The dynamic linker's search (ld.so(8)), enough of it to find the file a
// later dlopen("libfoo.so") would map: RPATH, LD_LIBRARY_PATH, RUNPATH,
// ld.so.cache, default directories. $LIB and $PLATFORM are not expanded:
// directories naming them are left out.
#include "uprobes/library_search.h"

#include <dirent.h>
#include <fnmatch.h>
#include <gelf.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "uprobes/elf_file.h"
#include "uprobes/ld_cache.h"

namespace atrace::uprobes {

namespace {

// The system directories searched after the cache (Debian's multiarch ones
// first, as its ld.so.conf lists them).
const char* const kDefaultDirs[] = {"/lib/x86_64-linux-gnu",
                                    "/usr/lib/x86_64-linux-gnu",
                                    "/lib64",
                                    "/usr/lib64",
                                    "/lib",
                                    "/usr/lib"};

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// A colon-separated list, $ORIGIN expanded; entries with other $TOKENs are
// dropped, empty ones are the current directory (as ld.so does).
void add_list(const std::string& list, const std::string& origin, std::vector<std::string>& dirs) {
  size_t start = 0;
  for (;;) {
    size_t colon = list.find(':', start);
    std::string d =
        list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    replace_all(d, "${ORIGIN}", origin);
    replace_all(d, "$ORIGIN", origin);
    if (d.empty()) d = ".";
    if (d.find('$') == std::string::npos) dirs.push_back(d);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
}

struct DynamicPaths {
  std::string rpath, runpath;
};

DynamicPaths dynamic_paths(const std::string& path) {
  DynamicPaths out;
  detail::ElfFile file(path);
  if (file.status() != detail::ElfFile::Status::Ok) return out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(file.elf(), scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || sh.sh_entsize == 0) break;
    const size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < n; ++i) {
      GElf_Dyn dyn;
      if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) break;
      if (dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH) continue;
      const char* s = elf_strptr(file.elf(), sh.sh_link, dyn.d_un.d_val);
      if (s) (dyn.d_tag == DT_RPATH ? out.rpath : out.runpath) = s;
    }
    break;
  }
  return out;
}

// ELF class and machine of a file; false when it is not ELF.
bool elf_kind(const std::string& path, int* elf_class, int* machine) {
  detail::ElfFile file(path);
  if (file.status() != detail::ElfFile::Status::Ok) return false;
  GElf_Ehdr eh;
  if (!gelf_getehdr(file.elf(), &eh)) return false;
  *elf_class = gelf_getclass(file.elf());
  *machine = eh.e_machine;
  return true;
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

bool glob_matches(const std::string& glob, const std::string& name) {
  return fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

}  // namespace

LibrarySearch library_search(const std::vector<Module>& modules, const std::string& ld_library_path,
                             const ProcessRoot& root) {
  LibrarySearch s;
  s.root = root;
  std::vector<std::string> rpaths, runpaths;
  for (const auto& m : modules) {
    DynamicPaths p = dynamic_paths(m.path);
    const std::string origin = dir_of(seen_path(m.path));
    // DT_RPATH counts only where there is no DT_RUNPATH.
    if (!p.rpath.empty() && p.runpath.empty()) add_list(p.rpath, origin, rpaths);
    if (!p.runpath.empty()) add_list(p.runpath, origin, runpaths);
    if (m.is_main) elf_kind(m.path, &s.elf_class, &s.machine);
  }
  s.dirs = rpaths;
  if (!ld_library_path.empty()) add_list(ld_library_path, ".", s.dirs);
  s.dirs.insert(s.dirs.end(), runpaths.begin(), runpaths.end());
  if (auto cache = root.reach("/etc/ld.so.cache")) s.cache = read_ld_cache(*cache);
  for (const char* d : kDefaultDirs) s.dirs.push_back(d);
  return s;
}

std::string ld_library_path_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "LD_LIBRARY_PATH=";
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    if (env.compare(at, key.size(), key) == 0)
      return env.substr(at + key.size(), end - at - key.size());
    at = end + 1;
  }
  return {};
}

std::vector<FoundLibrary> find_library_files(const std::string& glob, const LibrarySearch& s) {
  std::map<std::string, std::string> by_name;  // file name -> first path found
  // The system directories come after the cache in ld.so's order.
  const size_t system_start =
      s.dirs.size() >= std::size(kDefaultDirs) ? s.dirs.size() - std::size(kDefaultDirs) : 0;
  auto scan = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const std::optional<std::string> here = s.root.reach(s.dirs[i]);
      if (!here) continue;
      std::unique_ptr<DIR, DirCloser> dir(::opendir(here->c_str()));
      if (!dir) continue;
      while (const dirent* e = ::readdir(dir.get())) {
        std::string name = e->d_name;
        if (name != "." && name != ".." && glob_matches(glob, name))
          by_name.emplace(name, s.dirs[i] + "/" + name);
      }
    }
  };
  scan(0, system_start);
  for (const auto& [name, path] : s.cache)
    if (glob_matches(glob, name)) by_name.emplace(name, path);
  scan(system_start, s.dirs.size());

  std::vector<FoundLibrary> out;
  std::set<std::string> seen;
  for (const auto& [name, path] : by_name) {
    const std::optional<std::string> found = s.root.reach(path);
    if (!found || !seen.insert(*found).second) continue;
    const std::string& real = *found;
    int elf_class = 0, machine = 0;
    if (!elf_kind(real, &elf_class, &machine)) continue;
    if (s.machine && (elf_class != s.elf_class || machine != s.machine)) continue;
    out.push_back({name, real});
  }
  return out;
}

}  // namespace atrace::uprobes
