// The cheapest split of a flow graph (analysis/flow_partition.h): the
// ratio cut on graphs whose answer is known by hand.
#include <gtest/gtest.h>

#include "analysis/flow_partition.h"

namespace atrace::analysis {
namespace {

// Nodes 0..n-1 in a chain with these weights between i and i+1.
std::vector<SplitEdge> chain(const std::vector<uint64_t>& w) {
  std::vector<SplitEdge> e;
  for (size_t i = 0; i < w.size(); ++i) e.push_back({i, i + 1, w[i]});
  return e;
}

TEST(FlowPartition, CutsTheLightestLinkBetweenEqualHalves) {
  // 0 =100= 1 =10= 2 =100= 3, equal work: {0,1} | {2,3}, cut 10.
  auto s = cheapest_split({5, 5, 5, 5}, chain({100, 10, 100}));
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->exact);
  EXPECT_EQ(s->cut, 10u);
  EXPECT_EQ(s->side[0], s->side[1]);
  EXPECT_EQ(s->side[2], s->side[3]);
  EXPECT_NE(s->side[1], s->side[2]);
  EXPECT_EQ(s->work[0], 10u);
  EXPECT_EQ(s->work[1], 10u);
}

TEST(FlowPartition, AnIdleNodeIsNeverAGroupOfItsOwn) {
  // Node 3 does no work and has one light edge: cutting it off costs 1
  // but puts no work on its side, so the split is still the middle.
  auto e = chain({100, 10, 100});
  e.push_back({3, 4, 1});
  auto s = cheapest_split({5, 5, 5, 5, 0}, e);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cut, 10u);
  EXPECT_EQ(s->side[3], s->side[4]);  // it stays with its only partner
}

TEST(FlowPartition, WorkDecidesBetweenTwoCuts) {
  // 0 -3- 1 -4- 2: cutting off node 0 (work 1) costs 3 per unit of work;
  // cutting off node 2 (work 10) costs 0.4.
  auto s = cheapest_split({1, 10, 10}, chain({3, 4}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cut, 4u);
  EXPECT_EQ(s->side[0], s->side[1]);
}

TEST(FlowPartition, GroupsThatNeverTalkSplitAtZeroMostEvenly) {
  // {0,1} and {2,3,4}, no edge between; of the zero cuts, the even one.
  std::vector<SplitEdge> e = {{0, 1, 50}, {2, 3, 50}, {3, 4, 50}};
  auto s = cheapest_split({4, 4, 3, 3, 2}, e);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cut, 0u);
  EXPECT_EQ(s->side[0], s->side[1]);
  EXPECT_EQ(s->side[2], s->side[3]);
  EXPECT_EQ(s->side[3], s->side[4]);
  EXPECT_NE(s->side[0], s->side[2]);
}

TEST(FlowPartition, NoSplitWithoutWorkOnBothSides) {
  EXPECT_FALSE(cheapest_split({7}, {}));
  EXPECT_FALSE(cheapest_split({7, 0, 0}, chain({1, 1})));
  EXPECT_FALSE(cheapest_split({}, {}));
}

TEST(FlowPartition, NodesThatNeitherWorkNorTalkAreLeftOut) {
  auto s = cheapest_split({5, 0, 5}, {{0, 2, 3}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->side[1], 2);
  EXPECT_EQ(s->cut, 3u);
}

TEST(FlowPartition, LargeGraphsAreSplitApproximatelyButAtTheObviousCut) {
  // Two cliques of 15 nodes each, heavy inside, one light edge between:
  // past kExactNodes, the seed and the moves still find that edge.
  std::vector<SplitEdge> e;
  const size_t half = 15;
  for (size_t g = 0; g < 2; ++g)
    for (size_t i = 0; i < half; ++i)
      for (size_t j = i + 1; j < half; ++j) e.push_back({g * half + i, g * half + j, 20});
  e.push_back({0, half, 1});
  auto s = cheapest_split(std::vector<uint64_t>(2 * half, 3), e);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->exact);
  EXPECT_EQ(s->cut, 1u);
  for (size_t i = 1; i < half; ++i) {
    EXPECT_EQ(s->side[i], s->side[0]);
    EXPECT_EQ(s->side[half + i], s->side[half]);
  }
}

}  // namespace
}  // namespace atrace::analysis
