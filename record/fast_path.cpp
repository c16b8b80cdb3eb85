#include "record/fast_path.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <time.h>
#include <unistd.h>
#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "base/clock.h"
#include "base/unique_fd.h"
#include "fastpath/inject/code_patch.h"
#include "fastpath/inject/inject_error.h"
#include "fastpath/inject/process_memory.h"
#include "fastpath/inject/ptrace_wait.h"
#include "fastpath/inject/region_placement.h"
#include "fastpath/inject/remote_region.h"
#include "fastpath/inject/remote_syscall.h"
#include "fastpath/inject/shared_mapping.h"
#include "fastpath/inject/stopped_process.h"
#include "fastpath/inject/tracer.h"
#include "fastpath/lane_pages.h"
#include "fastpath/memory_access.h"
#include "fastpath/relocate.h"
#include "fastpath/return_fixups.h"
#include "fastpath/ring_layout.h"
#include "fastpath/ring_reader.h"
#include "fastpath/thread_pointers.h"
#include "fastpath/trampoline.h"
#include "fastpath/trampoline_template.h"
#include "fastpath/tsc_clock.h"
#include "record/kill_bound.h"
#include "record/record_error.h"
#include "uprobes/placement.h"
#include "uprobes/proc_maps.h"
#include "uprobes/process_root.h"

namespace atrace {

namespace fp = fastpath;

namespace {

// How a call whose frame left the shadow stack without its return ended,
// in the kernel path's words (formats/trace_types.h UnwindHow).
formats::UnwindHow unwind_how(fp::RecordKind kind) {
  switch (kind) {
    case fp::RecordKind::Caught: return formats::UnwindHow::Caught;
    case fp::RecordKind::ThreadExit: return formats::UnwindHow::ThreadExit;
    // Its return address was given back and its return is not seen: not
    // timed, as at the kernel path's stack switch.
    case fp::RecordKind::Switched: return formats::UnwindHow::StackSwitch;
    case fp::RecordKind::GivenBack: return formats::UnwindHow::GivenBack;
    default: return formats::UnwindHow::Abandoned;
  }
}

// The most of a function's code read to relocate its entry (trampoline.h).
constexpr size_t kMaxCodeRead = fp::kMaxEntryCode;
// The uninstall is the last chance to give the code back: a thread that
// stays inside a trampoline (preempted there on a loaded machine, where a
// runnable thread can wait tens of milliseconds for a CPU) gets up to about
// 2 s to leave, not the 20 ms of a switch during the recording.
constexpr fp::RetryPolicy kUndoRetries{200, std::chrono::microseconds(10000)};
// A trampoline: push, call, lea, the relocated entry (at most a few
// instructions rewritten to absolute jumps) and the jump back.
constexpr size_t kTrampolineBytes = 256;
constexpr size_t kTemplateBytes = 4096;

uint32_t pow2_at_least(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// One function to patch, where it is in the process.
struct PatchTarget {
  uint32_t id = 0;
  std::string name;
  std::string module_path;  // as the site has it
  uint64_t vaddr = 0;       // st_value (the module-wide branch check)
  uint64_t runtime = 0;     // its first byte in the process
  uint64_t size = 0;
  fp::TrampolineKind kind = fp::TrampolineKind::Traced;
  uint64_t file_offset = 0;  // an unwinder's entry in its file (the guard's key)
  uint64_t code_offset = 0;  // its first byte in its file
  fp::AddressRange module;   // the module's mappings in the process
};

// Where a file offset of the module with identity `id` is in the process.
bool runtime_of(const std::vector<uprobes::FileMapping>& maps, const uprobes::FileId& id,
                uint64_t file_offset, uint64_t* runtime, fp::AddressRange* module) {
  bool found = false;
  fp::AddressRange range{UINT64_MAX, 0};
  for (const auto& m : maps) {
    if (!(m.id == id)) continue;
    range.start = std::min(range.start, m.start);
    range.end = std::max(range.end, m.end);
    if (m.exec && file_offset >= m.offset && file_offset < m.offset + (m.end - m.start)) {
      *runtime = m.start + (file_offset - m.offset);
      found = true;
    }
  }
  *module = range;
  return found;
}

// How long an unwinder's entry may keep the int3 of the guard's probe the
// caller took off (the kernel removes it as the link closes).
constexpr uint64_t kProbeGoneWaitNs = 2'000'000'000;

// --fast-path=hot, a launched command: `bytes`, the process's at `runtime`,
// become the file's at `offset` (`fd`, `path`). Atrace's kernel probes went
// on the files before the exec: the two may differ where the process holds
// an int3 only, a probe's (the switch takes a function's off before its
// patch). With a `deadline` (CLOCK_MONOTONIC; an unwinder's entry, patched
// now, whose guard probe the caller took off) no int3 may be left by then.
// Anything else differing (text relocations, a file changed since it was
// mapped) is refused. Returns why ("" when taken).
std::string take_file_code(fp::ProcessMemory& memory, int fd, const std::string& path,
                           uint64_t runtime, uint64_t offset, uint64_t deadline,
                           std::vector<std::byte>& bytes) {
  std::vector<std::byte> file(bytes.size());
  if (fd < 0 || pread(fd, file.data(), file.size(), static_cast<off_t>(offset)) !=
                    static_cast<ssize_t>(file.size()))
    return "its code cannot be read from " + path;
  for (;;) {
    bool probed = false;
    for (size_t i = 0; i < bytes.size(); i++) {
      if (bytes[i] == file[i]) continue;
      if (bytes[i] != std::byte{0xcc}) return "its code in the process is not its file's";
      probed = true;
    }
    if (!probed || !deadline) break;
    if (now_ns(CLOCK_MONOTONIC) > deadline) return "a probe not atrace's is on it";
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    memory.read_any(runtime, bytes);
  }
  bytes = std::move(file);
  return {};
}

// Whether the process still has threads that can run (not gone, not a
// zombie).
bool running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z' &&
         line[close + 2] != 'X';
}

// Whether `pid` maps the lanes inherited from its parent at `address`
// (a fork child before its exec).
bool maps_lanes_at(pid_t pid, uint64_t address) {
  for (const auto& m : fp::read_maps(pid))
    if (m.start == address) return m.name.find("/memfd:atrace-ring") != std::string::npos;
  return false;
}

// Where a fork child's memfd name is written for memfd_create: in the
// ring's header page, past the header (the child's own, wiped at fork).
constexpr uint64_t kNameScratch = 2048;
static_assert(kNameScratch >= sizeof(fp::RingHeader));

// A fork child of the patched process, or of another such child, given a
// ring of its own (FastPath::State::adopt): its own lanes, read like the
// parent's, and its own copy of the patch to undo.
// The frames the undo found left (FastPath::State::restore_returns) join a
// process's records once its lanes are read to the end: after every record
// of its threads, innermost first.
void take_left_at_undo(bool writers_gone, const fp::RingReader& reader,
                       std::vector<fp::FastRecord>& left, std::vector<fp::FastRecord>& records) {
  if (!writers_gone || !reader.drained() || left.empty()) return;
  records.insert(records.end(), left.begin(), left.end());
  left.clear();
}

// Nothing more to read or to write in a process's lanes: their memory goes
// back to the system (the pages allocated ahead of the writers too). A
// process whose trampolines still run (it could not be stopped) keeps its
// lanes.
void give_back_read_lanes(bool writers_gone, fp::RingReader& reader,
                          std::unique_ptr<fp::LanePages>& pages, fp::SharedMapping& lanes,
                          const fp::RingHeader& layout) {
  if (!pages || !writers_gone || !reader.drained()) return;
  reader.set_pages(nullptr);
  pages.reset();
  const uint64_t records = layout.records_offset - layout.lanes_offset;
  madvise(lanes.local() + records, lanes.size() - records, MADV_REMOVE);
}

struct ForkChild {
  pid_t pid = 0;
  std::unique_ptr<fp::SharedMapping> lanes;
  std::unique_ptr<fp::LanePages> pages;
  std::unique_ptr<fp::RingReader> reader;
  fp::ThreadPointerMap threads;
  std::vector<fp::FastRecord> records;
  std::vector<fp::FastRecord> left_at_undo;  // as the parent's (FastPath::State)
  std::unique_ptr<fp::CodePatch> patch;
  bool writers_gone = false;
  bool installed = false;  // its code is patched and the ring ours: undone at the end
  bool done = false;       // gone and read to the end: its lanes unmapped here
  // What its process did last, as the kernel's events say: an exec (the
  // program it runs is not patched), its end. Decoded as late as the end
  // of the recording, after the uninstall found it gone.
  bool execd = false;
  bool exited = false;
};

}  // namespace

struct FastPath::State {
  pid_t pid = 0;
  bool hot = false;  // --fast-path=hot: memfd code regions, the guard on the trampolines
  std::vector<fp::RemoteRegion> regions;
  // The kernel's uretprobe trampoline as the template's constant has it
  // (0: not written yet).
  uint64_t uretprobe = 0;
  // Hot: the unwinders' trampolines, by (module, entry's file offset): the
  // region's memfd (atrace's descriptor) and the offset in it.
  std::map<std::pair<std::string, uint64_t>, std::pair<int, uint64_t>> guard_spots;
  std::string unwinder_refusal;  // hot: an unwinder entry that could not be patched, and why
  bool unwinders_left = false;   // hot: uninstalled but for the unwinders' entries
  std::vector<uint32_t> patched;
  std::vector<FastPathRefusal> refused;
  fp::RingHeader layout{};
  uint64_t ring_address = 0;
  uint64_t stub = 0;
  std::vector<fp::AddressRange> code_ranges;
  std::unique_ptr<fp::CodePatch> patch;
  std::map<uint32_t, uint64_t> entry_of;     // a patched function's id: its entry (set_enabled)
  std::unique_ptr<fp::SharedMapping> lanes;  // the lanes, mapped here too (ring_layout.h)
  std::unique_ptr<fp::LocalMemory> memory;
  std::unique_ptr<fp::LanePages> pages;
  std::unique_ptr<fp::RingReader> reader;
  fp::TscClock clock;
  fp::ThreadPointerMap threads;
  std::vector<fp::FastRecord> records;
  // Frames the undo found left (restore_returns): recorded after every
  // record of the lanes, innermost first.
  std::vector<fp::FastRecord> left_at_undo;
  bool writers_gone = false;  // nothing can commit a record any more
  bool parent_gone = false;   // the process exited or exec'd: nothing of it to undo
  FastPathStats stats;
  bool installed = false;
  // --follow-forks (fast_path.cpp, "Fork children").
  bool follow_forks = false;
  std::set<pid_t> followed;    // the process and the children it and they forked
  std::vector<pid_t> pending;  // forked, not yet given a ring
  std::vector<std::unique_ptr<ForkChild>> children;
  // The processes' tracer when atrace follows a launched command
  // (fastpath/inject/tracer.h): every stop goes through it.
  fp::Tracer* tracer = nullptr;
  std::set<pid_t> ringed_at_fork;  // by forked(), their fork events not decoded yet

