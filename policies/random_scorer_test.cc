// Tests for the random scorer: seeded, deterministic, in range.
#include <set>

#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

TEST(RandomScorerTest, DeterministicPerSeedAndInRange) {
  testing::ScorerWorld w({.gpus = 2});
  auto a = MakeRandomScorer(7), b = MakeRandomScorer(7), other = MakeRandomScorer(8);
  std::set<double> seen;
  int differs = 0;
  for (int node = 0; node < 8; ++node) {
    for (int i = 0; i + 1 < 8; i += 2) {
      CandidateFacts f = w.Facts({{node, i}, {node, i + 1}});
      double s = a->Score(w.Context(), f);
      EXPECT_GE(s, 0);
      EXPECT_LE(s, 100);
      EXPECT_EQ(s, b->Score(w.Context(), f));  // same seed, same score
      differs += s != other->Score(w.Context(), f);
      seen.insert(s);
    }
  }
  // 32 candidates: FNV-1a spreads them (a constant scorer would give 1 value).
  EXPECT_GT(seen.size(), 25u);
  EXPECT_GT(differs, 25);
}

}  // namespace
}  // namespace nvlplace
