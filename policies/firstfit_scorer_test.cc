// Tests for the firstfit scorer: lowest GPU ids first.
#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

TEST(FirstFitScorerTest, LowerIdsScoreHigher) {
  testing::ScorerWorld w({.gpus = 2});
  auto scorer = MakeFirstFitScorer();
  // GPUs 0 and 1 of 64: mean 0.5, 100 * (1 - 0.5 / 64) = 99.22
  EXPECT_DOUBLE_EQ(scorer->Score(w.Context(), w.Facts({{0, 0}, {0, 1}})), 100 * (1 - 0.5 / 64));
  // GPUs 62 and 63: mean 62.5, 100 * (1 - 62.5 / 64) = 2.34
  EXPECT_DOUBLE_EQ(scorer->Score(w.Context(), w.Facts({{7, 6}, {7, 7}})), 100 * (1 - 62.5 / 64));
  EXPECT_DOUBLE_EQ(scorer->Score(w.Context(), CandidateFacts{}), 100);
}

}  // namespace
}  // namespace nvlplace
