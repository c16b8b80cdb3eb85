// The fast path's trampolines, run for real in this process: a code region
// generated near the test functions, their entries patched, and the records
// of the ring read back (fastpath/local_patch.h).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstring>
#include <latch>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

#include "fastpath/local_patch.h"
#include "fastpath/relocate.h"
#include "fastpath/return_fixups.h"
#include "fastpath/trampoline.h"
#include "fastpath/trampoline_template.h"
#include "test_fastpath_trampoline_fns.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/placement.h"

namespace atrace::fastpath {

namespace {

uint64_t addr(const void* f) { return reinterpret_cast<uint64_t>(f); }
const uint8_t* bytes_at(uint64_t a) {
  return reinterpret_cast<const uint8_t*>(a);  // NOLINT(performance-no-int-to-ptr)
}
template <typename F>
uint64_t faddr(F* f) {
  return reinterpret_cast<uint64_t>(reinterpret_cast<const void*>(f));
}

constexpr uint16_t kEntry = static_cast<uint16_t>(RecordKind::Entry);
constexpr uint16_t kExit = static_cast<uint16_t>(RecordKind::Exit);
constexpr uint16_t kNoExit = static_cast<uint16_t>(RecordKind::EntryNoExit);
constexpr uint16_t kUnwound = static_cast<uint16_t>(RecordKind::Unwound);
constexpr uint16_t kCaught = static_cast<uint16_t>(RecordKind::Caught);
constexpr uint16_t kThreadExit = static_cast<uint16_t>(RecordKind::ThreadExit);

// What a single-threaded test checks of each record: kind, function, depth.
using Event = std::tuple<uint16_t, uint32_t, uint16_t>;

// Keeps this thread on one CPU, so that all its records go to one lane in
// the order it wrote them.
class PinnedToOneCpu {
 public:
  PinnedToOneCpu() {
    sched_getaffinity(0, sizeof old_, &old_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  ~PinnedToOneCpu() { sched_setaffinity(0, sizeof old_, &old_); }

 private:
  cpu_set_t old_;
};

RingGeometry geometry(uint32_t lane_count, uint32_t lane_slots, uint32_t shadow_depth = 1024) {
  RingGeometry g;
  g.lane_count = lane_count;
  g.lane_slots = lane_slots;
  g.thread_slots = 64;
  g.shadow_depth = shadow_depth;
  return g;
}

// A ring, a code region near the test functions (and one near libgcc_s for
// the unwinder hooks when asked), the plans, then the patches.
class Patcher {
 public:
  explicit Patcher(const RingGeometry& g, TscRead tsc = best_tsc_read())
      : ring_(g),
        region_(reinterpret_cast<const void*>(&fpt_add), 1 << 16),
        code_(region_.data(), region_.size(), region_.address(), ring_.layout(), ring_.address(), 0,
              tsc) {}

  // Plans the trampoline of `fn` (len bytes known; whole: len is all of it).
  PatchPlan plan(uint64_t fn, size_t len, uint32_t id, bool whole = false) {
    return code_.add(bytes_at(fn), len, fn, id, TrampolineKind::Traced, whole);
  }
  void hook(uint64_t fn, uint32_t id, size_t len = 32, bool whole = false) {
    PatchPlan p = plan(fn, len, id, whole);
    ASSERT_TRUE(p.ok()) << p.refusal;
    pending_.emplace_back(fn, p);
  }
  // The unwinder entry points of libgcc_s and libstdc++'s catch, each
  // library's in a region of its own (rel32 reach), sharing the first
  // region's return stub.
  void hook_unwinders() {
    for (const char* name :
         {"_Unwind_RaiseException", "_Unwind_ForcedUnwind", "_Unwind_Resume",
          "_Unwind_Resume_or_Rethrow", "_Unwind_Backtrace", "__cxa_begin_catch"}) {
      const TrampolineKind kind = unwinder_kind(name);
      ASSERT_NE(kind, TrampolineKind::Traced) << name;
      void* fn = dlsym(RTLD_DEFAULT, name);
      ASSERT_NE(fn, nullptr) << name;
      Dl_info info{};
      ASSERT_NE(dladdr(fn, &info), 0) << name;
      auto& [region, code] = unwind_regions_[info.dli_fbase];
      if (!region) {
        region = std::make_unique<LocalCodeRegion>(fn, 1 << 16);
        code = std::make_unique<CodeRegion>(region->data(), region->size(), region->address(),
                                            ring_.layout(), ring_.address(), code_.return_stub());
      }
      PatchPlan p = code->add(bytes_at(addr(fn)), 32, addr(fn), 0, kind, false);
      ASSERT_TRUE(p.ok()) << name << ": " << p.refusal;
      pending_.emplace_back(addr(fn), p);
    }
  }
  void arm() {
    region_.seal();
    for (auto& [base, rc] : unwind_regions_) rc.first->seal();
    for (const auto& [fn, p] : pending_)
      patches_.push_back(std::make_unique<LocalPatch>(fn, p.jump));
    pending_.clear();
  }
  void disarm() { patches_.clear(); }

  std::vector<FastRecord> records() {
    std::vector<FastRecord> out;
    ring_.drain(out);
    return out;
  }
  std::vector<Event> events() {
    std::vector<Event> out;
    for (const FastRecord& r : records()) out.emplace_back(r.kind, r.function_id, r.depth);
    return out;
  }
  LocalRing& ring() { return ring_; }
  uint64_t return_stub() const { return code_.return_stub(); }
  // The template's constant for the kernel's uretprobe trampoline (before
  // arm(), which seals the region).
  void set_uretprobe(uint64_t address) {
    std::memcpy(region_.data() + tmpl::kUretprobe, &address, sizeof address);
  }

 private:
  LocalRing ring_;
  LocalCodeRegion region_;
  CodeRegion code_;
  std::map<void*, std::pair<std::unique_ptr<LocalCodeRegion>, std::unique_ptr<CodeRegion>>>
      unwind_regions_;  // by library
  std::vector<std::pair<uint64_t, PatchPlan>> pending_;
  std::vector<std::unique_ptr<LocalPatch>> patches_;  // destroyed first: unpatched before unmapped
};

// The load bias of the test program (its link-time addresses + bias = runtime).
uint64_t program_bias() {
  uint64_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        *static_cast<uint64_t*>(data) = info->dlpi_addr;
        return 1;  // the first object is the program
      },
      &bias);
  return bias;
}

}  // namespace

TEST(FastPathTrampoline, RelocatesOrRefusesKnownEntries) {
  Patcher p(geometry(1, 1024));
  // endbr64 (4) + push %rbp (1).
  EXPECT_EQ(p.plan(faddr(&fpt_add), 32, 1).replaced, 5u);
  // A RIP-relative lea of 7 bytes.
  EXPECT_EQ(p.plan(faddr(&fpt_riplea), 32, 2).replaced, 7u);
  // test (2) + jle (2) + mov (2).
  EXPECT_EQ(p.plan(faddr(&fpt_jcc), 32, 3).replaced, 6u);
  EXPECT_EQ(
      p.plan(faddr(&fpt_call_first), addr(fpt_call_first_end) - faddr(&fpt_call_first), 4, true)
          .replaced,
      5u);
  EXPECT_EQ(p.plan(faddr(&fpt_jmp_first), addr(fpt_jmp_first_end) - faddr(&fpt_jmp_first), 5, true)
                .replaced,
            5u);

  const PatchPlan shorter =
      p.plan(faddr(&fpt_short), addr(fpt_short_end) - faddr(&fpt_short), 6, true);
  EXPECT_EQ(shorter.refusal, "shorter than the 5-byte jump (3 bytes)");
  const PatchPlan loop = p.plan(faddr(&fpt_loop), addr(fpt_loop_end) - faddr(&fpt_loop), 7, true);
  EXPECT_EQ(loop.refusal, "the instruction at +6 branches into the replaced bytes (+2)");

  // fpt_entered is fine on its own, but fpt_enters jumps to its +1: the
  // module's code says no.
  const size_t entered_len = addr(fpt_entered_end) - faddr(&fpt_entered);
  const PatchPlan entered = p.plan(faddr(&fpt_entered), entered_len, 8, true);
  ASSERT_TRUE(entered.ok()) << entered.refusal;
  EXPECT_EQ(entered.replaced, 6u);
  const uint64_t bias = program_bias();
  const uprobes::CodeEntries entries("/proc/self/exe",
                                     {faddr(&fpt_entered) - bias, faddr(&fpt_enters) - bias,
                                      faddr(&fpt_add) - bias, faddr(&fpt_loop) - bias});
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entry_branch_refusal(entries, faddr(&fpt_entered) - bias, entered.replaced),
            "a branch or code address of the module lands inside the replaced bytes");
  EXPECT_EQ(entry_branch_refusal(entries, faddr(&fpt_add) - bias, 5), "");

