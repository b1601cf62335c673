// Tests for the comm scorer: estimated communication time against the lower bound, then
// against the best candidate of the decision.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

CommEstimate Comm(double tp, double pp, double dp) {
  CommEstimate c;
  c.tp_s = tp;
  c.pp_s = pp;
  c.dp_s = dp;
  return c;
}

TEST(CommScorerTest, IdealOverEstimate) {
  testing::ScorerWorld w({.gpus = 16, .tp = 8});
  auto scorer = MakeCommScorer();
  ScoringContext ctx = w.Context(Comm(1.0, 0, 1.0));  // ideal: 2 s per step
  CandidateFacts facts;
  facts.comm = Comm(1.0, 0, 1.0);
  EXPECT_DOUBLE_EQ(scorer->Score(ctx, facts), 100);  // 100 * 2 / 2
  facts.comm = Comm(1.0, 0.5, 2.5);
  EXPECT_DOUBLE_EQ(scorer->Score(ctx, facts), 50);  // 100 * 2 / 4
  facts.comm = Comm(0, 0, 0);
  EXPECT_DOUBLE_EQ(scorer->Score(ctx, facts), 100);  // nothing to communicate
}

TEST(CommScorerTest, NormalizesToTheBestCandidate) {
  auto scorer = MakeCommScorer();
  std::vector<double> scores = {25, 50, 40};
  scorer->Normalize(&scores);
  // 100 * 25 / 50 = 50, 100 * 50 / 50 = 100, 100 * 40 / 50 = 80
  EXPECT_THAT(scores, ::testing::ElementsAre(50, 100, 80));
  std::vector<double> zeros = {0, 0};
  scorer->Normalize(&zeros);
  EXPECT_THAT(zeros, ::testing::ElementsAre(0, 0));
}

}  // namespace
}  // namespace nvlplace