  void to_events(std::vector<formats::Event>& out, std::vector<fp::FastRecord>& records,
                 fp::ThreadPointerMap& threads, pid_t pid);
  std::vector<fp::FastRecord> restore_returns(fp::StoppedProcess& process);
  bool ringed(pid_t child) const;
  uint64_t complete_until() const;
  void adopt(pid_t child, bool held);
  void note_uretprobe();
  void note_threads(fp::StoppedProcess& process);
  void drain_child(ForkChild& c, std::vector<formats::Event>& out);
  void uninstall_child(ForkChild& c);
};

FastPathStats& FastPathStats::operator+=(const FastPathStats& o) {
  records += o.records;
  lost += o.lost;
  full += o.full;
  given_up += o.given_up;
  malformed += o.malformed;
  if (lost_per_lane.size() < o.lost_per_lane.size()) lost_per_lane.resize(o.lost_per_lane.size());
  for (size_t i = 0; i < o.lost_per_lane.size(); i++) lost_per_lane[i] += o.lost_per_lane[i];
  unknown_thread += o.unknown_thread;
  install_stop_ns += o.install_stop_ns;
  uninstall_stop_ns += o.uninstall_stop_ns;
  if (undo_failed.empty()) undo_failed = o.undo_failed;
  conversion_error_ns = std::max(conversion_error_ns, o.conversion_error_ns);
  children += o.children;
  children_not_ringed += o.children_not_ringed;
  if (child_refusal.empty()) child_refusal = o.child_refusal;
  child_calls_before_ring += o.child_calls_before_ring;
  children_undone += o.children_undone;
  children_execd += o.children_execd;
  return *this;
}

FastPath::FastPath(pid_t pid, const std::vector<uprobes::ProbeSite>& sites,
                   const std::vector<uprobes::UnwindPoint>& unwinders, uint64_t lane_slots,
                   fp::StoppedProcess* held, bool start_on, bool code_from_files)
    : s_(std::make_unique<State>()) {
  s_->pid = pid;
  s_->hot = !start_on;
  if (auto why = fp::tsc_refusal(); !why.empty()) throw RecordError("--fast-path: " + why);
  // Two anchors before any record: every time stamp converts.
  s_->clock.refresh();
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  s_->clock.refresh();

  // Where each function is in the process, grouped by module.
  const auto maps = uprobes::file_mappings(pid);
  std::map<std::string, std::vector<PatchTarget>> by_module;
  std::map<std::string, uprobes::FileId> ids;
  auto locate = [&](PatchTarget t, uint64_t file_offset) {
    auto [it, fresh] = ids.try_emplace(t.module_path);
    if (fresh) it->second = uprobes::file_id(t.module_path).value_or(uprobes::FileId{});
    if (!runtime_of(maps, it->second, file_offset, &t.runtime, &t.module)) return false;
    t.code_offset = file_offset;
    by_module[t.module_path].push_back(std::move(t));
    return true;
  };
  // The unwinders first: one of them selected too (setcontext with
  // 'libc.so.6:*'), or an alias of one (__swapcontext), keeps its unwinder
  // trampoline, the safe one (the overlap check below). A walk's end is
  // mid-function: the run of instructions up to its ret (window 0: none can
  // be replaced; the walk's frames then return untimed).
  auto add_unwinder = [&](const uprobes::UnwindPoint& u, fp::TrampolineKind kind) {
    PatchTarget t{0, u.name, u.path, 0, 0, 0};
    t.kind = kind;
    t.file_offset = u.entry;
    const bool end = kind == fp::TrampolineKind::WalkEnd;
    if (end && u.window == 0) return false;
    return locate(std::move(t), end ? u.window : u.entry);
  };
  // The unwinder itself mapped (libgcc_s.so.1, or one linked in): its walk
  // entry is. (libc.so.6's own _Unwind_Resume and _Unwind_ForcedUnwind
  // forward to libgcc_s's: patched, they cover pthread_exit and
  // cancellation whenever libgcc_s is loaded.)
  bool unwinder_mapped = false;
  for (const auto& u : unwinders) {
    if (u.role == uprobes::UnwindRole::LateWalk || u.role == uprobes::UnwindRole::LateWalkEnd)
      continue;  // below
    if (u.role == uprobes::UnwindRole::WalkEnd) {
      // Hot: the guard's probe stays on the walk's `ret`, which a window's
      // jump would cover: the walk's frames return untimed instead
      // (docs/fast-path.md, "Hot functions").
      if (!s_->hot) add_unwinder(u, fp::TrampolineKind::WalkEnd);
      continue;
    }
    const fp::TrampolineKind kind = fp::unwinder_kind(u.name);
    if (kind == fp::TrampolineKind::Traced) continue;
    if (add_unwinder(u, kind) && u.role == uprobes::UnwindRole::Walk) unwinder_mapped = true;
  }
  // No unwinder mapped (a C program): glibc's backtrace() loads
  // libgcc_s.so.1 at its first call, and that _Unwind_Backtrace, not
  // patched, would stop at the first return stub (backtrace() found 2
  // frames of 6). backtrace() itself takes the walk's trampolines then:
  // frames disarmed at its entry, re-armed at its rets.
  if (!unwinder_mapped)
    for (const auto& u : unwinders) {
      if (u.role == uprobes::UnwindRole::LateWalk) add_unwinder(u, fp::TrampolineKind::Walk);
      if (u.role == uprobes::UnwindRole::LateWalkEnd) add_unwinder(u, fp::TrampolineKind::WalkEnd);
    }
  for (const auto& site : sites) {
    PatchTarget t{site.id, site.name, site.path, site.address, 0, site.size};
    if (auto why = fp::name_refusal(site.mangled); !why.empty()) {
      s_->refused.push_back({site.id, why});
      continue;
    }
    if (!locate(std::move(t), site.offset - site.entry_delta))
      s_->refused.push_back({site.id, "not mapped by the process"});
  }

  fp::ProcessMemory code_memory(pid);
  const uint64_t deadline = now_ns(CLOCK_MONOTONIC) + kProbeGoneWaitNs;
  fp::RingGeometry geometry;
  geometry.lane_slots = static_cast<uint32_t>(lane_slots);
  geometry.lane_count =
      pow2_at_least(static_cast<uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_CONF))));
  s_->layout = fp::make_layout(geometry);

  try {
    std::optional<fp::StoppedProcess> own;
    fp::StoppedProcess& process = held ? *held : own.emplace(pid, s_->tracer);
    fp::RemoteSyscall sys(process);
    auto ring = fp::RemoteRegion::map_anywhere(sys, s_->layout.total_bytes, PROT_READ | PROT_WRITE,
                                               "atrace-ring");
    s_->ring_address = ring.address();
    ring.write(sys.memory(), 0, std::as_bytes(std::span<const fp::RingHeader>(&s_->layout, 1)));
    // The header page holds the gate: a fork child's copy is wiped, so it
    // records nothing into the lanes it shares with its parent; its shadow
    // stacks (after the lanes) are copied, so it returns through its own.
    ring.advise(sys, 0, s_->layout.lanes_offset, MADV_WIPEONFORK);
    // The lanes become a memfd atrace maps too: read with plain loads, and
    // still there after the process exits (ring_layout.h).
    s_->lanes = std::make_unique<fp::SharedMapping>(fp::SharedMapping::replace(
        sys, s_->ring_address + s_->layout.lanes_offset,
        s_->layout.threads_offset - s_->layout.lanes_offset, "atrace-ring"));

    std::vector<fp::RemoteRegion> regions;
    std::vector<fp::PatchSite> patch_sites;
    std::vector<std::pair<uint32_t, bool>> planned;  // id, traced (not an unwinder)
    struct PlannedRange {
      uint64_t end = 0;
      std::string name;
      bool unwinder = false;
      uint64_t file_offset = 0;  // an unwinder's (PatchTarget)
    };
    std::map<uint64_t, PlannedRange> planned_ranges;  // by first byte
    for (auto& [path, targets] : by_module) {
      const size_t size = kTemplateBytes + targets.size() * kTrampolineBytes;
      // Hot: a memfd, its bytes written through the file, which the kernel
      // single-steps the guard's probed instructions from; the trampolines
      // on pages apart from the template's (written again at the switch:
      // note_uretprobe), as no page is written once a probe is on it.
      auto region = s_->hot ? fp::RemoteRegion::map_file_near(sys, targets.front().module, size,
                                                              PROT_READ | PROT_EXEC, "atrace-code",
                                                              s_->ring_address + kNameScratch)
                            : fp::RemoteRegion::map_near(sys, targets.front().module, size,
                                                         PROT_READ | PROT_EXEC, "atrace-code");
      std::vector<uint8_t> buf(region.size());
      fp::CodeRegion code(buf.data(), buf.size(), region.address(), s_->layout, s_->ring_address,
                          s_->stub);
      if (s_->hot) code.skip_to(kTemplateBytes);
      if (!s_->stub) s_->stub = code.return_stub();
      std::vector<uint64_t> starts;
      for (const auto& t : targets) starts.push_back(t.vaddr);
      std::unique_ptr<uprobes::CodeEntries> entries;
      UniqueFd file;
      if (code_from_files) file.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
      for (const auto& t : targets) {
        const size_t len = t.size ? std::min<size_t>(t.size, kMaxCodeRead) : 32;
        std::vector<std::byte> bytes(len);
        // Hot: an unwinder left unpatched would unwind into the stub.
        auto unwinder_refused = [&](const std::string& why) {
          const bool unwinds =
              t.kind == fp::TrampolineKind::Unwinder || t.kind == fp::TrampolineKind::ForcedUnwind;
          if (!s_->hot || !unwinds || !s_->unwinder_refusal.empty()) return;
          s_->unwinder_refusal = t.name;
          s_->unwinder_refusal += " in " + t.module_path;
          s_->unwinder_refusal += ": " + why;
        };
        try {
          code_memory.read_any(t.runtime, bytes);
        } catch (const fp::InjectError& e) {
          if (t.id) s_->refused.push_back({t.id, e.what()});
          unwinder_refused(e.what());
          continue;
        }
        if (code_from_files) {
          const bool unwinder = t.kind != fp::TrampolineKind::Traced;
          if (auto why = take_file_code(code_memory, file.get(), path, t.runtime, t.code_offset,
                                        unwinder ? deadline : 0, bytes);
              !why.empty()) {
            if (t.id) s_->refused.push_back({t.id, why});
            unwinder_refused(why);
            continue;
          }
        }
        // Another tracer's breakpoint (or anything not the file's code)
        // at the entry: the bytes to relocate would be wrong.
        if (bytes[0] == std::byte{0xcc}) {
          if (t.id) s_->refused.push_back({t.id, "another probe is on its entry"});
          unwinder_refused("another probe is on its entry");
          continue;
        }
        auto plan = code.add(reinterpret_cast<const uint8_t*>(bytes.data()), len, t.runtime, t.id,
                             t.kind, t.size && t.size <= kMaxCodeRead);
        // A walk's end is a few pops and a ret, without an int3 byte in
        // their encodings: one there is another tracer's (the kernel path's
        // unwind guard probes these rets). Its frames then return untimed.
        if (plan.ok() && t.kind == fp::TrampolineKind::WalkEnd &&
            std::find(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(plan.replaced),
                      std::byte{0xcc}) !=
                bytes.begin() + static_cast<std::ptrdiff_t>(plan.replaced))
          continue;
        if (plan.ok() && t.kind == fp::TrampolineKind::Traced) {
          if (!entries) entries = std::make_unique<uprobes::CodeEntries>(path, starts);
          plan.refusal = fp::entry_branch_refusal(*entries, t.vaddr, plan.replaced);
        }
        if (!plan.ok()) {
          if (t.id) s_->refused.push_back({t.id, plan.refusal});
          unwinder_refused(plan.refusal);
          continue;
        }
        // Two entries whose patches would overlap (aliases of one address,
        // or an unwinder selected too): the first planned keeps it.
        const uint64_t end = t.runtime + plan.jump.size();
        auto next = planned_ranges.lower_bound(t.runtime);
        const PlannedRange* other = nullptr;
        if (next != planned_ranges.end() && next->first < end) other = &next->second;
        else if (next != planned_ranges.begin() && std::prev(next)->second.end > t.runtime)
          other = &std::prev(next)->second;
        if (other) {
          // An alias of an unwinder planned before: the guard's point of
          // either name moves to that one trampoline.
          if (!t.id && other->unwinder && s_->hot &&
              s_->guard_spots.count({t.module_path, other->file_offset}))
            s_->guard_spots[{t.module_path, t.file_offset}] =
                s_->guard_spots[{t.module_path, other->file_offset}];
          if (t.id)
            s_->refused.push_back(
                {t.id,
                 other->unwinder
                     ? "patched as an unwinder entry (" + other->name +
                           ": gives return addresses back before the stack changes)"
                     : "its entry is patched for " + other->name + " (an alias, or overlapping)"});
          continue;
        }
        planned_ranges[t.runtime] = {end, t.name, t.kind != fp::TrampolineKind::Traced,
                                     t.file_offset};
        if (s_->hot && t.kind != fp::TrampolineKind::Traced)
          s_->guard_spots[{t.module_path, t.file_offset}] = {region.file(),
                                                             plan.trampoline - region.address()};
        fp::PatchSite site;
        site.address = t.runtime;
        site.bytes.resize(plan.jump.size());
        std::memcpy(site.bytes.data(), plan.jump.data(), plan.jump.size());
        site.on = start_on || t.kind != fp::TrampolineKind::Traced;
        // The file's: the process's may hold a kernel probe's int3 there.
        if (code_from_files)
          site.original.assign(bytes.begin(),
                               bytes.begin() + static_cast<std::ptrdiff_t>(site.bytes.size()));
        patch_sites.push_back(std::move(site));
        planned.emplace_back(t.id, t.kind == fp::TrampolineKind::Traced);
        if (t.kind == fp::TrampolineKind::Traced) s_->entry_of[t.id] = t.runtime;
      }
      region.write(sys.memory(), 0,
                   std::as_bytes(std::span<const uint8_t>(buf.data(), code.used())));
      s_->code_ranges.push_back(region.range());
      regions.push_back(region);
    }
    // Nothing to patch: nothing can reach the regions yet, they go again.
    if (std::none_of(planned.begin(), planned.end(), [](const auto& p) { return p.second; })) {
      for (auto& region : regions) region.unmap(sys);
      ring.unmap(sys);
      s_->code_ranges.clear();
      s_->guard_spots.clear();
      // The caller's held process stays held: it decides (launch mode
      // kills a command whose install patched nothing before it runs).
      if (!held) process.release();
      return;
    }

    // The reader starts before the first record can be written.
    // The reader addresses the ring from its start; atrace maps only the
    // lanes: the same offsets from an address lanes_offset before them.
    s_->memory = std::make_unique<fp::LocalMemory>();
    const uint64_t local_ring =
        reinterpret_cast<uint64_t>(s_->lanes->local()) - s_->layout.lanes_offset;
    s_->reader =
        std::make_unique<fp::RingReader>(*s_->memory, local_ring, s_->layout,
                                         s_->clock.ticks(kFastPathCommitWaitNs), fp::read_tsc());
    s_->pages = std::make_unique<fp::LanePages>(
        reinterpret_cast<fp::LaneHeader*>(s_->lanes->local()),
        s_->lanes->local() + (s_->layout.records_offset - s_->layout.lanes_offset),
        s_->layout.lane_count, s_->layout.lane_slots, kFastPathAheadBytes, pid,
        s_->ring_address + s_->layout.records_offset);
    s_->reader->set_pages(s_->pages.get());
    std::vector<fp::ThreadPointer> existing;
    for (const auto& t : process.threads())
      existing.push_back({static_cast<uint32_t>(t.tid), t.regs.fs_base});
    s_->threads.add_existing(existing, now_ns(CLOCK_MONOTONIC));
    s_->regions = regions;
    s_->patch =
        std::make_unique<fp::CodePatch>(fp::CodePatch::apply(process, std::move(patch_sites)));
    for (const auto& [id, traced] : planned)
      if (traced) s_->patched.push_back(id);
    s_->installed = true;
    // Hot with the caller's stop: the caller moves the guard, then lets go.
    if (held && !start_on) return;
    process.release();
    s_->stats.install_stop_ns = static_cast<uint64_t>(process.times().held.count());
  } catch (const fp::InjectError& e) {
    throw RecordError(std::string("--fast-path: ") + e.what());
  }
}

