// Long rotated recordings (issue 33, docs/recording-long.md): a 60 s
// recording rotated every 5 s, read as a series, equals one unrotated
// recording of the same deterministic target; `info` says what a series
// is; a series is read from a later file when --rotate-keep deleted the
// first ones.
//
// target_paced SECONDS makes exactly 10*S ticks, 100*S work, 300*S leaf
// and 10*S nap calls under one paced_run call lasting S seconds, on an
// absolute 100 ms schedule (tests/targets/target_paced.c).
//
// Times. Two runs of a program never take the same nanoseconds, so the
// rotated and the unrotated recording are compared exactly where the
// program is exact (its call counts) and, for times, where its own clock
// sets them: paced_run and paced_tick + paced_nap last the run's 60 s
// (600 deadlines 100 ms apart) in both runs, and differ only by wake-up
// latencies and preemptions between a nap's return and the next tick,
// which the absolute schedule keeps from adding up: bound 100 ms. At the
// events' own resolution (1 ns) the series is checked against its own
// events: every event is in exactly one file, so a function's total in
// the series' report must equal, to the nanosecond, the sum of its exits'
// time stamps minus the sum of its entries', summed over the files each
// read alone (`atrace script`); a call spanning a cut is then one call
// with its true duration (paced_run spans all of them).
#include <filesystem>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/integration/env.h"
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"
#include "tests/integration/run.h"

