// Stack frames named at report time: against the module mapped at the
// address (the reader's module_at, here a fixed map), by the symbol lookup
// handed in; and the callers report --callers counts from them.
#include <gtest/gtest.h>

#include "analysis/analysis.h"

using namespace atrace;
using namespace atrace::analysis;

namespace {

// Process 7 has /bin/app mapped at 0x555000000000 once `loaded`.
struct FakeModules {
  bool loaded = false;
  formats::MappedModule app{0x555000000000, "/bin/app", "ab12"};
  ModuleAt at() const {
    return [this](uint32_t pid, uint64_t address) -> const formats::MappedModule* {
      return loaded && pid == 7 && address >= app.base ? &app : nullptr;
    };
  }
};

// /bin/app: f at file offsets [0x1000, 0x1100), g at [0x1100, 0x1200).
std::optional<FrameSymbol> fake_symbols(const formats::MappedModule& m, uint64_t off) {
  if (m.path != "/bin/app" || m.build_id != "ab12") return std::nullopt;
  if (off >= 0x1000 && off < 0x1100) return FrameSymbol{"f", off - 0x1000};
  if (off >= 0x1100 && off < 0x1200) return FrameSymbol{"g(int)", off - 0x1100};
  return std::nullopt;
}

}  // namespace

TEST(StackFrames, NamedAgainstTheProcessModules) {
  FakeModules modules;
  FrameResolver r(modules.at(), fake_symbols);
  EXPECT_EQ(frame_text(r.resolve(7, 0x555000001010)), "[unknown]");  // nothing loaded yet
  modules.loaded = true;
  EXPECT_EQ(frame_text(r.resolve(7, 0x555000001010)), "f+0x10 (app)");
  EXPECT_EQ(frame_text(r.resolve(7, 0x555000001100)), "g(int)+0x0 (app)");
  EXPECT_EQ(frame_text(r.resolve(7, 0x7f0000000000)), "[unknown]");  // no function there
  EXPECT_EQ(frame_text(r.resolve(8, 0x555000001010)), "[unknown]");  // another process
  EXPECT_EQ(frame_text(r.resolve(7, 0x1000)), "[unknown]");          // below every module
}

TEST(StackFrames, CallersFromStacksWithExactCounts) {
  std::vector<formats::ProbeInfo> probes(2);
  probes[0].id = 1;
  probes[0].name = "leaf";
  probes[0].module = "app";
  probes[1].id = 2;
  probes[1].name = "f";  // traced: a caller the stacks show too
  probes[1].module = "app";
  CallReplay replay(probes);
  FakeModules modules;
  modules.loaded = true;
  StackCallers callers(replay, probes, FrameResolver(modules.at(), fake_symbols));
  auto entry = [&](uint64_t ts, std::vector<uint64_t> stack) {
    formats::Event ev;
    ev.ts = ts;
    ev.pid = ev.tid = 7;
    ev.id = 1;
    ev.kind = formats::EventKind::FuncEntry;
    ev.stack = std::move(stack);
    replay.add(ev);
    ev.kind = formats::EventKind::FuncExit;
    ev.ts++;
    ev.stack.clear();
    replay.add(ev);
  };
  for (int i = 0; i < 3; i++) entry(100 + 10 * i, {0x555000009000, 0x555000001020});
  for (int i = 0; i < 2; i++) entry(200 + 10 * i, {0x555000009000, 0x555000001140});
  entry(300, {0x555000009000, 0x7f0000000000});
  entry(400, {0x555000009000});  // no caller frame
  entry(500, {});                // no stack
  replay.finish(1000);
  auto got = callers.callers_of(1);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].function, "f");
  EXPECT_EQ(got[0].calls, 3u);
  EXPECT_TRUE(got[0].traced);
  EXPECT_EQ(got[1].function, "g(int)");
  EXPECT_EQ(got[1].calls, 2u);
  EXPECT_FALSE(got[1].traced);
  EXPECT_EQ(got[2].function, "");
  EXPECT_EQ(got[2].calls, 1u);
  EXPECT_EQ(callers.stacks_of(1), 7u);
  EXPECT_TRUE(callers.callers_of(2).empty());
}
