#include "uprobes/unwind_points.h"

#include <Zydis/Zydis.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "uprobes/elf_file.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/placement.h"

namespace atrace::uprobes {

namespace {

struct Named {
  const char* name;
  UnwindRole role;
};
// libgcc's unwinder (unwind.inc) and the C++ runtime's catch. glibc's
// cancellation and pthread_exit go through _Unwind_ForcedUnwind and
// _Unwind_Resume of libgcc_s; _Unwind_DeleteException ends a foreign
// (non-C++) exception's handling, as __cxa_begin_catch starts a C++ one's.
// glibc's stack switches: swapcontext and setcontext (public names; their
// __ aliases are the same addresses); makecontext's context returns
// through __start_context, which calls setcontext.
constexpr Named kPoints[] = {
    {"_Unwind_RaiseException", UnwindRole::Start},
    {"_Unwind_Resume", UnwindRole::Start},
    {"_Unwind_Resume_or_Rethrow", UnwindRole::Start},
    {"_Unwind_ForcedUnwind", UnwindRole::Start},
    {"_Unwind_Backtrace", UnwindRole::Walk},
    {"__cxa_begin_catch", UnwindRole::Catch},
    {"_Unwind_DeleteException", UnwindRole::Catch},
    {"swapcontext", UnwindRole::Switch},
    {"__swapcontext", UnwindRole::Switch},
    {"setcontext", UnwindRole::Switch},
    {"__setcontext", UnwindRole::Switch},
    {"backtrace", UnwindRole::LateWalk},
};

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The module's ways into its code (placement.h), built once, the first
// time a point needs them: it decodes all of the module's code.
const CodeEntries& module_entries(const std::string& path, const std::vector<ElfFunction>& fns,
                                  std::unique_ptr<CodeEntries>& entries) {
  if (!entries) {
    std::vector<uint64_t> starts;
    starts.reserve(fns.size());
    for (const auto& g : fns) starts.push_back(g.address);
    entries = std::make_unique<CodeEntries>(path, std::move(starts));
  }
  return *entries;
}

// The offset of the cheapest instruction of f's prefix, as for atrace's
// own entry probes (resolve.cpp): only where no code of the module can
// enter the prefix past its first byte.
uint64_t cheap_offset(const std::string& path, const ElfFunction& f,
                      const std::vector<ElfFunction>& fns, std::unique_ptr<CodeEntries>& entries) {
  std::vector<uint8_t> code(f.size);
  detail::ElfFile file(path);
  if (f.size == 0 || file.status() != detail::ElfFile::Status::Ok ||
      file.read_code(f.offset, code.data(), code.size()) != code.size())
    return f.offset;
  const EntryPlacement pl = place_entry(code.data(), code.size(), f.offset, false);
  if (pl.delta == 0) return f.offset;
  return module_entries(path, fns, entries).any_in(f.address, f.address + pl.delta)
             ? f.offset
             : f.offset + pl.delta;
}

// Where the fast path's 5-byte jump before the `ret` at file offset
// `ret_at` of the walk function f can go: the start of the shortest run of
// whole instructions ending with the ret, when no code of the module can
// enter the run past its first byte (a branch to the ret itself, the usual
// shared epilogue, lands inside it); 0 otherwise.
uint64_t walk_end_window(const std::string& path, const ElfFunction& f, uint64_t ret_at,
                         const std::vector<ElfFunction>& fns,
                         std::unique_ptr<CodeEntries>& entries) {
  constexpr size_t kJumpBytes = 5;
  std::vector<uint8_t> code(f.size);
  detail::ElfFile file(path);
  if (f.size == 0 || file.status() != detail::ElfFile::Status::Ok ||
      file.read_code(f.offset, code.data(), code.size()) != code.size())
    return 0;
  const size_t start = window_before(code.data(), code.size(), ret_at - f.offset, kJumpBytes);
  if (start == SIZE_MAX) return 0;
  const uint64_t first = f.address + start;
  const uint64_t ret = f.address + (ret_at - f.offset);
  return module_entries(path, fns, entries).any_in(first, ret) ? 0 : f.offset + start;
}

void add_points(const std::string& path, std::vector<UnwindPoint>& out) {
  std::vector<ElfFunction> fns;
  try {
    fns = read_functions(path);
  } catch (const ElfError&) {
    return;
  }
  std::unique_ptr<CodeEntries> entries;  // built once, if a point may move
  for (const auto& f : fns) {
    UnwindRole role;
    if (f.ifunc || !unwind_role(f.mangled, &role)) continue;
    out.push_back({path, f.mangled, cheap_offset(path, f, fns, entries), f.offset, role});
    if (role == UnwindRole::Walk || role == UnwindRole::LateWalk)
      for (uint64_t at : return_offsets(path, f.offset, f.size))
        out.push_back({path, f.mangled, at, f.offset,
                       role == UnwindRole::Walk ? UnwindRole::WalkEnd : UnwindRole::LateWalkEnd,
                       walk_end_window(path, f, at, fns, entries)});
  }
}

}  // namespace

bool unwind_role(const std::string& symbol, UnwindRole* role) {
  for (const auto& p : kPoints)
    if (symbol == p.name) {
      if (role) *role = p.role;
      return true;
    }
  return false;
}

std::vector<uint64_t> return_offsets(const std::string& path, uint64_t offset, uint64_t size) {
  std::vector<uint64_t> out;
  detail::ElfFile file(path);
  std::vector<uint8_t> code(size);
  if (size == 0 || file.status() != detail::ElfFile::Status::Ok ||
      file.read_code(offset, code.data(), code.size()) != code.size())
    return out;
  ZydisDecoder dec;
  ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  for (size_t at = 0; at < code.size();) {
    ZydisDecodedInstruction insn;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, nullptr, code.data() + at,
                                                    code.size() - at, &insn)))
      return {};
    if (insn.mnemonic == ZYDIS_MNEMONIC_RET) out.push_back(offset + at);
    at += insn.length;
  }
  return out;
}

