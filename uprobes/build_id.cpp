#include "uprobes/build_id.h"

#include <gelf.h>

#include <cstring>

#include "uprobes/elf_file.h"

namespace atrace::uprobes {

std::string read_build_id(const std::string& path) {
  detail::ElfFile file(path);
  return file.elf() ? build_id_of(file.elf()) : std::string();
}

std::string build_id_of(Elf* elf) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    size_t off = 0, name_off = 0, desc_off = 0;
    GElf_Nhdr nh;
    while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
      const char* name = static_cast<const char*>(data->d_buf) + name_off;
      if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || std::memcmp(name, "GNU", 4) != 0)
        continue;
      static const char hex[] = "0123456789abcdef";
      const auto* d = static_cast<const unsigned char*>(data->d_buf) + desc_off;
      std::string id;
      for (size_t i = 0; i < nh.n_descsz; ++i) {
        id += hex[d[i] >> 4];
        id += hex[d[i] & 15];
      }
      return id;
    }
  }
  return {};
}

}  // namespace atrace::uprobes
