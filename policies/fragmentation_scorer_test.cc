// Tests for the fragmentation scorer: best fit over NVLink domains and leaf switches.
#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

// node0 keeps GPUs 0-5 busy: 2 free there, 8 on each other node. Leaf0 (node0-3) has
// 2 + 3 * 8 = 26 free GPUs.
constexpr char kBusy[] = "node0:0-5\n";

TEST(FragmentationScorerTest, FillingAPartlyUsedDomainWins) {
  testing::ScorerWorld w({.gpus = 2}, kBusy);
  auto scorer = MakeFragmentationScorer();
  // node0's last 2 GPUs: domains 2 / 2 = 1, leaves 2 / 26: 100 * (0.6 + 0.4 * 2 / 26) = 63.08
  double tail = scorer->Score(w.Context(), w.Facts({{0, 6}, {0, 7}}));
  EXPECT_NEAR(tail, 100 * (0.6 + 0.4 * 2.0 / 26), 1e-9);
  // 2 GPUs of the free node1: domains 2 / 8, leaves 2 / 26: 100 * (0.15 + 0.4 * 2 / 26) = 18.08
  double fresh = scorer->Score(w.Context(), w.Facts({{1, 0}, {1, 1}}));
  EXPECT_NEAR(fresh, 100 * (0.6 * 0.25 + 0.4 * 2.0 / 26), 1e-9);
  EXPECT_GT(tail, fresh);
}

TEST(FragmentationScorerTest, UsingUpWholeLeafScores100) {
  testing::ScorerWorld w({.gpus = 8}, "node[0-2]\n");
  // Only node3 is free under leaf0: 8 GPUs use up its domain and the leaf's free GPUs.
  std::vector<std::pair<int, int>> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back({3, i});
  EXPECT_DOUBLE_EQ(MakeFragmentationScorer()->Score(w.Context(), w.Facts(gpus)), 100);
}

TEST(FragmentationScorerTest, EmptyCandidate) {
  testing::ScorerWorld w({.gpus = 2});
  EXPECT_DOUBLE_EQ(MakeFragmentationScorer()->Score(w.Context(), CandidateFacts{}), 100);
}

}  // namespace
}  // namespace nvlplace
