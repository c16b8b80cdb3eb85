// A recorder killed with SIGKILL mid-run: its probes die with its file
// descriptors, the target runs on untouched, and the file it leaves behind
// is read by `atrace report` (index rebuilt by scanning, exit status 0) with
// every event it held before the kill (test_kill_loss.cpp: and every event
// older than the kill by 0.25 s). The campaign below
// kills it at random moments, in both modes, with every stop signal.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class KilledRecorder : public IntegrationTest {};

// "PID (comm)" of every process holding a BPF link fd, for a failure's
// message.
std::string bpf_link_holders() {
  std::string out;
  std::error_code ec;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = proc.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fd_ec;
    for (const auto& fd : std::filesystem::directory_iterator(proc.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      if (std::filesystem::read_symlink(fd.path(), link_ec).string() != "anon_inode:bpf_link")
        continue;
      std::ifstream comm(proc.path() / "comm");
      std::string name;
      std::getline(comm, name);
      if (!out.empty()) out += ", ";
      out.append(pid).append(" (").append(name).append(")");
      break;
    }
  }
  return out.empty() ? "none" : out;
}

TEST_F(KilledRecorder, LeavesAReadableFileAndAnUntouchedTarget) {
  std::string out = file("killed.data");
  Child atrace({Paths::atrace, "record", "-o", out, "--select=tick", "--filter=off", "--",
                Paths::target_threads, "--forever", "60", tag_arg()});
  auto pid_line = atrace.wait_for_line("pid=", milliseconds(20000));
  ASSERT_TRUE(pid_line) << atrace.wait(milliseconds(1000)).describe();
  const pid_t target = static_cast<pid_t>(std::stol(pid_line->substr(4)));
  auto addr_line = atrace.wait_for_line("tick_addr=", milliseconds(5000));
  ASSERT_TRUE(addr_line);
  const uint64_t tick = std::stoull(addr_line->substr(10), nullptr, 16);

  // Killed once the file already holds some hundred ticks (the writer
  // flushes blocks by age: record/kill_bound.h): whatever the machine's speed (a
  // loaded one, a TCG guest), what was readable before the kill must stay.
  long long before = 0;
  for (int i = 0; i < 240 && before < 200; ++i) {
    std::this_thread::sleep_for(milliseconds(250));
    Result part = run({Paths::atrace, "report", "--format=json", "-i", out});
    auto doc = nlohmann::json::parse(part.out, nullptr, false);
    if (part.exited(0) && !doc.is_discarded()) before = calls_of(doc, "tick");
  }
  ASSERT_GE(before, 200) << "the file never held 200 ticks";
  ASSERT_EQ(::kill(atrace.pid(), SIGKILL), 0);
  Result killed = atrace.wait(milliseconds(10000));
  EXPECT_EQ(killed.term_signal, SIGKILL) << killed.describe();

  // The probe went with the recorder: no int3 left at tick's entry, and the
  // target is still running.
  std::this_thread::sleep_for(milliseconds(200));
  auto code = read_process_memory(target, tick, 1);
  ASSERT_TRUE(code) << "target " << target << " is gone";
  EXPECT_NE((*code)[0], 0xcc) << "a uprobe outlived the killed recorder";
  EXPECT_EQ(::kill(target, 0), 0);

  Result rep_run = run({Paths::atrace, "report", "--format=json", "-i", out});
  EXPECT_TRUE(rep_run.exited(0)) << rep_run.describe();
  EXPECT_NE(rep_run.err.find("warning"), std::string::npos) << rep_run.describe();
  auto rep = nlohmann::json::parse(rep_run.out, nullptr, false);
  ASSERT_FALSE(rep.is_discarded()) << rep_run.describe();
  // Nothing the file held before the kill is lost by it.
  EXPECT_GE(calls_of(rep, "tick"), before) << rep_run.out;
  // The recorder died before counting its losses: unknown, not 0 (as
  // `atrace info` says "not recorded").
  EXPECT_TRUE(rep["lost_events"].is_null()) << rep["lost_events"];

  ::kill(target, SIGTERM);
  for (int i = 0; i < 100 && ::kill(target, 0) == 0; ++i)
    std::this_thread::sleep_for(milliseconds(50));
  EXPECT_NE(::kill(target, 0), 0) << "the target did not end on SIGTERM";
}

// The kill campaign: ATRACE_KILL_TRIALS trials per mode (10 by default;
// tests/campaign/kill_campaign.sh runs more), seeded by ATRACE_KILL_SEED
// or the clock, the seed printed so that a failure can be replayed.
class KillCampaign : public IntegrationTest {
 protected:
  struct Trial {
    int n;
    bool attach;
    int sig;
    int delay_ms;
    std::string describe() const {
      std::ostringstream s;
      s << "trial " << n << " (" << (attach ? "attach" : "launch") << ", " << sigabbrev_np(sig)
        << " after " << delay_ms << " ms)";
      return s.str();
    }
  };

