// `atrace script` as a command (build/atrace): it streams (`| head -1`
// returns at once, quietly, exit 0), bad --fields and bad files fail with one
// line, damaged files print what is readable and exit 3 as `report` does.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

const std::string kAtrace = std::string(ATRACE_BUILD_DIR) + "/atrace";

struct Outcome {
  int status = -1;  // exit status, or -1 if it did not exit normally
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  std::string s;
  if (!f) return s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// Runs a shell command line; its stderr goes to `err`.
Outcome shell(const std::string& cmd) {
  TempFile err(".stderr");
  Outcome r;
  std::FILE* p = popen(("{ " + cmd + " ; } 2>" + err.path()).c_str(), "r");
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = slurp(err.path());
  return r;
}

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A small trace: 4 threads, 50 calls each, in small blocks (for damage).
void write_small(const std::string& path, bool finish = true) {
  FakeClock clock;
  TraceWriter w(path, clock.options(/*block_bytes=*/256));
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  for (uint32_t tid = 1; tid <= 4; tid++) {
    std::vector<Event> batch;
    for (uint64_t i = 0; i < 100; i++)
      batch.push_back(
          ev(1000000 + i * 100 + tid, tid, i % 2 ? EventKind::FuncExit : EventKind::FuncEntry, 1));
    w.write_events(batch);
  }
  if (finish) w.finish(sample_header(), {{1, 4242, "main", 0, 0, 0}}, {});
}

class ScriptCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kAtrace)) GTEST_SKIP() << kAtrace << " is not built";
  }
};

}  // namespace

TEST_F(ScriptCommand, PrintsEveryEventAndReadsStdin) {
  TempFile f;
  write_small(f.path());
  Outcome r = shell(kAtrace + " script -i " + f.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(count_lines(r.out), 400u);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "            main       1 [000]     0.001000001: entry:        compute(int)");
  Outcome in = shell(kAtrace + " script -i - < " + f.path());
  EXPECT_EQ(in.status, 0) << in.err;
  EXPECT_EQ(in.out, r.out);
  Outcome picked = shell(kAtrace + " script --fields=tid,kind -i " + f.path() + " | head -2");
  EXPECT_EQ(picked.out, "      1 entry:\n      2 entry:\n");
}

TEST_F(ScriptCommand, BadFieldsOrFileIsOneLineAndExit1) {
  TempFile f;
  write_small(f.path());
  Outcome r = shell(kAtrace + " script --fields=tid,colour -i " + f.path());
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "atrace: --fields: unknown field 'colour' (known: comm, tid, pid, cpu, time, kind, "
            "details)\n");
  Outcome missing = shell(kAtrace + " script -i " + f.path() + ".missing");
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(count_lines(missing.err), 1u) << missing.err;
}

// As `atrace report`: a flipped byte loses its block, is warned about, and
// the status says so; a file cut short (killed recorder) is warned about
// but is no damage.
TEST_F(ScriptCommand, DamagedAndTruncatedFiles) {
  TempFile f;
  write_small(f.path());
  std::string good = f.bytes();
  std::string bad = good;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5a);
  f.set_bytes(bad);
  Outcome damaged = shell(kAtrace + " script -i " + f.path());
  EXPECT_EQ(damaged.status, 3);
  EXPECT_NE(damaged.err.find("atrace: warning: "), std::string::npos) << damaged.err;
  EXPECT_GT(count_lines(damaged.out), 0u);
  EXPECT_LT(count_lines(damaged.out), 400u);

  TempFile open_file(".unfinished");
  write_small(open_file.path(), /*finish=*/false);
  std::string cut = open_file.bytes();
  open_file.set_bytes(cut.substr(0, cut.size() - 10));
  Outcome truncated = shell(kAtrace + " script -i " + open_file.path());
  EXPECT_EQ(truncated.status, 0) << truncated.err;
  EXPECT_NE(truncated.err.find("atrace: warning: "), std::string::npos) << truncated.err;
  EXPECT_GT(count_lines(truncated.out), 0u);
}

// Millions of events: `| head -1` ends quietly (the closed pipe is not an
// error, atrace stops and exits 0). How soon it stops is not asserted here:
// no test depends on timings.
TEST_F(ScriptCommand, HeadEndsQuietly) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    std::vector<Event> batch;
    const uint64_t kPerThread = 750000;
    for (uint64_t chunk = 0; chunk < kPerThread; chunk += 50000) {
      batch.clear();
      for (uint32_t tid = 1; tid <= 4; tid++)
        for (uint64_t i = chunk; i < chunk + 50000; i++)
          batch.push_back(ev(1000000 + i * 10 + tid, tid,
                             i % 2 ? EventKind::FuncExit : EventKind::FuncEntry, 1 + (i / 2) % 2));
      w.write_events(batch);
    }
    w.finish(sample_header(), {}, {});
  }
  TempFile rc(".rc");
  Outcome full = shell(kAtrace + " script -i " + f.path() + " | wc -l");
  ASSERT_EQ(full.status, 0) << full.err;
  EXPECT_EQ(std::stoull(full.out), 3000000u);

  Outcome head = shell("{ " + kAtrace + " script -i " + f.path() + "; echo $? >" + rc.path() +
                       "; } | head -1");
  EXPECT_EQ(head.status, 0);
  EXPECT_EQ(count_lines(head.out), 1u);
  EXPECT_EQ(head.err, "");  // no "Broken pipe", no write error
  EXPECT_EQ(slurp(rc.path()), "0\n");
}