  // All of it together, as `atrace list` asks.
  auto refusal = [&](const char* name, uint64_t fn, size_t len) {
    return fast_path_refusal(name, bytes_at(fn), len, fn - bias, entries);
  };
  EXPECT_EQ(refusal("fpt_entered", faddr(&fpt_entered), entered_len),
            "a branch or code address of the module lands inside the replaced bytes");
  EXPECT_EQ(refusal("fpt_short", faddr(&fpt_short), addr(fpt_short_end) - faddr(&fpt_short)),
            "shorter than the 5-byte jump (3 bytes)");
  EXPECT_EQ(refusal("fpt_call_first", faddr(&fpt_call_first),
                    addr(fpt_call_first_end) - faddr(&fpt_call_first)),
            "");
  EXPECT_EQ(
      refusal("setjmp", faddr(&fpt_call_first), addr(fpt_call_first_end) - faddr(&fpt_call_first)),
      "returns twice: its second return would find no shadow frame");

  EXPECT_NE(name_refusal("setjmp"), "");
  EXPECT_NE(name_refusal("vfork"), "");
  EXPECT_NE(name_refusal("__restore_rt"), "");
  EXPECT_EQ(name_refusal("fpt_add"), "");
}

namespace {
std::vector<uint8_t> le32(int64_t v) {
  std::vector<uint8_t> b;
  b.reserve(4);
  for (int i = 0; i < 4; ++i)
    b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
  return b;
}
std::vector<uint8_t> le64(uint64_t v) {
  std::vector<uint8_t> b;
  b.reserve(8);
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return b;
}
std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
}  // namespace

