// Tests for the tier scorer: how low in the fabric the job and its DP groups stay.
#include <ostream>
#include <string>

#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

struct TierCase {
  const char* name;
  int dp_tier;
  int job_tier;
  double want;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const TierCase& c, std::ostream* os) { *os << c.name; }

class TierScorerTest : public ::testing::TestWithParam<TierCase> {};

// The lab has 2 tiers (leaf, spine): one node scores 100 * (2 - 1 + 1) / 2 = 100, a leaf
// 100 * (2 - 1 - 0) / 2 = 50, the spine 0. The score is half DP tier, half job tier.
TEST_P(TierScorerTest, HalfDpHalfJob) {
  const TierCase& c = GetParam();
  testing::ScorerWorld w({.gpus = 16, .tp = 8});
  CandidateFacts facts;
  facts.dp_tier = c.dp_tier;
  facts.job_tier = c.job_tier;
  EXPECT_DOUBLE_EQ(MakeTierScorer()->Score(w.Context(), facts), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TierScorerTest,
    ::testing::Values(TierCase{"OneNode", Topology::kSameNode, Topology::kSameNode, 100},
                      // 0.5 * 100 + 0.5 * 50 = 75
                      TierCase{"DpInNodeJobInLeaf", Topology::kSameNode, 0, 75},
                      // 0.5 * 50 + 0.5 * 50 = 50
                      TierCase{"Leaf", 0, 0, 50},
                      // 0.5 * 50 + 0.5 * 0 = 25
                      TierCase{"DpInLeafJobOverSpine", 0, 1, 25}, TierCase{"Spine", 1, 1, 0},
                      // Nodes that share no switch score as badly as the top tier.
                      TierCase{"Disconnected", Topology::kDisconnected, Topology::kDisconnected,
                               0}),
    [](const ::testing::TestParamInfo<TierCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nvlplace
