#include "uprobes/debug_symbols.h"

#include <gelf.h>
#include <lzma.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "uprobes/build_id.h"
#include "uprobes/process_root.h"

namespace atrace::uprobes::detail {

namespace {

// A MiniDebugInfo is a few hundred KiB unpacked; more is not one.
constexpr size_t kMaxImage = size_t{256} << 20;

Elf_Scn* find_section(Elf* elf, const char* wanted) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return nullptr;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (name && std::strcmp(name, wanted) == 0) return scn;
  }
  return nullptr;
}

// The file name .gnu_debuglink names ("" without one).
std::string debuglink(Elf* elf) {
  Elf_Scn* scn = find_section(elf, ".gnu_debuglink");
  Elf_Data* d = scn ? elf_getdata(scn, nullptr) : nullptr;
  if (!d || !d->d_buf || d->d_size == 0) return {};
  const char* s = static_cast<const char*>(d->d_buf);
  const std::string name(s, strnlen(s, d->d_size));
  return name.find('/') == std::string::npos ? name : std::string();
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

// An .xz stream into `out`; false when it is not one or too big.
bool unxz(const void* data, size_t size, std::vector<char>& out) {
  lzma_stream strm = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK) return false;
  strm.next_in = static_cast<const uint8_t*>(data);
  strm.avail_in = size;
  out.assign(std::max<size_t>(size * 4, 64 << 10), 0);
  lzma_ret r = LZMA_OK;
  while (r == LZMA_OK) {
    if (strm.total_out == out.size()) {
      if (out.size() >= kMaxImage) break;
      out.resize(std::min(out.size() * 2, kMaxImage));
    }
    strm.next_out = reinterpret_cast<uint8_t*>(out.data()) + strm.total_out;
    strm.avail_out = out.size() - strm.total_out;
    r = lzma_code(&strm, LZMA_FINISH);
  }
  out.resize(strm.total_out);
  lzma_end(&strm);
  return r == LZMA_STREAM_END;
}

}  // namespace

std::string build_id_debug_file(const std::string& build_id, const std::string& root) {
  if (build_id.size() < 3) return {};
  return root + "/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) +
         ".debug";
}

bool has_symtab(Elf* elf) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size > 0) return true;
  }
  return false;
}

std::vector<std::string> debug_file_candidates(const std::string& path, Elf* elf) {
  std::vector<std::string> out;
  const std::string root = root_prefix(path);
  std::vector<std::string> roots;
  if (!root.empty()) roots.push_back(root);
  roots.emplace_back();
  const std::string id = build_id_of(elf);
  if (id.size() > 2)
    for (const auto& r : roots) out.push_back(build_id_debug_file(id, r));
  const std::string link = debuglink(elf);
  if (!link.empty()) {
    const std::string dir = dir_of(seen_path(path));
    for (const auto& r : roots) {
      out.push_back(r + dir + "/" + link);
      out.push_back(r + dir + "/.debug/" + link);
      out.push_back(r + "/usr/lib/debug" + dir + "/" + link);
    }
  }
  // A debuglink naming the file itself is no other file.
  out.erase(std::remove(out.begin(), out.end(), path), out.end());
  return out;
}

DebugSymbols::DebugSymbols(const std::string& path, Elf* elf) {
  if (has_symtab(elf)) return;
  const std::string id = build_id_of(elf);
  for (const auto& c : debug_file_candidates(path, elf)) {
    auto f = std::make_unique<ElfFile>(c);
    if (!f->elf() || !has_symtab(f->elf())) continue;
    // Another build's symbols would put probes at wrong offsets.
    if (!id.empty() && build_id_of(f->elf()) != id) continue;
    file_ = std::move(f);
    elf_ = file_->elf();
    source_ = seen_path(c);
    return;
  }
  Elf_Scn* scn = find_section(elf, ".gnu_debugdata");
  Elf_Data* d = scn ? elf_rawdata(scn, nullptr) : nullptr;
  if (!d || !d->d_buf || !unxz(d->d_buf, d->d_size, image_)) return;
  mem_ = elf_memory(image_.data(), image_.size());
  if (mem_ && has_symtab(mem_)) {
    elf_ = mem_;
    source_ = "MiniDebugInfo (.gnu_debugdata)";
  }
}

DebugSymbols::~DebugSymbols() {
  if (mem_) elf_end(mem_);
}

}  // namespace atrace::uprobes::detail