FastPath::~FastPath() {
  try {
    if (s_->installed) uninstall();
    uninstall_unwinders();
  } catch (...) {  // the process is gone, or would not stop: nothing to give back
  }
}

const std::vector<uint32_t>& FastPath::patched() const { return s_->patched; }
const std::vector<FastPathRefusal>& FastPath::refused() const { return s_->refused; }

void FastPath::follow_forks(fp::Tracer* tracer) {
  s_->follow_forks = true;
  s_->tracer = tracer;
  s_->followed.insert(s_->pid);
}

bool FastPath::forked(pid_t child) {
  // One of this install's processes forked it (another install's ring may
  // sit at the same address in its own process).
  if (!s_->follow_forks || !s_->installed || !s_->tracer || s_->ringed(child) ||
      !s_->followed.count(fp::parent_of(child)) ||
      !maps_lanes_at(child, s_->ring_address + s_->layout.lanes_offset))
    return false;
  s_->followed.insert(child);
  s_->adopt(child, true);
  // Its fork event, decoded later, queues it again: taken already.
  s_->ringed_at_fork.insert(child);
  return true;
}

void FastPath::on_kernel_event(const formats::Event& ev) {
  const pid_t pid = static_cast<pid_t>(ev.pid);
  fp::ThreadPointerMap* threads = nullptr;
  if (pid == s_->pid) {
    threads = &s_->threads;
  } else {
    for (auto& c : s_->children)
      if (c->pid == pid && !c->writers_gone) threads = &c->threads;
  }
  if (ev.kind == formats::EventKind::ProcFork && !(ev.flags & formats::kForkThread)) {
    // A new process: queued for a ring of its own when its parent is
    // followed (a child's child may fork before its parent got a ring).
    if (s_->follow_forks && s_->installed && s_->followed.count(pid)) {
      s_->followed.insert(static_cast<pid_t>(ev.arg0));
      s_->pending.push_back(static_cast<pid_t>(ev.arg0));
    }
    return;
  }
  if ((ev.kind == formats::EventKind::ProcExec || ev.kind == formats::EventKind::ProcExit) &&
      pid == s_->pid) {
    // The patched program is gone (an exec replaced it, with its code and
    // ring): its lanes are read to the end and given back, nothing is left
    // to undo, and its pid is no longer its (the uninstall must not stop
    // whatever has it now). Its fork children go on as they were.
    s_->writers_gone = true;
    s_->parent_gone = true;
    return;
  }
  if (ev.kind == formats::EventKind::ProcExec && pid != s_->pid) {
    // The exec took the child's copy of the code and of the ring: nothing
    // writes its lanes any more, nothing is left to undo there.
    for (auto& c : s_->children) {
      if (c->pid != pid || c->execd || c->exited) continue;
      c->execd = true;
      c->writers_gone = true;
      c->installed = false;
      s_->stats.children_execd++;
    }
    s_->followed.erase(pid);
    return;
  }
  if (ev.kind == formats::EventKind::ProcExit && pid != s_->pid) {
    // Its last thread is gone: nothing writes its lanes, nothing to undo;
    // they are read to the end and given back (drain_child).
    for (auto& c : s_->children) {
      if (c->pid != pid || c->exited) continue;
      c->exited = true;
      c->writers_gone = true;
      c->installed = false;
    }
    s_->followed.erase(pid);
    return;
  }
  if (!threads) return;
  if (ev.kind == formats::EventKind::ProcFork && (ev.flags & formats::kForkThread)) {
    if (const uint64_t tp = formats::fork_thread_pointer(ev))
      threads->thread_created(ev.ts, static_cast<uint32_t>(ev.arg1), tp);
  } else if (ev.kind == formats::EventKind::ThreadExit) {
    threads->thread_ended(ev.ts, ev.tid);
  }
}

