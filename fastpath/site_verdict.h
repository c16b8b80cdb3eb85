// What `atrace list --fast-path` says of each function a selector matches:
// whether `record --fast-path` can patch it, and why not. The rule is
// fast_path_refusal() (trampoline.h), the one the recording applies, on
// the module file's bytes: the name, the relocation of the first
// instructions, the module's branches into them. What only the recording
// can know is not judged here: whether a RIP-relative operand stays within
// reach of the code region it gets, another tracer's breakpoint on the
// entry in the running process, a module not mapped.
#pragma once

#include <string>
#include <vector>

#include "uprobes/probe_site.h"

namespace atrace::fastpath {

// One verdict per site, in order: empty when it can take the fast path,
// else the reason (docs/fast-path.md, "What the relocation refuses").
std::vector<std::string> fast_path_verdicts(const std::vector<uprobes::ProbeSite>& sites);

}  // namespace atrace::fastpath