  // Every problem found after a trial, "" when none.
  std::string problems_;
  // What the last trial saw, printed with it: which phases the kills hit.
  std::string outcome_;
  // The launched targets' tag: not the attached target's.
  std::string launch_tag() const { return tag_arg() + "-launch"; }

  // How long atrace takes here, now, from its start to a probe in the
  // target: the kills are spread over that plus 1.5 s of recording, so a
  // good part lands in start-up and the rest in the recording, however
  // loaded the machine is.
  milliseconds startup_time(ForeverTarget& target) {
    const auto start = std::chrono::steady_clock::now();
    Child atrace({Paths::atrace, "record", "-o", file("startup.data"), "--select=tick", "-p",
                  std::to_string(target.pid())});
    const bool probed = target.wait_until_probed(milliseconds(30000), atrace);
    const auto took =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
    atrace.signal(SIGINT);
    Result r = atrace.wait(scaled(milliseconds(30000)));
    // 130 when the SIGINT came before the recording proper had started.
    EXPECT_TRUE(probed && (r.exited(0) || r.exited(130))) << r.describe();
    return took;
  }
  void problem(const Trial& t, const std::string& what) {
    problems_ += t.describe() + ": " + what + "\n";
  }

  // How atrace may end on `sig`: killed by SIGKILL; on SIGINT/SIGTERM
  // exit 0 (recording stopped, a launched target's status passed on) or
  // 128 + signal with the one "interrupted" line (before the recording
  // started), or killed by it while the dynamic loader ran, before atrace's
  // first instruction (then it said nothing).
  void check_atrace_end(const Trial& t, const Result& r, bool target_ran) {
    outcome_ += r.term_signal ? std::string("killed by ") + sigabbrev_np(r.term_signal)
                              : "exit " + std::to_string(r.exit_code);
    if (t.sig == SIGKILL) {
      if (r.term_signal != SIGKILL) problem(t, "not killed: " + r.describe());
      return;
    }
    if (r.exited(0)) {
      if (r.err.find("written to") == std::string::npos) problem(t, "no summary: " + r.describe());
      return;
    }
    if (r.exited(128 + t.sig) && r.err.find("interrupted") != std::string::npos && !target_ran)
      return;
    if (r.term_signal == t.sig && r.err.empty() && !target_ran) return;
    problem(t, "unexpected end: " + r.describe());
  }

  // The file, when there is one, is read by `atrace info` or refused in
  // one line; a run that exited 0 left a finished, readable one.
  void check_file(const Trial& t, const std::string& out, const Result& r) {
    if (!std::filesystem::exists(out)) {
      outcome_ += ", no file";
      if (r.exited(0)) problem(t, "exited 0 without a file");
      return;
    }
    Result info = run({Paths::atrace, "info", "-i", out});
    outcome_ += info.exited(0) ? ", file read" : ", file refused";
    if (info.exited(0)) return;
    const bool one_line = info.failed_cleanly() && info.err.rfind("atrace: ", 0) == 0 &&
                          info.err.find('\n') == info.err.size() - 1;
    if (!one_line || r.exited(0)) problem(t, "file neither read nor refused: " + info.describe());
  }

  void check_no_leftovers(const Trial& t) {
    auto progs = unheld_atrace_bpf_programs();
    if (!progs) problem(t, "bpftool -j prog show failed");
    else if (!progs->empty()) problem(t, "BPF program left: " + progs->front());
    auto events = leftover_uprobe_events();
    if (events && !events->empty()) problem(t, "uprobe event left: " + events->front());
  }

