#include "record/unwind_guard.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "base/capabilities.h"
#include "base/diagnostics.h"
#include "bpf/unwind.h"
#include "bpf/unwind.skel.h"
#include "fastpath/inject/as_pointer.h"
#include "record/uprobe_multi.h"

namespace atrace {

void UnwindGuard::Deleter::operator()(unwind_bpf* s) const { unwind_bpf::destroy(s); }
void UnwindGuard::Deleter::operator()(ring_buffer* r) const { ring_buffer__free(r); }

namespace {

// The key the programs build from a return instance's uprobe: the file as
// the kernel names it (dev in its MKDEV encoding) and the file offset.
bool key_of(const uprobes::ProbeSite& s, atrace_unwind_key& key) {
  struct stat st {};
  if (stat(s.path.c_str(), &st) != 0) return false;
  key = {};
  key.ino = st.st_ino;
  key.dev = static_cast<__u32>(major(st.st_dev) << 20 | minor(st.st_dev));
  key.offset = s.offset;
  return true;
}

// The kfunc that queues a task work, which the release needs (Linux 6.18).
bool kernel_has_task_work() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return false;
  bool has =
      btf__find_by_name_kind(vmlinux, "bpf_task_work_schedule_resume_impl", BTF_KIND_FUNC) >= 0;
  btf__free(vmlinux);
  return has;
}

}  // namespace

UnwindGuard::UnwindGuard(const UnwindGuardMaps& maps, const std::vector<uprobes::ProbeSite>& sites,
                         bool multi, std::optional<bool> task_work)
    : multi_(multi) {
  // With the release program if the kernel has what it needs; a kernel
  // that refuses it gets the guard without it.
  auto open_and_load = [&](bool with_release) -> int {
    skel_.reset(unwind_bpf::open());
    if (!skel_)
      throw UnwindGuardError("cannot open the unwind programs: " + base::errno_text(errno));
    auto reuse = [](bpf_map* m, int fd) {
      if (int err = bpf_map__reuse_fd(m, fd); err)
        throw UnwindGuardError("cannot share atrace's maps: " + base::errno_text(err));
    };
    reuse(skel_->maps.rings, maps.rings);
    reuse(skel_->maps.lost, maps.lost);
    reuse(skel_->maps.traced_tgids, maps.traced_tgids);
    reuse(skel_->maps.thread_lost, maps.thread_lost);
    reuse(skel_->maps.lossy_threads, maps.lossy_threads);
    reuse(skel_->maps.unwind_states, maps.unwind_states);
    bpf_map__set_max_entries(skel_->maps.probe_ids,
                             static_cast<__u32>(std::max<size_t>(sites.size(), 1)));
    if (multi_) {
      auto t = static_cast<enum bpf_attach_type>(kBpfTraceUprobeMulti);
      bpf_program__set_expected_attach_type(skel_->progs.unwind_start, t);
      bpf_program__set_expected_attach_type(skel_->progs.unwind_walk, t);
      bpf_program__set_expected_attach_type(skel_->progs.unwind_catch, t);
      bpf_program__set_expected_attach_type(skel_->progs.unwind_walk_end, t);
      bpf_program__set_expected_attach_type(skel_->progs.unwind_switch, t);
    }
    bpf_program__set_autoload(skel_->progs.release_scan, with_release);
    return unwind_bpf::load(skel_.get());
  };
  int err = -1;
  if (task_work ? *task_work : kernel_has_task_work()) {
    err = open_and_load(true);
    can_release_ = err == 0;
    if (err)
      release_refused_ = "the kernel refused the release program (" + base::errno_text(err) + ")";
  }
  if (err) err = open_and_load(false);
  if (err)
    throw UnwindGuardError("the kernel refused the unwind programs (" + base::errno_text(err) +
                           "; -v shows the verifier's log)");
  for (const auto& s : sites) {
    probed_.insert({s.path, s.offset - s.entry_delta});
    atrace_unwind_key key;
    if (key_of(s, key))
      bpf_map_update_elem(bpf_map__fd(skel_->maps.probe_ids), &key, &s.id, BPF_ANY);
  }
  requests_.reset(ring_buffer__new(bpf_map__fd(skel_->maps.requests), on_request, this, nullptr));
  if (!requests_)
    throw UnwindGuardError("cannot read the unwind requests: " + base::errno_text(errno));
  // A request holds a traced thread until it is served: this thread does
  // nothing else, so the wait is one wake-up and a few writes.
  // Signals are the recorder's main thread's business (its signalfd).
  // The destructor wakes it through wake_ instead of waiting out a poll
  // timeout (up to 100 ms of every recording's end); its event reads as
  // ring 0 to libbpf, which then finds that ring empty or serves it.
  wake_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  struct epoll_event ev {};
  ev.events = EPOLLIN;
  if (wake_.get() >= 0)
    epoll_ctl(ring_buffer__epoll_fd(requests_.get()), EPOLL_CTL_ADD, wake_.get(), &ev);
  server_ = std::thread([this] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    // Real-time (SCHED_FIFO, the lowest priority): woken, it runs at once
    // instead of queueing behind the machine's other work (from the request
    // to this thread: 45-55 us as a normal thread on a busy 2-core machine,
    // 12 us so; docs/BENCHMARKS.md, "A throw through traced frames"). It
    // sleeps between requests and serves each in microseconds. Without the
    // privilege, it stays a normal thread.
    sched_param rt{};
    rt.sched_priority = 1;
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt);
    // A failing poll must not spin at that priority.
    while (!stop_.load(std::memory_order_relaxed))
      if (int got = ring_buffer__poll(requests_.get(), 100); got < 0 && got != -EINTR)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
}

