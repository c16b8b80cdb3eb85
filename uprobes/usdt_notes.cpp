// `.note.stapsdt` layout (the SystemTap SDT v3 note, as readelf -n shows
// it): owner "stapsdt", type 3, descriptor = u64 pc, u64 base, u64
// semaphore, then provider, name and argument string, each NUL-terminated.
#include "uprobes/usdt_notes.h"

#include <gelf.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "uprobes/elf_file.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/insn_class.h"

namespace atrace::uprobes {

namespace {

constexpr uint32_t kStapsdtType = 3;

struct Section {
  std::string name;
  uint64_t addr, size, offset;
  bool nobits;
};

std::vector<Section> sections(Elf* elf) {
  std::vector<Section> out;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* n = elf_strptr(elf, shstrndx, sh.sh_name);
    out.push_back({n ? n : "", sh.sh_addr, sh.sh_size, sh.sh_offset, sh.sh_type == SHT_NOBITS});
  }
  return out;
}

// Virtual address -> file offset through the allocated section holding it.
bool file_offset(const std::vector<Section>& secs, uint64_t addr, uint64_t* out) {
  for (const auto& s : secs) {
    if (s.addr == 0 || s.nobits || addr < s.addr || addr - s.addr >= s.size) continue;
    *out = addr - s.addr + s.offset;
    return true;
  }
  return false;
}

// NUL-terminated string at desc[*pos], advancing past it; false if none.
bool take_string(const char* desc, size_t len, size_t* pos, std::string* out) {
  if (*pos >= len) return false;
  const void* end = std::memchr(desc + *pos, '\0', len - *pos);
  if (!end) return false;
  size_t n = static_cast<size_t>(static_cast<const char*>(end) - (desc + *pos));
  out->assign(desc + *pos, n);
  *pos += n + 1;
  return true;
}

}  // namespace

std::vector<UsdtArg> parse_usdt_args(const std::string& args) {
  std::vector<UsdtArg> out;
  std::istringstream in(args);
  std::string item;
  while (in >> item) {
    UsdtArg a;
    size_t at = item.find('@');
    if (at == std::string::npos) {
      a.location = item;
    } else {
      long n = std::strtol(item.substr(0, at).c_str(), nullptr, 10);
      a.is_signed = n < 0;
      n = std::labs(n);
      a.size = (n == 1 || n == 2 || n == 4 || n == 8) ? static_cast<int>(n) : 8;
      a.location = item.substr(at + 1);
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<UsdtProbe> read_usdt_probes(const std::string& path) {
  detail::ElfFile file(path);
  if (file.status() != detail::ElfFile::Status::Ok) throw ElfError(file.error());
  Elf* elf = file.elf();
  const auto secs = sections(elf);
  uint64_t base_addr = 0;  // where .stapsdt.base ended up (prelink moves it)
  for (const auto& s : secs)
    if (s.name == ".stapsdt.base") base_addr = s.addr;

  std::vector<UsdtProbe> out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    size_t pos = 0, name_off = 0, desc_off = 0;
    GElf_Nhdr nh;
    while ((pos = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
      if (nh.n_type != kStapsdtType || nh.n_namesz != sizeof("stapsdt") ||
          std::memcmp(static_cast<const char*>(data->d_buf) + name_off, "stapsdt",
                      sizeof("stapsdt")) != 0)
        continue;
      const char* desc = static_cast<const char*>(data->d_buf) + desc_off;
      const size_t len = nh.n_descsz;
      if (len < 3 * sizeof(uint64_t)) continue;
      uint64_t words[3];
      std::memcpy(words, desc, sizeof words);
      UsdtProbe p;
      size_t at = sizeof words;
      if (!take_string(desc, len, &at, &p.provider) || !take_string(desc, len, &at, &p.name) ||
          !take_string(desc, len, &at, &p.args))
        continue;
      p.address = words[0];
      if (base_addr && words[1]) p.address += base_addr - words[1];
      p.semaphore = words[2];
      if (p.semaphore && base_addr && words[1]) p.semaphore += base_addr - words[1];
      if (!file_offset(secs, p.address, &p.offset)) continue;
      if (p.semaphore && !file_offset(secs, p.semaphore, &p.semaphore_offset)) p.semaphore = 0;
      p.arg_list = parse_usdt_args(p.args);
      uint8_t code[16];
      p.path_kind = classify_entry(code, file.read_code(p.offset, code, sizeof code));
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace atrace::uprobes