// relocate_entry on bytes alone, at addresses far apart.
TEST(FastPathTrampoline, RelocatesInstructionBytes) {
  constexpr uint64_t from = 0x400000, to = 0x500000;
  {
    // lea 0x10(%rip),%rax; nop: the displacement now counts from `to`.
    const uint8_t code[] = {0x48, 0x8d, 0x05, 0x10, 0, 0, 0, 0x90};
    const RelocatedEntry r = relocate_entry(code, sizeof code, from, to, true);
    ASSERT_TRUE(r.ok()) << r.refusal;
    EXPECT_EQ(r.replaced, 7u);
    const int64_t disp = static_cast<int64_t>(from + 7 + 0x10) - static_cast<int64_t>(to + 7);
    const int64_t back = static_cast<int64_t>(from + 7) - static_cast<int64_t>(to + 12);
    EXPECT_EQ(r.code, cat({{0x48, 0x8d, 0x05}, le32(disp), {0xe9}, le32(back)}));
    // 3 GiB away, it does not fit.
    EXPECT_EQ(relocate_entry(code, sizeof code, from, from + (3ull << 30), true).refusal,
              "RIP-relative operand at +0 out of reach");
  }
  {
    // je rel32 (+0x10): the condition over a 2-byte hop, then an absolute jump.
    const uint8_t code[] = {0x0f, 0x84, 0x10, 0, 0, 0, 0x90};
    const RelocatedEntry r = relocate_entry(code, sizeof code, from, to, true);
    ASSERT_TRUE(r.ok()) << r.refusal;
    EXPECT_EQ(r.replaced, 6u);
    const int64_t back = static_cast<int64_t>(from + 6) - static_cast<int64_t>(to + 18 + 5);
    EXPECT_EQ(r.code, cat({{0x74, 0x02, 0xeb, 0x0e, 0xff, 0x25, 0, 0, 0, 0},
                           le64(from + 6 + 0x10),
                           {0xe9},
                           le32(back)}));
  }
  {
    // jrcxz +5; mov %rcx,%rax: kept as jrcxz over the hop.
    const uint8_t code[] = {0xe3, 0x05, 0x48, 0x89, 0xc8, 0x90, 0x90, 0xc3};
    const RelocatedEntry r = relocate_entry(code, sizeof code, from, to, true);
    ASSERT_TRUE(r.ok()) << r.refusal;
    EXPECT_EQ(r.replaced, 5u);
    const int64_t back = static_cast<int64_t>(from + 5) - static_cast<int64_t>(to + 21 + 5);
    EXPECT_EQ(r.code, cat({{0xe3, 0x02, 0xeb, 0x0e, 0xff, 0x25, 0, 0, 0, 0},
                           le64(from + 2 + 5),
                           {0x48, 0x89, 0xc8, 0xe9},
                           le32(back)}));
  }
  {
    // call rel32 at +0: the original return address pushed, then a jump.
    const uint8_t code[] = {0xe8, 0x00, 0x01, 0, 0, 0xc3};
    const RelocatedEntry r = relocate_entry(code, sizeof code, from, to, true);
    ASSERT_TRUE(r.ok()) << r.refusal;
    EXPECT_EQ(r.code,
              cat({{0x48, 0x8d, 0x64, 0x24, 0xf8, 0xc7, 0x04, 0x24},
                   le32(from + 5),
                   {0xc7, 0x44, 0x24, 0x04},
                   le32(0),
                   {0xff, 0x25, 0, 0, 0, 0},
                   le64(from + 5 + 0x100),
                   {0xe9},
                   le32(static_cast<int64_t>(from + 5) - static_cast<int64_t>(to + 34 + 5))}));
  }
  // xbegin: relative, not movable; 0x06 does not decode in 64-bit mode.
  const uint8_t xbegin[] = {0xc7, 0xf8, 0x10, 0, 0, 0, 0xc3};
  EXPECT_EQ(relocate_entry(xbegin, sizeof xbegin, from, to, true).refusal,
            "xbegin at +0 cannot be moved");
  const uint8_t bad[] = {0x90, 0x06, 0x90, 0x90, 0x90, 0x90};
  EXPECT_EQ(relocate_entry(bad, sizeof bad, from, to, true).refusal,
            "cannot decode the instruction at +1");
}

class FastPathTrampolineTsc : public ::testing::TestWithParam<TscRead> {};

TEST_P(FastPathTrampolineTsc, RecordsEntryAndExitOfACall) {
  if (GetParam() == TscRead::RdtscRdpid && best_tsc_read() != TscRead::RdtscRdpid)
    GTEST_SKIP() << "this CPU has no RDPID";
  Patcher p(geometry(1, 1024), GetParam());
  p.hook(faddr(&fpt_add), 11);
  p.hook(faddr(&fpt_riplea), 12);
  p.hook(faddr(&fpt_jcc), 13);
  p.hook(faddr(&fpt_call_first), 14, addr(fpt_call_first_end) - faddr(&fpt_call_first), true);
  p.hook(faddr(&fpt_jmp_first), 15, addr(fpt_jmp_first_end) - faddr(&fpt_jmp_first), true);
  PinnedToOneCpu pin;
  p.arm();
  EXPECT_EQ(fpt_add(2, 3), 5);
  EXPECT_EQ(fpt_riplea(5), 1005);
  EXPECT_EQ(fpt_jcc(9), 9);    // jle not taken
  EXPECT_EQ(fpt_jcc(-9), -1);  // taken
  EXPECT_EQ(fpt_call_first(), 42);
  EXPECT_EQ(fpt_jmp_first(), 41);
  p.disarm();
  EXPECT_EQ(fpt_add(2, 3), 5);  // unpatched: no record

  const std::vector<FastRecord> recs = p.records();
  std::vector<Event> ev;
  ev.reserve(recs.size());
  for (const FastRecord& r : recs) ev.emplace_back(r.kind, r.function_id, r.depth);
  const std::vector<Event> want = {
      {kEntry, 11, 1}, {kExit, 11, 0}, {kEntry, 12, 1}, {kExit, 12, 0},
      {kEntry, 13, 1}, {kExit, 13, 0}, {kEntry, 13, 1}, {kExit, 13, 0},
      {kEntry, 14, 1}, {kExit, 14, 0}, {kEntry, 15, 1}, {kExit, 15, 0},
  };
  EXPECT_EQ(ev, want);
  for (size_t i = 0; i < recs.size(); ++i) {
    // The thread pointer is glibc's pthread_self(); time goes forward.
    EXPECT_EQ(recs[i].thread_pointer, static_cast<uint64_t>(pthread_self()));
    if (i) {
      EXPECT_GE(recs[i].tsc, recs[i - 1].tsc);
    }
  }
  EXPECT_EQ(p.ring().lost(), 0u);
}

INSTANTIATE_TEST_SUITE_P(FastPathTrampoline, FastPathTrampolineTsc,
                         ::testing::Values(TscRead::Rdtscp, TscRead::RdtscRdpid),
                         [](const auto& param_info) {
                           return param_info.param == TscRead::Rdtscp ? std::string("rdtscp")
                                                                      : std::string("rdtsc_rdpid");
                         });

