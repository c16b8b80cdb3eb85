// USDT probes of an ELF file: the `.note.stapsdt` notes that sys/sdt.h,
// DTrace-style providers and include/atrace/probe.h leave in a module.
//
//   UsdtArg        one argument's location as the note describes it
//   UsdtProbe      one probe site: provider, name, where, semaphore, args
//   read_usdt_probes(path)
//
// Each note is one site; a probe used at several places of a program has
// several notes with the same provider and name. Attaching (the kernel's
// uprobe with a reference counter on the semaphore) is libbpf's USDT
// support; this is what `atrace list --usdt` shows and what `record
// --usdt` resolves its specs against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::uprobes {

struct UsdtArg {
  int size = 8;  // bytes: 1, 2, 4 or 8
  bool is_signed = false;
  std::string location;  // as written after '@': "%rdi", "-4(%rbp)", "$5"
};

struct UsdtProbe {
  std::string provider;
  std::string name;
  std::string args;  // the note's argument string, e.g. "-4@%edi 8@%rsi"
  std::vector<UsdtArg> arg_list;
  uint64_t address = 0;           // ELF virtual address of the probe instruction
  uint64_t offset = 0;            // its file offset (where the uprobe sits)
  uint64_t semaphore = 0;         // virtual address of the semaphore; 0: none
  uint64_t semaphore_offset = 0;  // its file offset (the uprobe's ref_ctr_offset)
  formats::ProbePath path_kind = formats::ProbePath::Unknown;  // by the probe instruction
};

// The probe sites of `path` in note order, addresses adjusted for prelink
// (.stapsdt.base). No notes: empty. Throws ElfError when the file cannot be
// read or is not ELF; a malformed note is skipped.
std::vector<UsdtProbe> read_usdt_probes(const std::string& path);

// "-4@%edi 8@%rsi" -> two arguments; an item without '@' is a 8-byte
// unsigned argument at that location.
std::vector<UsdtArg> parse_usdt_args(const std::string& args);

}  // namespace atrace::uprobes
