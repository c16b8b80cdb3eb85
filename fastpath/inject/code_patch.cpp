#include "fastpath/inject/code_patch.h"

#include <algorithm>
#include <string>

#include "fastpath/inject/inject_error.h"
#include "fastpath/inject/process_memory.h"

namespace atrace::fastpath {

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Stops `process` again until no thread is in the way; the number of stops
// it took in all.
unsigned wait_until_clear(StoppedProcess& process, std::span<const AddressRange> ranges,
                          std::span<const AddressRange> avoid, const RetryPolicy& policy,
                          const char* what) {
  for (unsigned stop = 1;; ++stop) {
    pid_t tid = thread_inside(process, ranges, avoid);
    if (tid == 0) return stop;
    if (stop >= policy.attempts)
      throw InjectError(std::string("cannot ") + what + " the code of process " +
                        std::to_string(process.pid()) + ": thread " + std::to_string(tid) +
                        " was inside the bytes to replace at each of " +
                        std::to_string(policy.attempts) + " stops");
    process.restop(policy.run);
  }
}

}  // namespace

pid_t thread_inside(const StoppedProcess& process, std::span<const AddressRange> ranges,
                    std::span<const AddressRange> avoid) {
  for (const StoppedThread& t : process.threads()) {
    uint64_t resume[2] = {t.regs.rip, t.restarting_syscall() ? t.regs.rip - 2 : t.regs.rip};
    for (uint64_t rip : resume) {
      for (const AddressRange& r : ranges)
        if (rip > r.start && rip < r.end) return t.tid;
      for (const AddressRange& r : avoid)
        if (r.contains(rip)) return t.tid;
    }
  }
  return 0;
}

CodePatch CodePatch::apply(StoppedProcess& process, std::vector<PatchSite> sites,
                           std::span<const AddressRange> avoid, RetryPolicy policy) {
  CodePatch patch;
  std::vector<AddressRange> ranges;
  for (PatchSite& s : sites) {
    if (s.bytes.empty()) throw InjectError("an empty patch at " + hex(s.address));
    ranges.push_back({s.address, s.address + s.bytes.size()});
    if (!s.original.empty() && s.original.size() != s.bytes.size())
      throw InjectError("the original bytes given at " + hex(s.address) +
                        " are not the patch's size");
    patch.sites_.push_back({s.address, std::move(s.bytes), std::move(s.original), s.on});
  }
  std::vector<AddressRange> sorted = ranges;
  std::sort(sorted.begin(), sorted.end(),
            [](const AddressRange& a, const AddressRange& b) { return a.start < b.start; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1].overlaps(sorted[i]))
      throw InjectError("patches overlap at " + hex(sorted[i].start));

  patch.stops_ = wait_until_clear(process, ranges, avoid, policy, "patch");
  ProcessMemory memory(process.pid());
  size_t written = 0;
  try {
    for (Site& s : patch.sites_) {
      std::vector<std::byte> now(s.written.size());
      memory.read_any(s.address, now);
      if (s.original.empty()) s.original = std::move(now);
      else if (s.active && now != s.original)
        throw InjectError("the bytes at " + hex(s.address) + " are not the original ones given");
    }
    for (Site& s : patch.sites_) {
      if (s.active) memory.write_any(s.address, s.written);
      ++written;
    }
  } catch (...) {
    // All or nothing: put back what was written (the process is still stopped).
    for (size_t i = 0; i < written; ++i) {
      if (!patch.sites_[i].active) continue;
      try {
        memory.write_any(patch.sites_[i].address, patch.sites_[i].original);
      } catch (const InjectError&) {
      }
    }
    throw;
  }
  patch.applied_ = true;
  return patch;
}

CodePatch::Undone CodePatch::undo(StoppedProcess& process, std::span<const AddressRange> avoid,
                                  RetryPolicy policy) {
  Undone result;
  if (!applied_) return result;
  std::vector<AddressRange> ranges;
  for (const Site& s : sites_)
    if (s.active) ranges.push_back({s.address, s.address + s.written.size()});
  result.stops = wait_until_clear(process, ranges, avoid, policy, "restore");
  ProcessMemory memory(process.pid());
  for (Site& s : sites_) {
    if (!s.active) continue;  // switched off: its original bytes are there already
    s.active = false;
    std::vector<std::byte> now(s.written.size());
    memory.read_any(s.address, now);
    if (now != s.written) {
      result.changed.push_back(s.address);
      continue;
    }
    memory.write_any(s.address, s.original);
    ++result.restored;
  }
  applied_ = false;
  return result;
}

CodePatch::Switched CodePatch::set_active(StoppedProcess& process,
                                          std::span<const uint64_t> addresses, bool on,
                                          std::span<const AddressRange> avoid, RetryPolicy policy) {
  if (!applied_) throw InjectError("the patch was undone: nothing to switch");
  std::vector<Site*> todo;
  for (uint64_t a : addresses) {
    auto it =
        std::find_if(sites_.begin(), sites_.end(), [a](const Site& s) { return s.address == a; });
    if (it == sites_.end()) throw InjectError("no patch at " + hex(a) + " to switch");
    if (it->active != on && std::find(todo.begin(), todo.end(), &*it) == todo.end())
      todo.push_back(&*it);
  }
  Switched result;
  if (todo.empty()) return result;
  std::vector<AddressRange> ranges;
  ranges.reserve(todo.size());
  for (const Site* s : todo) ranges.push_back({s->address, s->address + s->written.size()});
  result.stops = wait_until_clear(process, ranges, avoid, policy, on ? "patch" : "restore");
  ProcessMemory memory(process.pid());
  std::vector<Site*> done;
  try {
    for (Site* s : todo) {
      const std::vector<std::byte>& expected = on ? s->original : s->written;
      std::vector<std::byte> now(expected.size());
      memory.read_any(s->address, now);
      if (now != expected) {  // someone else's bytes: theirs to keep
        result.changed.push_back(s->address);
        continue;
      }
      memory.write_any(s->address, on ? s->written : s->original);
      s->active = on;
      done.push_back(s);
    }
  } catch (...) {
    // All or nothing, as apply(): the process is still stopped.
    for (Site* s : done) {
      try {
        memory.write_any(s->address, on ? s->original : s->written);
        s->active = !on;
      } catch (const InjectError&) {
      }
    }
    throw;
  }
  result.switched = static_cast<unsigned>(done.size());
  return result;
}

bool CodePatch::active(uint64_t address) const {
  for (const Site& s : sites_)
    if (s.address == address) return applied_ && s.active;
  return false;
}

PatchedBatch patch_batch(pid_t pid, std::vector<PatchSite> sites,
                         std::span<const AddressRange> avoid, RetryPolicy policy) {
  StoppedProcess process(pid);
  CodePatch patch = CodePatch::apply(process, std::move(sites), avoid, policy);
  process.release();
  return {std::move(patch), process.times()};
}

}  // namespace atrace::fastpath