// fpt_jmp_first tail-jumps to fpt_helper41: both frames have the same stack
// slot, the inner one's "return address" is the stub the outer one put
// there. The inner return comes back to the stub, which then finds the outer
// frame: two exits, innermost first.
TEST(FastPathTrampoline, TailCallBetweenHookedFunctions) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_jmp_first), 15, addr(fpt_jmp_first_end) - faddr(&fpt_jmp_first), true);
  p.hook(faddr(&fpt_helper41), 16);
  PinnedToOneCpu pin;
  p.arm();
  EXPECT_EQ(fpt_jmp_first(), 41);
  p.disarm();
  const std::vector<Event> want = {
      {kEntry, 15, 1}, {kEntry, 16, 2}, {kExit, 16, 1}, {kExit, 15, 0}};
  EXPECT_EQ(p.events(), want);
}

// A call whose return address is the kernel's uretprobe trampoline (a
// kernel-probed caller tail-called it) is recorded without hooking its
// return (docs/fast-path.md, "Hot functions", design step 3). Stood in for
// here by the stub: fpt_jmp_first's frame puts it into the slot fpt_helper41
// then enters with.
TEST(FastPathTrampoline, AReturnIntoTheUretprobeTrampolineIsNotHooked) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_jmp_first), 15, addr(fpt_jmp_first_end) - faddr(&fpt_jmp_first), true);
  p.hook(faddr(&fpt_helper41), 16);
  p.set_uretprobe(p.return_stub());
  PinnedToOneCpu pin;
  p.arm();
  EXPECT_EQ(fpt_jmp_first(), 41);
  EXPECT_EQ(fpt_helper41(), 41);  // an ordinary call: hooked as ever
  p.disarm();
  const std::vector<Event> want = {
      {kEntry, 15, 1}, {kNoExit, 16, 1}, {kExit, 15, 0}, {kEntry, 16, 1}, {kExit, 16, 0}};
  EXPECT_EQ(p.events(), want);
}

TEST(FastPathTrampoline, DeepRecursionOverflowsTheShadowStackHarmlessly) {
  constexpr uint32_t kDepth = 1024;
  Patcher p(geometry(1, 1 << 15, kDepth));
  p.hook(faddr(&fpt_rec), 21);
  PinnedToOneCpu pin;
  p.arm();
  EXPECT_EQ(fpt_rec(9999), 9999);  // 10000 nested calls
  p.disarm();

  const std::vector<Event> ev = p.events();
  ASSERT_EQ(ev.size(), 10000u + kDepth);
  // The first kDepth calls are hooked, the rest recorded without their
  // return; the hooked ones return innermost first.
  for (uint32_t i = 0; i < kDepth; ++i) EXPECT_EQ(ev[i], Event(kEntry, 21, i + 1)) << i;
  for (uint32_t i = kDepth; i < 10000; ++i) ASSERT_EQ(ev[i], Event(kNoExit, 21, kDepth)) << i;
  for (uint32_t i = 0; i < kDepth; ++i)
    EXPECT_EQ(ev[10000 + i], Event(kExit, 21, kDepth - 1 - i)) << i;
}

TEST(FastPathTrampoline, LongjmpOverThreeHookedFramesIsUnwoundAtTheNextReturn) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_lj_driver), 1);
  p.hook(faddr(&fpt_lj_a), 2);
  p.hook(faddr(&fpt_lj_b), 3);
  p.hook(faddr(&fpt_lj_c), 4);
  PinnedToOneCpu pin;
  p.arm();
  EXPECT_EQ(fpt_lj_driver(), 7);
  EXPECT_EQ(fpt_lj_driver(), 7);
  p.disarm();
  const std::vector<Event> once = {
      {kEntry, 1, 1},   {kEntry, 2, 2},   {kEntry, 3, 3},   {kEntry, 4, 4},
      {kUnwound, 4, 3}, {kUnwound, 3, 2}, {kUnwound, 2, 1}, {kExit, 1, 0},
  };
  std::vector<Event> want = once;
  want.insert(want.end(), once.begin(), once.end());
  EXPECT_EQ(p.events(), want);
}

namespace {

// 4 threads x 100000 calls of fpt_add: every result checked, then every
// record counted per thread.
struct ThreadRun {
  std::vector<uint64_t> thread_pointers;
  long long wrong_results = 0;
};

ThreadRun run_threads(int threads, int calls) {
  ThreadRun run;
  run.thread_pointers.resize(static_cast<size_t>(threads));
  std::vector<long long> wrong(static_cast<size_t>(threads));
  std::vector<std::thread> ts;
  ts.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      run.thread_pointers[static_cast<size_t>(t)] = static_cast<uint64_t>(pthread_self());
      for (int i = 0; i < calls; ++i)
        if (fpt_add(i, t) != i + t) ++wrong[static_cast<size_t>(t)];
    });
  for (auto& t : ts) t.join();
  for (long long w : wrong) run.wrong_results += w;
  return run;
}

}  // namespace

TEST(FastPathTrampoline, FourThreadsRecordEveryCall) {
  constexpr int kThreads = 4, kCalls = 100000;
  Patcher p(geometry(4, 1 << 20));
  p.hook(faddr(&fpt_add), 31);
  p.arm();
  const ThreadRun run = run_threads(kThreads, kCalls);
  p.disarm();
  EXPECT_EQ(run.wrong_results, 0);
  std::map<uint64_t, std::pair<int, int>> per_thread;  // entries, exits
  for (const FastRecord& r : p.records()) {
    ASSERT_EQ(r.function_id, 31u);
    if (r.kind == kEntry) {
      EXPECT_EQ(r.depth, 1u);
      ++per_thread[r.thread_pointer].first;
    } else {
      ASSERT_EQ(r.kind, kExit);
      EXPECT_EQ(r.depth, 0u);
      ++per_thread[r.thread_pointer].second;
    }
  }
  EXPECT_EQ(p.ring().lost(), 0u);
  ASSERT_EQ(per_thread.size(), static_cast<size_t>(kThreads));
  for (uint64_t tp : run.thread_pointers)
    EXPECT_EQ(per_thread[tp], std::make_pair(kCalls, kCalls)) << std::hex << tp;
}

