// Code addresses of a trace being read, named (analysis/stack_frames.h):
// the module the reader says was mapped there, and that file's symbols read
// by uprobes/module_symbols.h (short names, base/symbol_name.h). What
// `script` names stack frames and fault ips with, and what `report
// --callers` names callers from stacks with.
#pragma once

#include "analysis/analysis.h"
#include "formats/trace_reader.h"

namespace atrace::tools {

// Valid while `reader` is; each module file is read once.
analysis::FrameResolver trace_frames(const formats::TraceReader& reader);

}  // namespace atrace::tools
