// Replacing code in a running process: a batch of byte ranges (a 5-byte
// `jmp rel32` at each patched function's entry) written while every thread
// is stopped (stopped_process.h), through /proc/PID/mem.
//
// A range is only written when no thread would resume strictly inside it
// (its rip, or rip - 2 for a system call the kernel restarts): a thread
// there would run half an old instruction and half a new one. Then the
// process is let go for about a millisecond and stopped again, a bounded
// number of times. Undo puts the original bytes back the same way, and
// only where the bytes are still the ones written (a site someone else
// rewrote since is left alone and reported); `avoid` adds ranges no thread
// may be in either (for undo: the code region about to be unmapped).
//
// Between apply and undo, sites can be switched off (their original bytes
// back) and on again (the same bytes as applied) by address, any number of
// times, each switch a batch written with the process stopped under the
// same rules: a function switched off and on during a recording.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fastpath/inject/region_placement.h"
#include "fastpath/inject/stopped_process.h"

namespace atrace::fastpath {

struct PatchSite {
  uint64_t address = 0;
  std::vector<std::byte> bytes;  // what to write there
  // false: its original bytes kept and nothing written (switched off from
  // the start: set_active() writes it later; --fast-path=hot)
  bool on = true;
  // Its original bytes when the process's are not (empty: read from the
  // process): the file's, where a kernel probe of the caller's own holds an
  // int3 that goes before the site is switched on (--fast-path=hot, launch
  // mode). A site switched on here must hold them already.
  std::vector<std::byte> original;
};

struct RetryPolicy {
  unsigned attempts = 20;               // stops tried before giving up
  std::chrono::microseconds run{1000};  // how long the process runs between two
};

class CodePatch {
 public:
  // Writes the batch into `process` (stopped), keeping each site's
  // original bytes. All or nothing: InjectError (nothing left written)
  // when the sites overlap, a site cannot be written, or a thread was
  // still inside one after `policy.attempts` stops.
  static CodePatch apply(StoppedProcess& process, std::vector<PatchSite> sites,
                         std::span<const AddressRange> avoid = {}, RetryPolicy policy = {});

  CodePatch(CodePatch&&) = default;
  CodePatch& operator=(CodePatch&&) = default;

  struct Undone {
    unsigned restored = 0;
    std::vector<uint64_t> changed;  // sites whose bytes were no longer ours: left as found
    unsigned stops = 0;             // stops it took (1 when no thread was in the way)
  };
  // Restores the original bytes of every site switched on (process
  // stopped); once only.
  Undone undo(StoppedProcess& process, std::span<const AddressRange> avoid = {},
              RetryPolicy policy = {});

  struct Switched {
    unsigned switched = 0;          // sites whose bytes changed
    std::vector<uint64_t> changed;  // sites whose bytes were not what this patch left: untouched
    unsigned stops = 0;             // stops it took (1 when no thread was in the way)
  };
  // Switches the sites at `addresses` (each one of this patch's, else
  // InjectError) on (their bytes as applied) or off (the original ones),
  // process stopped; a site already so is left alone. All or nothing, as
  // apply(): InjectError, nothing changed, when a thread stayed inside a
  // site or in `avoid` for `policy.attempts` stops. After undo(): InjectError.
  Switched set_active(StoppedProcess& process, std::span<const uint64_t> addresses, bool on,
                      std::span<const AddressRange> avoid = {}, RetryPolicy policy = {});
  // The same patch as a fork child of the process has it (its private copy
  // of the code, with the sites as they are switched now): undone there
  // the same way, with the child stopped.
  CodePatch copy_for_child() const {
    CodePatch c;
    c.sites_ = sites_;
    c.applied_ = applied_;
    return c;
  }

  // Whether the site at `address` is switched on (false: not one of ours).
  bool active(uint64_t address) const;

  size_t size() const { return sites_.size(); }
  bool applied() const { return applied_; }
  unsigned stops() const { return stops_; }  // stops apply() took

 private:
  struct Site {
    uint64_t address;
    std::vector<std::byte> written;
    std::vector<std::byte> original;
    bool active = true;  // its bytes are `written` (set_active() switches it off and on)
  };
  CodePatch() = default;

  std::vector<Site> sites_;
  bool applied_ = false;
  unsigned stops_ = 0;
};

// A thread of `process` that would resume inside one of `ranges`
// (interior: strictly after its start) or inside one of `avoid` (anywhere);
// 0 when none.
pid_t thread_inside(const StoppedProcess& process, std::span<const AddressRange> ranges,
                    std::span<const AddressRange> avoid);

// One whole batch: stop `pid`, apply, release. The stop's times (how long
// the program did not run) are in `times`.
struct PatchedBatch {
  CodePatch patch;
  StopTimes times;
};
PatchedBatch patch_batch(pid_t pid, std::vector<PatchSite> sites,
                         std::span<const AddressRange> avoid = {}, RetryPolicy policy = {});

}  // namespace atrace::fastpath
