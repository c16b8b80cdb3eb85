#include "tools/code_names.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "base/symbol_name.h"
#include "uprobes/build_id.h"
#include "uprobes/elf_symbols.h"

namespace atrace::tools {

const CodeNames::Module& CodeNames::module(const formats::MappedModule& m) {
  auto [it, fresh] = modules_.try_emplace(m.path);
  Module& mod = it->second;
  if (!fresh) return mod;
  mod.file_name = m.path.substr(m.path.rfind('/') + 1);
  // Another build at that path would give wrong names: none rather.
  if (!m.build_id.empty() && uprobes::read_build_id(m.path) != m.build_id) return mod;
  try {
    for (const auto& f : uprobes::read_functions(m.path))
      mod.functions.push_back({f.offset, f.size, base::short_name(f.demangled)});
  } catch (const uprobes::Error&) {
    return mod;  // gone, unreadable or stripped: the ip stays a number
  }
  std::sort(mod.functions.begin(), mod.functions.end(),
            [](const Function& a, const Function& b) { return a.offset < b.offset; });
  return mod;
}

std::string CodeNames::operator()(const formats::Event& fault) {
  const uint64_t ip = fault.arg1;
  const formats::MappedModule* m = reader_.module_at(fault.pid, ip);
  if (!m) return "";
  const Module& mod = module(*m);
  const uint64_t offset = ip - m->base;  // base: where the file's offset 0 is mapped
  auto f = std::upper_bound(mod.functions.begin(), mod.functions.end(), offset,
                            [](uint64_t o, const Function& fn) { return o < fn.offset; });
  if (f == mod.functions.begin()) return "";
  --f;
  if (offset >= f->offset + f->size) return "";
  char off[32];
  std::snprintf(off, sizeof off, "+0x%" PRIx64, offset - f->offset);
  return " " + f->name + off + " (" + mod.file_name + ")";
}

}  // namespace atrace::tools