// Fork children. A fork child of a patched process has the patched
// entries and the code region (private copies), its shadow stacks
// (private copies), the parent's lanes (the memfd, MAP_SHARED: inherited)
// and the ring's header page wiped (MADV_WIPEONFORK): its gate is 0, so
// it writes nothing into its parent's lanes, and its trampolines count its
// calls in RingHeader::ungated instead. Here it is stopped (from the
// thread that drains, which does the whole stop), given lanes of its own
// (a memfd made in it, mapped MAP_FIXED over the inherited ones, and here),
// then its header as a fresh install writes it, the gate open; its lanes
// are read like the parent's, with its own thread map (its one thread:
// the forking thread's pointer). The calls it made before are the count
// read from `ungated` just before, stated, not recorded. Its frames open
// across the fork (entered in the parent) return through its own copy of
// the shadow stacks: their exits are recorded in the child once its gate
// is open, as the kernel path records a child's return from a call its
// parent entered (the replay gives the child the parent's open calls at
// the fork). A child that shares its parent's memory (vfork: its header
// is the parent's, gate 1) is not given one: its calls are the parent
// thread's until its exec or _exit (docs/fast-path.md).
// Given a ring already, and still writing it (a pid is used again once
// its process is gone).
bool FastPath::State::ringed(pid_t child) const {
  return std::any_of(children.begin(), children.end(),
                     [child](const auto& c) { return c->pid == child && !c->writers_gone; });
}

