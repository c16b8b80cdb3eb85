// `atrace script`: the function a fault's ip is in, "leaf+0x10
// (target_c)", found in the module the trace says was mapped there
// (ModuleLoad events, TraceReader::module_at) by reading that file's
// symbols, when it is still the build that was traced (its build id).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/trace_reader.h"

namespace atrace::tools {

class CodeNames {
 public:
  explicit CodeNames(const formats::TraceReader& reader) : reader_(reader) {}
  // " name+0xOFF (module)", or "" when the address is in no recorded
  // module, in none of its functions, or the file changed or is gone.
  std::string operator()(const formats::Event& fault);

 private:
  struct Function {
    uint64_t offset = 0, size = 0;  // in the file
    std::string name;               // short name (base/symbol_name.h)
  };
  struct Module {
    std::string file_name;
    std::vector<Function> functions;  // by offset
  };
  const Module& module(const formats::MappedModule& m);

  const formats::TraceReader& reader_;
  std::map<std::string, Module> modules_;  // by path
};

}  // namespace atrace::tools
