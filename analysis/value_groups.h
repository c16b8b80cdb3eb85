// `report --group-by=ARG`: a function's calls grouped by one value that
// record --args/--retval recorded (arg1..arg6 or retval), with calls, total
// and average duration per value, as the USDT table groups hits by string.
// A listener on the call replay (call_replay.h), as the profile is; only
// the functions that recorded that value have groups, and only their
// finished calls count (an unfinished call's duration is a lower bound).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "analysis/call_replay.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

// "arg1".."arg6" -> 1..6, "retval" -> formats::kArgRetval; nullopt else.
std::optional<uint8_t> parse_group_key(std::string_view s);
// The name of a recorded value's slot: "arg2", "retval" (the inverse).
std::string slot_name(uint8_t slot);

struct ValueGroup {
  formats::ProbeArg value;  // the value (the first call's, for a string)
  uint64_t calls = 0;
  uint64_t total_ns = 0;
};

struct FunctionGroups {
  uint32_t id = 0;                 // probe id
  uint64_t total_ns = 0;           // of the calls grouped
  std::vector<ValueGroup> groups;  // most total time first
};

struct ValueGroups {
  uint8_t slot = 0;                       // what was grouped by (ProbeArg::slot)
  std::vector<FunctionGroups> functions;  // most total time first
};

class ValueGrouper : public ReplayListener {
 public:
  ValueGrouper(CallReplay& replay, uint8_t slot);
  ValueGrouper(const ValueGrouper&) = delete;  // the replay holds it
  ValueGrouper& operator=(const ValueGrouper&) = delete;
  void on_call_end(const ReplayThread& t, const ClosedCall& c) override;
  ValueGroups result() const;

 private:
  // A value's identity: integers by value, strings by state and text (not
  // by pointer: one text at many addresses is one value), unreadable
  // pointers by address.
  using Key = std::tuple<uint8_t, std::string, uint64_t>;
  uint8_t slot_;
  std::map<uint32_t, std::map<Key, ValueGroup>> by_function_;
};

}  // namespace atrace::analysis