size_t window_before(const uint8_t* code, size_t len, size_t ret, size_t bytes) {
  ZydisDecoder dec;
  ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  std::vector<size_t> starts;
  size_t at = 0;
  while (at < ret) {
    ZydisDecodedInstruction insn;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, nullptr, code + at, len - at, &insn)))
      return SIZE_MAX;
    starts.push_back(at);
    at += insn.length;
  }
  if (at != ret || ret >= len) return SIZE_MAX;
  ZydisDecodedInstruction last;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, nullptr, code + ret, len - ret, &last)))
    return SIZE_MAX;
  const size_t end = ret + last.length;
  size_t start = ret;
  while (end - start < bytes) {
    if (starts.empty()) return SIZE_MAX;
    start = starts.back();
    starts.pop_back();
  }
  return start;
}

std::vector<UnwindPoint> find_unwind_points(const std::vector<Module>& modules) {
  std::vector<UnwindPoint> out;
  bool have_libgcc = false;
  std::string libc_dir;
  for (const auto& m : modules) {
    add_points(m.path, out);
    if (m.name.rfind("libgcc_s.so", 0) == 0) have_libgcc = true;
    if (m.name == "libc.so.6") libc_dir = dir_of(m.path);
  }
  if (!have_libgcc && !libc_dir.empty()) {
    std::string gcc = libc_dir + "/libgcc_s.so.1";
    if (access(gcc.c_str(), R_OK) == 0) add_points(gcc, out);
  }
  return out;
}

bool is_go_program(const std::string& path) {
  detail::ElfFile f(path);
  if (!f.elf()) return false;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(f.elf(), &shstrndx) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(f.elf(), nullptr); scn; scn = elf_nextscn(f.elf(), scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(f.elf(), shstrndx, sh.sh_name);
    if (name && (!std::strcmp(name, ".go.buildinfo") || !std::strcmp(name, ".note.go.buildid")))
      return true;
  }
  return false;
}

}  // namespace atrace::uprobes