void FastPath::State::adopt(pid_t child, bool held) {
  // Given its ring at its first stop already (FastPath::forked), before
  // its fork event was decoded (it may have exec'd or ended since).
  if (ringed_at_fork.erase(child) || ringed(child)) return;
  auto c = std::make_unique<ForkChild>();
  c->pid = child;
  const uint64_t lanes_at = ring_address + layout.lanes_offset;
  auto refuse = [&](const std::string& why) {
    stats.children_not_ringed++;
    if (stats.child_refusal.empty())
      stats.child_refusal = "process " + std::to_string(child) + ": " + why;
  };
  try {
    std::optional<fp::StoppedProcess> own;
    fp::StoppedProcess& process =
        held ? own.emplace(child, child, tracer) : own.emplace(child, tracer);
    fp::ProcessMemory mem(child);
    fp::RingHeader header{};
    mem.read(ring_address, std::as_writable_bytes(std::span<fp::RingHeader>(&header, 1)));
    if (header.magic != 0 || header.gate != 0 || !maps_lanes_at(child, lanes_at)) {
      // vfork (the parent's memory), or an exec already: not ours to ring.
      if (header.magic == fp::kRingMagic && header.gate != 0) return;  // shares the parent's
      refuse("it exec'd before atrace could give it a ring");
      return;
    }
    fp::RemoteSyscall sys(process);
    // The memfd's name goes into the header page (the child's own): the
    // inherited lanes are still the parent's until replaced.
    c->lanes = std::make_unique<fp::SharedMapping>(
        fp::SharedMapping::replace(sys, lanes_at, layout.threads_offset - layout.lanes_offset,
                                   "atrace-ring", ring_address + kNameScratch));
    const uint64_t local_ring = reinterpret_cast<uint64_t>(c->lanes->local()) - layout.lanes_offset;
    c->reader = std::make_unique<fp::RingReader>(
        *memory, local_ring, layout, clock.ticks(kFastPathCommitWaitNs), fp::read_tsc());
    c->pages = std::make_unique<fp::LanePages>(
        reinterpret_cast<fp::LaneHeader*>(c->lanes->local()),
        c->lanes->local() + (layout.records_offset - layout.lanes_offset), layout.lane_count,
        layout.lane_slots, kFastPathAheadBytes, child, ring_address + layout.records_offset);
    c->reader->set_pages(c->pages.get());
    std::vector<fp::ThreadPointer> existing;
    for (const auto& t : process.threads())
      existing.push_back({static_cast<uint32_t>(t.tid), t.regs.fs_base});
    c->threads.add_existing(existing, now_ns(CLOCK_MONOTONIC));
    c->patch = std::make_unique<fp::CodePatch>(patch->copy_for_child());
    // The count up to now (every thread stopped), then the gate open.
    mem.read(ring_address, std::as_writable_bytes(std::span<fp::RingHeader>(&header, 1)));
    stats.child_calls_before_ring += header.ungated;
    fp::RingHeader fresh = layout;
    fresh.ungated = 0;
    mem.write(ring_address, std::as_bytes(std::span<const fp::RingHeader>(&fresh, 1)));
    c->installed = true;
    process.release();
    stats.children++;
    children.push_back(std::move(c));
  } catch (const fp::ProcessGone&) {
    refuse("it ended before atrace could give it a ring (its calls neither recorded nor counted)");
  } catch (const fp::InjectError& e) {
    // Its gate stays 0: it runs on correctly, unrecorded.
    refuse(e.what());
  }
}

