// Function symbols of an ELF file. The file is mapped once (libelf
// ELF_C_READ_MMAP) and the symbol tables are read from that image, so even
// libc with thousands of symbols takes a few ms; the code bytes come from the
// file itself (ElfFile::read_code: another tracer's int3 shows in the image).
#include "uprobes/elf_symbols.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>

#include "uprobes/debug_symbols.h"
#include "uprobes/demangle.h"
#include "uprobes/elf_file.h"
#include "uprobes/process_root.h"

namespace atrace::uprobes {

namespace {

// One defined function symbol before aliases are collapsed.
struct Candidate {
  uint64_t address;
  uint64_t size;
  int rank;  // 0 public global, 1 public weak, 2 public local, +3 with a leading '_': lower wins
  const char* name;
  size_t name_len;
  Elf64_Section shndx;
  bool ifunc;
  Elf* src;  // the file or its debug symbols (debug_symbols.h): where shndx is
};

int binding_rank(unsigned bind) {
  switch (bind) {
    case STB_GLOBAL:
    case STB_GNU_UNIQUE: return 0;
    case STB_WEAK: return 1;
    default: return 2;
  }
}

// Address -> file offset through the PT_LOAD segments, or through the
// symbol's section in a file without program headers (a relocatable object).
bool file_offset(const std::vector<detail::LoadSegment>& segs, Elf* elf, const Candidate& c,
                 uint64_t* out) {
  if (auto off = detail::file_offset_of(segs, c.address)) {
    *out = *off;
    return true;
  }
  if (!segs.empty()) return false;
  if (c.src != elf) return false;
  Elf_Scn* scn = elf_getscn(elf, c.shndx);
  GElf_Shdr sh;
  if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) return false;
  if (c.address < sh.sh_addr || c.address - sh.sh_addr >= sh.sh_size) return false;
  *out = sh.sh_offset + (c.address - sh.sh_addr);
  return true;
}

// .gnu.version of .dynsym: an entry with the hidden bit set is a
// non-default version (memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14) that
// programs linked today never call.
const Elf_Data* dynsym_versions(Elf* elf) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym) return elf_getdata(scn, nullptr);
  }
  return nullptr;
}

bool hidden_version(const Elf_Data* versym, size_t index) {
  if (!versym || (index + 1) * sizeof(GElf_Versym) > versym->d_size) return false;
  constexpr GElf_Versym kHidden = 0x8000;
  return (static_cast<const GElf_Versym*>(versym->d_buf)[index] & kHidden) != 0;
}

void collect_symbols(Elf* elf, std::vector<Candidate>* out) {
  const Elf_Data* versym = dynsym_versions(elf);
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    const size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
      const unsigned type = GELF_ST_TYPE(sym.st_info);
      if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_size == 0) continue;
      if (sh.sh_type == SHT_DYNSYM && hidden_version(versym, i)) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (!name || !*name) continue;
      // C++ names are mangled "_Z...": their underscore is not a mark of
      // an internal name.
      const bool internal = name[0] == '_' && !(name[1] == 'Z' && name[2] != 0);
      out->push_back({sym.st_value, sym.st_size,
                      binding_rank(GELF_ST_BIND(sym.st_info)) + (internal ? 3 : 0), name,
                      std::strlen(name), sym.st_shndx, type == STT_GNU_IFUNC, elf});
    }
  }
}

// PLT stubs are jumped through, never called as functions of their own.
bool in_plt_section(Elf* elf, Elf64_Section shndx) {
  size_t shstrndx = 0;
  Elf_Scn* scn = elf_getscn(elf, shndx);
  GElf_Shdr sh;
  if (!scn || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &shstrndx) != 0) return false;
  const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
  return name && std::strncmp(name, ".plt", 4) == 0;
}

}  // namespace

namespace {

// `debug_file`: a separate debug file (objcopy --only-keep-debug) keeps the
// segments' addresses but not their contents, nor their file offsets: the
// offsets are those of the file it was split from, whose segments lie at
// their addresses less the first one's (the layout linkers make), and no
// code is read.
std::vector<ElfFunction> functions_of(const std::string& path, bool debug_file) {
  detail::ElfFile file(path);
  if (file.status() != detail::ElfFile::Status::Ok) throw ElfError(file.error());
  Elf* elf = file.elf();

  std::vector<Candidate> cands;
  collect_symbols(elf, &cands);
  // A stripped file's symbols where the distribution keeps them; their
  // addresses are the file's, so its own segments give the offsets and
  // its own bytes the code.
  const detail::DebugSymbols debug(path, elf);
  if (debug.elf()) collect_symbols(debug.elf(), &cands);

  // Best name first within each address; the rest of the address's names
  // are its aliases.
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.name_len != b.name_len) return a.name_len < b.name_len;
    return std::strcmp(a.name, b.name) < 0;
  });

  GElf_Ehdr eh;
  const uint64_t entry = gelf_getehdr(elf, &eh) ? eh.e_entry : 0;
  const auto segs = detail::load_segments(elf);
  uint64_t first_vaddr = UINT64_MAX;
  for (const auto& seg : segs) first_vaddr = std::min(first_vaddr, seg.vaddr);
  if (debug_file && segs.empty()) throw ElfError(path + ": no program headers");
  std::vector<ElfFunction> funcs;
  funcs.reserve(cands.size());
  for (size_t i = 0; i < cands.size();) {
    const Candidate& c = cands[i];
    size_t end = i + 1;
    while (end < cands.size() && cands[end].address == c.address) ++end;
    ElfFunction f;
    if (debug_file ? c.address < first_vaddr : !file_offset(segs, elf, c, &f.offset)) {
      i = end;
      continue;
    }
    if (debug_file) f.offset = c.address - first_vaddr;
    f.mangled.assign(c.name, c.name_len);
    f.demangled = demangle(f.mangled);
    for (size_t k = i + 1; k < end; ++k) {
      std::string alias = demangle(std::string(cands[k].name, cands[k].name_len));
      if (alias != f.demangled &&
          std::find(f.aliases.begin(), f.aliases.end(), alias) == f.aliases.end())
        f.aliases.push_back(std::move(alias));
    }
    f.address = c.address;
    f.size = c.size;
    for (size_t k = i; k < end; ++k) f.ifunc |= cands[k].ifunc;
    f.entry_point = entry != 0 && c.address == entry && eh.e_type != ET_REL;
    f.in_plt = in_plt_section(c.src, c.shndx);
    if (!debug_file)
      f.first_len =
          file.read_code(f.offset, f.first_bytes, std::min<uint64_t>(sizeof f.first_bytes, c.size));
    funcs.push_back(std::move(f));
    i = end;
  }
  if (funcs.empty()) {
    // What to install: the debug file's place says which package has it.
    const auto where = detail::debug_file_candidates(path, elf);
    throw ElfError(seen_path(path) + ": no function symbols: stripped, and no debug file" +
                   (where.empty()
                        ? std::string(" (it has no build id or debuglink)")
                        : " at " + seen_path(where.front()) + " (Debian: its -dbgsym package)"));
  }
  return funcs;
}

}  // namespace

std::vector<ElfFunction> read_functions(const std::string& path) {
  return functions_of(path, false);
}

std::vector<ElfFunction> read_debug_file_functions(const std::string& path) {
  return functions_of(path, true);
}

}  // namespace atrace::uprobes