TEST(FastPathTrampoline, ATinyRingLosesRecordsNotCalls) {
  constexpr int kThreads = 4, kCalls = 100000;
  Patcher p(geometry(2, 16));
  p.hook(faddr(&fpt_add), 32);
  p.arm();
  const ThreadRun run = run_threads(kThreads, kCalls);
  p.disarm();
  EXPECT_EQ(run.wrong_results, 0);
  const size_t kept = p.records().size();
  EXPECT_LE(kept, 2u * 16u);
  EXPECT_GT(p.ring().lost(), 0u);
  EXPECT_EQ(kept + p.ring().lost(), 2u * kThreads * kCalls);
}

namespace {
volatile sig_atomic_t g_handler_calls = 0;
volatile sig_atomic_t g_handler_wrong = 0;
void call_from_handler(int) {
  if (fpt_add(g_handler_calls, 1) != g_handler_calls + 1) g_handler_wrong = 1;
  g_handler_calls = g_handler_calls + 1;
}

// SIGUSR1 to the calling thread every 20 us, its handler calling the
// hooked fpt_add (call_from_handler), from start() to the destructor:
// thousands of interruptions, most inside the trampoline's code (it is
// most of a loop of calls' time).
class HandlerCallsEvery20us {
 public:
  HandlerCallsEvery20us() {
    struct sigaction sa {};
    sa.sa_handler = call_from_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGUSR1, &sa, &old_) == 0;
    g_handler_calls = 0;
    g_handler_wrong = 0;
  }
  ~HandlerCallsEvery20us() {
    if (armed_) timer_delete(timer_);
    if (installed_) sigaction(SIGUSR1, &old_, nullptr);
  }
  HandlerCallsEvery20us(const HandlerCallsEvery20us&) = delete;
  HandlerCallsEvery20us& operator=(const HandlerCallsEvery20us&) = delete;

  // False when the handler or the timer could not be set up.
  bool start() {
    sigevent sev{};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGUSR1;
    sev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));  // glibc 2.36 has no macro
    if (!installed_ || timer_create(CLOCK_MONOTONIC, &sev, &timer_) != 0) return false;
    armed_ = true;
    const itimerspec every{{0, 20000}, {0, 20000}};
    return timer_settime(timer_, 0, &every, nullptr) == 0;
  }
  void stop() {
    if (armed_) timer_delete(timer_);
    armed_ = false;
  }

 private:
  struct sigaction old_ {};
  bool installed_ = false;
  bool armed_ = false;
  timer_t timer_{};
};
}  // namespace

// Signal handlers that call the hooked function land anywhere in the
// entry code and the return stub of the interrupted call (the windows
// trampoline_template.cpp reasons about): every call is still recorded
// whole, none is taken for an abandoned frame.
TEST(FastPathTrampoline, SignalHandlersCallingHookedFunctions) {
  constexpr int kCalls = 200000;
  Patcher p(geometry(1, 1 << 21));  // room for every record
  p.hook(faddr(&fpt_add), 61);
  HandlerCallsEvery20us signals;
  p.arm();
  ASSERT_TRUE(signals.start());
  long long wrong = 0;
  for (int i = 0; i < kCalls; ++i)
    if (fpt_add(i, 2) != i + 2) ++wrong;
  signals.stop();
  p.disarm();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(g_handler_wrong, 0);
  const long long handled = g_handler_calls;
  EXPECT_GT(handled, 0);
  RecordProperty("handler_calls", std::to_string(handled));
  long long entries = 0, exits = 0, others = 0;
  for (const FastRecord& r : p.records()) {
    if (r.kind == kEntry) {
      ++entries;
      // Depth 2 for a handler's call that interrupted a hooked one.
      EXPECT_TRUE(r.depth == 1 || r.depth == 2) << r.depth;
    } else if (r.kind == kExit) {
      ++exits;
    } else {
      ++others;
    }
  }
  EXPECT_EQ(p.ring().lost(), 0u);
  EXPECT_EQ(others, 0);
  EXPECT_EQ(entries, kCalls + handled);
  EXPECT_EQ(exits, kCalls + handled);
}

// A signal that lands between a record's two reads of its lane's indices:
// the handler's own records go in and a reader draining meanwhile moves
// the tail on. With the head read first, the tail read after could be past
// it, and head - tail looked like a full lane: the record was dropped and
// counted lost (1 run in 10 of the signals corpus test, with room for
// millions of records; here 3 runs in 10 when the trampoline re-read the
// head once). The tail is read first now. The reader drains as atrace
// does, on another thread, all the time.
TEST(FastPathTrampoline, AHeadReadBeforeASignalIsNotAFullLane) {
  constexpr long long kSignals = 20000, kMaxCalls = 20000000;
  Patcher p(geometry(1, 1 << 20));
  p.hook(faddr(&fpt_add), 62);
  HandlerCallsEvery20us signals;
  p.arm();
  std::atomic<bool> done{false};
  uint64_t taken = 0;
  std::thread reader([&] {
    std::vector<FastRecord> batch;
    for (bool last = false; !last;) {
      last = done.load();
      batch.clear();
      p.ring().drain(batch);
      taken += batch.size();
    }
  });
  const bool started = signals.start();
  long long wrong = 0, calls = 0;
  for (; started && calls < kMaxCalls && g_handler_calls < kSignals; ++calls)
    if (fpt_add(static_cast<int>(calls), 2) != calls + 2) ++wrong;
  signals.stop();
  p.disarm();
  done = true;
  reader.join();
  ASSERT_TRUE(started);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(g_handler_wrong, 0);
  const long long handled = g_handler_calls;
  EXPECT_GT(handled, 0);
  RecordProperty("handler_calls", std::to_string(handled));
  EXPECT_EQ(p.ring().lost(), 0u);
  EXPECT_EQ(taken, 2u * static_cast<uint64_t>(calls + handled));
}