void FastPath::State::drain_child(ForkChild& c, std::vector<formats::Event>& out) {
  if (c.done) return;
  c.reader->drain(fp::read_tsc(), c.records, c.writers_gone, kFastPathDrainBatch);
  take_left_at_undo(c.writers_gone, *c.reader, c.left_at_undo, c.records);
  fp::merge_by_time(c.records);
  to_events(out, c.records, c.threads, c.pid);
  give_back_read_lanes(c.writers_gone, *c.reader, c.pages, *c.lanes, layout);
  // A fork-heavy program (a shell) has many children over a recording:
  // each one's lanes (256 MiB of address space a CPU) go once read.
  if (c.writers_gone && c.reader->drained()) {
    c.done = true;
    c.lanes.reset();
  }
}

// As the parent's uninstall, where the ring is still the child's (not
// exec'd since: the header atrace wrote is there).
void FastPath::State::uninstall_child(ForkChild& c) {
  if (!c.installed) return;
  c.installed = false;
  try {
    fp::StoppedProcess process(c.pid, tracer);
    fp::RingHeader header{};
    fp::ProcessMemory(c.pid).read(ring_address,
                                  std::as_writable_bytes(std::span<fp::RingHeader>(&header, 1)));
    if (header.magic == fp::kRingMagic &&
        maps_lanes_at(c.pid, ring_address + layout.lanes_offset)) {
      c.patch->undo(process, code_ranges, kUndoRetries);
      c.left_at_undo = restore_returns(process);
      stats.children_undone++;
    }
    process.release();
    c.writers_gone = true;
  } catch (const fp::ProcessGone&) {
    c.writers_gone = true;
  } catch (const fp::InjectError&) {
    c.writers_gone = !running(c.pid);
  }
}

void FastPath::State::to_events(std::vector<formats::Event>& out,
                                std::vector<fp::FastRecord>& taken,
                                fp::ThreadPointerMap& thread_map, pid_t of_pid) {
  for (size_t i = 0; i < taken.size(); i++) {
    const fp::FastRecord& r = taken[i];
    formats::Event ev;
    ev.ts = clock.to_ns(r.tsc);
    ev.tid = thread_map.tid_at(r.thread_pointer, ev.ts);
    if (ev.tid == fp::kUnknownTid) {
      stats.unknown_thread++;
      continue;
    }
    ev.pid = static_cast<uint32_t>(of_pid);
    ev.id = r.function_id;
    ev.cpu = static_cast<uint16_t>(r.seq);  // the lane, i.e. the CPU (RingReader::drain)
    switch (static_cast<fp::RecordKind>(r.kind)) {
      case fp::RecordKind::Entry: ev.kind = formats::EventKind::FuncEntry; break;
      case fp::RecordKind::Exit: ev.kind = formats::EventKind::FuncExit; break;
      case fp::RecordKind::EntryNoExit: {
        ev.kind = formats::EventKind::FuncEntry;
        // Its return is not hooked: counted, not timed (as past the
        // kernel's nesting limit), named by its entry's time.
        formats::Event untimed = ev;
        untimed.kind = formats::EventKind::Unwind;
        untimed.flags = static_cast<uint8_t>(formats::UnwindHow::NestingLimit);
        untimed.arg0 = ev.ts;
        out.push_back(std::move(ev));
        out.push_back(std::move(untimed));
        continue;
      }
      case fp::RecordKind::Unwound:
      case fp::RecordKind::Caught:
      case fp::RecordKind::ThreadExit:
      case fp::RecordKind::Switched:
      case fp::RecordKind::GivenBack:
        ev.kind = formats::EventKind::Unwind;
        ev.flags = static_cast<uint8_t>(unwind_how(static_cast<fp::RecordKind>(r.kind)));
        break;
    }
    out.push_back(std::move(ev));
  }
  stats.records += taken.size();
  taken.clear();
}

void FastPath::drain(std::vector<formats::Event>& out) {
  if (!s_->reader) return;
  // Children forked since the last drain (their fork events were decoded
  // before this): a ring each, before their lanes are read.
  // One the tracer holds is taken there (forked()), or next time.
  if (s_->installed)
    for (pid_t child : std::exchange(s_->pending, {})) {
      if (s_->tracer && s_->tracer->holds(child)) s_->pending.push_back(child);
      else s_->adopt(child, false);
    }
  // Local memory: a drain cannot fail, and the lanes outlive the process.
  s_->reader->drain(fp::read_tsc(), s_->records, s_->writers_gone, kFastPathDrainBatch);
  take_left_at_undo(s_->writers_gone, *s_->reader, s_->left_at_undo, s_->records);
  // After the read: every record taken lies before this anchor.
  s_->clock.refresh();
  fp::merge_by_time(s_->records);
  s_->to_events(out, s_->records, s_->threads, s_->pid);
  for (auto& c : s_->children) s_->drain_child(*c, out);
  give_back_read_lanes(s_->writers_gone, *s_->reader, s_->pages, *s_->lanes, s_->layout);
  // Every record still in the lanes (a backlog read in batches after the
  // process exited) converts with the anchors it falls between: they stay
  // through the next drain's refresh, whose records are all from here on.
  s_->clock.hold(s_->complete_until());
}