namespace atrace::it {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTargetPaced = TARGET_PACED_BIN;

constexpr const char* kSelect = "paced_run,paced_tick,paced_work,paced_leaf,paced_nap";
const std::vector<std::string> kFunctions = {"paced_run", "paced_tick", "paced_work", "paced_leaf",
                                             "paced_nap"};
std::map<std::string, long long> expected_calls(long long seconds) {
  return {{"paced_run", 1},
          {"paced_tick", 10 * seconds},
          {"paced_work", 100 * seconds},
          {"paced_leaf", 300 * seconds},
          {"paced_nap", 10 * seconds}};
}

// File `n` of the series whose first file is `dir`/`stem`.data.
std::string nth(const std::string& dir, const std::string& stem, unsigned n) {
  return dir + "/" + stem + (n ? "." + std::to_string(n) : "") + ".data";
}

// The numbers of the series' files present in `dir`, ascending.
std::vector<unsigned> present(const std::string& dir, const std::string& stem) {
  std::vector<unsigned> out;
  for (unsigned n = 0; n < 1000; n++)
    if (fs::exists(nth(dir, stem, n))) out.push_back(n);
  return out;
}

// A file of a series under a name that is no series' (a link in `dir`): a
// reader reads it alone.
std::string alone(const std::string& file, const std::string& dir, unsigned n) {
  fs::create_directories(dir);
  const std::string link = dir + "/part" + std::to_string(n) + "-alone.data";
  fs::create_hard_link(file, link);
  return link;
}

// Per function: entries, and the sums of its entries' and exits' time
// stamps (ns), from `atrace script` of one file.
struct EventSums {
  std::map<std::string, long long> entries, exits;
  std::map<std::string, long long> entry_ns, exit_ns;  // < 2^63: 9e18 ns
};

// "12345.678901234" -> ns, without going through a double.
long long parse_ns(const std::string& t) {
  const size_t dot = t.find('.');
  return std::stoll(t.substr(0, dot)) * 1000000000LL + std::stoll(t.substr(dot + 1));
}

void add_script_sums(const std::string& file, EventSums& sums) {
  Result r = run({Paths::atrace, "script", "-i", file, "--fields=time,kind,details",
                  "--kind=entry,exit", "--no-pager"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    // "12345.678901234: entry:   paced_tick" / "...: exit:   paced_tick (1.2 us)"
    std::istringstream l(line);
    std::string time, kind, name;
    l >> time >> kind >> name;
    if (time.empty() || name.empty()) continue;
    time.pop_back();  // its colon
    const long long ns = parse_ns(time);
    if (kind == "entry:") {
      sums.entries[name]++;
      sums.entry_ns[name] += ns;
    } else if (kind == "exit:") {
      sums.exits[name]++;
      sums.exit_ns[name] += ns;
    }
  }
}

std::vector<std::string> record_argv(const std::string& out, const std::string& tag,
                                     const std::string& seconds,
                                     const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Paths::atrace, "record", "-o",          out,
                                   "--select",    kSelect,  "--filter=off"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--", kTargetPaced, seconds, tag});
  return argv;
}

Result info(const std::string& file, bool json = false) {
  std::vector<std::string> argv = {Paths::atrace, "info", "-i", file};
  if (json) argv.push_back("--format=json");
  return run(argv);
}

nlohmann::json info_json(const std::string& file) {
  Result r = info(file, true);
  EXPECT_TRUE(r.exited(0)) << r.describe();
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << r.describe();
    return {};
  }
}

class RotationLong : public IntegrationTest {};

TEST_F(RotationLong, SixtySecondsRotatedEveryFiveReadAsOne) {
  const std::string dir = file("s");
  fs::create_directory(dir);
  // Both at once, on two launches of the target: one minute, not two.
  Child rotated(record_argv(nth(dir, "r", 0), tag_arg(), "60", {"--rotate=5s"}));
  Child plain(record_argv(file("u.data"), tag_arg(), "60", {}));
  Result rr = rotated.wait(scaled(milliseconds(240000)));
  Result pr = plain.wait(scaled(milliseconds(240000)));
  ASSERT_TRUE(rr.exited(0)) << rr.describe();
  ASSERT_TRUE(pr.exited(0)) << pr.describe();

  // 60 s of the target (and the recorder's start before it) in 5 s files.
  const auto numbers = present(dir, "r");
  ASSERT_GE(numbers.size(), 12u);
  ASSERT_LE(numbers.size(), 13u);
  EXPECT_EQ(numbers.back() + 1, numbers.size()) << "numbered 0, 1, ... without a hole";

  auto series = report_json(nth(dir, "r", 0));
  auto unrotated = report_json(file("u.data"));
  ASSERT_TRUE(series && unrotated);
  for (const auto& [name, n] : expected_calls(60)) {
    EXPECT_EQ(calls_of(*series, name), n) << name;
    EXPECT_EQ(calls_of(*unrotated, name), n) << name;
    EXPECT_EQ(function_field(*series, name, "unfinished"), 0) << name;
  }
  EXPECT_EQ((*series)["orphan_exits"].get<long long>(), 0);

  // Times set by the target's clock, across the two runs (see the top).
  constexpr long long kRunsBound = 100'000'000;
  const auto total = [](const nlohmann::json& r, const char* f) {
    return function_field(r, f, "total_ns");
  };
  EXPECT_NEAR(total(*series, "paced_run"), total(*unrotated, "paced_run"), kRunsBound);
  EXPECT_NEAR(total(*series, "paced_tick") + total(*series, "paced_nap"),
              total(*unrotated, "paced_tick") + total(*unrotated, "paced_nap"), kRunsBound);
  EXPECT_GE(total(*series, "paced_run"), 60'000'000'000LL);

  // Every file alone: `info` and `report` read it; its events summed.
  EventSums sums;
  for (unsigned n : numbers) {
    const std::string one = alone(nth(dir, "r", n), file("alone"), n);
    Result i = info(one);
    EXPECT_TRUE(i.exited(0)) << i.describe();
    EXPECT_NE(i.out.find("file " + std::to_string(n) + ":"), std::string::npos) << i.out;
    EXPECT_TRUE(report_json(one)) << n;
    add_script_sums(one, sums);
  }
  // At the events' resolution: the series' totals are its events' own.
  for (const auto& name : kFunctions) {
    EXPECT_EQ(sums.entries[name], expected_calls(60)[name]) << name;
    EXPECT_EQ(sums.exits[name], expected_calls(60)[name]) << name;
    EXPECT_EQ(total(*series, name.c_str()), sums.exit_ns[name] - sums.entry_ns[name]) << name;
  }
  // paced_run: its entry in the first file, its exit in the last.
  EventSums first, last;
  add_script_sums(alone(nth(dir, "r", 0), file("first"), 0), first);
  add_script_sums(alone(nth(dir, "r", numbers.back()), file("last"), numbers.back()), last);
  EXPECT_EQ(first.entries["paced_run"], 1);
  EXPECT_EQ(last.exits["paced_run"], 1);
  EXPECT_EQ(total(*series, "paced_run"), last.exit_ns["paced_run"] - first.entry_ns["paced_run"]);
}

TEST_F(RotationLong, InfoSaysItIsASeries) {
  const std::string dir = file("i");
  fs::create_directory(dir);
  Result r = run(record_argv(nth(dir, "r", 0), tag_arg(), "2", {"--rotate=500ms"}));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const auto numbers = present(dir, "r");
  ASSERT_GE(numbers.size(), 3u);
  const unsigned n = static_cast<unsigned>(numbers.size());
  uintmax_t bytes = 0;
  for (unsigned k : numbers) bytes += fs::file_size(nth(dir, "r", k));

  // From its first file: the whole series.
  Result text = info(nth(dir, "r", 0));
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find(std::to_string(n) + " files read as one recording (file 0 to " +
                          std::to_string(n - 1) + ": " + nth(dir, "r", 0) + " ... " +
                          nth(dir, "r", n - 1) + "), " + std::to_string(bytes) + " bytes"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.err, "");
  auto j = info_json(nth(dir, "r", 0));
  ASSERT_TRUE(j.contains("series")) << j.dump(2);
  const auto& s = j["series"];
  EXPECT_EQ(s["id"].get<std::string>().size(), 16u);
  EXPECT_EQ(s["file_number"], 0);
  EXPECT_EQ(s["last_file_number"], n - 1);
  EXPECT_EQ(s["files"].size(), n);
  EXPECT_EQ(s["bytes"], bytes);
  EXPECT_EQ(s["ends"], true);
  EXPECT_EQ(s["earlier_files"], 0);
  EXPECT_GT(j["end_mono_ns"].get<uint64_t>() - j["start_mono_ns"].get<uint64_t>(), 2'000'000'000ULL)
      << "the span of the whole series";

  // From file 1: the rest of it, and files before it there but not read.
  Result later = info(nth(dir, "r", 1));
  ASSERT_TRUE(later.exited(0)) << later.describe();
  EXPECT_NE(later.out.find("Earlier files:   0 not read, 1 of 1 present (-i " + nth(dir, "r", 0) +
                           " reads from the first)"),
            std::string::npos)
      << later.out;
  auto lj = info_json(nth(dir, "r", 1));
  EXPECT_EQ(lj["series"]["id"], s["id"]);
  EXPECT_EQ(lj["series"]["file_number"], 1);
  EXPECT_EQ(lj["series"]["files"].size(), n - 1);
  EXPECT_EQ(lj["series"]["earlier_files"], 1);
  EXPECT_EQ(lj["series"]["earlier_files_present"], 1);

  // An unrotated file has no series.
  Result u = run(record_argv(file("u.data"), tag_arg(), "0", {}));
  ASSERT_TRUE(u.exited(0)) << u.describe();
  EXPECT_FALSE(info_json(file("u.data")).contains("series"));
  Result ut = info(file("u.data"));
  EXPECT_EQ(ut.out.find("Series:"), std::string::npos) << ut.out;
}

TEST_F(RotationLong, ReadFromALaterFileWhenTheFirstAreDeleted) {
  const std::string dir = file("k");
  fs::create_directory(dir);
  Result r =
      run(record_argv(nth(dir, "k", 0), tag_arg(), "3", {"--rotate=500ms", "--rotate-keep=2"}));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const auto numbers = present(dir, "k");
  ASSERT_EQ(numbers.size(), 2u);
  const unsigned from = numbers.front();
  ASSERT_GE(from, 2u) << "3 s in 500 ms files: the first ones deleted";
  ASSERT_EQ(numbers.back(), from + 1);

  // What the kept files hold, each read alone.
  EventSums kept;
  for (unsigned n : numbers) add_script_sums(alone(nth(dir, "k", n), file("alone"), n), kept);

  Result rep = run({Paths::atrace, "report", "-i", nth(dir, "k", from), "--format=json"});
  ASSERT_TRUE(rep.exited(0)) << rep.describe();
  // One line says the series' start is missing.
  const std::string warn = "atrace: warning: " + nth(dir, "k", from) + ": file " +
                           std::to_string(from) + " of a series, whose files 0 to " +
                           std::to_string(from - 1) +
                           " are missing (--rotate-keep?): read from here on, without the calls "
                           "begun before it\n";
  EXPECT_EQ(rep.err, warn);
  const auto j = nlohmann::json::parse(rep.out);
  // Both kept files read as one: every call begun in them, no other.
  for (const auto& name : kFunctions) {
    if (kept.entries[name] == 0) {
      EXPECT_EQ(find_function(j, name), nullptr) << name << ": begun in a deleted file";
      continue;
    }
    EXPECT_EQ(calls_of(j, name), kept.entries[name]) << name;
    EXPECT_EQ(function_field(j, name, "unfinished"), 0) << name;
  }
  EXPECT_EQ(kept.entries["paced_run"], 0);
  EXPECT_EQ(kept.exits["paced_run"], 1);
  // paced_run's exit, and any call open at the first kept file's start:
  // exits without their entries, counted as such and nothing more.
  long long orphans = 0;
  for (const auto& name : kFunctions) orphans += kept.exits[name] - kept.entries[name];
  EXPECT_GE(orphans, 1);
  EXPECT_EQ(j["orphan_exits"].get<long long>(), orphans);

  // info says which file it is and that the earlier ones are gone.
  auto ij = info_json(nth(dir, "k", from));
  EXPECT_EQ(ij["series"]["file_number"], from);
  EXPECT_EQ(ij["series"]["files"].size(), 2u);
  EXPECT_EQ(ij["series"]["earlier_files"], from);
  EXPECT_EQ(ij["series"]["earlier_files_present"], 0);
  EXPECT_EQ(ij["series"]["ends"], true);
  Result it = info(nth(dir, "k", from));
  EXPECT_NE(it.out.find("Earlier files:   0 to " + std::to_string(from - 1) +
                        " missing (deleted by --rotate-keep?)"),
            std::string::npos)
      << it.out;
}

}  // namespace
}  // namespace atrace::it
