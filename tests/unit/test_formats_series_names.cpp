// formats/series.h: the names of a series' files, and back from a later
// file's name to the first's (a series read from a later file).
#include <gtest/gtest.h>

#include "formats/series.h"

namespace atrace::formats {
namespace {

TEST(SeriesNames, FirstNameIsTheInverseOfFileName) {
  for (const std::string first :
       {"svc.data", "/tmp/a.b/svc.data", "trace", "dir.x/trace", ".hidden", "a.", "x.1.data"}) {
    for (uint32_t seq : {0u, 1u, 5u, 12u, 100u}) {
      const std::string name = series_file_name(first, seq);
      const auto back = series_first_name(name, seq);
      ASSERT_TRUE(back) << name;
      EXPECT_EQ(series_file_name(*back, seq), name);
      EXPECT_EQ(*back, first) << name << " " << seq;
    }
  }
}

TEST(SeriesNames, NamesOfNoSeriesFileHaveNoFirst) {
  EXPECT_EQ(series_first_name("svc.5.data", 5), "svc.data");
  EXPECT_EQ(series_first_name("trace.5", 5), "trace");
  EXPECT_FALSE(series_first_name("svc.data", 5));     // renamed: not findable
  EXPECT_FALSE(series_first_name("svc.15.data", 5));  // another number
  EXPECT_FALSE(series_first_name("part5-alone.data", 5));
  EXPECT_FALSE(series_first_name("5", 5));
}

}  // namespace
}  // namespace atrace::formats