// Every frame still hooked gets its return address back where its slot
// still holds the stub (the call then returns untraced: it stays open in
// the trace, as any call in flight at the end of a recording), one whose
// slot was written over is recorded left (abandoned), one whose slot holds
// its own return address is being armed (fastpath/return_fixups.h).
std::vector<fp::FastRecord> FastPath::State::restore_returns(fp::StoppedProcess& process) {
  std::vector<fp::FastRecord> left;  // frames found left (below)
  fp::ProcessMemory mem(process.pid());
  const uint64_t table = ring_address + layout.threads_offset;
  std::vector<uint8_t> copy(layout.total_bytes - layout.threads_offset);
  try {
    mem.read(table, std::as_writable_bytes(std::span<uint8_t>(copy)));
  } catch (const fp::InjectError&) {
    return left;
  }
  const uint64_t now = fp::read_tsc();
  for (const auto& fix : fp::return_fixups(copy.data(), copy.size(), layout)) {
    uint64_t held = 0;
    try {
      mem.read_any(fix.stack_slot, std::as_writable_bytes(std::span<uint64_t>(&held, 1)));
    } catch (const fp::InjectError&) {  // a stack gone since: nothing returns there
      continue;
    }
    if (held == stub) {
      try {
        mem.write_any(fix.stack_slot,
                      std::as_bytes(std::span<const uint64_t>(&fix.return_address, 1)));
      } catch (const fp::InjectError&) {
      }
      continue;
    }
    // Not armed yet: a signal handler interrupted the entry code between
    // the frame's push and its write of the stub into the slot (the thread
    // was stopped in the handler, outside the code regions). It writes the
    // stub once the handler returns, and the call returns through it: the
    // frame stays on the shadow stack for the stub to find (below).
    if (held == fix.return_address) continue;
    // An armed frame's slot holds the stub as long as its call runs: this
    // one's was written over, so its activation is gone (left by longjmp
    // with no hooked return below it since, which would have found it):
    // abandoned, as the kernel path says, rather than open at the end.
    fp::FastRecord r{};
    r.tsc = now + left.size();  // one thread's from the top down: in that order
    r.thread_pointer = fix.thread_pointer;
    r.function_id = fix.function_id;
    r.kind = static_cast<uint16_t>(fp::RecordKind::Unwound);
    r.depth = static_cast<uint16_t>(fix.depth);
    left.push_back(r);
  }
  // The shadow stacks are left as they are: no entry leads to the entry
  // code any more and no armed frame's slot holds the stub, so only code
  // a signal handler interrupted inside a region reads them again (the
  // frame above, or a stub that found its frame and will pop it); emptied,
  // such a return would find no frame and stop the process (the signals
  // corpus run, 1 in 10 when atrace ended during the work).
  return left;
}

void FastPath::uninstall() {
  if (!s_->installed) return;
  s_->installed = false;
  if (!s_->parent_gone) try {
      fp::StoppedProcess process(s_->pid, s_->tracer);
      if (s_->hot) {
        // The functions off; the unwinders' entries stay patched while the
        // guard probes their trampolines (uninstall_unwinders).
        std::vector<uint64_t> entries;
        for (const auto& [id, entry] : s_->entry_of) entries.push_back(entry);
        s_->patch->set_active(process, entries, false, s_->code_ranges, kUndoRetries);
        s_->unwinders_left = true;
      } else {
        s_->patch->undo(process, s_->code_ranges, kUndoRetries);
      }
      s_->left_at_undo = s_->restore_returns(process);
      process.release();
      s_->stats.uninstall_stop_ns = static_cast<uint64_t>(process.times().held.count());
      // No entry jumps to a trampoline, no return to the stub, and no thread
      // was left inside them (StoppedProcess lets them out first).
      s_->writers_gone = true;
    } catch (const fp::ProcessGone&) {
      s_->writers_gone = true;  // its threads with it
    } catch (const fp::InjectError& e) {
      // A zombie cannot be stopped either, but its threads are gone. One
      // still running but not stoppable: its trampolines keep working with
      // nobody reading (docs/fast-path.md), and the recording says so.
      s_->writers_gone = !running(s_->pid);
      if (!s_->writers_gone) s_->stats.undo_failed = e.what();
    }
  for (auto& c : s_->children) s_->uninstall_child(*c);
  // Forked since the last drain: never given a ring (their gate stays 0).
  for (pid_t child : std::exchange(s_->pending, {})) {
    s_->stats.children_not_ringed++;
    if (s_->stats.child_refusal.empty())
      s_->stats.child_refusal =
          "process " + std::to_string(child) + ": forked as the recording ended";
  }
}

std::string FastPath::uninstall_unwinders() {
  if (!s_->unwinders_left) return {};
  s_->unwinders_left = false;
  try {
    fp::StoppedProcess process(s_->pid, s_->tracer);
    s_->patch->undo(process, s_->code_ranges, kUndoRetries);
    process.release();
  } catch (const fp::ProcessGone&) {
  } catch (const fp::InjectError& e) {
    if (running(s_->pid)) return e.what();
  }
  return {};
}

bool FastPath::drained() const {
  if (!s_->reader) return true;
  for (const auto& c : s_->children)
    if (!c->done && (!c->reader->drained() || !c->left_at_undo.empty())) return false;
  return s_->reader->drained() && s_->left_at_undo.empty();
}

bool FastPath::finished() const {
  return s_->parent_gone && s_->writers_gone && s_->pending.empty() && drained() &&
         std::all_of(s_->children.begin(), s_->children.end(),
                     [](const auto& c) { return c->done; });
}

uint64_t FastPath::complete_until_ns() const {
  if (!s_->reader) return UINT64_MAX;
  const uint64_t tsc = s_->complete_until();
  return tsc == UINT64_MAX ? UINT64_MAX : s_->clock.to_ns(tsc);
}

// The TSC up to which every lane, the children's too, was read
// (RingReader::complete_until): the oldest time stamp still to come.
uint64_t FastPath::State::complete_until() const {
  uint64_t tsc = reader->complete_until();
  for (const auto& c : children)
    if (!c->done) tsc = std::min(tsc, c->reader->complete_until());
  return tsc;
}