  void launch_trial(const Trial& t) {
    const std::string out = file("launch" + std::to_string(t.n) + ".data");
    const std::string target_out = file("launch" + std::to_string(t.n) + ".out");
    // The target's stdout goes to a file: it may outlive a killed atrace.
    Child atrace({"/bin/sh", "-c", "f=$1; shift; exec \"$@\" >\"$f\"", "sh", target_out,
                  Paths::atrace, "record", "-o", out, "--select=tick", "--", Paths::target_threads,
                  "--forever", "2", launch_tag()});
    std::this_thread::sleep_for(milliseconds(t.delay_ms));
    // On a slow start the target may be done before the moment drawn.
    const bool ended_first = !atrace.running();
    if (!ended_first) ::kill(atrace.pid(), t.sig);
    Result r = atrace.wait(scaled(milliseconds(30000)));
    // A target that ran ends on its own two seconds after it started.
    const std::string exact = launch_tag() + std::string(1, '\0');
    const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(10000));
    std::vector<pid_t> left;
    while (!(left = pids_with_arg(exact)).empty() && std::chrono::steady_clock::now() < deadline) {
      for (pid_t p : left)
        if (auto st = process_state(p); st == 'T' || st == 't')
          problem(t, "target " + std::to_string(p) + " stopped");
      std::this_thread::sleep_for(milliseconds(50));
    }
    if (!left.empty()) {
      problem(t, "target still running 10 s later");
      kill_pids_with_arg(exact);
    }
    std::ifstream in(target_out);
    const std::string printed((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    const bool ran = printed.find("pid=") != std::string::npos;
    outcome_ = ran ? "target ran, " : "target not started, ";
    // Started, it ran to its normal end; or it never started.
    if (ran && !printed_count(printed, "tick")) problem(t, "target cut short: " + printed);
    if (ended_first) {
      outcome_ += "ended before the kill, ";
      if (!r.exited(0) || !ran) problem(t, "did not record: " + r.describe());
    } else {
      check_atrace_end(t, r, ran);
    }
    check_file(t, out, r);
    check_no_leftovers(t);
  }

  void attach_trial(const Trial& t, ForeverTarget& target) {
    const std::string out = file("attach" + std::to_string(t.n) + ".data");
    Child atrace(
        {Paths::atrace, "record", "-o", out, "--select=tick", "-p", std::to_string(target.pid())});
    std::this_thread::sleep_for(milliseconds(t.delay_ms));
    ::kill(atrace.pid(), t.sig);
    Result r = atrace.wait(scaled(milliseconds(30000)));
    outcome_ = "target running, ";
    check_atrace_end(t, r, false);
    if (!target.alive()) return problem(t, "the attached target died");
    if (auto st = process_state(target.pid()); st == 'T' || st == 't')
      problem(t, "the attached target is stopped");
    // Its code as it was: no uprobe outlived atrace. The kernel removes a
    // link's breakpoints as it closes the link, one link after the other
    // at the killed process's exit, each close waiting for grace periods
    // that a loaded machine makes long: a slow removal passes, one that
    // never comes fails, naming who still holds BPF links.
    const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(10000));
    while (target.code_now() != target.original_code() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(milliseconds(20));
    if (target.code_now() != target.original_code())
      problem(t, "a uprobe is left in tick() (BPF links held by: " + bpf_link_holders() + ")");
    check_file(t, out, r);
    check_no_leftovers(t);
  }
};

TEST_F(KillCampaign, RandomMomentsInBothModes) {
  const char* seed_env = std::getenv("ATRACE_KILL_SEED");
  const char* trials_env = std::getenv("ATRACE_KILL_TRIALS");
  const unsigned seed = seed_env ? static_cast<unsigned>(std::stoul(seed_env))
                                 : static_cast<unsigned>(std::random_device{}());
  const int per_mode = trials_env ? std::stoi(trials_env) : 10;
  std::printf("kill campaign: seed=%u (ATRACE_KILL_SEED=%u replays it)\n", seed, seed);
  std::mt19937 rng(seed);
  ForeverTarget target(tag_, 600);
  ASSERT_TRUE(target.ok()) << target.startup_output();
  // From atrace's first instruction to well into the recording: start-up
  // (resolving, BPF load, calibration, attaching) takes about a second on
  // an idle machine, several under load.
  const int startup_ms = static_cast<int>(startup_time(target).count());
  std::printf("kill campaign: start-up takes %d ms here: kills within %d ms\n", startup_ms,
              startup_ms + 1500);
  std::uniform_int_distribution<int> delay(0, startup_ms + 1500);
  const int sigs[] = {SIGKILL, SIGINT, SIGTERM};
  std::uniform_int_distribution<int> which(0, 2);

  std::vector<Trial> trials;
  trials.reserve(2 * per_mode);
  for (int i = 0; i < 2 * per_mode; ++i)
    trials.push_back({i + 1, i >= per_mode, sigs[which(rng)], delay(rng)});
  int failed = 0;
  for (const Trial& t : trials) {
    if (t.attach) continue;
    const size_t before = problems_.size();
    launch_trial(t);
    failed += problems_.size() != before;
    std::printf("%s: %s (%s)\n", t.describe().c_str(), problems_.size() != before ? "FAILED" : "ok",
                outcome_.c_str());
  }
  for (const Trial& t : trials) {
    if (!t.attach) continue;
    const size_t before = problems_.size();
    attach_trial(t, target);
    failed += problems_.size() != before;
    std::printf("%s: %s (%s)\n", t.describe().c_str(), problems_.size() != before ? "FAILED" : "ok",
                outcome_.c_str());
  }
  Result end = target.stop();
  EXPECT_TRUE(end.exited(0)) << end.describe();
  EXPECT_TRUE(printed_count(end.out, "tick")) << end.describe();
  std::printf("kill campaign: seed=%u trials=%zu failures=%d\n", seed, trials.size(), failed);
  std::fflush(stdout);
  EXPECT_EQ(problems_, "") << "seed " << seed;
}

}  // namespace
}  // namespace atrace::it
