// A place to put a probe: the result of resolving selectors against the
// modules of a target. Everything the attacher needs, and everything the
// trace's probe table records.
#pragma once

#include <cstdint>
#include <string>

#include "formats/trace_types.h"

namespace atrace::uprobes {

struct ProbeSite {
  uint32_t id = 0;           // becomes the BPF cookie; dense from 1
  std::string name;          // demangled name, as shown in reports
  std::string mangled;       // symbol as in the ELF file
  std::string module;        // file name ("libc.so.6", "demo")
  std::string path;          // path used to attach (the module file)
  uint64_t address = 0;      // st_value
  uint64_t size = 0;         // st_size
  uint64_t offset = 0;       // file offset of the probed instruction
  uint64_t entry_delta = 0;  // bytes from the function's first instruction to it (placement.h)
  formats::ProbePath entry_path = formats::ProbePath::Unknown;  // the kernel's path there
  std::string build_id;  // of the module, hex ("" if it has none)
  // Its arguments or return value are recorded (--args/--retval): attached
  // with the programs that read them, its entry probe at +0.
  bool with_values = false;
  // Its user call stack is recorded at each entry (--stack): attached with
  // the program that reads it, its entry probe at +0.
  bool with_stack = false;
  // Its recorded arguments' names by slot - 1 (--args=FUNC@auto).
  std::vector<std::string> arg_names;
};

}  // namespace atrace::uprobes
