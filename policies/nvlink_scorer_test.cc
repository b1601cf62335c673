// Tests for the nvlink scorer: the share of TP groups inside one NVLink domain.
#include <ostream>
#include <string>

#include "gtest/gtest.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

struct NvlinkCase {
  const char* name;
  RequestSpec spec;
  int split;  // TP groups spanning domains
  double want;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const NvlinkCase& c, std::ostream* os) { *os << c.name; }

class NvlinkScorerTest : public ::testing::TestWithParam<NvlinkCase> {};

TEST_P(NvlinkScorerTest, ShareOfWholeGroups) {
  const NvlinkCase& c = GetParam();
  testing::ScorerWorld w(c.spec);
  CandidateFacts facts;
  facts.tp_groups_split = c.split;
  EXPECT_DOUBLE_EQ(MakeNvlinkScorer()->Score(w.Context(), facts), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NvlinkScorerTest,
    ::testing::Values(
        // No TP: nothing to keep together.
        NvlinkCase{"NoTp", {.gpus = 16}, 0, 100},
        // 16 GPUs, TP=8: 2 groups. (2 - 0) / 2 = 100%; (2 - 1) / 2 = 50%; (2 - 2) / 2 = 0.
        NvlinkCase{"AllWhole", {.gpus = 16, .tp = 8}, 0, 100},
        NvlinkCase{"HalfSplit", {.gpus = 16, .tp = 8}, 1, 50},
        NvlinkCase{"AllSplit", {.gpus = 16, .tp = 8}, 2, 0},
        // 32 GPUs, TP=4, PP=2: 8 groups, 3 split: 100 * 5 / 8 = 62.5.
        NvlinkCase{"PipelineGroups", {.gpus = 32, .tp = 4, .pp = 2}, 3, 62.5}),
    [](const ::testing::TestParamInfo<NvlinkCase>& info) { return std::string(info.param.name); });

TEST(NvlinkScorerTest, Name) { EXPECT_EQ(MakeNvlinkScorer()->Name(), "nvlink"); }

}  // namespace
}  // namespace nvlplace
