// How every view names a function (report tables, tree, callers, exports):
// its short name (base/symbol_name.h: namespaces and classes, no parameter
// lists or template arguments unless two of the trace's functions need
// them to be told apart), the traced program's own functions bare, others
// as "name [module]". `--long-names` shows the full demangled names.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::analysis {

struct Profile;

// The names shown for a trace's functions. Built from its probe table, so
// every view of one trace says the same; default-constructed, it shows
// every name as given.
class FunctionNames {
 public:
  FunctionNames() = default;
  // Two functions of one module are told apart; functions of different
  // modules are already told apart by their module. long_names: of()
  // gives the full demangled names (--long-names).
  explicit FunctionNames(const std::vector<formats::ProbeInfo>& probes, bool long_names = false);
  // The name shown for the function `name` of `module`: short_of(), or
  // `name` itself with --long-names.
  const std::string& of(const std::string& name, const std::string& module) const;
  // Its short name told apart from the trace's others (base/symbol_name.h
  // distinguishing_names); `name` itself when it is not in the table.
  const std::string& short_of(const std::string& name, const std::string& module) const;
  bool long_names() const { return long_; }

 private:
  std::map<std::pair<std::string, std::string>, std::string> short_;  // (module, name) -> short
  bool long_ = false;
};

// The traced program's own module, whose functions are shown without a
// module tag.
std::string main_module(const formats::TraceHeader& h, const Profile& p);
// The same from the modules of a trace's probes (one entry per probe or
// function): the executable named in the command if some are in it,
// otherwise the module named most often.
std::string main_module(const formats::TraceHeader& h, const std::vector<std::string>& modules);
// "name", or "name [module]" outside the main module.
std::string display_name(const std::string& name, const std::string& module,
                         const std::string& main);
// The same with the name shown by `names`.
std::string display_name(const FunctionNames& names, const std::string& name,
                         const std::string& module, const std::string& main);

}  // namespace atrace::analysis