TEST(FastPathTrampoline, ArgumentsAndReturnValuesAreUnchanged) {
  const FptBig big{10, 20, 30};
  const double mix = fpt_mix(1, 2.5, big, 0.25f);
  const FptPair pair = fpt_pair(7, 3);
  const long double ld = fpt_ld(1.5L);
  char plain[128];
  const int plain_n =
      fpt_format(plain, sizeof plain, "%d %s %.3f %ld %c %.1f", 42, "x", 3.25, 1L << 40, 'q', -1.5);

  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_mix), 41, 64);
  p.hook(faddr(&fpt_pair), 42, 64);
  p.hook(faddr(&fpt_ld), 43, 64);
  p.hook(faddr(&fpt_format), 44, 64);
  PinnedToOneCpu pin;
  p.arm();
  const double mix2 = fpt_mix(1, 2.5, big, 0.25f);
  const FptPair pair2 = fpt_pair(7, 3);
  const long double ld2 = fpt_ld(1.5L);
  char hooked[128];
  const int hooked_n = fpt_format(hooked, sizeof hooked, "%d %s %.3f %ld %c %.1f", 42, "x", 3.25,
                                  1L << 40, 'q', -1.5);
  p.disarm();

  EXPECT_EQ(mix2, mix);
  EXPECT_EQ(mix, 1 + 2.5 + 10 + 40 + 90 + 0.25);
  EXPECT_EQ(pair2.a, 10);
  EXPECT_EQ(pair2.b, 4);
  EXPECT_EQ(pair.a, pair2.a);
  EXPECT_TRUE(ld2 == ld && ld == 4.5L);
  EXPECT_STREQ(hooked, plain);
  EXPECT_STREQ(hooked, "42 x 3.250 1099511627776 q -1.5");
  EXPECT_EQ(hooked_n, plain_n);
  const std::vector<Event> want = {
      {kEntry, 41, 1}, {kExit, 41, 0}, {kEntry, 42, 1}, {kExit, 42, 0},
      {kEntry, 43, 1}, {kExit, 43, 0}, {kEntry, 44, 1}, {kExit, 44, 0},
  };
  EXPECT_EQ(p.events(), want);
}

TEST(FastPathTrampoline, CxxThrowThroughHookedFrames) {
  int cleanups = 0;
  ASSERT_EQ(fpt_throw_a(1, &cleanups), -100);
  ASSERT_EQ(fpt_throw_a(0, &cleanups), 2);
  ASSERT_EQ(cleanups, 2);

  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_throw_a), 51, 64);
  p.hook(faddr(&fpt_throw_b), 52, 64);
  p.hook(faddr(&fpt_throw_c), 53, 64);
  p.hook_unwinders();
  PinnedToOneCpu pin;
  p.arm();
  cleanups = 0;
  const int thrown = fpt_throw_a(1, &cleanups);
  const int returned = fpt_throw_a(0, &cleanups);
  p.disarm();
  EXPECT_EQ(thrown, -100);
  EXPECT_EQ(returned, 2);
  EXPECT_EQ(cleanups, 2);
  // The throw gives the unwinder every original return address back; the
  // catch in fpt_throw_a finds the two frames above it unwound (Caught, from
  // the top) and re-arms its own, which returns through the stub; the next
  // call is recorded whole.
  const std::vector<Event> want = {
      {kEntry, 51, 1},  {kEntry, 52, 2}, {kEntry, 53, 3}, {kCaught, 53, 2},
      {kCaught, 52, 1}, {kExit, 51, 0},  {kEntry, 51, 1}, {kEntry, 52, 2},
      {kEntry, 53, 3},  {kExit, 53, 2},  {kExit, 52, 1},  {kExit, 51, 0},
  };
  EXPECT_EQ(p.events(), want);
}

// pthread_exit unwinds the thread with _Unwind_ForcedUnwind: the hook gives
// it the original return addresses, the two frames end with the thread.
TEST(FastPathTrampoline, PthreadExitThroughHookedFrames) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_thread_outer), 71, 64);
  p.hook(faddr(&fpt_exit_thread), 72, 64);
  p.hook_unwinders();
  p.arm();
  static uint64_t thread_pointer;
  pthread_t t;
  ASSERT_EQ(pthread_create(
                &t, nullptr,
                [](void*) -> void* {
                  thread_pointer = static_cast<uint64_t>(pthread_self());
                  fpt_thread_outer(reinterpret_cast<void*>(0x5eed));
                  return nullptr;
                },
                nullptr),
            0);
  void* value = nullptr;
  ASSERT_EQ(pthread_join(t, &value), 0);
  p.disarm();
  EXPECT_EQ(value, reinterpret_cast<void*>(0x5eed));
  const std::vector<FastRecord> recs = p.records();
  std::vector<Event> ev;
  for (const FastRecord& r : recs) {
    EXPECT_EQ(r.thread_pointer, thread_pointer);
    ev.emplace_back(r.kind, r.function_id, r.depth);
  }
  const std::vector<Event> want = {
      {kEntry, 71, 1}, {kEntry, 72, 2}, {kThreadExit, 72, 1}, {kThreadExit, 71, 0}};
  EXPECT_EQ(ev, want);
}

namespace {
Patcher* g_undo_patcher = nullptr;
size_t g_fixups = 0;

// What atrace's undo does with the threads stopped, done here from inside
// the two hooked calls themselves.
int undo_now(int x) {
  Patcher& p = *g_undo_patcher;
  const RingHeader& layout = p.ring().layout();
  const uint8_t* ring = bytes_at(p.ring().address());
  const std::vector<ReturnFixup> fixups = return_fixups(
      ring + layout.threads_offset, layout.total_bytes - layout.threads_offset, layout);
  g_fixups = fixups.size();
  for (const ReturnFixup& f : fixups) {
    auto* slot = reinterpret_cast<uint64_t*>(f.stack_slot);  // NOLINT(performance-no-int-to-ptr)
    if (*slot == p.return_stub()) *slot = f.return_address;
  }
  return x * 10;
}

int call_undo(int x) { return fpt_with_callback(undo_now, x + 1); }
}  // namespace

