// The messages table of `atrace report` (record --kernel=+net): per
// function (the innermost traced function open at the send or receive)
// and peer, the messages and bytes sent and received, most bytes first.
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {

void print_messages(std::ostream& out, const ReportInput& in, const std::string& main) {
  const auto& rows = in.profile.messages;
  out << '\n';
  if (rows.empty()) {
    out << "No messages recorded (net group: no traced thread sent or received).\n";
    return;
  }
  out << "Messages:\n";
  Table t({0, 1});
  t.add({"Protocol", "Peer", "Sent", "Bytes", "Received", "Bytes", "Function"});
  for (const auto& r : rows)
    t.add({r.protocol, r.peer, std::to_string(r.sent), std::to_string(r.sent_bytes),
           std::to_string(r.received), std::to_string(r.received_bytes),
           display_name(in.profile.names, r.function, r.module, main)});
  t.print(out);
}

}  // namespace atrace::analysis