// The release while the guard still serves unwinds (whichever way the
// recording ended, errors included); then the links: once they are gone
// no program runs, and no request comes.
UnwindGuard::~UnwindGuard() {
  release();
  links_.clear();
  for (auto& t : closing_) t.join();
  exit_link_ = {};
  stop_ = true;
  const uint64_t one = 1;
  if (wake_.get() >= 0) (void)!write(wake_.get(), &one, sizeof one);
  if (server_.joinable()) server_.join();
}

int UnwindGuard::on_request(void* self, void* data, size_t size) {
  static_cast<UnwindGuard*>(self)->serve(data, size);
  return 0;
}

// An fd of a process that has since executed a new program reads nothing
// (it holds the old address space): opened again.
int UnwindGuard::mem_fd(uint32_t tgid, bool reopen) {
  auto [it, fresh] = mem_.try_emplace(tgid);
  if (fresh || reopen)
    it->second.reset(open(("/proc/" + std::to_string(tgid) + "/mem").c_str(), O_RDWR | O_CLOEXEC));
  return it->second.get();
}

// Each slot is written only where it still holds what the program saw; the
// thread waits (in the program, or held by the release), so its stack
// cannot change meanwhile. All slots are read in one process_vm_readv and
// the matching ones written in one process_vm_writev (a stack is writable):
// two system calls instead of two per slot, which the thread waits for.
// What they cannot do goes through /proc/PID/mem, slot by slot.
void UnwindGuard::write_slots(uint32_t tgid, const atrace_unwind_write* ws, uint32_t n) {
  n = std::min<uint32_t>(n, ATRACE_UNWIND_MAX);
  uint64_t now[ATRACE_UNWIND_MAX];
  iovec local[ATRACE_UNWIND_MAX], remote[ATRACE_UNWIND_MAX];
  for (uint32_t i = 0; i < n; ++i) {
    local[i] = {&now[i], sizeof now[i]};
    remote[i] = {fastpath::as_pointer(ws[i].addr), sizeof now[i]};
  }
  const auto pid = static_cast<pid_t>(tgid);
  ssize_t got = n ? process_vm_readv(pid, local, n, remote, n, 0) : 0;
  if (got == static_cast<ssize_t>(n * sizeof(uint64_t))) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; ++i)
      if (now[i] == ws[i].expect) {
        local[k] = {const_cast<__u64*>(&ws[i].value), sizeof(uint64_t)};
        remote[k++] = remote[i];
      }
    if (k == 0 || process_vm_writev(pid, local, k, remote, k, 0) ==
                      static_cast<ssize_t>(k * sizeof(uint64_t)))
      return;
  }
  int fd = mem_fd(tgid, false);
  for (uint32_t i = 0; fd >= 0 && i < n; ++i) {
    const atrace_unwind_write& w = ws[i];
    uint64_t v = 0;
    auto at = static_cast<off_t>(w.addr);
    bool read = pread(fd, &v, sizeof v, at) == static_cast<ssize_t>(sizeof v);
    if (!read && i == 0 && (fd = mem_fd(tgid, true)) >= 0)
      read = pread(fd, &v, sizeof v, at) == static_cast<ssize_t>(sizeof v);
    if (read && v == w.expect) (void)!pwrite(fd, &w.value, sizeof w.value, at);
  }
}

// Once the release has begun, a catch no longer puts the trampoline back.
void UnwindGuard::serve(const void* data, size_t size) {
  if (size < sizeof(atrace_unwind_req)) return;
  const auto* req = static_cast<const atrace_unwind_req*>(data);
  std::lock_guard<std::mutex> lock(mu_);
  if (!(req->arm && releasing_)) write_slots(req->tgid, req->w, req->n);
  __u32 tid = req->tid;
  __u64 seq = req->seq;
  bpf_map_update_elem(bpf_map__fd(skel_->maps.served), &tid, &seq, BPF_ANY);
}

