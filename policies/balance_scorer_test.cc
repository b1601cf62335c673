// Tests for the balance scorer: a job over several NVLink domains takes the same share of each.
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

struct BalanceCase {
  const char* name;
  std::vector<int> used_per_domain;  // GPUs of the candidate in each domain it touches
  double want;
};

void PrintTo(const BalanceCase& c, std::ostream* os) { *os << c.name; }

class BalanceScorerTest : public ::testing::TestWithParam<BalanceCase> {};

TEST_P(BalanceScorerTest, SmallestShareOverLargest) {
  const BalanceCase& c = GetParam();
  testing::ScorerWorld w({.gpus = 16});
  CandidateFacts facts;
  facts.used_per_domain.assign(c.used_per_domain.begin(), c.used_per_domain.end());
  facts.domains.resize(c.used_per_domain.size());
  EXPECT_NEAR(MakeBalanceScorer()->Score(w.Context(), facts), c.want, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BalanceScorerTest,
    ::testing::Values(BalanceCase{"OneDomain", {96}, 100},
                      // 24 trays of 4 GPUs over two NVL72 racks: 48 + 48 -> 100 x 48 / 48
                      BalanceCase{"TwelvePlusTwelve", {48, 48}, 100},
                      // 72 + 24: 100 x 24 / 72 = 33.3
                      BalanceCase{"EighteenPlusSix", {72, 24}, 100.0 * 24 / 72},
                      // 8 + 4 + 4: 100 x 4 / 8 = 50
                      BalanceCase{"ThreeDomains", {8, 4, 4}, 50}, BalanceCase{"NoDomain", {}, 100}),
    [](const ::testing::TestParamInfo<BalanceCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nvlplace
