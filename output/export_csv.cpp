// `atrace convert --to=csv`: every event, one a line, in time order
// (docs/export-csv.md), for spreadsheets, pandas and the like. RFC 4180:
// a header row, comma separators, fields quoted when they need it, CRLF not
// required (pandas, Python's csv module and spreadsheets accept LF).
//
//   ts_ns,pid,tid,cpu,kind,name,module,flags,arg0,arg1,text
//
// The event's own fields, raw (formats/trace_types.h gives their meaning per
// kind), plus names looked up: `name` is the function for function events
// and DETACH, the probe for USDT events, the system call for system call
// events; signed fields (a system call's return, an exit status) are
// written signed; `text` holds a USDT event's arguments (arg1=5 arg2="x").
#include <ostream>
#include <unordered_map>

#include "analysis/analysis.h"
#include "formats/trace_reader.h"
#include "output/arg_text.h"
#include "output/export.h"
#include "output/text_escape.h"

namespace atrace::analysis {

namespace {

constexpr const char* kHeader = "ts_ns,pid,tid,cpu,kind,name,module,flags,arg0,arg1,text\n";

// A USDT event's arguments as `atrace script` shows them:
// arg1=5 arg2="/index" (the field is quoted for CSV as a whole).
std::string usdt_args(const formats::Event& ev) {
  std::string s;
  for (size_t i = 0; i < ev.args.size(); ++i) {
    const formats::ProbeArg& a = ev.args[i];
    if (i) s += ' ';
    s += "arg";
    append_uint(s, i + 1);
    s += '=';
    if (a.is_string) {
      s += '"';
      s += a.str;
      s += '"';
    } else if (a.is_signed) {
      append_int(s, a.svalue());
    } else {
      append_uint(s, a.value);
    }
  }
  return s;
}

class CsvWriter {
 public:
  CsvWriter(ChunkedWriter& w, TraceNames& names) : w_(w), names_(names) {}

  void event(const formats::Event& ev) {
    using K = formats::EventKind;
    std::string& b = w_.buf();
    append_uint(b, ev.ts);
    b += ',';
    append_uint(b, ev.pid);
    b += ',';
    append_uint(b, ev.tid);
    b += ',';
    append_uint(b, ev.cpu);
    b += ',';
    b += formats::to_string(ev.kind);
    b += ',';
    switch (ev.kind) {
      case K::FuncEntry:
      case K::FuncExit:
      case K::Unwind:
      case K::Detach:
      case K::Usdt:
        append_csv_field(b, names_.function(ev.id));
        b += ',';
        append_csv_field(b, names_.module(ev.id));
        break;
      case K::SyscallEnter:
        entered_[ev.tid] = ev.arg0;
        append_csv_field(b, names_.syscall(ev.arg0));
        b += ',';
        break;
      case K::SyscallExit: {
        // Calls that must not be restarted exit with number -1
        // (rt_sigreturn): named after the call the thread entered.
        uint64_t nr = ev.arg0;
        auto it = entered_.find(ev.tid);
        if (nr == UINT64_MAX && it != entered_.end()) nr = it->second;
        if (nr != UINT64_MAX) append_csv_field(b, names_.syscall(nr));
        b += ',';
        break;
      }
      default: b += ','; break;
    }
    b += ',';
    append_uint(b, ev.flags);
    b += ',';
    if (ev.kind == K::ProcExit) append_int(b, ev.sarg0());
    else append_uint(b, ev.arg0);
    b += ',';
    if (ev.kind == K::SyscallExit) append_int(b, ev.sarg1());
    else append_uint(b, ev.arg1);
    b += ',';
    if (ev.kind == K::Detach) b += formats::to_string(formats::detach_reason(ev.flags));
    else if (ev.kind == K::Unwind)
      b += formats::to_string(static_cast<formats::UnwindHow>(ev.flags));
    else if (ev.kind == K::Usdt) append_csv_field(b, usdt_args(ev));
    else if (ev.kind == K::FuncEntry || ev.kind == K::FuncExit)
      append_csv_field(b, values_text(ev.args));  // record --args/--retval
    else append_csv_field(b, ev.text);
    b += '\n';
    w_.maybe_flush();
  }

 private:
  ChunkedWriter& w_;
  TraceNames& names_;
  std::unordered_map<uint32_t, uint64_t> entered_;  // tid -> last system call entered
};

}  // namespace

void export_csv(formats::TraceReader& reader, std::ostream& out, const ExportOptions&) {
  ChunkedWriter w(out);
  // Full demangled names: a CSV file is for programs, like the JSON report.
  TraceNames names(reader.header(), reader.probes(), reader.threads(), true);
  w.buf() += kHeader;
  CsvWriter csv(w, names);
  formats::Event ev;
  while (reader.next(ev)) {
    csv.event(ev);
    if (!w.ok()) return;
  }
  w.flush();
}

}  // namespace atrace::analysis
