// `record --fast-path`: the functions of an attached process that the
// trampolines of fastpath/ record in the process itself instead of the
// kernel's uprobes (docs/fast-path.md, "When each path is used").
//
//   install    every thread stopped once: the ring (its lanes a memfd
//              atrace maps too) and one code region per module mapped into
//              the process, the trampolines written, the functions'
//              entries patched, each thread's pointer noted
//   drain      each wake-up of the drain loop: the ring's new records (a
//              bounded batch a lane), as FuncEntry / FuncExit / Unwind
//              events on CLOCK_MONOTONIC with their thread's tid, for the
//              reorder window
//   switch     (optional, any number of times) every thread stopped once:
//              some patched functions' entries given back (off) or their
//              jumps written again (on), the trampolines kept
//   uninstall  every thread stopped once more (unless the process is
//              gone): the entries and every replaced return address put
//              back; the caller drains the rest (the lanes outlive the
//              process)
//
// The regions stay mapped after the uninstall (and after a killed atrace):
// a signal frame or a copy of a return address may still name the return
// stub, which reads the ring (docs/fast-path.md, "Undo").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fastpath/inject/code_patch.h"
#include "formats/trace_types.h"
#include "record/kill_bound.h"
#include "uprobes/probe_site.h"
#include "uprobes/unwind_points.h"

namespace atrace {

namespace fastpath {
class StoppedProcess;
class Tracer;
}  // namespace fastpath

// How often the drain loop reads the ring while the fast path is on: the
// lanes are read while the program runs, so that what is left when it
// exits (atrace reads that afterwards: the lanes are shared) stays small.
inline constexpr uint64_t kFastPathDrainPeriodNs = 5'000'000;
// A slot reserved and not committed is given up only when a drain before
// already found it so (fastpath/ring_reader.h): the second drain must come
// within the commit wait for the kill bound to hold (record/kill_bound.h).
static_assert(2 * kFastPathDrainPeriodNs <= kFastPathCommitWaitNs,
              "two fast-path drains within the commit wait");
// Records a lane (a CPU) holds: 8 Mi, 256 MiB of address space a CPU in
// the process and in atrace (one memfd). Memory is used only for what is
// written and not yet read: pages are touched by the writers as they fill
// the lane and given back behind the reader (fastpath/lane_pages.h). One
// thread writing 25 M records a second (sqlite3's 4.3 M records in 170 ms)
// fills a lane in a third of a second if atrace did not read at all.
inline constexpr uint32_t kFastPathLaneSlots = 1u << 23;
// Memory atrace allocates in each lane ahead of its writers, so that they
// do not pay for the page faults (fastpath/lane_pages.h): 16 MiB, half a
// million records, more than a drain period of one thread's calls.
inline constexpr uint64_t kFastPathAheadBytes = 16u << 20;
// Records a drain takes from a lane at most: a bounded batch of events
// (8 MiB of them) each wake-up of the drain loop, whose vectors the
// allocator then reuses; a batch of everything written since the last
// drain (millions when atrace falls behind) faulted in hundreds of
// megabytes anew every time, half of atrace's time.
inline constexpr uint64_t kFastPathDrainBatch = 1u << 16;

struct FastPathRefusal {
  uint32_t id = 0;
  std::string reason;
};

struct FastPathStats {
  uint64_t records = 0;                 // taken from the ring
  uint64_t lost = 0;                    // dropped in the ring: the three below
  uint64_t full = 0;                    // ... by writers, their lane full
  uint64_t given_up = 0;                // ... reserved, not committed within the wait
  uint64_t malformed = 0;               // ... committed with a kind no writer writes
  std::vector<uint64_t> lost_per_lane;  // the same by lane, i.e. by CPU
  uint64_t unknown_thread = 0;          // records of a thread pointer no known thread held
  uint64_t install_stop_ns = 0;         // how long the program was stopped to install
  uint64_t uninstall_stop_ns = 0;       // ... and to uninstall
  // Why the uninstall could not give the code back (the process runs on
  // patched, its records unread); empty when it did or the process is gone.
  std::string undo_failed;
  uint64_t conversion_error_ns = 0;  // the TSC -> CLOCK_MONOTONIC map's (tsc_clock.h)
  // Fork children (follow_forks()): given a ring of their own, not given
  // one (the message of the first failure in `child_refusal`), and the
  // calls they made before their ring, counted by the trampolines, not
  // recorded.
  uint64_t children = 0;
  uint64_t children_not_ringed = 0;
  std::string child_refusal;
  uint64_t child_calls_before_ring = 0;
  uint64_t children_undone = 0;  // the uninstall gave their code back
  uint64_t children_execd = 0;   // exec'd since: the new program is not patched here

