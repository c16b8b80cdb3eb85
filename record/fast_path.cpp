#include "record/fast_path.h"

#include <sys/mman.h>

#include <time.h>
#include <unistd.h>
#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "base/clock.h"
#include "fastpath/inject/code_patch.h"
#include "fastpath/inject/inject_error.h"
#include "fastpath/inject/process_memory.h"
#include "fastpath/inject/region_placement.h"
#include "fastpath/inject/remote_region.h"
#include "fastpath/inject/remote_syscall.h"
#include "fastpath/inject/stopped_process.h"
#include "fastpath/memory_access.h"
#include "fastpath/relocate.h"
#include "fastpath/return_fixups.h"
#include "fastpath/ring_layout.h"
#include "fastpath/ring_reader.h"
#include "fastpath/thread_pointers.h"
#include "fastpath/trampoline.h"
#include "fastpath/tsc_clock.h"
#include "record/kill_bound.h"
#include "record/record_error.h"
#include "uprobes/placement.h"
#include "uprobes/proc_maps.h"
#include "uprobes/process_root.h"

namespace atrace {

namespace fp = fastpath;

namespace {

// The most of a function's code read to relocate its entry: the whole
// function up to this size (its own branches into the entry are then
// checked), its first bytes beyond (the module-wide check still applies).
constexpr size_t kMaxCodeRead = 64 * 1024;
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
  fp::AddressRange module;  // the module's mappings in the process
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

}  // namespace

struct FastPath::State {
  pid_t pid = 0;
  std::vector<uint32_t> patched;
  std::vector<FastPathRefusal> refused;
  fp::RingHeader layout{};
  uint64_t ring_address = 0;
  uint64_t stub = 0;
  std::vector<fp::AddressRange> code_ranges;
  std::unique_ptr<fp::CodePatch> patch;
  std::unique_ptr<fp::VmMemory> memory;
  std::unique_ptr<fp::RingReader> reader;
  fp::TscClock clock;
  fp::ThreadPointerMap threads;
  std::vector<fp::FastRecord> records;
  std::vector<uint64_t> lane_taken;  // per lane, what the reader had taken before this drain
  FastPathStats stats;
  bool installed = false;