// One scan of the traced processes' threads: the slots of the held ones
// are written now (the lock keeps the requests of the others waiting
// until then). Returns how many threads still had armed slots, -errno
// when the scan failed.
long UnwindGuard::release_round(int iter_link) {
  std::lock_guard<std::mutex> lock(mu_);
  UniqueFd it(bpf_iter_create(iter_link));
  if (it.get() < 0) return -errno;
  std::string buf;
  char chunk[16384];
  for (ssize_t got; (got = read(it.get(), chunk, sizeof chunk)) != 0;) {
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -errno;
    }
    buf.append(chunk, static_cast<size_t>(got));
  }
  long threads = 0;
  for (size_t pos = 0; pos + sizeof(atrace_release_rec) <= buf.size();) {
    atrace_release_rec rec;
    std::memcpy(&rec, buf.data() + pos, sizeof rec);
    pos += sizeof rec;
    const size_t bytes = size_t{rec.n} * sizeof(atrace_unwind_write);
    if (rec.n > ATRACE_UNWIND_MAX || pos + bytes > buf.size()) break;
    std::vector<atrace_unwind_write> ws(rec.n);
    std::memcpy(ws.data(), buf.data() + pos, bytes);
    pos += bytes;
    threads++;
    if (rec.held) write_slots(rec.tgid, ws.data(), rec.n);
  }
  return threads;
}

// Rounds until a scan finds nothing armed: the held threads are written by
// the round, the running ones hand their slots over themselves (a task
// work at their next return to user mode) between rounds.
void UnwindGuard::release(std::chrono::milliseconds budget) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    releasing_ = true;
  }
  const char* consequence =
      "an exception through a call that was open at the stop would abort the program";
  if (!can_release_) {
    // Before Linux 6.18 nothing can hold a thread without a signal
    // (docs/exceptions.md, Limits): said there, not on every run.
    if (!release_refused_.empty()) base::warning("%s: %s", release_refused_.c_str(), consequence);
    return;
  }
  LinkPtr link(bpf_program__attach_iter(skel_->progs.release_scan, nullptr));
  long left = link ? 0 : -errno;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (link && (left = release_round(bpf_link__fd(link.get()))) > 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (left < 0)
    base::warning("cannot scan the traced threads for open calls (%s): %s",
                  base::errno_text(static_cast<int>(left)).c_str(), consequence);
  else if (left > 0)
    base::warning(
        "%ld thread(s) could not be reached to restore their "
        "return addresses: %s",
        left, consequence);
}

void UnwindGuard::attach(const std::vector<uprobes::UnwindPoint>& points, pid_t pid) {
  exit_link_.link.reset(bpf_program__attach(skel_->progs.unwind_exit));
  if (!exit_link_)
    throw UnwindGuardError("cannot attach to thread exits: " + base::errno_text(errno));
  attach_points(points, pid);
}

void UnwindGuard::detach_points() {
  for (auto& l : links_) closing_.emplace_back([link = std::move(l)]() mutable { link.close(); });
  links_.clear();
}

void UnwindGuard::attach_points(const std::vector<uprobes::UnwindPoint>& points, pid_t pid) {
  auto prog_of = [this](uprobes::UnwindRole r) {
    switch (r) {
      case uprobes::UnwindRole::Start: return skel_->progs.unwind_start;
      case uprobes::UnwindRole::Walk: return skel_->progs.unwind_walk;
      case uprobes::UnwindRole::WalkEnd: return skel_->progs.unwind_walk_end;
      case uprobes::UnwindRole::Switch: return skel_->progs.unwind_switch;
      case uprobes::UnwindRole::Catch: break;
      case uprobes::UnwindRole::LateWalk:
      case uprobes::UnwindRole::LateWalkEnd: return static_cast<bpf_program*>(nullptr);
    }
    return skel_->progs.unwind_catch;
  };
  // One multi link per (module, role); one perf link per point otherwise.
  std::map<std::pair<std::string, int>, std::vector<uint64_t>> groups;
  for (const auto& p : points) {
    if (p.role == uprobes::UnwindRole::LateWalk || p.role == uprobes::UnwindRole::LateWalkEnd)
      continue;  // the fast path's alone
    const bool at_entry =
        p.role != uprobes::UnwindRole::WalkEnd && probed_.count({p.path, p.entry});
    groups[{p.path, static_cast<int>(p.role)}].push_back(at_entry ? p.entry : p.offset);
  }
  for (const auto& [key, offsets] : groups) {
    UprobeRequest r;
    r.prog = prog_of(static_cast<uprobes::UnwindRole>(key.second));
    r.path = key.first;
    r.offsets = offsets;
    r.pid = pid;
    r.multi = multi_;
    if (int err = attach_uprobes(r, links_))
      throw UnwindGuardError("cannot probe the unwinder in " + r.path + ": " +
                             base::errno_text(err) + task_uprobe_privilege_hint(err));
  }
}

}  // namespace atrace

namespace atrace {

void refuse_go_programs(const std::vector<uprobes::ProbeSite>& sites) {
  std::map<std::string, bool> go;
  for (const auto& s : sites) {
    auto [it, fresh] = go.try_emplace(s.path, false);
    if (fresh) it->second = uprobes::is_go_program(s.path);
    if (it->second)
      throw UnwindGuardError(s.module +
                             " is a Go program: its goroutine stacks move, so return "
                             "probes on its functions would crash it; select functions of other "
                             "modules");
  }
}

}  // namespace atrace
