#include "analysis/message_flows.h"

#include <sstream>
#include <string>

#include "formats/trace_reader.h"

namespace atrace::analysis {
namespace {

bool recorded_net(const formats::TraceHeader& h) {
  std::istringstream groups(h.kernel_events);
  std::string g;
  while (std::getline(groups, g, ','))
    if (g == "net") return true;
  return false;
}

}  // namespace

MessageFlows::MessageFlows(formats::TraceReader& reader) {
  // A merged trace is read whatever its header says: its recordings may
  // differ in their groups.
  if (!recorded_net(reader.header()) && reader.hosts().size() < 2) return;
  const std::vector<uint32_t> machines = host_machines(reader.hosts());
  std::vector<MessageEnd> ends;
  formats::Event ev;
  while (reader.next(ev))
    if (ev.kind == formats::EventKind::Message) ends.push_back(message_end(ev, machines));
  reader.rewind();

  const std::vector<MessageMatch> matched = match_messages(ends);
  in_count_ = matched.size();
  end_id_.assign(ends.size(), 0);
  std::vector<uint32_t> starts(ends.size(), 0);
  for (size_t i = 0; i < matched.size(); i++) {
    end_id_[matched[i].recv] = i + 1;
    starts[matched[i].send]++;
  }
  start_offset_.assign(ends.size() + 1, 0);
  for (size_t i = 0; i < ends.size(); i++) start_offset_[i + 1] = start_offset_[i] + starts[i];
  start_ids_.resize(matched.size());
  std::vector<size_t> fill(start_offset_.begin(), start_offset_.end() - 1);
  for (size_t i = 0; i < matched.size(); i++) start_ids_[fill[matched[i].send]++] = i + 1;
}

const MessageFlows::Arrows& MessageFlows::next() {
  current_.starts.clear();
  current_.ends = 0;
  if (next_ < end_id_.size()) {
    current_.starts.assign(start_ids_.begin() + static_cast<ptrdiff_t>(start_offset_[next_]),
                           start_ids_.begin() + static_cast<ptrdiff_t>(start_offset_[next_ + 1]));
    current_.ends = end_id_[next_];
  }
  next_++;
  return current_;
}

}  // namespace atrace::analysis
