// The recorder's plan: the probe table's rows and the trace header, each
// built in one place from what was resolved and measured.
#include <gtest/gtest.h>

#include <time.h>

#include "record/calibrate.h"
#include "record/features.h"
#include "record/kernel_groups.h"
#include "record/record_plan.h"

namespace atrace {
namespace {

TEST(RecordPlan, FunctionProbeRowCarriesEverySiteField) {
  uprobes::ProbeSite s;
  s.id = 7;
  s.name = "ns::f(int)";
  s.mangled = "_ZN2ns1fEi";
  s.module = "demo";
  s.path = "/opt/demo";
  s.address = 0x1130;
  s.offset = 0x1134;
  s.entry_delta = 4;
  s.entry_path = formats::ProbePath::Emulated;
  s.build_id = "abcd";
  const formats::ProbeInfo p = probe_info(s);
  EXPECT_EQ(p.id, 7u);
  EXPECT_EQ(p.kind, formats::ProbeKind::Function);
  EXPECT_EQ(p.name, "ns::f(int)");
  EXPECT_EQ(p.module, "demo");
  EXPECT_EQ(p.path, "/opt/demo");
  EXPECT_EQ(p.address, 0x1130u);
  EXPECT_EQ(p.offset, 0x1134u);
  EXPECT_EQ(p.entry_delta, 4u);
  EXPECT_EQ(p.path_kind, formats::ProbePath::Emulated);
  EXPECT_EQ(p.build_id, "abcd");
}

TEST(RecordPlan, UsdtProbeRowFromItsFirstSite) {
  uprobes::UsdtTarget t;
  t.id = 12;
  t.kind = formats::ProbeKind::Interval;
  t.provider = "app";
  t.name = "request";
  t.module = "libapp.so";
  t.path = "/usr/lib/libapp.so";
  t.build_id = "ef01";
  t.sites.resize(2);
  t.sites[0].address = 0x2000;
  t.sites[0].offset = 0x1000;
  t.sites[0].path_kind = formats::ProbePath::Nop5;
  t.sites[1].address = 0x3000;
  const formats::ProbeInfo p = probe_info(t);
  EXPECT_EQ(p.id, 12u);
  EXPECT_EQ(p.kind, formats::ProbeKind::Interval);
  EXPECT_EQ(p.name, "app:request");
  EXPECT_EQ(p.module, "libapp.so");
  EXPECT_EQ(p.path, "/usr/lib/libapp.so");
  EXPECT_EQ(p.address, 0x2000u);
  EXPECT_EQ(p.offset, 0x1000u);
  EXPECT_EQ(p.path_kind, formats::ProbePath::Nop5);
  EXPECT_EQ(p.build_id, "ef01");
  EXPECT_EQ(p.entry_delta, 0u);
}

TEST(RecordPlan, HeaderFromOptionsKernelAndCalibration) {
  RecordOptions o;
  o.atrace_command_line = "atrace record -- ./demo";
  o.kernel_groups = kKernelSched | kKernelProc;
  KernelFeatures f;
  f.release = "6.18.0-test";
  ProbeCost c;
  c.nop5_ns = 370;
  c.emulated_ns = 500;
  c.single_step_ns = 9500;
  c.nop5_inside_ns = 100;
  c.emulated_inside_ns = 200;
  c.single_step_inside_ns = 4000;
  const formats::TraceHeader h = trace_header(o, f, c, 4242, "./demo --fast");
  EXPECT_EQ(h.atrace_version, ATRACE_VERSION);
  EXPECT_EQ(h.command_line, "atrace record -- ./demo");
  EXPECT_EQ(h.target_command, "./demo --fast");
  EXPECT_EQ(h.target_pid, 4242u);
  EXPECT_EQ(h.kernel, "6.18.0-test");
  EXPECT_EQ(h.clock_id, static_cast<uint32_t>(CLOCK_MONOTONIC));
  EXPECT_EQ(h.kernel_events, kernel_groups_string(kKernelSched | kKernelProc));
  EXPECT_FALSE(h.host.empty());
  EXPECT_EQ(h.start_mono_ns, 0u);  // stamped when the recording starts
  EXPECT_EQ(h.end_mono_ns, 0u);    // and ends
  // The costs land where the reports read them back (one table).
  const formats::ProbeCosts back = formats::probe_costs(h);
  EXPECT_EQ(back.of(formats::ProbePath::Nop5), 370u);
  EXPECT_EQ(back.of(formats::ProbePath::Emulated), 500u);
  EXPECT_EQ(back.of(formats::ProbePath::SingleStep), 9500u);
  EXPECT_EQ(back.inside_of(formats::ProbePath::Nop5), 100u);
  EXPECT_EQ(back.inside_of(formats::ProbePath::Emulated), 200u);
  EXPECT_EQ(back.inside_of(formats::ProbePath::SingleStep), 4000u);
  EXPECT_EQ(h.kernel_limits, f.limits());
}

uprobes::Module module(const std::string& path, uint64_t ino, bool waiting = false,
                       bool is_main = false) {
  uprobes::Module m;
  m.path = path;
  m.name = path.substr(path.rfind('/') + 1);
  m.id = {8, ino};
  m.waiting = waiting;
  m.is_main = is_main;
  return m;
}

// -p A,B: one file both map is one module (probed once), two files at one
// path in two roots are two.
TEST(RecordPlan, ModulesOfSeveralProcessesMergeByFileIdentity) {
  std::vector<uprobes::Module> all = {module("/usr/bin/app", 1, false, true),
                                      module("/usr/lib/libc.so.6", 2)};
  merge_modules(
      all, {module("/proc/42/root/usr/bin/app", 3, false, true),
            module("/proc/42/root/usr/lib/libc.so.6", 2), module("/proc/42/root/opt/libx.so", 4)});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].path, "/usr/bin/app");
  EXPECT_EQ(all[1].path, "/usr/lib/libc.so.6");  // the first process's path
  EXPECT_EQ(all[2].path, "/proc/42/root/usr/bin/app");
  EXPECT_TRUE(all[2].is_main);
  EXPECT_EQ(all[3].path, "/proc/42/root/opt/libx.so");
}

TEST(RecordPlan, AMappedFileReplacesTheSameFileWaiting) {
  std::vector<uprobes::Module> all = {module("/usr/bin/app", 1, false, true),
                                      module("/opt/plugin.so", 5, true)};
  merge_modules(all, {module("/usr/bin/other", 5, false, true)});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_FALSE(all[1].waiting);
  EXPECT_TRUE(all[1].is_main);
  EXPECT_EQ(all[1].path, "/usr/bin/other");
}

TEST(RecordPlan, TracedPidsAreTheListOrTheOnePid) {
  RecordOptions o;
  EXPECT_TRUE(traced_pids(o).empty());
  o.pid = 7;
  EXPECT_EQ(traced_pids(o), std::vector<pid_t>{7});
  o.pids = {7, 9};
  EXPECT_EQ(traced_pids(o), (std::vector<pid_t>{7, 9}));
}

}  // namespace
}  // namespace atrace
