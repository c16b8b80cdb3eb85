// Probe-cost calibration, the parts that need no kernel: where a function
// is mapped from, the batch statistics, batch sizing, and that a failure
// gives zeros and a reason instead of an exception.
#include <gtest/gtest.h>

#include "record/calibrate.h"

using namespace atrace;

namespace {
const char* kMaps =
    "55d0c1a00000-55d0c1a42000 r--p 00000000 fe:01 1311 /usr/bin/atrace\n"
    "55d0c1a42000-55d0c1b10000 r-xp 00042000 fe:01 1311 /usr/bin/atrace\n"
    "55d0c2000000-55d0c2021000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
    "7f1000000000-7f1000100000 r-xp 00028000 fe:01 99 /usr/lib/a b/libx.so\n";
}

TEST(Calibrate, MappingGivesFileOffset) {
  auto m = mapping_of(kMaps, 0x55d0c1a42000 + 0x1234);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "/usr/bin/atrace");
  EXPECT_EQ(m->offset, 0x42000u + 0x1234u);
  auto lib = mapping_of(kMaps, 0x7f1000000010);
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib->path, "/usr/lib/a b/libx.so");  // spaces in paths survive
  EXPECT_EQ(lib->offset, 0x28010u);
}

TEST(Calibrate, MappingRejectsAnonymousAndUnmapped) {
  EXPECT_FALSE(mapping_of(kMaps, 0x55d0c2000100));  // [heap]
  EXPECT_FALSE(mapping_of(kMaps, 0x7f0000000010));  // anonymous
  EXPECT_FALSE(mapping_of(kMaps, 0x1000));          // nothing there
  EXPECT_FALSE(mapping_of(kMaps, 0x55d0c1b10000));  // end is exclusive
}

TEST(Calibrate, LowerQuartilePerCall) {
  // Disturbed batches (9000, 5000) do not move it; 8 batches: the 3rd fastest.
  EXPECT_DOUBLE_EQ(lower_quartile_per_call({1300, 1000, 9000, 1100, 1050, 5000, 1200, 1250}, 10),
                   110.0);
  EXPECT_DOUBLE_EQ(lower_quartile_per_call({2000, 1000}, 10), 100.0);
  EXPECT_DOUBLE_EQ(lower_quartile_per_call({1000}, 10), 100.0);
  EXPECT_DOUBLE_EQ(lower_quartile_per_call({}, 10), 0.0);
}

TEST(Calibrate, AddedCostRoundsAndNeverNegative) {
  EXPECT_EQ(added_cost_ns(1250.6, 2.0), 1249u);
  EXPECT_EQ(added_cost_ns(2.0, 3.5), 0u);
}

TEST(Calibrate, BatchesFitInAQuarterRing) {
  EXPECT_EQ(calls_per_batch(0, 256), 256u);  // 64 KiB assumed: 256 calls = 16 KiB
  EXPECT_EQ(calls_per_batch(8 << 20, 256), 256u);
  EXPECT_EQ(calls_per_batch(4096, 256), 16u);  // a one-page ring: 1 KiB per batch
  EXPECT_EQ(calls_per_batch(4096, 8), 8u);
}

TEST(Calibrate, FailureGivesZerosAndAReason) {
  ProbeCost c = calibrate_probe_cost(nullptr, nullptr, {});
  EXPECT_EQ(c.nop5_ns, 0u);
  EXPECT_EQ(c.emulated_ns, 0u);
  EXPECT_EQ(c.single_step_ns, 0u);
  EXPECT_FALSE(c.error.empty());
}

namespace atrace {
namespace {

// Entries and exits arrive in ring order (two CPUs' rings one after the
// other); the intervals are taken in time order, per probe.
TEST(CalibrationRecords, MedianIntervalPairsInTimeOrder) {
  CalibrationRecords r;
  const uint32_t a = kCalibrationProbeId, b = kCalibrationProbeId + 1;
  // probe a: calls of 10, 30, 20 ns; the second call's exit on another CPU's ring.
  r.add(a, true, 100);
  r.add(a, false, 110);
  r.add(a, true, 200);
  r.add(a, true, 300);
  r.add(a, false, 320);
  r.add(a, false, 230);
  r.add(b, true, 150);
  r.add(b, false, 1150);
  EXPECT_EQ(r.median_interval(a), 20u);
  EXPECT_EQ(r.median_interval(b), 1000u);
  EXPECT_EQ(r.median_interval(b + 1), 0u);
}

// A lost exit (ring full) skips that call, never pairs across calls.
TEST(CalibrationRecords, LostRecordSkipsTheCall) {
  CalibrationRecords r;
  const uint32_t a = kCalibrationProbeId;
  r.add(a, true, 100);
  r.add(a, true, 200);  // the first call's exit was lost
  r.add(a, false, 205);
  r.add(a, true, 300);
  r.add(a, false, 305);
  EXPECT_EQ(r.median_interval(a), 5u);
}

TEST(CalibrationRecords, IdsFromTheBaseAreCalibration) {
  EXPECT_TRUE(is_calibration_probe(kCalibrationProbeId));
  EXPECT_TRUE(is_calibration_probe(kCalibrationProbeId + 2));
  EXPECT_FALSE(is_calibration_probe(1));
  EXPECT_FALSE(is_calibration_probe(kCalibrationProbeId - 1));
}

}  // namespace
}  // namespace atrace
