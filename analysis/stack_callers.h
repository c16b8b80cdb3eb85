// `report --callers` from the call stacks `record --stack` recorded: each
// entry's stack names the function that made the call (its second frame),
// traced or not. A listener of the call replay (call_replay.h).
//
//   StackCallers   entries with a stack -> calls per (function, caller)
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/call_replay.h"
#include "analysis/stack_frames.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

struct StackCaller {
  std::string function;  // demangled; "" when the frame could not be named
  std::string module;    // file name; "" when unknown
  uint64_t calls = 0;
  bool traced = false;  // the caller is one of the trace's functions too
};

class StackCallers : public ReplayListener {
 public:
  StackCallers(CallReplay& replay, const std::vector<formats::ProbeInfo>& probes,
               FrameResolver frames);
  StackCallers(const StackCallers&) = delete;  // the replay holds its address
  StackCallers& operator=(const StackCallers&) = delete;

  // The callers of function `id` seen in its entries' stacks, most calls
  // first; empty when none of its entries has a stack.
  std::vector<StackCaller> callers_of(uint32_t id) const;
  // How many of its entries had a stack.
  uint64_t stacks_of(uint32_t id) const;

 private:
  void on_event(const formats::Event& ev, const ReplayThread* t) override;
  using Key = std::pair<std::string, std::string>;  // function, module
  const Key& caller_at(uint32_t pid, uint64_t address);

  FrameResolver frames_;
  std::set<Key> traced_;                                // (name, module) of the trace's functions
  std::map<std::pair<uint32_t, uint64_t>, Key> named_;  // (pid, address) -> caller
  std::unordered_map<uint32_t, std::map<Key, uint64_t>> calls_;  // by callee id
  std::unordered_map<uint32_t, uint64_t> stacks_;
};

}  // namespace atrace::analysis
