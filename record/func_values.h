// Function arguments and return values between the programs and the trace
// (record --args/--retval; bpf/atrace_values.bpf.h):
//
//   bpf_value_spec   a function's spec as the programs read it (fn_values)
//   ValueJoiner      the programs' values records -> the args of the entry
//                    or exit event that follows each (per thread)
//
// The programs copy whole registers; the sizes, signs and formats the user
// asked for are applied here, once per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "bpf/atrace.h"
#include "formats/trace_types.h"
#include "uprobes/value_spec.h"

namespace atrace {

atrace_value_spec bpf_value_spec(const uprobes::FuncValues& v);

class ValueJoiner {
 public:
  ValueJoiner() = default;
  explicit ValueJoiner(std::map<uint32_t, uprobes::FuncValues> specs) : specs_(std::move(specs)) {}

  // A values record (size checked by the caller against rec_values): held
  // for its thread's next function event.
  void hold(const void* data, size_t size);
  // A function event of the thread: gets the values held for it (same
  // function, same direction), if any. Whatever was held is used up: a
  // values record whose event was not recorded is dropped at the next one.
  void join(formats::Event& ev);
  // The thread ended: nothing waits for it any more.
  void forget(uint32_t tid) { held_.erase(tid); }

 private:
  struct Held {
    uint32_t id = 0;
    formats::EventKind kind = formats::EventKind::FuncEntry;
    std::vector<formats::ProbeArg> args;
  };
  std::map<uint32_t, uprobes::FuncValues> specs_;
  std::unordered_map<uint32_t, Held> held_;  // by tid
};

}  // namespace atrace
