// Tests for the fragmentation scorer: best fit over NVLink domains and leaf switches.
#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "placement/formats/busy_list.h"
#include "placement/formats/topology_yaml.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;

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

TEST(FragmentationScorerTest, CountsTheNodesOfEveryLeafTouchedOnce) {
  // node0 (leaf0: 26 free) and node4 (leaf1: 32 free): leaves 2 / 58, domains 2 / (2 + 8).
  testing::ScorerWorld w({.gpus = 2}, kBusy);
  EXPECT_NEAR(MakeFragmentationScorer()->Score(w.Context(), w.Facts({{0, 7}, {4, 0}})),
              100 * (0.6 * 2.0 / 10 + 0.4 * 2.0 / 58), 1e-9);
}

TEST(FragmentationScorerTest, RailLeavesHoldingTheSameNodesCountThemOnce) {
  // One rail-optimized SU: each of the 32 nodes is under all 8 rail leaves. 16 GPUs on
  // dgx001-002 with dgx003-032 half busy: leaves 16 / (16 + 30 * 4), domains 16 / 16.
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      LoadTopologyFile("configs/dgx-h100-superpod-su.yaml");
  ASSERT_THAT(topo, IsOk());
  ClusterState state(*topo);
  ASSERT_THAT(LoadBusyList("dgx[003-032]:0-3", "busy", &state), IsOk());
  absl::StatusOr<Request> r = ResolveRequest({.gpus = 16}, **topo);
  ASSERT_THAT(r, IsOk());
  CandidateFacts f;
  for (NodeId n : {0, 1}) {
    f.nodes.push_back(n);
    for (GpuId g : (*topo)->nodes()[n].gpus) f.ranks.push_back(g);
    f.domains.push_back((*topo)->DomainOf((*topo)->nodes()[n].gpus[0]));
  }
  ScoringContext ctx{**topo, state, *r, CommEstimate{}, 1};
  EXPECT_NEAR(MakeFragmentationScorer()->Score(ctx, f), 100 * (0.6 + 0.4 * 16.0 / 136), 1e-9);
}

TEST(FragmentationScorerTest, EmptyCandidate) {
  testing::ScorerWorld w({.gpus = 2});
  EXPECT_DOUBLE_EQ(MakeFragmentationScorer()->Score(w.Context(), CandidateFacts{}), 100);
}

}  // namespace
}  // namespace nvlplace
