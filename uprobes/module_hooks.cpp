#include "uprobes/module_hooks.h"

#include <gelf.h>

#include <algorithm>

#include <vector>

#include "uprobes/elf_file.h"

namespace atrace::uprobes {

namespace {

// `vaddr` as a hook: its file offset, and its distance from the lowest
// page of the mapping (where the kernel or ld.so maps the first PT_LOAD).
ModuleHook hook_at(const std::vector<detail::LoadSegment>& loads, uint64_t vaddr) {
  ModuleHook h;
  if (loads.empty() || vaddr == 0) return h;
  auto offset = detail::file_offset_of(loads, vaddr);
  if (!offset) return h;
  uint64_t lowest = loads.front().vaddr;
  for (const auto& l : loads) lowest = std::min(lowest, l.vaddr);
  h.present = true;
  h.offset = *offset;
  h.from_base = vaddr - (lowest & ~uint64_t{0xfff});
  return h;
}

}  // namespace

ModuleHooks module_hooks(const std::string& path) {
  ModuleHooks out;
  detail::ElfFile file(path);
  Elf* elf = file.elf();
  if (!elf) return out;
  size_t n = 0;
  if (elf_getphdrnum(elf, &n) != 0) return out;
  uint64_t init = 0, fini = 0;
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph)) continue;
    if (ph.p_type != PT_DYNAMIC) continue;
    Elf_Data* data =
        elf_getdata_rawchunk(elf, static_cast<int64_t>(ph.p_offset), ph.p_filesz, ELF_T_DYN);
    if (!data) continue;
    GElf_Dyn dyn;
    for (int k = 0; gelf_getdyn(data, k, &dyn) && dyn.d_tag != DT_NULL; ++k) {
      if (dyn.d_tag == DT_INIT) init = dyn.d_un.d_ptr;
      if (dyn.d_tag == DT_FINI) fini = dyn.d_un.d_ptr;
    }
  }
  const auto loads = detail::load_segments(elf);
  out.init = hook_at(loads, init);
  out.fini = hook_at(loads, fini);
  return out;
}

}  // namespace atrace::uprobes
