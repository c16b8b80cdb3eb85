// ScriptFormatter: the text of `atrace script` (docs/script.md is the
// contract; tests/unit/test_script_format.cpp pins every kind's line).
// Numbers go through std::to_chars and lines are appended to one reused
// string: the command prints millions of lines and must keep up with a pipe.
#include "output/script_format.h"

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstring>
#include <map>

#include "analysis/analysis.h"
#include "output/arg_text.h"
#include "output/report.h"
#include "output/report_text.h"
#include "output/text_escape.h"

namespace atrace::analysis {

namespace {

// The escape that colours a kind's name (--color).
const char* kind_color(formats::EventKind k) {
  using K = formats::EventKind;
  switch (k) {
    case K::FuncEntry:
    case K::FuncExit:
    case K::Unwind: return "\x1b[32m";
    case K::SyscallEnter:
    case K::SyscallExit: return "\x1b[33m";
    case K::PageFault:
    case K::Gap: return "\x1b[31m";
    case K::SchedSwitchOut:
    case K::SchedSwitchIn:
    case K::SchedWakeup:
    case K::SchedMigrate: return "\x1b[34m";
    default: return "\x1b[35m";
  }
}

struct FieldName {
  std::string_view name;
  ScriptField field;
};
constexpr FieldName kFieldNames[] = {
    {"comm", ScriptField::Comm},       {"tid", ScriptField::Tid},   {"pid", ScriptField::Pid},
    {"cpu", ScriptField::Cpu},         {"time", ScriptField::Time}, {"kind", ScriptField::Kind},
    {"details", ScriptField::Details},
};

std::optional<ScriptField> field_named(std::string_view name) {
  for (const auto& f : kFieldNames)
    if (f.name == name) return f.field;
  return std::nullopt;
}

// Widths as perf script prints them, so columns line up for the usual sizes
// (longer values are printed whole, never cut).
constexpr size_t kCommWidth = 16, kIdWidth = 7, kSecondsWidth = 5;
// "syscall-exit:", the longest kind with its colon: details start in one
// column, so the call-depth indentation of entries and exits lines up.
constexpr size_t kKindWidth = 13;

void pad_left(std::string& out, size_t have, size_t width) {
  if (have < width) out.append(width - have, ' ');
}

template <typename Int>
void append_int(std::string& out, Int v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Right-aligned in `width` columns, filled with `fill` (' ' or '0').
template <typename Int>
void append_int(std::string& out, Int v, size_t width, char fill) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  auto len = static_cast<size_t>(r.ptr - buf);
  if (len < width) out.append(width - len, fill);
  out.append(buf, r.ptr);
}

// Names and file names come from the traced program: a control character
// (a newline in a thread name) must not break the one-event-a-line promise.
void append_escaped(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
}

std::string escaped(std::string_view s) {
  std::string out;
  append_escaped(out, s);
  return out;
}

void indent(std::string& out, size_t depth) {
  out.append(2 * std::min(depth, kMaxIndentDepth), ' ');
}

// prev_state letters as ps and perf print them; the recorder stores the
// raw state's low byte, where TASK_DEAD (0x80, a thread's last switch-out)
// gets ps's old letter for it. Anything else is shown in hex, not guessed.
void append_state(std::string& out, uint8_t state) {
  switch (state) {
    case formats::kSwitchRunnable: out += 'R'; return;
    case 0x01: out += 'S'; return;
    case 0x02: out += 'D'; return;
    case 0x04: out += 'T'; return;
    case 0x08: out += 't'; return;
    case 0x10: out += 'X'; return;
    case 0x20: out += 'Z'; return;
    case 0x40: out += 'P'; return;
    case 0x80: out += 'x'; return;
    default: append_hex(out, state);
  }
}

// The name of a negative system call return. The kernel's restart codes
// (512-516) never reach the program but do reach the sys_exit tracepoint.
const char* error_name(int64_t err) {
  switch (err) {
    case 512: return "ERESTARTSYS";
    case 513: return "ERESTARTNOINTR";
    case 514: return "ERESTARTNOHAND";
    case 515: return "ENOIOCTLCMD";
    case 516: return "ERESTART_RESTARTBLOCK";
    default: break;
  }
  return err < 4096 ? strerrorname_np(static_cast<int>(err)) : nullptr;
}

// The comm column of tid 0's events, which the recorder writes itself.
const std::string kRecorderComm = "[atrace]";

// An exit numbered -1 with no call entered before it.
const std::string kUnknownSyscall = "syscall_-1";

// Calls whose result is an address: hex reads better than a 15-digit number.
bool returns_address(std::string_view name) {
  return name == "mmap" || name == "mremap" || name == "brk" || name == "shmat";
}

// The recorder stores the wait(2) status: an exit code or a killing signal.
void append_exit_status(std::string& out, int64_t status) {
  if (status < 0 || status > 0xffff) {  // not a wait status: shown as it is
    out += "status=";
    append_int(out, status);
    return;
  }
  int sig = static_cast<int>(status & 0x7f);
  if (sig == 0) {
    out += "code=";
    append_int(out, (status >> 8) & 0xff);
    return;
  }
  out += "signal=";
  if (const char* abbrev = sigabbrev_np(sig)) {
    out += "SIG";
    out += abbrev;
  } else {
    append_int(out, sig);
  }
  if (status & 0x80) out += " core";
}

}  // namespace

std::vector<ScriptField> default_script_fields() {
  return {ScriptField::Comm, ScriptField::Tid,  ScriptField::Cpu,
          ScriptField::Time, ScriptField::Kind, ScriptField::Details};
}

std::string script_field_names() {
  std::string s;
  for (const auto& f : kFieldNames) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

std::optional<std::vector<ScriptField>> parse_script_fields(std::string_view spec,
                                                            std::string& error) {
  std::vector<std::string_view> items;
  for (size_t start = 0;;) {
    size_t comma = spec.find(',', start);
    items.push_back(spec.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  auto is_edit = [](std::string_view s) { return !s.empty() && (s[0] == '+' || s[0] == '-'); };
  size_t edits = static_cast<size_t>(std::count_if(items.begin(), items.end(), is_edit));
  if (edits != 0 && edits != items.size()) {
    error = "--fields: either list the fields or edit the default with +FIELD/-FIELD, not both";
    return std::nullopt;
  }
  std::vector<ScriptField> fields = edits ? default_script_fields() : std::vector<ScriptField>{};
  for (auto item : items) {
    std::string_view name = edits ? item.substr(1) : item;
    auto f = field_named(name);
    if (!f) {
      error = name.empty() ? "--fields: empty field name in '" + std::string(spec) + "'"
                           : "--fields: unknown field '" + std::string(name) + "'";
      error += " (known: " + script_field_names() + ")";
      return std::nullopt;
    }
    auto at = std::find(fields.begin(), fields.end(), *f);
    if (edits && item[0] == '-') {
      if (at != fields.end()) fields.erase(at);
    } else if (at == fields.end()) {
      fields.push_back(*f);  // a field named twice is shown once
    }
  }
  // An edited list keeps perf's fixed order: "+pid" puts the pid beside
  // the tid, not after the details. The enum is in that order.
  if (edits) std::sort(fields.begin(), fields.end());
  if (fields.empty()) {
    error = "--fields: no field left to print (known: " + script_field_names() + ")";
    return std::nullopt;
  }
  return fields;
}

ScriptFormatter::ScriptFormatter(const formats::TraceHeader& header,
                                 const std::vector<formats::ProbeInfo>& probes,
                                 const std::vector<formats::ThreadInfo>& threads,
                                 std::vector<ScriptField> fields)
    : replay_(probes), fields_(std::move(fields)) {
  replay_.listen(*this);
  std::vector<std::string> modules;
  for (const auto& p : probes) modules.push_back(p.module);
  // The text report's rule: the main module's functions go without a tag.
  std::string main = main_module(header, modules);
  for (const auto& p : probes) {
    std::string name = escaped(p.name);
    const size_t bare = name.size();
    if (!p.module.empty() && p.module != main) name += " [" + escaped(p.module) + "]";
    functions_[p.id] = Function{std::move(name), bare, p.arg_names};
  }
  for (const auto& t : threads) {
    table_names_[formats::thread_key(t.host, t.tid)] = escaped(t.name);
    pids_.insert(t.pid);
  }
}

void ScriptFormatter::set_hosts(const std::vector<formats::HostClocks>& hosts) {
  host_names_.clear();
  host_width_ = 0;
  for (const std::string& label : host_labels(hosts)) {
    host_names_.push_back(escaped(label));
    host_width_ = std::max(host_width_, host_names_.back().size());
  }
}

void ScriptFormatter::set_processes(const std::vector<formats::ProcessInfo>& processes) {
  processes_ = processes;
}

std::string ScriptFormatter::preamble() const {
  std::string out;
  for (const auto& p : processes_)
    if (pids_.count(p.pid) && worth_showing(p))
      out += "# " + escaped(process_description(p)) + "\n";
  return out;
}

ScriptFormatter::Thread& ScriptFormatter::thread(const formats::Event& ev) {
  // Events come in runs of one thread: remember the last one.
  const uint64_t key = formats::thread_key(ev);
  if (last_thread_ && last_tid_ == key) return *last_thread_;
  auto [it, fresh] = threads_.try_emplace(key);
  if (fresh) {
    // The file's thread table names a thread by its last known name; a
    // thread missing from it is named after its process, as perf does
    // with ":TID" when nothing is known.
    auto named = table_names_.find(key);
    if (named == table_names_.end()) named = table_names_.find(formats::process_key(ev));
    it->second.comm = named != table_names_.end() ? named->second : ":" + std::to_string(ev.tid);
    // tid 0 is no thread: its events are atrace's own (DETACH).
    if (ev.tid == 0) it->second.comm = kRecorderComm;
  }
  last_tid_ = key;
  last_thread_ = &it->second;  // node-based: stays valid across inserts
  return it->second;
}

const std::string& ScriptFormatter::function(uint32_t id) {
  auto [it, fresh] = functions_.try_emplace(id);
  if (fresh) {
    it->second.name = "<probe " + std::to_string(id) + ">";
    it->second.bare = it->second.name.size();
  }
  return it->second.name;
}

const std::string& ScriptFormatter::syscall(uint64_t nr) {
  auto [it, fresh] = syscall_names_.try_emplace(nr);
  if (fresh) it->second = syscall_name(nr);
  return it->second;
}

// An exit pops to its entry: calls above it were left without their exit
// (longjmp, exception), as the profile reads them too. An unwind closes its
// entry alone, wherever it is (call_replay.h).
void ScriptFormatter::on_call_end(const ReplayThread&, const ClosedCall& c) {
  ended_ = true;
  if (c.how == CallEnd::Returned || c.how == CallEnd::Unwound || c.how == CallEnd::Abandoned) {
    depth_ = c.index;
    call_start_ = c.start;
  } else if (c.how == CallEnd::Untimed) {
    depth_ = c.index;  // no duration to show (call_replay.h)
    call_start_.reset();
  } else if (c.how == CallEnd::ThreadExit || c.how == CallEnd::Gap || c.how == CallEnd::Exec) {
    unfinished_++;
  }
}

void ScriptFormatter::on_event(const formats::Event& ev, const ReplayThread* t) {
  size_t now = t ? t->stack.size() : 0;
  if (ev.kind == formats::EventKind::FuncEntry) depth_ = now - 1;  // the call it began
  else if (!call_start_) depth_ = now;
}

// "parse(arg1="/a", arg2=3)" at the entry, "parse (1.20us) = -2" at the
// exit, when the arguments and return value were recorded (arg_text.h).
void ScriptFormatter::function_details(const formats::Event& ev, std::string& out) {
  indent(out, depth_);
  const std::string& name = function(ev.id);
  if (ev.kind == formats::EventKind::FuncEntry && !ev.args.empty()) {
    // "deflate(arg1=3) [libz.so.1]": the arguments right after the name.
    const size_t bare = functions_[ev.id].bare;
    out.append(name, 0, bare);
    out += '(';
    for (size_t i = 0; i < ev.args.size(); i++) {
      if (i) out += ", ";
      out += arg_name(ev.args[i], functions_[ev.id].arg_names);
      out += '=';
      append_arg_value(out, ev.args[i]);
    }
    out += ')';
    out.append(name, bare);
  } else {
    out += name;
  }
  if (ev.kind != formats::EventKind::FuncEntry && call_start_) {
    out += " (";
    out += format_duration(ev.ts > *call_start_ ? ev.ts - *call_start_ : 0);
    out += ')';
  }
  if (ev.kind == formats::EventKind::FuncExit && !ev.args.empty()) {
    out += " = ";
    append_arg_value(out, ev.args.front());
  }
  if (ev.kind == formats::EventKind::Unwind) {
    const auto how = static_cast<formats::UnwindHow>(ev.flags);
    out += ' ';
    const analysis::UntimedReason why = analysis::untimed_reason(ev);
    if (why != analysis::UntimedReason::None) {
      out += "not timed: ";
      out += analysis::untimed_text(why);
    } else {
      out += formats::to_string(how);
    }
  }
}

void ScriptFormatter::syscall_exit_details(const formats::Event& ev, Thread& t, std::string& out) {
  // Calls that must not be restarted set their number to -1 before they
  // return (rt_sigreturn, the uretprobe call of every return probe): such an
  // exit belongs to the call the thread entered.
  uint64_t nr = ev.arg0;
  if (nr == UINT64_MAX && t.in_syscall) nr = t.syscall_nr;
  const std::string& name = nr == UINT64_MAX ? kUnknownSyscall : syscall(nr);
  out += name;
  out += " = ";
  int64_t ret = ev.sarg1();
  if (ret < 0 && ret >= -4095) {
    append_int(out, ret);
    if (const char* err = error_name(-ret)) {
      out += ' ';
      out += err;
    }
  } else if (returns_address(name)) {
    append_hex(out, ev.arg1);
  } else {
    append_int(out, ret);
  }
  if (t.in_syscall && t.syscall_nr == nr) {
    out += " (";
    out += format_duration(ev.ts > t.syscall_ts ? ev.ts - t.syscall_ts : 0);
    out += ')';
  }
  t.in_syscall = false;
}

void ScriptFormatter::details(const formats::Event& ev, Thread& t, std::string& out) {
  using K = formats::EventKind;
  switch (ev.kind) {
    case K::FuncEntry:
    case K::FuncExit:
    case K::Unwind: function_details(ev, out); return;
    case K::Gap:  // where the thread's events were lost: one line
      out += "events=";
      append_int(out, ev.arg0);
      if (unfinished_) {
        out += " unfinished=";
        append_int(out, unfinished_);
      }
      return;
    case K::ThreadExit:
      if (unfinished_) {
        out += "unfinished=";
        append_int(out, unfinished_);
      }
      t.in_syscall = false;
      return;
    case K::SchedSwitchOut:
      out += "state=";
      append_state(out, ev.flags);
      out += " next=";
      append_int(out, ev.arg0);
      return;
    case K::SchedSwitchIn:
      out += "prev=";
      append_int(out, ev.arg0);
      return;
    case K::SchedWakeup:
      out += "waker=";
      append_int(out, ev.arg0);
      out += " target_cpu=";
      append_int(out, ev.arg1);
      return;
    case K::SchedMigrate:
      out += "orig_cpu=";
      append_int(out, ev.arg0);
      out += " dest_cpu=";
      append_int(out, ev.arg1);
      return;
    case K::SyscallEnter:
      out += syscall(ev.arg0);
      t.in_syscall = true;
      t.syscall_nr = ev.arg0;
      t.syscall_ts = ev.ts;
      return;
    case K::SyscallExit: syscall_exit_details(ev, t, out); return;
    case K::PageFault:
      out += "addr=";
      append_hex(out, ev.arg0);
      out += " ip=";
      append_hex(out, ev.arg1);
      if (name_code_) out += name_code_(ev);
      out += ev.flags & formats::kFaultWrite ? " write" : " read";
      out += ev.flags & formats::kFaultUser ? " user" : " kernel";
      if (ev.flags & formats::kFaultMajor) out += " major";
      return;
    case K::ProcFork: {
      bool is_thread = ev.flags & formats::kForkThread;
      out += is_thread ? "thread tid=" : "process pid=";
      append_int(out, is_thread ? ev.arg1 : ev.arg0);
      if (!is_thread)
        for (const auto& p : processes_)
          if (p.pid == ev.arg0 && p.own_pid_ns())
            out += " (" + std::to_string(p.ns_pid) + " in its namespace)";
      // A new task starts with its parent's name (the kernel copies it);
      // the file's table knows better when it has the child. Map nodes
      // stay put on insert: `t` and the cached thread remain valid.
      auto child = formats::thread_key(ev.host, static_cast<uint32_t>(ev.arg1));
      if (!table_names_.count(child)) {
        auto [it, fresh] = threads_.try_emplace(child);
        if (fresh) it->second.comm = t.comm;
      }
      return;
    }
    case K::ProcExec: append_escaped(out, ev.text); return;
    case K::ProcExit: append_exit_status(out, ev.sarg0()); return;
    case K::Comm: append_escaped(out, ev.text); return;
    case K::Detach: detach_details(ev, out); return;
    case K::Usdt: usdt_details(ev, out); return;
    case K::ModuleLoad:
    case K::ModuleUnload: module_details(ev, out); return;
    case K::Message: message_details(ev, out); return;
  }
}

// "send tcp 127.0.0.1:40112 -> 127.0.0.1:5000 bytes=64 seq=1000-1064":
// the direction, this end first, the arrow the way the bytes went; the
// TCP byte range [seq, end) as the stream numbers it (mod 2^32), the same
// on both ends; a local channel's offset counts its bytes before these.
void ScriptFormatter::message_details(const formats::Event& ev, std::string& out) {
  const formats::NetMessage m = formats::net_message(ev);
  out += m.recv ? "recv " : "send ";
  out += formats::to_string(m.proto);
  out += ' ';
  out += formats::net_end(m, false);
  if (m.proto != formats::NetProto::Pipe) {
    out += m.recv ? " <- " : " -> ";
    out += formats::net_end(m, true);
  }
  out += " bytes=";
  append_int(out, m.bytes);
  if (m.proto == formats::NetProto::Tcp) {
    out += " seq=";
    append_int(out, m.seq);
    out += '-';
    append_int(out, static_cast<uint32_t>(m.seq + m.bytes));
  } else if (!m.inet()) {
    out += " offset=";
    if (m.offset_known) append_int(out, m.seq);
    else out += '?';
  }
}

// "/usr/lib/libfoo.so base=0x7f3a1c000000 build_id=ab12...": where the
// module's code came (or went) in the process; "build_id=none" for a file
// without one.
void ScriptFormatter::module_details(const formats::Event& ev, std::string& out) {
  append_escaped(out, ev.text);
  out += " base=";
  append_hex(out, ev.arg0);
  const std::string& id = formats::module_build_id(ev);
  out += " build_id=";
  out += id.empty() ? "none" : id;
}

// "provider:name arg1=5 arg2="GET /"": numbers in decimal (signed ones
// with their sign), strings quoted and escaped; indented at the thread's
// depth, where the probe fired among the calls.
void ScriptFormatter::usdt_details(const formats::Event& ev, std::string& out) {
  indent(out, depth_);
  out += function(ev.id);
  for (size_t i = 0; i < ev.args.size(); i++) {
    const formats::ProbeArg& a = ev.args[i];
    out += " arg";
    append_int(out, static_cast<int64_t>(i + 1));
    out += '=';
    if (a.is_string) {
      out += '"';
      append_escaped(out, a.str);
      out += '"';
    } else if (a.is_signed) {
      append_int(out, a.svalue());
    } else {
      out += std::to_string(a.value);
    }
  }
}

// "FUNCTION rule=absolute calls=N mean=1.20us": the mean without a blank so
// that every item after the name stays one key=value word.
void ScriptFormatter::detach_details(const formats::Event& ev, std::string& out) {
  out += function(ev.id);
  out += " rule=";
  out += formats::to_string(formats::detach_reason(ev.flags));
  out += " calls=";
  append_int(out, ev.arg0);
  out += " mean=";
  for (char c : format_duration(ev.arg0 ? ev.arg1 / ev.arg0 : 0))
    if (c != ' ') out += c;
}

void ScriptFormatter::format(const formats::Event& ev, std::string& out) {
  Thread& t = thread(ev);
  call_start_.reset();
  unfinished_ = 0;
  ended_ = false;
  replay_.add(ev);
  // The recorder's word that a call was left, for a call an exception's
  // Unwind already closed: it repeats what a line said (call_replay.h).
  if (ev.kind == formats::EventKind::Unwind && ev.arg0 && !ended_) return;
  // Always, whatever the columns: the details keep the pending system
  // calls up to date.
  details_.clear();
  details(ev, t, details_);

  const size_t line_start = out.size();
  // A merged trace's lines start with their host (set_hosts).
  if (!host_names_.empty()) {
    const std::string& host =
        ev.host < host_names_.size() ? host_names_[ev.host] : std::to_string(ev.host);
    out += host;
    pad_left(out, 0, host_width_ > host.size() ? host_width_ - host.size() : 0);
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    ScriptField f = fields_[i];
    if (f == ScriptField::Details && details_.empty()) continue;
    if (out.size() != line_start) out += ' ';
    switch (f) {
      case ScriptField::Comm:
        pad_left(out, t.comm.size(), kCommWidth);
        out += t.comm;
        break;
      case ScriptField::Tid: append_int(out, ev.tid, kIdWidth, ' '); break;
      case ScriptField::Pid: append_int(out, ev.pid, kIdWidth, ' '); break;
      case ScriptField::Cpu:
        out += '[';
        append_int(out, ev.cpu, 3, '0');
        out += ']';
        break;
      case ScriptField::Time:
        append_int(out, ev.ts / 1000000000, kSecondsWidth, ' ');
        out += '.';
        append_int(out, ev.ts % 1000000000, 9, '0');
        out += ':';
        break;
      case ScriptField::Kind: {
        const char* kind = formats::to_string(ev.kind);
        if (color_) out += kind_color(ev.kind);
        out += kind;
        out += ':';
        if (color_) out += "\x1b[0m";
        // Padded only when something follows, so no line ends in blanks.
        bool more = std::any_of(
            fields_.begin() + static_cast<std::ptrdiff_t>(i) + 1, fields_.end(),
            [&](ScriptField g) { return g != ScriptField::Details || !details_.empty(); });
        if (more) out.append(kKindWidth - std::min(kKindWidth, std::strlen(kind) + 1), ' ');
        break;
      }
      case ScriptField::Details: out += details_; break;
    }
  }
  out += '\n';
  // The rename line still shows the old name in its comm column (the
  // details give the new one); later lines show the new one.
  if (ev.kind == formats::EventKind::Comm) t.comm = escaped(ev.text);
}

}  // namespace atrace::analysis
