// How every view names a function (report tables, tree, callers, exports):
// the traced program's own functions bare, others as "name [module]".
#pragma once

#include <string>
#include <vector>

#include "analysis/profile.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

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

}  // namespace atrace::analysis
