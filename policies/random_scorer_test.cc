// Tests for the random scorer: seeded by the scoring context, deterministic, in range.
#include <set>

#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

TEST(RandomScorerTest, DeterministicPerSeedAndInRange) {
  testing::ScorerWorld w({.gpus = 2});
  auto a = MakeRandomScorer(), b = MakeRandomScorer();
  ScoringContext seven = w.Context({}, 7), eight = w.Context({}, 8);
  std::set<double> seen;
  int differs = 0;
  for (int node = 0; node < 8; ++node) {
    for (int i = 0; i + 1 < 8; i += 2) {
      CandidateFacts f = w.Facts({{node, i}, {node, i + 1}});
      double s = a->Score(seven, f);
      EXPECT_GE(s, 0);
      EXPECT_LE(s, 100);
      EXPECT_EQ(s, b->Score(seven, f));  // same seed, same score, whichever instance
      differs += s != a->Score(eight, f);
      seen.insert(s);
    }
  }
  // 32 candidates: FNV-1a spreads them (a constant scorer would give 1 value).
  EXPECT_GT(seen.size(), 25u);
  EXPECT_GT(differs, 25);
}

TEST(RandomScorerTest, KnownValue) {
  testing::ScorerWorld w({.gpus = 1});
  // Seed 0, decision 0, GPU 0: DecisionSeed(0, 0) = 12035550249420947055 (splitmix64 of 0
  // xor splitmix64 of 0); h = 1469598103934665603 ^ that ^ 0, times 1099511628211 (mod 2^64)
  // = 6277121328598349828; % 10001 = 6786, so 67.86. Pinned: replays of the random policy
  // depend on every bit.
  EXPECT_DOUBLE_EQ(MakeRandomScorer()->Score(w.Context({}, 0), w.Facts({{0, 0}})), 67.86);
}

}  // namespace
}  // namespace nvlplace