// Switching functions off and on during the recording. Off gives a
// function's entry its original bytes back; its trampoline stays, and so
// does every frame of it in flight: those keep returning through the return
// stub, which still works for them (it needs only the ring's thread table
// and lanes and the code region, which stay mapped until the uninstall and
// after it), records their exits and pops their frames as for any hooked
// call. So every entry recorded gets its exit, the calls in flight at the
// switch included, and a window's calls are all timed. Giving their return
// addresses back instead (as the uninstall does, once nothing will read the
// ring) would leave those calls open in the trace, take frames out of the
// middle of shadow stacks that hold frames of functions still on above and
// below them, and read every thread's table at every stop.
//
// Off also waits until no thread is inside a code region (as the uninstall
// does): a thread between the jump to a trampoline and the function's
// relocated first instructions would have its call recorded but not yet
// begun, so with the regions clear, a call is in a window exactly when the
// function's first instruction ran through the trampoline, for the program
// and for the trace alike (the 1,000-switch test counts on it). A thread
// a signal handler interrupted inside a trampoline is not seen there (its
// rip is in the handler): that one call may straddle the cut, recorded
// and run all the same. On needs no such wait: no thread can be inside the
// trampoline of a function that is off.
FastPathSwitch FastPath::set_enabled(fp::StoppedProcess& process, const std::vector<uint32_t>& ids,
                                     bool on, fp::RetryPolicy policy) {
  FastPathSwitch out;
  if (!s_->installed || !s_->patch) throw RecordError("--fast-path: nothing is patched to switch");
  std::vector<uint64_t> entries;
  std::vector<uint32_t> asked;
  for (uint32_t id : ids) {
    auto it = s_->entry_of.find(id);
    if (it == s_->entry_of.end()) {
      out.refused.push_back({id, "not patched"});
      continue;
    }
    if (s_->patch->active(it->second) == on) continue;
    entries.push_back(it->second);
    asked.push_back(id);
  }
  if (entries.empty()) return out;
  try {
    if (on) {
      s_->note_uretprobe();
      s_->note_threads(process);
    }
    const auto avoid = on ? std::span<const fp::AddressRange>() : std::span(s_->code_ranges);
    auto done = s_->patch->set_active(process, entries, on, avoid, policy);
    out.stops = done.stops;
    for (size_t i = 0; i < asked.size(); i++) {
      if (s_->patch->active(entries[i]) == on) out.switched.push_back(asked[i]);
      else out.refused.push_back({asked[i], "its entry is not what atrace wrote there any more"});
    }
  } catch (const fp::InjectError& e) {
    throw RecordError(std::string("--fast-path: ") + e.what());
  }
  return out;
}

// Before a function goes on: the template's constant names the kernel's
// uretprobe trampoline (fp_entry hooks no return into it: docs/fast-path.md,
// "Hot functions", design step 3). It is the start of the [uprobes] page,
// which the kernel maps at the process's first probe hit, so it is looked up
// here, with the process stopped, not at the install. The template's page
// holds no kernel probe (the trampolines start a page further: the
// constructor), so the write reaches the process through the memfd.
void FastPath::State::note_uretprobe() {
  uint64_t at = 0;
  for (const auto& m : fp::read_maps(pid))
    if (m.name == "[uprobes]") at = m.start;
  if (at == uretprobe) return;
  fp::ProcessMemory mem(pid);
  for (const auto& region : regions)
    region.write(mem, fp::tmpl::kUretprobe, std::as_bytes(std::span<const uint64_t>(&at, 1)));
  uretprobe = at;
}

// The threads created since the install whose creation atrace has not seen
// (hot: the trampolines were written before the tracepoints that see them
// were attached; docs/fast-path.md): their pointers as they are now. A
// thread that is already known is left alone; one whose fork event comes
// later is added twice, under the same tid.
void FastPath::State::note_threads(fp::StoppedProcess& process) {
  const uint64_t now = now_ns(CLOCK_MONOTONIC);
  for (const auto& t : process.threads())
    if (!threads.live(static_cast<uint32_t>(t.tid)))
      threads.thread_created(now, static_cast<uint32_t>(t.tid), t.regs.fs_base);
}

std::vector<uprobes::UnwindPoint> FastPath::guard_points(
    const std::vector<uprobes::UnwindPoint>& points) const {
  std::vector<uprobes::UnwindPoint> out = points;
  for (auto& p : out) {
    if (p.role == uprobes::UnwindRole::WalkEnd || p.role == uprobes::UnwindRole::LateWalk ||
        p.role == uprobes::UnwindRole::LateWalkEnd)
      continue;
    auto it = s_->guard_spots.find({p.path, p.entry});
    if (it == s_->guard_spots.end()) continue;
    p.path = "/proc/self/fd/" + std::to_string(it->second.first);
    p.offset = p.entry = it->second.second;
  }
  return out;
}

const std::string& FastPath::unwinder_refusal() const { return s_->unwinder_refusal; }

FastPathSwitch FastPath::set_enabled(const std::vector<uint32_t>& ids, bool on,
                                     fp::RetryPolicy policy) {
  try {
    fp::StoppedProcess process(s_->pid, s_->tracer);
    FastPathSwitch out = set_enabled(process, ids, on, policy);
    process.release();
    out.held_ns = static_cast<uint64_t>(process.times().held.count());
    return out;
  } catch (const fp::InjectError& e) {
    throw RecordError(std::string("--fast-path: ") + e.what());
  }
}

bool FastPath::patchable(uint32_t id) const { return s_->entry_of.count(id) > 0; }

uint64_t FastPath::entry(uint32_t id) const {
  auto it = s_->entry_of.find(id);
  return it == s_->entry_of.end() ? 0 : it->second;
}

bool FastPath::enabled(uint32_t id) const {
  auto it = s_->entry_of.find(id);
  return s_->installed && s_->patch && it != s_->entry_of.end() && s_->patch->active(it->second);
}

FastPathStats FastPath::stats() const {
  FastPathStats st = s_->stats;
  if (s_->reader) {
    st.lost = s_->reader->lost();
    for (const auto& lane : s_->reader->lanes()) {
      st.lost_per_lane.push_back(lane.lost());
      st.full += lane.full;
      st.given_up += lane.skipped;
      st.malformed += lane.malformed;
    }
  }
  for (const auto& c : s_->children) {
    st.lost += c->reader->lost();
    for (size_t i = 0; i < c->reader->lanes().size() && i < st.lost_per_lane.size(); i++) {
      const auto& lane = c->reader->lanes()[i];
      st.lost_per_lane[i] += lane.lost();
      st.full += lane.full;
      st.given_up += lane.skipped;
      st.malformed += lane.malformed;
    }
  }
  st.conversion_error_ns = s_->clock.error().bracket_ns / 2 + s_->clock.error().residual_ns;
  return st;
}

}  // namespace atrace