  // Another install's added in (record/fast_paths.h): counts summed, the
  // stops' times too (the programs' stops add up), the first failure kept.
  FastPathStats& operator+=(const FastPathStats& o);
};

// What a switch did (FastPath::set_enabled).
struct FastPathSwitch {
  std::vector<uint32_t> switched;        // their entries changed
  std::vector<FastPathRefusal> refused;  // not patched here, or their entry is not ours any more
  unsigned stops = 0;                    // stops it took (more when a thread was in the way)
  uint64_t held_ns = 0;                  // how long the program was stopped (0: the caller held it)
};

class FastPath {
 public:
  // Installs the fast path in `pid` for those of `sites` it can patch;
  // `unwinders`: the unwinder entry points of the process's modules, which
  // get the trampoline that gives return addresses back before an unwind.
  // Throws RecordError when the fast path cannot be used at all (the TSC,
  // ptrace, no room near a module); a function it cannot patch is refused
  // (refused()), for the caller to report. `held`: the process already
  // stopped by the caller (launch mode: at its entry point,
  // record/entry_stop.h), released here once installed, left held when
  // nothing could be patched or this throws; else it is stopped here.
  // `start_on` false (--fast-path=hot): the trampolines are written from
  // the entries' bytes as they are now, but no entry is changed: every
  // function starts switched off, for set_enabled() to switch on. The
  // unwinders' entries are patched (no WalkEnd window: the guard keeps the
  // walk's `ret`s), and the code regions are memfds on which the unwind
  // guard probes their trampolines (guard_points()). With start_on false a
  // `held` process stays held (the caller moves the guard first).
  // `code_from_files` (hot, a launched command): the kernel's probes went on
  // the files before the exec, so the trampolines are made from the files'
  // bytes (the process's may differ only by an int3, a probe's, restored by
  // the switch's close), and the unwinders' entries, whose guard probes the
  // caller took off, are waited for until they hold the files' bytes.
  FastPath(pid_t pid, const std::vector<uprobes::ProbeSite>& sites,
           const std::vector<uprobes::UnwindPoint>& unwinders,
           uint64_t lane_slots = kFastPathLaneSlots, fastpath::StoppedProcess* held = nullptr,
           bool start_on = true, bool code_from_files = false);
  ~FastPath();
  FastPath(const FastPath&) = delete;
  FastPath& operator=(const FastPath&) = delete;

  const std::vector<uint32_t>& patched() const;
  const std::vector<FastPathRefusal>& refused() const;

  // A kernel event of the process as it is decoded: thread creations
  // (their thread pointers) and ends keep the thread map; with
  // follow_forks(), a process fork of the process or of a child already
  // followed queues the child, which the next drain() gives a ring of its
  // own (fast_path.cpp, "Fork children"), and an exec drops a child's.
  void on_kernel_event(const formats::Event& ev);
  // Fork children get their own ring and are recorded (--follow-forks).
  // Call from the thread that drains: the children are stopped there.
  // `tracer`: atrace follows the processes already (a launched command,
  // record/exec_follow.h); every stop of this object's goes through it.
  void follow_forks(fastpath::Tracer* tracer = nullptr);
  // With a tracer: a process a followed one forked, held by the caller at
  // its first stop. A fork child of the patched program (it maps the
  // lanes) is given its ring there, before its first instruction: none of
  // its calls goes uncounted. Returns whether it was (it is let go then);
  // false: not one of the patched program's, the caller lets it go.
  bool forked(pid_t child);
  // The records written since the last drain, as events: at most
  // kFastPathDrainBatch a lane.
  void drain(std::vector<formats::Event>& out);
  // Every event before this time (CLOCK_MONOTONIC) has been given by
  // drain(); UINT64_MAX when the last drain left no lane behind and no
  // slot waiting for its writer's commit (RingReader::complete_until). The
  // reorder window releases nothing later.
  uint64_t complete_until_ns() const;
  // Every lane was read to the head its last drain saw.
  bool drained() const;
  // Its process exited or exec'd, and every child given a ring is gone too,
  // every record read: nothing left to read or to undo (fast_paths.h lets
  // the install go: each holds lanes and mappings).
  bool finished() const;
  // Stops the process and gives back its code and return addresses; no
  // record is written after it. Once; the destructor does it when not
  // done. The rest of the lanes is then read by drain() until drained()
  // (in batches: millions of records may be left when atrace fell
  // behind); the lanes' memory goes back once they are.
  void uninstall();
  // --fast-path=hot: uninstall() gives the functions' entries back but not
  // the unwinders' (the unwind guard probes their trampolines, and a throw
  // through a kernel-probed frame needs the guard until the kernel's probes
  // are gone); this does, once the guard is gone. Returns why it could not
  // ("" when done or nothing to do). The destructor does it when not done.
  std::string uninstall_unwinders();

  // Switches patched functions off (their entries get their original bytes
  // back: their calls run untraced) or on again (the same jump to the same
  // trampoline), with every thread stopped; the code regions and the
  // trampolines stay. A function already in that state is left alone; an
  // id not patched here is refused. `process`: the caller's stop, still held
  // when this returns (it may have been let go and stopped again while a
  // thread was in the way: `policy`); the other form stops once itself.
  // Frames in flight of a function switched off return through the stub,
  // which records their exits (fast_path.cpp, above set_enabled, says why). Throws
  // RecordError when the process cannot be stopped or a thread stayed in the
  // way (then nothing changed).
  FastPathSwitch set_enabled(fastpath::StoppedProcess& process, const std::vector<uint32_t>& ids,
                             bool on, fastpath::RetryPolicy policy = {});
  FastPathSwitch set_enabled(const std::vector<uint32_t>& ids, bool on,
                             fastpath::RetryPolicy policy = {});
  // --fast-path=hot: `points` with each point on an unwinder whose entry is
  // patched moved to its trampoline's first byte in the code region's memfd
  // (path /proc/self/fd/N, atrace's descriptor, which lives as long as this
  // object); the others as they are. The jump changes neither registers nor
  // stack: the guard sees there what it sees at the entry.
  std::vector<uprobes::UnwindPoint> guard_points(
      const std::vector<uprobes::UnwindPoint>& points) const;
  // Hot: the first unwinder entry (_Unwind_RaiseException & co) of a mapped
  // module that could not be patched, and why; "" when none. A patched
  // function's frame unwound by it would unwind into the return stub.
  const std::string& unwinder_refusal() const;

  // Whether `id` has a trampoline here (switched on or off).
  bool patchable(uint32_t id) const;
  // Its first byte in the process (0: no trampoline).
  uint64_t entry(uint32_t id) const;
  // Whether the patched function `id` is switched on now.
  bool enabled(uint32_t id) const;

  FastPathStats stats() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace atrace
