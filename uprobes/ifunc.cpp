// Resolving IFUNCs through atrace's own dynamic linker (see ifunc.h).
#include "uprobes/ifunc.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

namespace atrace::uprobes {

namespace {

struct Search {
  dev_t dev;
  ino_t ino;
  const dl_phdr_info* found = nullptr;
  std::string name;
  ElfW(Addr) base = 0;
  // The loaded segments, to turn an address back into a file offset.
  const ElfW(Phdr) * phdr = nullptr;
  ElfW(Half) phnum = 0;
};

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  if (!info->dlpi_name || !*info->dlpi_name) return 0;
  struct stat st {};
  if (stat(info->dlpi_name, &st) != 0 || st.st_dev != s->dev || st.st_ino != s->ino) return 0;
  s->name = info->dlpi_name;
  s->base = info->dlpi_addr;
  s->phdr = info->dlpi_phdr;
  s->phnum = info->dlpi_phnum;
  return 1;
}

}  // namespace

std::optional<IfuncTarget> resolve_ifunc_here(const std::string& path, const std::string& symbol) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  Search s{st.st_dev, st.st_ino};
  if (dl_iterate_phdr(visit, &s) == 0) return std::nullopt;
  // RTLD_NOLOAD: only a handle to what is loaded already; nothing runs.
  void* h = dlopen(s.name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return std::nullopt;
  void* impl = dlsym(h, symbol.c_str());
  dlclose(h);
  if (!impl) return std::nullopt;
  const uint64_t vaddr = reinterpret_cast<uintptr_t>(impl) - s.base;
  for (ElfW(Half) i = 0; i < s.phnum; ++i) {
    const ElfW(Phdr)& ph = s.phdr[i];
    if (ph.p_type != PT_LOAD || vaddr < ph.p_vaddr || vaddr >= ph.p_vaddr + ph.p_filesz) continue;
    return IfuncTarget{vaddr, vaddr - ph.p_vaddr + ph.p_offset};
  }
  return std::nullopt;
}

}  // namespace atrace::uprobes
