// Tests for the spread scorer: the fewest leaf switches (or rail-leaf units) under the job.
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;

// The lab world: node0-3 under leaf0, node4-7 under leaf1, one leaf each.
TEST(SpreadScorerTest, OneLeafBeatsTwo) {
  testing::ScorerWorld w({.gpus = 16});
  auto scorer = MakeSpreadScorer();
  double one = scorer->Score(w.Context(), w.Facts({{0, 0}, {3, 0}}));
  double two = scorer->Score(w.Context(), w.Facts({{0, 0}, {4, 0}}));
  EXPECT_DOUBLE_EQ(one, 100);
  EXPECT_DOUBLE_EQ(two, 50);
  // Normalized against the candidate under the fewest leaves.
  std::vector<double> scores = {two, two};
  scorer->Normalize(&scores);
  EXPECT_DOUBLE_EQ(scores[0], 100);
  scores = {two, one};
  scorer->Normalize(&scores);
  EXPECT_DOUBLE_EQ(scores[0], 50);
}

// A rail-optimized node hangs from one leaf per rail: a scalable unit's eight rail leaves count
// as one, two units' as two.
TEST(SpreadScorerTest, RailLeavesOfOneUnitCountOnce) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      LoadTopologyFile("configs/dgx-h100-superpod-su.yaml");
  ASSERT_THAT(topo, IsOk());
  ClusterState state(*topo);
  absl::StatusOr<Request> r = ResolveRequest({.gpus = 16}, **topo);
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ((*topo)->nodes()[0].leaves.size(), 8u);
  CandidateFacts f;
  f.nodes = {0, 1, 2};
  ScoringContext ctx{**topo, state, *r, CommEstimate{}, 1};
  EXPECT_DOUBLE_EQ(MakeSpreadScorer()->Score(ctx, f), 100);
}

TEST(SpreadScorerTest, NoLeafScores100) {
  testing::ScorerWorld w({.gpus = 2});
  EXPECT_DOUBLE_EQ(MakeSpreadScorer()->Score(w.Context(), CandidateFacts{}), 100);
}

}  // namespace
}  // namespace nvlplace
