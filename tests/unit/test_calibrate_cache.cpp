// The probe-cost cache (record/calibrate_cache.h): a measurement is reused
// only with this very key (boot, kernel, CPU model, atrace version, link
// kind) and only from a directory and file no one but root can write.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "record/calibrate_cache.h"
#include "temp_file.h"

using namespace atrace;
using atrace::testing::TempFile;

namespace {

CalibrationKey key() {
  CalibrationKey k;
  k.boot_id = "2e243b6c-00b8-4db5-9cfb-478c14ed497f";
  k.kernel = "6.18.44 #1 SMP";
  k.cpu_model = "AMD EPYC";
  k.version = "0.1.0 e4cf932daba7eed1";
  k.multi = true;
  return k;
}

ProbeCost cost() {
  ProbeCost c;
  c.nop5_ns = 1096;
  c.emulated_ns = 1285;
  c.single_step_ns = 9908;
  c.nop5_inside_ns = 528;
  c.emulated_inside_ns = 627;
  c.single_step_inside_ns = 9041;
  c.took_ns = 54424337;
  return c;
}

void expect_same(const ProbeCost& a, const ProbeCost& b) {
  EXPECT_EQ(a.nop5_ns, b.nop5_ns);
  EXPECT_EQ(a.emulated_ns, b.emulated_ns);
  EXPECT_EQ(a.single_step_ns, b.single_step_ns);
  EXPECT_EQ(a.nop5_inside_ns, b.nop5_inside_ns);
  EXPECT_EQ(a.emulated_inside_ns, b.emulated_inside_ns);
  EXPECT_EQ(a.single_step_inside_ns, b.single_step_inside_ns);
  EXPECT_EQ(a.took_ns, b.took_ns);
  EXPECT_TRUE(a.error.empty());
}

}  // namespace

TEST(CalibrateCache, TextRoundTrips) {
  auto back = parse_cost_cache(cost_cache_text(key(), cost()), key());
  ASSERT_TRUE(back);
  expect_same(*back, cost());
}

TEST(CalibrateCache, StaleKeyIsNotUsed) {
  const std::string text = cost_cache_text(key(), cost());
  struct Change {
    const char* field;
    void (*apply)(CalibrationKey&);
  };
  const Change changes[] = {
      {"boot_id", [](CalibrationKey& k) { k.boot_id = "00000000-0000-0000-0000-000000000000"; }},
      {"kernel", [](CalibrationKey& k) { k.kernel = "6.1.0-27-cloud-amd64 #1 SMP"; }},
      {"cpu_model", [](CalibrationKey& k) { k.cpu_model = "Intel Xeon"; }},
      {"version", [](CalibrationKey& k) { k.version = "0.1.0 0000000000000000"; }},
      {"links", [](CalibrationKey& k) { k.multi = false; }},
  };
  for (const auto& c : changes) {
    SCOPED_TRACE(c.field);
    CalibrationKey now = key();
    c.apply(now);
    std::string why;
    EXPECT_FALSE(parse_cost_cache(text, now, &why));
    EXPECT_EQ(why, std::string("stale: ") + c.field + " differs");
  }
}

TEST(CalibrateCache, DamagedTextIsNotUsed) {
  std::string text = cost_cache_text(key(), cost());
  EXPECT_FALSE(parse_cost_cache("", key()));
  EXPECT_FALSE(parse_cost_cache("nop5_ns=1\n", key()));
  std::string cut = text.substr(0, text.find("single_step_ns"));
  std::string why;
  EXPECT_FALSE(parse_cost_cache(cut, key(), &why));
  EXPECT_EQ(why, "no valid single_step_ns");
  std::string bad = text;
  bad.replace(bad.find("nop5_ns=1096"), 12, "nop5_ns=10x6");
  EXPECT_FALSE(parse_cost_cache(bad, key()));
}

TEST(CalibrateCache, StoredByRootIsLoaded) {
  if (geteuid() != 0) GTEST_SKIP() << "only root stores the cache";
  TempFile dir;
  ASSERT_TRUE(store_cached_cost(dir.path(), key(), cost()));
  struct stat st {};
  ASSERT_EQ(stat(dir.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto back = load_cached_cost(dir.path(), key());
  ASSERT_TRUE(back);
  expect_same(*back, cost());
  // Another boot's measurement is not this one's.
  CalibrationKey rebooted = key();
  rebooted.boot_id = "11111111-2222-3333-4444-555555555555";
  std::string why;
  EXPECT_FALSE(load_cached_cost(dir.path(), rebooted, &why));
  EXPECT_EQ(why, "stale: boot_id differs");
  // A measurement with an error is not stored.
  ProbeCost partial = cost();
  partial.error = "single-step: no measurable cost";
  EXPECT_FALSE(store_cached_cost(dir.path(), rebooted, partial));
}

TEST(CalibrateCache, CacheOthersCanWriteIsRefused) {
  TempFile dir;
  ASSERT_TRUE(std::filesystem::create_directory(dir.path()));
  const std::string file = dir.path() + "/probe-cost";
  std::ofstream(file) << cost_cache_text(key(), cost());
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
  ASSERT_EQ(chmod(file.c_str(), 0600), 0);
  std::string why;
  if (geteuid() != 0) {
    // The test's own user is not root: its files are never trusted.
    EXPECT_FALSE(load_cached_cost(dir.path(), key(), &why));
    EXPECT_EQ(why, dir.path() + " is not root's");
    return;
  }
  ASSERT_TRUE(load_cached_cost(dir.path(), key(), &why)) << why;
  // A directory anyone may write: its file could be anyone's replacement.
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  EXPECT_FALSE(load_cached_cost(dir.path(), key(), &why));
  EXPECT_EQ(why, dir.path() + " is writable by others than root");
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
  // A file its group may write.
  ASSERT_EQ(chmod(file.c_str(), 0620), 0);
  EXPECT_FALSE(load_cached_cost(dir.path(), key(), &why));
  EXPECT_EQ(why, file + " is writable by others than root");
  ASSERT_EQ(chmod(file.c_str(), 0600), 0);
  // A file an unprivileged user owns (and so may rewrite).
  ASSERT_EQ(chown(file.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(load_cached_cost(dir.path(), key(), &why));
  EXPECT_EQ(why, file + " is not root's");
  ASSERT_EQ(chown(file.c_str(), 0, 0), 0);
  // A directory an unprivileged user owns.
  ASSERT_EQ(chown(dir.path().c_str(), 65534, 65534), 0);
  EXPECT_FALSE(load_cached_cost(dir.path(), key(), &why));
  EXPECT_EQ(why, dir.path() + " is not root's");
  // Nor does root store into it.
  EXPECT_FALSE(store_cached_cost(dir.path(), key(), cost()));
  ASSERT_EQ(chown(dir.path().c_str(), 0, 0), 0);
  // A symlink in the file's place is not followed.
  std::filesystem::remove(file);
  std::ofstream(dir.path() + "/elsewhere") << cost_cache_text(key(), cost());
  std::filesystem::create_symlink(dir.path() + "/elsewhere", file);
  EXPECT_FALSE(load_cached_cost(dir.path(), key(), &why));
  EXPECT_EQ(why, "no cache");
}
