// The trace-file layer's one error type: a trace that cannot be read or
// written, said in one line meant for the user. TraceError (reading,
// trace_reader.h) and WriteError (writing, trace_writer.h) are kinds of it,
// so that a caller catches one type unless it does something different for
// one of them.
#pragma once

#include <stdexcept>

namespace atrace::formats {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace atrace::formats
