// atrace top: the live table. Without a terminal it prints one table per
// interval and a last one for the whole recording, whose counts are the
// target's own; on a terminal (tmux) it redraws the screen, q ends it with
// status 0 and the terminal as it was, and an attached target runs on
// untouched.
#include <signal.h>

#include <map>
#include <sstream>
#include <thread>

#include "tests/integration/convert_util.h"
#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

// One printed table: its "== TITLE ==" line and calls per function.
struct Table {
  std::string title;
  std::map<std::string, long long> calls;
};

// Splits top's plain output into its tables. A row starts with its calls
// and ends with the function's name (the default columns).
std::vector<Table> tables_of(const std::string& out) {
  std::vector<Table> tables;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) {
      tables.push_back({line, {}});
      continue;
    }
    if (tables.empty() || line.empty() || line.rfind("Calls", 0) == 0) continue;
    std::istringstream row(line);
    long long calls = 0;
    if (!(row >> calls)) continue;
    const std::string name = line.substr(line.find_last_of(' ') + 1);
    tables.back().calls[name] = calls;
  }
  return tables;
}

class Top : public IntegrationTest {};

// target_c's counts are exact: the last table (the whole recording) has
// them, every earlier one at most them, and their titles say when.
TEST_F(Top, PlainTablesEndWithTheTargetsCounts) {
  Result r = run({Paths::atrace, "top", "--select=leaf,middle,outer,sleeper", "--filter=off",
                  "--interval=0.1", "--", Paths::target_c, "3000", tag_arg()},
                 milliseconds(60000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const std::vector<Table> tables = tables_of(r.out);
  ASSERT_GE(tables.size(), 1u) << r.describe();
  const Table& last = tables.back();
  EXPECT_EQ(last.title.rfind("== end, ", 0), 0u) << last.title;
  EXPECT_EQ(last.calls.at("leaf"), 9000) << r.out;
  EXPECT_EQ(last.calls.at("middle"), 3000);
  EXPECT_EQ(last.calls.at("outer"), 1);
  EXPECT_EQ(last.calls.at("sleeper"), 3);
  EXPECT_EQ(last.calls.size(), 4u) << r.out;
  for (size_t i = 0; i + 1 < tables.size(); ++i) {
    EXPECT_NE(tables[i].title.find(" s ("), std::string::npos) << tables[i].title;
    for (const auto& [name, calls] : tables[i].calls) EXPECT_LE(calls, last.calls.at(name));
  }
  // No trace file unless -o.
  EXPECT_EQ(r.err.find("written to"), std::string::npos) << r.err;
  expect_no_uprobe_events_left();
}

// -o writes the same trace record writes: its report has the same counts.
TEST_F(Top, OutputIsARecordTrace) {
  const std::string out = file("top.data");
  Result r = run({Paths::atrace, "top", "--select=leaf,middle", "--filter=off", "-o", out, "--",
                  Paths::target_c, "50", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  Result rep = run({Paths::atrace, "report", "-i", out, "--fields=calls"});
  ASSERT_TRUE(rep.exited(0)) << rep.describe();
  EXPECT_NE(rep.out.find("150  leaf"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("50  middle"), std::string::npos) << rep.out;
}

// -p on a running target until --duration: the tables count tick(), at
// most what the target itself counted, and the target runs on unprobed.
// No relevance filter: whether tick()'s 1000th call finds it short next to
// this machine's calibrated probe cost (it did in CI, "tick (detached)")
// is not what this test is about.
TEST_F(Top, AttachedUntilDuration) {
  ForeverTarget target(tag_);
  ASSERT_TRUE(target.ok()) << target.startup_output();
  Result r = run({Paths::atrace, "top", "-p", std::to_string(target.pid()), "--select=tick",
                  "--interval=0.2", "--duration=1", "--filter=off"},
                 milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const std::vector<Table> tables = tables_of(r.out);
  ASSERT_GE(tables.size(), 3u) << r.describe();
  const auto tick = tables.back().calls.find("tick");
  ASSERT_NE(tick, tables.back().calls.end()) << r.out;
  const long long recorded = tick->second;
  EXPECT_GE(recorded, 1) << r.out;
  EXPECT_EQ(target.code_now(), target.original_code()) << "tick() still patched";
  expect_no_uprobe_events_left();
  ASSERT_TRUE(target.alive());
  Result end = target.stop();
  ASSERT_TRUE(end.exited(0)) << end.describe();
  auto own = printed_count(end.out, "tick");
  ASSERT_TRUE(own) << end.describe();
  EXPECT_LT(recorded, *own) << "tick() went on after top detached";
}

// tmux on a socket of this test's own: the pane's text, keys sent to it.
class Tmux {
 public:
  explicit Tmux(const std::string& tag) : socket_("atrace-top-" + tag) {}
  ~Tmux() { run({"tmux", "-L", socket_, "kill-server"}); }
  Result start(const std::string& shell_command) {
    return run({"tmux", "-L", socket_, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y",
                "40", shell_command});
  }
  std::string screen() { return run({"tmux", "-L", socket_, "capture-pane", "-p"}).out; }
  void keys(const std::string& keys) { run({"tmux", "-L", socket_, "send-keys", keys}); }
  // Polls the pane until `what` shows; the last screen either way.
  std::string wait_for(const std::string& what, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + scaled(timeout);
    std::string s;
    while (std::chrono::steady_clock::now() < deadline) {
      s = screen();
      if (s.find(what) != std::string::npos) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return s;
  }

 private:
  std::string socket_;
};

TEST_F(Top, LiveScreenQuitsOnQ) {
  REQUIRE_TOOL("tmux");
  ForeverTarget target(tag_);
  ASSERT_TRUE(target.ok()) << target.startup_output();
  const std::string status = file("status");
  Tmux tmux(tag_);
  // After top: its status and the terminal's mode, where the test reads them.
  const std::string shell = std::string(Paths::atrace) + " top -p " + std::to_string(target.pid()) +
                            " --select=tick --interval=0.2; echo " + "top-exit=$? >" + status +
                            "; stty -a >>" + status + "; sleep 60";
  Result started = tmux.start(shell);
  ASSERT_TRUE(started.exited(0)) << started.describe();
  std::string screen = tmux.wait_for("q: quit", milliseconds(20000));
  ASSERT_NE(screen.find("atrace top: "), std::string::npos) << screen;
  // The table, with tick() counted.
  screen = tmux.wait_for(" tick", milliseconds(10000));
  EXPECT_NE(screen.find("Calls"), std::string::npos) << screen;
  std::istringstream rows(screen);
  long long calls = 0;
  for (std::string line; std::getline(rows, line);)
    if (line.size() > 5 && line.compare(line.size() - 5, 5, " tick") == 0) calls = std::stoll(line);
  EXPECT_GE(calls, 1) << screen;

  tmux.keys("q");
  std::string after;
  const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
  while (std::chrono::steady_clock::now() < deadline) {
    after = run({"cat", status}).out;
    if (after.find("speed") != std::string::npos) break;  // stty's output is complete
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_NE(after.find("top-exit=0"), std::string::npos) << after << tmux.screen();
  // Canonical mode and echo are back.
  EXPECT_NE(after.find(" icanon"), std::string::npos) << after;
  EXPECT_EQ(after.find("-icanon"), std::string::npos) << after;
  EXPECT_NE(after.find(" echo "), std::string::npos) << after;
  // The last table stays on the normal screen.
  EXPECT_NE(tmux.screen().find("atrace top: end, "), std::string::npos) << tmux.screen();

  EXPECT_EQ(target.code_now(), target.original_code()) << "tick() still patched";
  expect_no_uprobe_events_left();
  ASSERT_TRUE(target.alive()) << "the target died";
  auto state = process_state(target.pid());
  ASSERT_TRUE(state);
  EXPECT_TRUE(*state == 'R' || *state == 'S') << "target state " << *state;
  Result end = target.stop();
  EXPECT_TRUE(end.exited(0)) << end.describe();
}

TEST_F(Top, BadOptionsAreOneLine) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{Paths::atrace, "top", "--select=tick", "--interval=0", "--",
                                 Paths::target_c},
        {Paths::atrace, "top", "--select=tick", "--sort=bogus", "--", Paths::target_c},
        {Paths::atrace, "top", "--select=tick", "-o", "-", "--", Paths::target_c},
        {Paths::atrace, "top", "--select=tick"}}) {
    Result r = run(argv);
    expect_one_error_line(r);
    EXPECT_EQ(r.exit_code, 2) << r.describe();
  }
}

}  // namespace
}  // namespace atrace::it