  void to_events(std::vector<formats::Event>& out);
  void restore_returns(fp::StoppedProcess& process);
};

FastPath::FastPath(pid_t pid, const std::vector<uprobes::ProbeSite>& sites,
                   const std::vector<uprobes::UnwindPoint>& unwinders)
    : s_(std::make_unique<State>()) {
  s_->pid = pid;
  if (auto why = fp::tsc_refusal(); !why.empty()) throw RecordError("--fast-path: " + why);
  // Two anchors before any record: every time stamp converts.
  s_->clock.refresh();
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  s_->clock.refresh();

  // Where each function is in the process, grouped by module.
  const auto maps = uprobes::file_mappings(pid);
  std::map<std::string, std::vector<PatchTarget>> by_module;
  std::map<std::string, uprobes::FileId> ids;
  // One patch per entry: swapcontext and __swapcontext (setcontext and
  // __setcontext) are one function under two names, and a selected
  // function can be an unwinder. The unwinders come first: their
  // trampoline is the one that keeps the shadow stacks right.
  std::map<uint64_t, std::string> entry_taken_by;
  auto locate = [&](PatchTarget t, uint64_t file_offset) {
    auto [it, fresh] = ids.try_emplace(t.module_path);
    if (fresh) it->second = uprobes::file_id(t.module_path).value_or(uprobes::FileId{});
    if (!runtime_of(maps, it->second, file_offset, &t.runtime, &t.module)) return false;
    auto [taken, first] = entry_taken_by.try_emplace(t.runtime, t.name);
    if (!first) {
      if (t.id)
        s_->refused.push_back({t.id, "its entry is " + taken->second + "'s, patched already"});
      return true;
    }
    by_module[t.module_path].push_back(std::move(t));
    return true;
  };
  for (const auto& u : unwinders) {
    if (u.role != uprobes::UnwindRole::Start && u.role != uprobes::UnwindRole::Walk &&
        u.role != uprobes::UnwindRole::Switch)
      continue;
    PatchTarget t{0, u.name, u.path, 0, 0, 0};
    t.kind = fp::TrampolineKind::Unwinder;
    locate(std::move(t), u.entry);
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
  fp::RingGeometry geometry;
  // 16 MiB a CPU: 512 Ki records, about 25 ms of a tight loop of calls on
  // this VM, against the drain's 50 ms at most (bench/fastpath_cost.cpp).
  geometry.lane_slots = kFastPathLaneSlots;
  geometry.lane_count =
      pow2_at_least(static_cast<uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_CONF))));
  s_->layout = fp::make_layout(geometry);

  try {
    fp::StoppedProcess process(pid);
    fp::RemoteSyscall sys(process);
    auto ring = fp::RemoteRegion::map_anywhere(sys, s_->layout.total_bytes, PROT_READ | PROT_WRITE,
                                               "atrace-ring");
    s_->ring_address = ring.address();
    ring.write(sys.memory(), 0, std::as_bytes(std::span<const fp::RingHeader>(&s_->layout, 1)));
    // A fork child's records go to a zeroed copy nobody reads; its shadow
    // stacks (after the lanes) are copied, so it returns through its own.
    ring.advise(sys, s_->layout.lanes_offset, s_->layout.threads_offset - s_->layout.lanes_offset,
                MADV_WIPEONFORK);

    std::vector<fp::RemoteRegion> regions;
    std::vector<fp::PatchSite> patch_sites;
    std::vector<std::pair<uint32_t, bool>> planned;  // id, traced (not an unwinder)
    for (auto& [path, targets] : by_module) {
      const size_t size = kTemplateBytes + targets.size() * kTrampolineBytes;
      auto region = fp::RemoteRegion::map_near(sys, targets.front().module, size,
                                               PROT_READ | PROT_EXEC, "atrace-code");
      std::vector<uint8_t> buf(region.size());
      fp::CodeRegion code(buf.data(), buf.size(), region.address(), s_->layout, s_->ring_address,
                          s_->stub);
      if (!s_->stub) s_->stub = code.return_stub();
      std::vector<uint64_t> starts;
      for (const auto& t : targets) starts.push_back(t.vaddr);
      std::unique_ptr<uprobes::CodeEntries> entries;
      for (const auto& t : targets) {
        const size_t len = t.size ? std::min<size_t>(t.size, kMaxCodeRead) : 32;
        std::vector<std::byte> bytes(len);
        try {
          code_memory.read_any(t.runtime, bytes);
        } catch (const fp::InjectError& e) {
          if (t.id) s_->refused.push_back({t.id, e.what()});
          continue;
        }
        // Another tracer's breakpoint (or anything not the file's code)
        // at the entry: the bytes to relocate would be wrong.
        if (bytes[0] == std::byte{0xcc}) {
          if (t.id) s_->refused.push_back({t.id, "another probe is on its entry"});
          continue;
        }
        auto plan = code.add(reinterpret_cast<const uint8_t*>(bytes.data()), len, t.runtime, t.id,
                             t.kind, t.size && t.size <= kMaxCodeRead);
        if (plan.ok() && t.kind == fp::TrampolineKind::Traced) {
          if (!entries) entries = std::make_unique<uprobes::CodeEntries>(path, starts);
          plan.refusal = fp::entry_branch_refusal(*entries, t.vaddr, plan.replaced);
        }
        if (!plan.ok()) {
          if (t.id) s_->refused.push_back({t.id, plan.refusal});
          continue;
        }
        fp::PatchSite site;
        site.address = t.runtime;
        site.bytes.resize(plan.jump.size());
        std::memcpy(site.bytes.data(), plan.jump.data(), plan.jump.size());
        patch_sites.push_back(std::move(site));
        planned.emplace_back(t.id, t.kind == fp::TrampolineKind::Traced);
      }
      region.write(sys.memory(), 0,
                   std::as_bytes(std::span<const uint8_t>(buf.data(), code.used())));
      s_->code_ranges.push_back(region.range());
      regions.push_back(std::move(region));
    }
    // Nothing to patch: nothing can reach the regions yet, they go again.
    if (std::none_of(planned.begin(), planned.end(), [](const auto& p) { return p.second; })) {
      for (auto& region : regions) region.unmap(sys);
      ring.unmap(sys);
      s_->code_ranges.clear();
      return;
    }

    // The reader starts before the first record can be written.
    s_->memory = std::make_unique<fp::VmMemory>(pid);
    s_->reader =
        std::make_unique<fp::RingReader>(*s_->memory, s_->ring_address, s_->layout,
                                         s_->clock.ticks(kFastPathCommitWaitNs), fp::read_tsc());
    s_->lane_taken.assign(s_->layout.lane_count, 0);
    std::vector<fp::ThreadPointer> existing;
    for (const auto& t : process.threads())
      existing.push_back({static_cast<uint32_t>(t.tid), t.regs.fs_base});
    s_->threads.add_existing(existing, now_ns(CLOCK_MONOTONIC));
    s_->patch =
        std::make_unique<fp::CodePatch>(fp::CodePatch::apply(process, std::move(patch_sites)));
    for (const auto& [id, traced] : planned)
      if (traced) s_->patched.push_back(id);
    s_->installed = true;
    process.release();
    s_->stats.install_stop_ns = static_cast<uint64_t>(process.times().held.count());
  } catch (const fp::InjectError& e) {
    throw RecordError(std::string("--fast-path: ") + e.what());
  }
}

FastPath::~FastPath() {
  if (!s_->installed) return;
  try {
    std::vector<formats::Event> ignored;
    uninstall(ignored);
  } catch (...) {  // the process is gone, or would not stop: nothing to give back
  }
}

const std::vector<uint32_t>& FastPath::patched() const { return s_->patched; }
const std::vector<FastPathRefusal>& FastPath::refused() const { return s_->refused; }