// Undo while two hooked calls are live: both return straight to their
// callers (no Exit record), with their results.
TEST(FastPathTrampoline, UndoPutsTheReturnAddressesBack) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_with_callback), 81, 64);
  g_undo_patcher = &p;
  PinnedToOneCpu pin;
  p.arm();
  EXPECT_EQ(fpt_with_callback(call_undo, 1), 22);  // ((1 + 1) * 10 + 1) + 1
  p.disarm();
  EXPECT_EQ(g_fixups, 2u);
  const std::vector<Event> want = {{kEntry, 81, 1}, {kEntry, 81, 2}};
  EXPECT_EQ(p.events(), want);
}

// Every function of test_fastpath_trampoline_workload.cpp (GCC -O2,
// endbr64 first), found by its symbol and patched after the same checks as
// atrace's: the program's result is unchanged and every call is recorded
// with its exit.
TEST(FastPathTrampoline, EveryFunctionOfACompiledProgram) {
  fpw_counter = 0;
  const long plain = fpw_run();

  const uint64_t bias = program_bias();
  std::vector<uprobes::ElfFunction> fns;
  for (auto& f : uprobes::read_functions("/proc/self/exe"))
    if (f.mangled.rfind("fpw_", 0) == 0) fns.push_back(f);
  ASSERT_EQ(fns.size(), 9u);
  std::vector<uint64_t> starts;
  starts.reserve(fns.size());
  for (const auto& f : fns) starts.push_back(f.address);
  const uprobes::CodeEntries entries("/proc/self/exe", starts);

  Patcher p(geometry(1, 1 << 16));
  std::map<uint32_t, std::string> names;
  uint32_t id = 100;
  for (const auto& f : fns) {
    const uint64_t at = f.address + bias;
    ASSERT_EQ(bytes_at(at)[0], 0xf3) << f.mangled << ": no endbr64";
    const PatchPlan plan = p.plan(at, f.size, id, true);
    ASSERT_TRUE(plan.ok()) << f.mangled << ": " << plan.refusal;
    ASSERT_EQ(entry_branch_refusal(entries, f.address, plan.replaced), "") << f.mangled;
    p.hook(at, id, f.size, true);
    names[id++] = f.mangled;
  }
  PinnedToOneCpu pin;
  p.arm();
  fpw_counter = 0;
  fpw_fib_calls = 0;
  const long hooked = fpw_run();
  p.disarm();
  EXPECT_EQ(hooked, plain);

  std::map<std::string, std::pair<int, int>> calls;  // entries, exits
  for (const FastRecord& r : p.records()) {
    ASSERT_TRUE(r.kind == kEntry || r.kind == kExit) << r.kind;
    auto& c = calls[names.at(r.function_id)];
    ++(r.kind == kEntry ? c.first : c.second);
  }
  EXPECT_EQ(p.ring().lost(), 0u);
  for (const auto& [name, c] : calls) EXPECT_EQ(c.first, c.second) << name;
  EXPECT_EQ(calls["fpw_run"], std::make_pair(1, 1));
  EXPECT_EQ(fpw_fib_calls, 1973);
  EXPECT_EQ(calls["fpw_fib"], std::make_pair(1973, 1973));
  EXPECT_EQ(calls["fpw_hash"], std::make_pair(5, 5));
  EXPECT_EQ(calls["fpw_classify"], std::make_pair(100, 100));
  EXPECT_EQ(calls["fpw_count"], std::make_pair(10, 10));
  EXPECT_EQ(calls["fpw_lookup"], std::make_pair(10, 10));
  EXPECT_GT(calls["fpw_cmp"].first, 500);  // qsort's callback, from libc
}

namespace {
int g_alt_result = 0;
void throw_in_handler(int) {
  int cleanups = 0;
  g_alt_result = fpt_throw_a(1, &cleanups);
}
}  // namespace

// A signal handler on an alternate stack mapped above the thread's stack
// throws and catches inside itself, through hooked frames, while a hooked
// call below the handler is live: the unwinder hook gives back the frames
// above its stack pointer (the handler's), keeps the interrupted one, which
// then returns through the stub and finds its frame.
TEST(FastPathTrampoline, ThrowOnAnAltStackAboveTheThreadsStack) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_raise_in), 91, 64);
  p.hook(faddr(&fpt_throw_a), 51, 64);
  p.hook(faddr(&fpt_throw_b), 52, 64);
  p.hook(faddr(&fpt_throw_c), 53, 64);
  p.hook_unwinders();
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_handler = throw_in_handler;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
  p.arm();
  int raised = 0;
  bool above = false;
  std::thread t([&] {
    constexpr size_t kAltSize = 256 << 10;
    int here = 0;
    void* alt = MAP_FAILED;
    for (uint64_t hint = (addr(&here) + (64ull << 20)) & ~uint64_t{0xfff};
         alt == MAP_FAILED && hint < (addr(&here) + (4ull << 30)); hint += 16ull << 20)
      alt = mmap(const_cast<uint8_t*>(bytes_at(hint)), kAltSize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (alt == MAP_FAILED) return;
    above = addr(alt) > addr(&here);
    stack_t ss{};
    ss.ss_sp = alt;
    ss.ss_size = kAltSize;
    sigaltstack(&ss, nullptr);
    raised = fpt_raise_in(SIGUSR2);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    munmap(alt, kAltSize);
  });
  t.join();
  p.disarm();
  sigaction(SIGUSR2, &old, nullptr);
  ASSERT_TRUE(above);
  EXPECT_EQ(raised, SIGUSR2);
  EXPECT_EQ(g_alt_result, -100);
  const std::vector<Event> want = {
      {kEntry, 91, 1},  {kEntry, 51, 2},  {kEntry, 52, 3}, {kEntry, 53, 4},
      {kCaught, 53, 3}, {kCaught, 52, 2}, {kExit, 51, 1},  {kExit, 91, 0},
  };
  EXPECT_EQ(p.events(), want);
}

