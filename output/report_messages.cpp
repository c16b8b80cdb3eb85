// The messages table of `atrace report` (record --kernel=+net): per
// function (the innermost traced function open at the send or receive)
// and peer, the messages and bytes sent and received, most bytes first;
// how many of them were matched with their other end in the trace, and
// the one-way latency of those (p50, p99; "-" when none was matched:
// nothing is estimated for the others).
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {
namespace {

// A latency may be negative: two clocks, or a receive that returned
// before its send's call did.
std::string signed_duration(int64_t ns) {
  return ns < 0 ? "-" + format_duration(static_cast<uint64_t>(-ns))
                : format_duration(static_cast<uint64_t>(ns));
}

}  // namespace

void print_messages(std::ostream& out, const ReportInput& in, const std::string& main) {
  const auto& rows = in.profile.messages;
  out << '\n';
  if (rows.empty()) {
    out << "No messages recorded (net group: no traced thread sent or received).\n";
    return;
  }
  out << "Messages:\n";
  // A merged trace: the host of the function, first.
  const bool hosts = !in.hosts.empty();
  Table t(hosts ? std::vector<size_t>{0, 1, 2} : std::vector<size_t>{0, 1});
  std::vector<std::string> head = {"Protocol", "Peer",    "Sent",        "Bytes", "Received",
                                   "Bytes",    "Matched", "Latency p50", "p99",   "Function"};
  if (hosts) head.insert(head.begin(), "Host");
  t.add(head);
  for (const auto& r : rows) {
    const bool timed = r.latencies > 0;
    std::vector<std::string> row = {r.protocol,
                                    r.peer,
                                    std::to_string(r.sent),
                                    std::to_string(r.sent_bytes),
                                    std::to_string(r.received),
                                    std::to_string(r.received_bytes),
                                    std::to_string(r.sent_matched + r.received_matched),
                                    timed ? signed_duration(r.latency_p50_ns) : "-",
                                    timed ? signed_duration(r.latency_p99_ns) : "-",
                                    display_name(in.profile.names, r.function, r.module, main)};
    if (hosts) row.insert(row.begin(), r.host < in.hosts.size() ? in.hosts[r.host] : "?");
    t.add(row);
  }
  t.print(out);
}

}  // namespace atrace::analysis