void FastPath::on_kernel_event(const formats::Event& ev) {
  if (ev.pid != static_cast<uint32_t>(s_->pid)) return;
  if (ev.kind == formats::EventKind::ProcFork && (ev.flags & formats::kForkThread)) {
    if (const uint64_t tp = formats::fork_thread_pointer(ev))
      s_->threads.thread_created(ev.ts, static_cast<uint32_t>(ev.arg1), tp);
  } else if (ev.kind == formats::EventKind::ThreadExit) {
    s_->threads.thread_ended(ev.ts, ev.tid);
  }
}

void FastPath::State::to_events(std::vector<formats::Event>& out) {
  for (size_t i = 0; i < records.size(); i++) {
    const fp::FastRecord& r = records[i];
    formats::Event ev;
    ev.ts = clock.to_ns(r.tsc);
    ev.tid = threads.tid_at(r.thread_pointer, ev.ts);
    if (ev.tid == fp::kUnknownTid) {
      stats.unknown_thread++;
      continue;
    }
    ev.pid = static_cast<uint32_t>(pid);
    ev.id = r.function_id;
    ev.cpu = static_cast<uint16_t>(r.seq);  // the lane, i.e. the CPU (drain())
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
        ev.kind = formats::EventKind::Unwind;
        ev.flags = static_cast<uint8_t>(formats::UnwindHow::Abandoned);
        break;
    }
    out.push_back(std::move(ev));
  }
  stats.records += records.size();
  records.clear();
}

void FastPath::drain(std::vector<formats::Event>& out) {
  if (!s_->reader || s_->stats.unread_at_exit) return;
  if (!s_->reader->drain(fp::read_tsc(), s_->records) && errno == ESRCH)
    s_->stats.unread_at_exit = true;
  // After the read: every record taken lies before this anchor.
  s_->clock.refresh();
  // The records come lane by lane; each lane is a CPU. Its commit mark is
  // of no more use: it carries the lane through the merge by time.
  size_t at = 0;
  for (uint32_t lane = 0; lane < s_->reader->lanes().size(); lane++) {
    const uint64_t taken = s_->reader->lanes()[lane].taken;
    for (uint64_t n = taken - s_->lane_taken[lane]; n > 0 && at < s_->records.size(); n--)
      s_->records[at++].seq = lane;
    s_->lane_taken[lane] = taken;
  }
  fp::merge_by_time(s_->records);
  s_->to_events(out);
}

// Every frame still hooked gets its return address back where its slot
// still holds the stub (the call then returns untraced: it stays open in
// the trace, as any call in flight at the end of a recording), and every
// shadow stack is emptied (fastpath/return_fixups.h).
void FastPath::State::restore_returns(fp::StoppedProcess& process) {
  fp::ProcessMemory mem(process.pid());
  const uint64_t table = ring_address + layout.threads_offset;
  std::vector<uint8_t> copy(layout.total_bytes - layout.threads_offset);
  try {
    mem.read(table, std::as_writable_bytes(std::span<uint8_t>(copy)));
  } catch (const fp::InjectError&) {
    return;
  }
  for (const auto& fix : fp::return_fixups(copy.data(), copy.size(), layout)) {
    uint64_t held = 0;
    try {
      mem.read_any(fix.stack_slot, std::as_writable_bytes(std::span<uint64_t>(&held, 1)));
      if (held == stub)
        mem.write_any(fix.stack_slot,
                      std::as_bytes(std::span<const uint64_t>(&fix.return_address, 1)));
    } catch (const fp::InjectError&) {  // a stack gone since: nothing returns there
    }
  }
  const uint32_t zero = 0;
  for (uint32_t i = 0; i < layout.thread_slots; i++) {
    try {
      mem.write(ring_address + fp::thread_depth_offset(layout, i),
                std::as_bytes(std::span<const uint32_t>(&zero, 1)));
    } catch (const fp::InjectError&) {
    }
  }
}

void FastPath::uninstall(std::vector<formats::Event>& out) {
  if (!s_->installed) return;
  s_->installed = false;
  try {
    fp::StoppedProcess process(s_->pid);
    s_->patch->undo(process, s_->code_ranges);
    s_->restore_returns(process);
    process.release();
    s_->stats.uninstall_stop_ns = static_cast<uint64_t>(process.times().held.count());
  } catch (const fp::InjectError&) {
    // Gone: nothing to give back. Still running but not stoppable: its
    // trampolines keep working with nobody reading (docs/fast-path.md).
  }
  drain(out);
}

FastPathStats FastPath::stats() const {
  FastPathStats st = s_->stats;
  if (s_->reader) {
    st.lost = s_->reader->lost();
    for (const auto& lane : s_->reader->lanes()) st.lost_per_lane.push_back(lane.lost());
  }
  st.conversion_error_ns = s_->clock.error().bracket_ns / 2 + s_->clock.error().residual_ns;
  return st;
}

}  // namespace atrace
