// The in-memory vocabulary of a trace: what the writer takes and the reader
// gives back. Independent of BPF and of the on-disk encoding, so the file
// format can change (issue: compact format) without touching the recorder or
// the reports.
//
//   EventKind      what happened (function entry/exit, kernel events, ...)
//   Event          one timestamped event of one thread, with its fields
//   ProbeKind      how a probe was placed (uprobe entry+return, ...)
//   ProbeInfo      one row of the probe table: id -> name, module, address
//   ThreadInfo     one row of the thread table: tid -> name, first/last seen
//   ProcessInfo    one row of the process table: host pid -> its pid in its
//                  own namespace, namespaces, cgroup, container or service
//   HostClocks     which host and boot, and its clocks read side by side
//                  during the recording (the evidence `merge` corrects by)
//   TraceHeader    who/what/when was recorded
//   LostCounts     events the kernel could not hand over, per CPU
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace atrace::formats {

// The values are the file's kind numbers (formats/FORMAT.md); FUNC_RETURN
// (4) is an encoding detail and reaches the API as FuncExit.
enum class EventKind : uint8_t {
  FuncEntry = 1,
  FuncExit = 2,
  ThreadExit = 3,
  // Kernel events of the traced threads (issue 4).
  SchedSwitchOut = 16,
  SchedSwitchIn = 17,
  SchedWakeup = 18,
  SchedMigrate = 19,
  SyscallEnter = 20,
  SyscallExit = 21,
  PageFault = 22,
  ProcFork = 23,
  ProcExec = 24,
  ProcExit = 25,
  Comm = 26,
  // A relevance filter removed a probe while recording (issue 5). Belongs to
  // the recording, not to a thread: tid 0, pid = the target's.
  Detach = 27,
  // A USDT probe fired (issue 6): its probe (ProbeKind::Usdt) and arguments.
  Usdt = 29,
  // A traced call was unwound by an exception or a forced unwind
  // (pthread_exit, cancellation), closed at the catch or at its thread's
  // end (docs/exceptions.md): its probe and how (UnwindHow).
  Unwind = 30,
  // A module a selector names was mapped into a traced process (at exec,
  // by dlopen, or found mapped when attaching), or unmapped (dlclose):
  // its path, base address and build id (docs/selectors.md).
  ModuleLoad = 31,
  ModuleUnload = 32,
  // Events of this thread were lost just before this point (issue 18): the
  // ring was full. arg0 = how many. The replay treats it as a gap: no
  // call is paired across it.
  Gap = 33,
  // A message the thread sent or received (record --kernel=+net, issue 32):
  // TCP, UDP, a unix socket or a pipe. net_message(ev) has its fields.
  Message = 36,
};

// True for the kinds recorded from kernel tracepoints (16-26).
inline bool is_kernel_kind(EventKind k) {
  auto v = static_cast<uint8_t>(k);
  return v >= 16 && v <= static_cast<uint8_t>(EventKind::Comm);
}

// SchedSwitchOut.flags: the kernel's prev_state low byte.
constexpr uint8_t kSwitchRunnable = 0;  // preempted: still wants the CPU
// PageFault.flags
constexpr uint8_t kFaultWrite = 1, kFaultUser = 2, kFaultMajor = 4;
// ProcFork.flags
constexpr uint8_t kForkThread = 1;  // CLONE_THREAD: a new thread, not a process

// Detach.flags: the rule that removed the probe. A file may hold values
// this list lacks (a newer writer's): they are kept and named "unknown".
enum class DetachReason : uint8_t {
  Absolute = 1,  // mean below the threshold after enough calls
  Relative = 2,  // mean below the called functions' mean minus the threshold
  MaxCalls = 3,  // called the maximum number of times
  User = 4,      // asked for by the user while recording
  Budget = 5,    // removed to bring the estimated overhead under its budget
  // Too costly for the kernel's probes (reasons 1, 2, 5) and patched instead
  // (--fast-path=hot): its later calls come from the fast path's ring.
  PatchedInstead = 6,
};
inline DetachReason detach_reason(uint8_t flags) { return static_cast<DetachReason>(flags); }

// Unwind.flags: where the unwound call ended. Other values: unknown, kept.
enum class UnwindHow : uint8_t {
  Caught = 1,      // an exception was caught in a caller (the catch time)
  ThreadExit = 2,  // its thread ended while unwinding (pthread_exit, cancel)
  // Its thread switched stacks (swapcontext, setcontext) while it was open:
  // its return address was given back, its return is not seen (at the switch).
  StackSwitch = 3,
  // The thread was seen at or above the call's return-address slot without
  // its return (the event is there); arg0 names the call by its entry's time.
  Abandoned = 4,     // left by longjmp/siglongjmp: the kernel dropped its return probe
  NestingLimit = 5,  // it had no return probe: past the kernel's 64 nested ones
  // The fast path gave its return address back to a stack walk whose end
  // it did not see (left by longjmp from its callback, or an end it could
  // not patch): its return is not seen.
  GivenBack = 6,
};

// The fields of an event, by kind (the file's payload fields, FORMAT.md):
//
//   kind            id     flags         arg0          arg1          text
//   FuncEntry/Exit  probe  -             -             -             -
//   SchedSwitchOut  -      prev_state    next_tid      -             -
//   SchedSwitchIn   -      -             prev_tid      -             -
//   SchedWakeup     -      -             waker_tid     target_cpu    -
//   SchedMigrate    -      -             orig_cpu      dest_cpu      -
//   SyscallEnter    -      -             nr            -             -
//   SyscallExit     -      -             nr            ret (int64)   -
//   PageFault       -      kFault*       address       ip            -
//   ProcFork        -      kForkThread   child_pid     child_tid     -      (args)
//   ProcExec        -      -             -             -             filename
//   ProcExit        -      -             exit_code     -             -
//   Comm            -      -             -             -             name
//   Detach          probe  DetachReason  calls         total_ns      -
//   Usdt            probe  -             -             -             -      (args)
//   Unwind          probe  UnwindHow     entry ts (0)  -             -
//   ModuleLoad      -      -             base          -             path   (args)
//   ModuleUnload    -      -             base          -             path   (args)
//   Gap             -      -             lost events   -             -
//   Message         -      kMessage*     bytes         seq/offset    -      (args)
//
// An Unwind's arg0, when not 0, is the time of the entry of the call it
// ends (Abandoned, NestingLimit): it names that call among the open ones.
//
// Detach's calls and total_ns are the probe's counts up to the decision
// (mean = total_ns / calls); it comes in a block of tid 0.
//
// A Usdt event's arguments are in `args`, in the probe's order. A FuncEntry
// recorded with `record --args` has its arguments there (slot 1-6), a
// FuncExit recorded with `--retval` its return value (slot kArgRetval);
// empty for every other event.
//
// A ProcFork's child thread pointer is fork_thread_pointer(ev) (one
// integer argument when known).
//
// A ModuleLoad/ModuleUnload event's base is the address where the file's
// offset 0 is mapped; its build id is module_build_id(ev) (one string
// argument, lowercase hex, empty when the file has none).
//
// A Message's protocol, addresses and objects are net_message(ev)'s (the
// event's args hold them: read them only through it).
//
// Unused fields are 0 / empty. Signed values (ret, exit_code) are stored as
// their two's complement: read them with sarg1() / sarg0().
// How a recorded string turned out (function arguments and return values,
// `record --args`; USDT strings are always Ok).
enum class StrState : uint8_t {
  Ok = 0,
  Null = 1,        // the pointer was NULL: no string
  Unreadable = 2,  // the pointer did not point to readable memory
  Cut = 3,         // longer than kUsdtStringMax bytes: cut there
};

// How an integer is shown (function arguments, `record --args`).
enum class ArgFormat : uint8_t { Decimal = 0, Hex = 1, Pointer = 2 };

// One USDT argument, function argument or return value: an integer of
// `size` bytes (1, 2, 4, 8), or a string read from the traced process (at
// most kUsdtStringMax bytes; longer ones are cut there).
struct ProbeArg {
  uint8_t size = 8;
  bool is_signed = false;
  bool is_string = false;
  uint64_t value = 0;  // the integer; a string's address in the process
  std::string str;
  // A function's values only (FuncEntry/FuncExit args): which register
  // (kArgRetval or argument 1-6), how the integer is shown, and how the
  // string read went.
  uint8_t slot = 0;
  ArgFormat format = ArgFormat::Decimal;
  StrState str_state = StrState::Ok;
  int64_t svalue() const { return static_cast<int64_t>(value); }
};
constexpr uint8_t kArgRetval = 0;    // ProbeArg::slot of a return value
constexpr uint8_t kMaxFuncArgs = 6;  // arg1..arg6: the SysV integer registers
constexpr size_t kUsdtStringMax = 127;
constexpr size_t kMaxStackFrames = 127;  // FUNC_STACK's bound (bpf/atrace.h's cap)

// What carried a Message (FORMAT.md, MESSAGE). Other values: unknown.
enum class NetProto : uint8_t {
  Tcp = 1,
  Udp = 2,
  UnixStream = 3,
  UnixDgram = 4,
  Pipe = 5,
};
// Message.flags
constexpr uint8_t kMessageRecv = 1;      // received (else sent)
constexpr uint8_t kMessageNoOffset = 2;  // UNIX/PIPE: the byte offset is unknown

// A message sent or received, as the recorder saw it at the return of the
// kernel's send or receive function. Pairing a send with its receive:
//   TCP   same 4-tuple (ends swapped) and overlapping [seq, seq + bytes)
//         (mod 2^32): the stream's sequence numbers, equal on both ends
//   UDP   same 4-tuple (ends swapped), then by order and size
//   UNIX  obj/peer_obj swapped, and overlapping byte ranges: `seq` is the
//         bytes this socket sent (received) before, counted from the
//         recording's first sight of it
//   PIPE  same obj (the pipe's inode), overlapping byte ranges
struct NetMessage {
  bool recv = false;
  NetProto proto = NetProto::Tcp;
  bool offset_known = true;  // UNIX/PIPE: false when the recorder had no room to count
  uint64_t bytes = 0;
  uint64_t seq = 0;  // TCP: sequence number of the first byte (32 bits); UNIX/PIPE: offset
  // TCP/UDP: 4 or 6 (an IPv4 address is in addr[0..4)); 0 for local channels.
  uint8_t family = 0;
  uint8_t laddr[16] = {}, paddr[16] = {};
  uint16_t lport = 0, pport = 0;  // host order
  // UNIX: this socket's inode and its peer's (0: none); PIPE: the pipe's inode.
  uint64_t obj = 0, peer_obj = 0;
  // How long the system call ran (its exit, the event's time, minus its
  // entry); 0 = unknown (files before it). A send's bytes left between
  // ts - call_ns and ts: clock synchronisation takes the entry as the
  // latest time they can have left, a receive's exit as the earliest they
  // can have arrived.
  uint64_t call_ns = 0;
  bool inet() const { return proto == NetProto::Tcp || proto == NetProto::Udp; }
};

struct Event;
// A Message event's fields (a default NetMessage for other kinds), and the
// one way a Message event gets them.
NetMessage net_message(const Event& ev);
void set_net_message(Event& ev, const NetMessage& m);
// "tcp", "udp", "unix", "unix-dgram", "pipe"
const char* to_string(NetProto p);
// "127.0.0.1:80", "[::1]:80" (TCP/UDP ends); "unix:INODE", "pipe:INODE"
// for the local ones (`peer`: the peer socket's; a pipe's is its own).
std::string net_end(const NetMessage& m, bool peer);

// A ProcFork event's child thread pointer (its x86-64 fs_base when the
// kernel created it; 0 = unknown: files before it, other kinds), and the one
// way a fork event gets it. The fast path names threads by it (fastpath/
// thread_pointers.h).
uint64_t fork_thread_pointer(const Event& ev);
void set_fork_thread_pointer(Event& ev, uint64_t thread_pointer);

// A ModuleLoad/ModuleUnload event's build id ("" for other kinds), and the
// one way a module event gets it.
const std::string& module_build_id(const Event& ev);
void set_module_build_id(Event& ev, const std::string& build_id);

struct Event {
  uint64_t ts = 0;  // CLOCK_MONOTONIC ns (of a merged trace: corrected, see TraceReader)
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t id = 0;  // probe id for FuncEntry/FuncExit/Detach/Usdt/Unwind, 0 otherwise
  uint16_t cpu = 0;
  EventKind kind = EventKind::FuncEntry;
  uint8_t flags = 0;
  // The recording the event came from, in a merged trace (`atrace merge`:
  // an index into TraceReader::hosts()); 0 in a single recording. Pids
  // and tids are unique only within one host: key threads by thread_key().
  uint16_t host = 0;
  uint64_t arg0 = 0;
  uint64_t arg1 = 0;
  std::string text;
  std::vector<ProbeArg> args;
  // A FuncEntry recorded with `record --stack`: the user call stack at the
  // entry, innermost first (stack[0] is in the function itself, stack[1]
  // is the return address into its caller), as addresses in the process;
  // at most kMaxStackFrames.
  std::vector<uint64_t> stack;

  int64_t sarg0() const { return static_cast<int64_t>(arg0); }
  int64_t sarg1() const { return static_cast<int64_t>(arg1); }
};

// One thread (process) of a trace, merged or not: its host and its tid
// (pid). The one key for per-thread state: tids repeat across hosts.
inline uint64_t thread_key(uint16_t host, uint32_t tid) { return uint64_t{host} << 32 | tid; }
inline uint64_t thread_key(const Event& ev) { return thread_key(ev.host, ev.tid); }
inline uint64_t process_key(const Event& ev) { return thread_key(ev.host, ev.pid); }

enum class ProbeKind : uint8_t {
  Function = 1,  // entry uprobe + uretprobe
  // A USDT probe (name "provider:name"): Usdt events with arguments.
  Usdt = 2,
  // A pair of USDT probes "name__begin" / "name__end" of one provider
  // (include/atrace/probe.h's ATRACE_BEGIN/ATRACE_END) shown as intervals:
  // its events are FuncEntry/FuncExit, like a function's, named
  // "provider:name".
  Interval = 3,
};

// Which way the kernel runs the entry probe: the main factor of its cost.
enum class ProbePath : uint8_t {
  Unknown = 0,
  SingleStep = 1,  // instruction copied out of line and single-stepped
  Emulated = 2,    // kernel emulates the instruction (push, 1-byte nop, ...)
  Nop5 = 3,        // 5-byte NOP: optimized uprobe (call to trampoline)
  Refused = 4,     // the kernel will not probe this instruction (never attached)
  Patched = 5,     // no uprobe: the entry is patched to a trampoline (record --fast-path)
};

struct ProbeInfo {
  uint32_t id = 0;
  ProbeKind kind = ProbeKind::Function;
  std::string name;      // demangled
  std::string module;    // file name of the module (e.g. "libc.so.6", "demo")
  std::string path;      // full path of the module
  uint64_t address = 0;  // ELF virtual address (st_value) in the module
  uint64_t offset = 0;   // file offset where the uprobe sits
  ProbePath path_kind = ProbePath::Unknown;
  std::string build_id;  // GNU build-id of the module, lowercase hex; empty if none
  // Bytes from the function's first instruction to the probed one
  // (uprobes/placement.h); 0 at the entry, and in files that predate it.
  uint64_t entry_delta = 0;
  // The names of its recorded arguments, by slot - 1 ("" where unnamed):
  // from debug info with `record --args=FUNC@auto`; empty otherwise.
  std::vector<std::string> arg_names;
};

// Where and how a function's entry probe runs, as shown by `list` and
// `info`: "+4 emulated", "+0 single-step".
std::string probe_place(ProbePath path, uint64_t entry_delta);

struct ThreadInfo {
  uint32_t tid = 0;
  uint32_t pid = 0;
  std::string name;
  uint64_t first_ts = 0;
  uint64_t last_ts = 0;
  uint64_t events = 0;
  uint16_t host = 0;  // as Event::host
};

// A traced process as it saw itself (a container's, a service's): what the
// user knows it by. Collected when it became traced (record/process_info.h);
// the PROCESSES frames of the file (FORMAT.md).
struct ProcessInfo {
  uint32_t pid = 0;     // in atrace's pid namespace (the pid of every event)
  uint32_t ns_pid = 0;  // in its own, innermost pid namespace (NSpid); 0: unknown
  uint64_t pid_ns = 0;  // inode number of its pid namespace; 0: unknown
  uint64_t mnt_ns = 0;  // inode number of its mount namespace; 0: unknown
  // Its cgroup v2 path ("/system.slice/nginx.service"); "" unknown.
  std::string cgroup;
  // The container or service the cgroup names: "nginx.service", or a
  // container id's short form ("3f2a9c1b0d4e"); "" when it names none.
  std::string name;
  // The directory that was its root, as atrace's namespace sees it
  // ("/var/lib/containers/.../merged"); "" when atrace could not reach it
  // (or it is atrace's own root). Report time reads a gone container's
  // files there.
  std::string root;
  uint16_t host = 0;  // as Event::host
  // Its pid in its own namespace differs from the host's.
  bool own_pid_ns() const { return ns_pid && ns_pid != pid; }
};

// One reading of the host's clocks: REALTIME and BOOTTIME read between two
// readings of MONOTONIC (the clock of every time stamp), the narrowest of a
// few tries, so each is known at a MONOTONIC instant within
// [mono_before_ns, mono_after_ns]; and the kernel's own account of
// REALTIME's error (adjtimex(2), as NTP daemons leave it).
struct ClockSnapshot {
  enum class When : uint8_t { Start = 0, Periodic = 1, Stop = 2 };
  When when = When::Periodic;
  uint64_t mono_before_ns = 0, mono_after_ns = 0;
  uint64_t real_ns = 0;  // CLOCK_REALTIME
  uint64_t boot_ns = 0;  // CLOCK_BOOTTIME (MONOTONIC plus time suspended)
  // adjtimex: the kernel's bound on REALTIME's error and its estimate, in
  // us (16 s bound and unsynchronised when no NTP daemon runs).
  uint64_t maxerror_us = 0, esterror_us = 0;
  uint32_t status = 0;        // timex.status bits (STA_UNSYNC = 0x40 ...)
  int64_t freq = 0;           // timex.freq: NTP's frequency correction, ppm * 65536
  bool synchronised = false;  // adjtimex said TIME_OK-ish and STA_UNSYNC is clear
  uint64_t width_ns() const { return mono_after_ns - mono_before_ns; }
  uint64_t mono_mid_ns() const { return mono_before_ns + width_ns() / 2; }
};

// Which machine and which boot of it recorded (two recordings of one boot
// share one MONOTONIC clock), and its clocks read at the start, every
// second and at the stop: CLOCKS frames (FORMAT.md). Time stamps are never
// rewritten at record time; `atrace merge` corrects from this and from
// messages.
struct HostClocks {
  std::string boot_id;     // /proc/sys/kernel/random/boot_id; "" unknown
  std::string machine_id;  // /etc/machine-id; "" unknown
  std::string host_name;
  std::vector<ClockSnapshot> snapshots;  // in time order
};

struct TraceHeader {
  std::string atrace_version;
  std::string command_line;    // atrace's own command line
  std::string target_command;  // the traced program's command line
  // Kernel event groups recorded, comma-separated ("sched,syscalls,faults,
  // proc"); empty when none were. A report shows kernel columns only then.
  std::string kernel_events;
  uint32_t target_pid = 0;
  std::string host;
  std::string kernel;
  uint32_t clock_id = 1;  // CLOCK_MONOTONIC
  uint64_t start_mono_ns = 0, start_real_ns = 0;
  uint64_t end_mono_ns = 0, end_real_ns = 0;
  // What one traced call (entry + return probe) cost, measured by the
  // recorder at start-up on functions of its own (record/calibrate.h),
  // per path of the entry probe; 0: not measured (older files, or
  // calibration failed). `atrace report --compensate` subtracts them.
  uint64_t probe_cost_nop5_ns = 0;
  uint64_t probe_cost_emulated_ns = 0;
  uint64_t probe_cost_singlestep_ns = 0;
  // The part of each that falls inside the call's own measured duration
  // (between its entry and exit timestamps), per path; 0: not measured.
  uint64_t probe_inside_nop5_ns = 0;
  uint64_t probe_inside_emulated_ns = 0;
  uint64_t probe_inside_singlestep_ns = 0;
  // What the recording kernel could not do that changes the numbers or
  // contents ("no uretprobe syscall: ..."), one line each; empty when it
  // lacked nothing (or in older files).
  std::vector<std::string> kernel_limits;
};

// What one traced call's probes cost by the path of its entry probe, in
// ns (0: not measured), as a header carries them: the one mapping from a
// path to its costs, for the recorder's filters and `report --compensate`.
struct ProbeCosts {
  uint64_t nop5 = 0, emulated = 0, single_step = 0;                       // whole call
  uint64_t inside_nop5 = 0, inside_emulated = 0, inside_single_step = 0;  // inside its interval
  bool any() const { return nop5 || emulated || single_step; }
  uint64_t of(ProbePath p) const;         // 0 for Unknown/Refused
  uint64_t inside_of(ProbePath p) const;  // likewise
  // The rules the relevance filters and the report's Detached table share.
  // A path not known counts as emulated (Refused costs nothing).
  // `cost_or_typical`: a hit's whole cost, or this machine's typical one
  // where calibration could not measure it (docs/BENCHMARKS.md).
  // `floor_of`: what the probes add to a call's measured duration, taken
  // off each mean: the calibrated inside cost, or half the whole cost where
  // it was not measured (taking off less than the truth keeps the filter
  // conservative: a function is judged longer than it is, never shorter).
  uint64_t cost_or_typical(ProbePath p) const;
  uint64_t floor_of(ProbePath p) const;
};
ProbeCosts probe_costs(const TraceHeader& h);
void set_probe_costs(TraceHeader& h, const ProbeCosts& c);

struct LostCounts {
  std::vector<uint64_t> per_cpu;  // index = CPU
  uint64_t total() const {
    uint64_t t = 0;
    for (auto v : per_cpu) t += v;
    return t;
  }
};

const char* to_string(EventKind k);
const char* to_string(ProbePath p);
// "function", "usdt", "interval"; "unknown" otherwise.
const char* to_string(ProbeKind k);
// "absolute", "relative", "max-calls", "user", "budget"; "unknown" otherwise.
const char* to_string(DetachReason r);
const char* to_string(UnwindHow h);

}  // namespace atrace::formats
