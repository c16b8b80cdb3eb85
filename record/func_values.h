// Function arguments and return values between the programs and the trace
// (record --args/--retval; bpf/atrace_values.bpf.h):
//
//   bpf_value_spec   a function's spec as the programs read it (fn_values)
//   ValueDecoder     a values record -> the typed args of its call's entry
//                    or exit event
//   join_values      those args into that event, still held for reordering
//
// The programs copy whole registers; the sizes, signs and formats the user
// asked for are applied here, once per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "bpf/atrace.h"
#include "formats/trace_types.h"
#include "record/reorder.h"
#include "uprobes/value_spec.h"

namespace atrace {

atrace_value_spec bpf_value_spec(const uprobes::FuncValues& v);

class ValueDecoder {
 public:
  ValueDecoder() = default;
  explicit ValueDecoder(std::map<uint32_t, uprobes::FuncValues> specs) : specs_(std::move(specs)) {}

  // A values record (size checked by the caller against rec_values) -> the
  // key of the event it belongs to (kind, id, tid, ts: the program stamps
  // both records alike) with the args; false for a function without spec.
  bool decode(const void* data, size_t size, formats::Event& out) const;

 private:
  std::map<uint32_t, uprobes::FuncValues> specs_;
};

// Puts `values` (ValueDecoder::decode) into its event, which the program
// wrote just before it and which is still held for reordering (the values
// record follows it in the same ring). False when that event is not there.
bool join_values(Reorderer& held, formats::Event&& values);

}  // namespace atrace