// A rethrow: the catch in fpu_mid finds fpu_inner unwound and re-arms the
// three frames below it; `throw;` disarms them again, and fpu_top's catch
// finds fpu_mid and fpu_outer unwound and re-arms itself, whose return is
// timed. Every exit is recorded once, none is invented.
TEST(FastPathUnwind, RethrowReachesTheOuterCatch) {
  ASSERT_EQ(fpu_top(3), -3);
  ASSERT_EQ(fpu_top(0), 3);
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpu_top), 61, 64);
  p.hook(faddr(&fpu_outer), 62, 64);
  p.hook(faddr(&fpu_mid), 63, 64);
  p.hook(faddr(&fpu_inner), 64, 64);
  p.hook_unwinders();
  PinnedToOneCpu pin;
  p.arm();
  const int thrown = fpu_top(3);
  const int returned = fpu_top(0);
  p.disarm();
  EXPECT_EQ(thrown, -3);
  EXPECT_EQ(returned, 3);
  const std::vector<Event> want = {
      {kEntry, 61, 1},  {kEntry, 62, 2},  {kEntry, 63, 3},  {kEntry, 64, 4},
      {kCaught, 64, 3}, {kCaught, 63, 2}, {kCaught, 62, 1}, {kExit, 61, 0},
      {kEntry, 61, 1},  {kEntry, 62, 2},  {kEntry, 63, 3},  {kEntry, 64, 4},
      {kExit, 64, 3},   {kExit, 63, 2},   {kExit, 62, 1},   {kExit, 61, 0},
  };
  EXPECT_EQ(p.events(), want);
}

// longjmp out of three hooked frames whose caller is not hooked: no return
// of the thread's shows them gone, the next entry does (the stack-pointer
// rule: their slots are at or below its own).
TEST(FastPathUnwind, LongjmpIsFoundAtTheNextEntry) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_lj_a), 2);
  p.hook(faddr(&fpt_lj_b), 3);
  p.hook(faddr(&fpt_lj_c), 4);
  PinnedToOneCpu pin;
  p.arm();
  EXPECT_EQ(fpt_lj_driver(), 7);
  EXPECT_EQ(fpt_lj_driver(), 7);
  p.disarm();
  const std::vector<Event> want = {
      {kEntry, 2, 1},   {kEntry, 3, 2}, {kEntry, 4, 3}, {kUnwound, 4, 2}, {kUnwound, 3, 1},
      {kUnwound, 2, 0}, {kEntry, 2, 1}, {kEntry, 3, 2}, {kEntry, 4, 3},
  };
  EXPECT_EQ(p.events(), want);
}

namespace {
int fork_here(int x) { return static_cast<int>(fork()) + x; }
}  // namespace

// fork inside a hooked call: both processes return through the stub, each
// with its own copy of the shadow stack (the ring is a private mapping).
TEST(FastPathTrampoline, ForkInsideAHookedCall) {
  Patcher p(geometry(1, 1024));
  p.hook(faddr(&fpt_with_callback), 101, 64);
  PinnedToOneCpu pin;
  p.arm();
  const int r = fpt_with_callback(fork_here, 1);
  if (r == 2) {  // the child: returned through the stub; and again
    const int again = fpt_with_callback(
        +[](int x) { return x * 2; }, 5);
    _exit(again == 11 ? 42 : 1);
  }
  p.disarm();
  const pid_t child = r - 2;
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42);
  const std::vector<Event> want = {{kEntry, 101, 1}, {kExit, 101, 0}};
  EXPECT_EQ(p.events(), want);
}

// More live threads than thread slots: two threads get a slot and are
// recorded whole, the other two are recorded EntryNoExit, all calls right.
TEST(FastPathTrampoline, AFullThreadTableRecordsEntriesWithoutExits) {
  constexpr int kThreads = 4, kCalls = 10000;
  RingGeometry g = geometry(1, 1 << 17);
  g.thread_slots = 2;
  Patcher p(g);
  p.hook(faddr(&fpt_add), 111);
  p.arm();
  std::latch started(kThreads), done(kThreads);
  std::vector<uint64_t> tps(kThreads);
  std::vector<long long> wrong(kThreads);
  std::vector<std::thread> ts;
  ts.reserve(kThreads);
  for (size_t t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      tps[t] = static_cast<uint64_t>(pthread_self());
      started.arrive_and_wait();  // all alive at once: four thread pointers
      for (int i = 0; i < kCalls; ++i)
        if (fpt_add(i, 1) != i + 1) ++wrong[t];
      done.arrive_and_wait();
    });
  for (auto& t : ts) t.join();
  p.disarm();
  for (long long w : wrong) EXPECT_EQ(w, 0);
  std::map<uint64_t, std::map<uint16_t, int>> kinds;  // per thread, per kind
  for (const FastRecord& r : p.records()) ++kinds[r.thread_pointer][r.kind];
  ASSERT_EQ(kinds.size(), static_cast<size_t>(kThreads));
  int whole = 0, entry_only = 0;
  for (uint64_t tp : tps) {
    const auto& k = kinds[tp];
    if (k.count(kNoExit)) {
      EXPECT_EQ(k, (std::map<uint16_t, int>{{kNoExit, kCalls}}));
      ++entry_only;
    } else {
      EXPECT_EQ(k, (std::map<uint16_t, int>{{kEntry, kCalls}, {kExit, kCalls}}));
      ++whole;
    }
  }
  EXPECT_EQ(whole, 2);
  EXPECT_EQ(entry_only, 2);
}

}  // namespace atrace::fastpath
