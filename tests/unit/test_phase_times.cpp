// record -v's phase lines (record/phase_times.h): one line a phase, in the
// order they ended, with the time in ms and a note.
#include <gtest/gtest.h>

#include <algorithm>

#include "record/phase_times.h"

using namespace atrace;

TEST(PhaseTimes, OneLineEachInOrder) {
  PhaseTimes t;
  t.begin();
  t.end(phase::kFeatures);
  t.add(phase::kFirstEvent, 1'250'000, "after the target's start");
  t.skip();
  t.end(phase::kTeardown);
  ASSERT_EQ(t.phases().size(), 3u);
  EXPECT_EQ(t.phases()[0].name, "features");
  EXPECT_EQ(t.phases()[1].ns, 1'250'000u);
  const std::string text = t.text();
  EXPECT_EQ(text.find("atrace: phase features: "), 0u) << text;
  EXPECT_NE(text.find("\natrace: phase first event: 1.2 ms (after the target's start)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\natrace: phase teardown: "), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}
