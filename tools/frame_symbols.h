// The names of call stack frames (analysis/stack_frames.h) read from the
// module files a trace names, by uprobes/module_symbols.h: what `script`
// and `report --callers` hand their FrameResolver.
#pragma once

#include "analysis/analysis.h"

namespace atrace::tools {

analysis::FrameSymbols module_frame_symbols();

}  // namespace atrace::tools
