#include "uprobes/late_modules.h"

#include <glob.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/diagnostics.h"
#include "uprobes/elf_file.h"

namespace atrace::uprobes {

namespace {

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The files a path glob names (glob(3)), sorted.
std::vector<std::string> expand_path_glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  ::globfree(&g);
  return out;
}

// A path the user named: must exist and be ELF. Returns its real path,
// reached from here.
std::string checked_file(const Selector& s, const std::string& named, const ProcessRoot& root) {
  std::string path = named;
  if (seen_path(named) == named) {
    if (auto found = root.reach(named)) path = *found;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw SelectorError(s.named() + ": " + path + ": " + base::errno_text(errno));
  if (!S_ISREG(st.st_mode)) throw SelectorError(s.named() + ": " + path + " is not a regular file");
  detail::ElfFile file(path);
  if (file.status() == detail::ElfFile::Status::CannotOpen)
    throw SelectorError(s.named() + ": " + file.error());
  if (file.status() == detail::ElfFile::Status::NotElf)
    throw SelectorError(s.named() + ": " + path +
                        " is not an ELF file (a library or an executable)");
  if (!root.own()) return path;
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

}  // namespace

std::vector<Module> late_modules(const std::vector<Selector>& include,
                                 const std::vector<Module>& modules, const LibrarySearch& search) {
  std::vector<Module> out;
  std::set<std::string> seen;
  std::set<FileId> ids;
  for (const auto& m : modules) {
    seen.insert(m.path);
    if (m.id.ino) ids.insert(m.id);
  }
  for (const auto& s : include) {
    if (s.module_glob.empty()) continue;
    bool mapped = false;
    for (const auto& m : modules) mapped |= s.matches_module(m.name, m.path, m.is_main);
    if (mapped) continue;
    std::vector<FoundLibrary> files;
    if (s.module_is_path() && !s.module_is_glob()) {
      std::string real = checked_file(s, s.module_glob, search.root);
      files.push_back({basename_of(real), real});
    } else if (s.module_is_path()) {
      const bool reached = seen_path(s.module_glob) != s.module_glob;
      for (const auto& p :
           expand_path_glob(reached ? s.module_glob : search.root.host(s.module_glob)))
        files.push_back({basename_of(p), checked_file(s, p, ProcessRoot())});
      if (files.empty())
        throw SelectorError(s.named() + ": no file matches '" + s.module_glob + "'");
    } else {
      files = find_library_files(s.module_glob, search);
      if (files.empty())
        throw NoMatchError(s.named() + ": no module matches '" + s.module_glob +
                           "', neither mapped by the process nor a library the dynamic linker "
                           "would find (give its path)");
    }
    for (auto& f : files) {
      if (!seen.insert(f.path).second) continue;
      Module m{f.path, f.name, false, true};
      if (auto id = file_id(f.path)) {
        if (!ids.insert(*id).second) continue;  // mapped, or found already by another path
        m.id = *id;
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

void add_late_modules(const std::vector<Selector>& include, std::vector<Module>& modules,
                      const std::string& ld_library_path, const ProcessRoot& root) {
  bool unmatched = false;
  for (const auto& s : include) {
    bool hit = s.module_glob.empty();
    for (const auto& m : modules) hit |= s.matches_module(m.name, m.path, m.is_main);
    unmatched |= !hit;
  }
  if (!unmatched) return;
  auto late = late_modules(include, modules, library_search(modules, ld_library_path, root));
  modules.insert(modules.end(), late.begin(), late.end());
}

}  // namespace atrace::uprobes
