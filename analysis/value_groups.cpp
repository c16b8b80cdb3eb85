#include "analysis/value_groups.h"

#include <algorithm>

namespace atrace::analysis {

std::optional<uint8_t> parse_group_key(std::string_view s) {
  if (s == "retval") return formats::kArgRetval;
  if (s.size() == 4 && s.substr(0, 3) == "arg" && s[3] >= '1' &&
      s[3] <= '0' + formats::kMaxFuncArgs)
    return static_cast<uint8_t>(s[3] - '0');
  return std::nullopt;
}

std::string slot_name(uint8_t slot) {
  return slot == formats::kArgRetval ? "retval" : "arg" + std::to_string(slot);
}

ValueGrouper::ValueGrouper(CallReplay& replay, uint8_t slot) : slot_(slot) { replay.listen(*this); }

void ValueGrouper::on_call_end(const ReplayThread&, const ClosedCall& c) {
  if (unfinished(c.how) || !timed(c.how)) return;
  const std::vector<formats::ProbeArg>* values = slot_ == formats::kArgRetval ? c.ret : c.args;
  if (!values) return;
  for (const formats::ProbeArg& a : *values) {
    if (a.slot != slot_) continue;
    const bool by_text = a.is_string && a.str_state != formats::StrState::Unreadable;
    const auto kind = static_cast<uint8_t>(a.is_string ? static_cast<int>(a.str_state) + 1 : 0);
    Key key{kind, a.is_string ? a.str : "", by_text ? 0 : a.value};
    auto [it, fresh] = by_function_[c.id].try_emplace(std::move(key));
    if (fresh) it->second.value = a;
    it->second.calls++;
    it->second.total_ns += c.dur;
    return;
  }
}

ValueGroups ValueGrouper::result() const {
  ValueGroups out;
  out.slot = slot_;
  for (const auto& [id, groups] : by_function_) {
    FunctionGroups f;
    f.id = id;
    for (const auto& [key, g] : groups) {
      f.groups.push_back(g);
      f.total_ns += g.total_ns;
    }
    std::stable_sort(
        f.groups.begin(), f.groups.end(), [](const ValueGroup& a, const ValueGroup& b) {
          return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.calls > b.calls;
        });
    out.functions.push_back(std::move(f));
  }
  std::stable_sort(
      out.functions.begin(), out.functions.end(),
      [](const FunctionGroups& a, const FunctionGroups& b) { return a.total_ns > b.total_ns; });
  return out;
}

}  // namespace atrace::analysis
