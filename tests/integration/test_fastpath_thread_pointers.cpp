// The thread pointer of each new thread, carried by its fork event (issue
// 35: the fast path's records name threads by it), against what each thread
// of target_thread_pointers says it is; and the map from (pointer, time) to
// tid built from the recording.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "bpf/atrace.h"
#include "fastpath/thread_pointers.h"
#include "formats/trace_reader.h"
#include "record/bpf_session.h"
#include "record/features.h"
#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

struct Who {
  bool main = false;
  uint32_t tid = 0;
  uint64_t self = 0, fs = 0;
};

// "main tid=T self=0xP fs=0xF" and "thread tid=T self=0xP fs=0xF" lines.
std::vector<Who> parse_who(const std::string& out) {
  std::vector<Who> all;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    Who w;
    unsigned long tid = 0, self = 0, fs = 0;
    char what[8] = {};
    if (std::sscanf(line.c_str(), "%7s tid=%lu self=0x%lx fs=0x%lx", what, &tid, &self, &fs) != 4)
      continue;
    w.main = std::string(what) == "main";
    w.tid = static_cast<uint32_t>(tid);
    w.self = self;
    w.fs = fs;
    all.push_back(w);
  }
  return all;
}

class FastPathThreadPointers : public IntegrationTest {};

TEST_F(FastPathThreadPointers, ForkEventsCarryEachNewThreadsPointer) {
  const std::string out = file("tp.data");
  Result r = record(out, "", {TARGET_THREAD_POINTERS_BIN, tag_arg()}, {"--kernel=proc"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const std::vector<Who> who = parse_who(r.out);
  ASSERT_EQ(who.size(), 6u) << r.out;
  ASSERT_TRUE(who[0].main);
  for (const Who& w : who) EXPECT_EQ(w.self, w.fs) << "glibc x86-64: pthread_self() is the TCB";
  // Joined before the next started: glibc's stack cache gives the three
  // the same TCB; the two alive together have two.
  EXPECT_EQ(who[1].fs, who[2].fs);
  EXPECT_EQ(who[2].fs, who[3].fs);
  EXPECT_NE(who[4].fs, who[5].fs);

  formats::TraceReader reader(out);
  ASSERT_EQ(reader.lost().total(), 0u);
  struct Life {
    uint64_t fork_ts = 0, exit_ts = 0, pointer = 0;
  };
  std::map<uint32_t, Life> lives;
  std::vector<formats::Event> events;  // time order, as read
  formats::Event ev;
  while (reader.next(ev)) {
    if (ev.pid != who[0].tid) continue;
    if (ev.kind == formats::EventKind::ProcFork && (ev.flags & formats::kForkThread)) {
      Life& l = lives[static_cast<uint32_t>(ev.arg1)];
      l.fork_ts = ev.ts;
      l.pointer = formats::fork_thread_pointer(ev);
      events.push_back(ev);
    } else if (ev.kind == formats::EventKind::ThreadExit) {
      lives[ev.tid].exit_ts = ev.ts;
      events.push_back(ev);
    }
  }
  for (size_t i = 1; i < who.size(); ++i) {
    ASSERT_TRUE(lives.count(who[i].tid)) << "no fork event of thread " << who[i].tid;
    EXPECT_EQ(lives[who[i].tid].pointer, who[i].fs) << "thread " << who[i].tid;
  }

  // The map, as the fast path's reader builds it: main from the install,
  // the others from their forks and exits.
  fastpath::ThreadPointerMap map;
  map.add_existing({{who[0].tid, who[0].fs}}, 0);
  for (const formats::Event& e : events) {
    if (e.kind == formats::EventKind::ProcFork)
      map.thread_created(e.ts, static_cast<uint32_t>(e.arg1), formats::fork_thread_pointer(e));
    else map.thread_ended(e.ts, e.tid);
  }
  for (size_t i = 1; i < who.size(); ++i) {
    const Life& l = lives[who[i].tid];
    ASSERT_GT(l.exit_ts, l.fork_ts) << "thread " << who[i].tid << " has no exit event";
    EXPECT_EQ(map.tid_at(who[i].fs, l.fork_ts + (l.exit_ts - l.fork_ts) / 2), who[i].tid);
  }
  // Before the first thread was created, its pointer was nobody's.
  EXPECT_EQ(map.tid_at(who[1].fs, lives[who[1].tid].fork_ts - 1), fastpath::kUnknownTid);
  EXPECT_EQ(map.tid_at(who[0].fs, lives[who[5].tid].exit_ts), who[0].tid);
}

// With the fast path on, the programs record a new thread's fork whatever
// the kernel groups (BpfSettings::thread_forks): here, of this process,
// with no group at all.
TEST_F(FastPathThreadPointers, ThreadForksAreRecordedWithoutTheProcGroup) {
  BpfSettings s;
  s.kernel_groups = 0;
  s.thread_forks = true;
  s.functions = s.usdt = s.module_hooks = false;
  BpfSession session(s, detect_kernel_features());
  struct Fork {
    uint32_t tid = 0;
    uint64_t pointer = 0;
  };
  std::vector<Fork> forks;
  size_t other = 0;
  session.start([&](const void* data, size_t size) {
    const auto* h = static_cast<const atrace_rec_hdr*>(data);
    if (size >= sizeof(atrace_rec_fork) && h->kind == ATRACE_REC_FORK) {
      const auto* f = static_cast<const atrace_rec_fork*>(data);
      forks.push_back({static_cast<uint32_t>(f->a.arg1), f->thread_pointer});
    } else if (h->kind != ATRACE_REC_COMM && h->kind != ATRACE_REC_THREAD_EXIT) {
      ++other;
    }
  });
  session.trace(getpid());
  session.attach_tracepoints();
  Who seen;
  pthread_t t;
  ASSERT_EQ(pthread_create(
                &t, nullptr,
                [](void* arg) -> void* {
                  auto* w = static_cast<Who*>(arg);
                  w->tid = static_cast<uint32_t>(syscall(SYS_gettid));
                  w->self = static_cast<uint64_t>(pthread_self());
                  return nullptr;
                },
                &seen),
            0);
  pthread_join(t, nullptr);
  session.drain();
  session.untrace(getpid());
  ASSERT_EQ(forks.size(), 1u);
  EXPECT_EQ(forks[0].tid, seen.tid);
  EXPECT_EQ(forks[0].pointer, seen.self);
  EXPECT_EQ(other, 0u) << "no other group's records";
}

}  // namespace
}  // namespace atrace::it
