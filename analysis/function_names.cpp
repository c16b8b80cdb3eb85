// How every view names a function: short names told apart within a
// module, the traced program's own functions bare, others tagged with their
// module.
#include "analysis/function_names.h"

#include "analysis/profile.h"
#include "base/symbol_name.h"

namespace atrace::analysis {

namespace {

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

// The executable named in the command if some function comes from it,
// otherwise the module with the most functions.
std::string main_module(const formats::TraceHeader& h, const std::vector<std::string>& modules) {
  std::string exe = basename_of(h.target_command.substr(0, h.target_command.find(' ')));
  std::map<std::string, size_t> count;
  for (const auto& m : modules) count[m]++;
  if (!exe.empty() && count.count(exe)) return exe;
  std::string best;
  size_t most = 0;
  for (const auto& [module, n] : count)
    if (n > most) {
      best = module;
      most = n;
    }
  return best;
}

std::string main_module(const formats::TraceHeader& h, const Profile& p) {
  std::vector<std::string> modules;
  for (const auto& f : p.functions) modules.push_back(f.module);
  return main_module(h, modules);
}

std::string display_name(const std::string& name, const std::string& module,
                         const std::string& main) {
  if (module.empty() || module == main) return name;
  return name + " [" + module + "]";
}

std::string display_name(const FunctionNames& names, const std::string& name,
                         const std::string& module, const std::string& main) {
  return display_name(names.of(name, module), module, main);
}

FunctionNames::FunctionNames(const std::vector<formats::ProbeInfo>& probes, bool long_names)
    : long_(long_names) {
  std::map<std::string, std::vector<std::string>> by_module;
  for (const auto& p : probes)
    if (p.kind == formats::ProbeKind::Function) by_module[p.module].push_back(p.name);
  for (const auto& [module, names] : by_module) {
    std::vector<std::string> shown = base::distinguishing_names(names);
    for (size_t i = 0; i < names.size(); ++i) short_[{module, names[i]}] = std::move(shown[i]);
  }
}

const std::string& FunctionNames::short_of(const std::string& name,
                                           const std::string& module) const {
  auto it = short_.find({module, name});
  return it == short_.end() ? name : it->second;
}

const std::string& FunctionNames::of(const std::string& name, const std::string& module) const {
  return long_ ? name : short_of(name, module);
}

}  // namespace atrace::analysis
