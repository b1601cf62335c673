// Tests for the model scorer: the slowest GPU model of a candidate against the fastest.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "policies/scorer_testing.h"
#include "policies/scorers.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;

// Three models: GB200 on node0, H100 on node1, A100 on node2 (8 GPUs each, one leaf).
constexpr char kThreeModels[] = R"(name: three
tiers: [leaf]
gpu_models:
  - {name: GB200, nvlink_gbps: 1800}
  - {name: H100, nvlink_gbps: 900}
  - {name: A100, nvlink_gbps: 600}
nodes:
  - {names: node0, gpus: 8, model: GB200}
  - {names: node1, gpus: 8, model: H100}
  - {names: node2, gpus: 8, model: A100}
switches:
  - {name: leaf0, tier: leaf, nodes: "node[0-2]"}
)";

struct ModelCase {
  const char* name;
  std::vector<NodeId> nodes;  // the candidate's nodes
  double want;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

class ModelScorerTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ModelScorerTest, SlowestAgainstFastest) {
  auto spec = ParseTopologyYaml(kThreeModels, "three.yaml");
  ASSERT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  ClusterState state(*topo);
  auto r = ResolveRequest({.gpus = 8}, **topo);
  ASSERT_THAT(r, IsOk());
  ScoringContext ctx{**topo, state, *r, {}, 1};
  CandidateFacts facts;
  facts.nodes.assign(GetParam().nodes.begin(), GetParam().nodes.end());
  for (NodeId n : facts.nodes) facts.ranks.push_back((*topo)->nodes()[n].gpus[0]);
  EXPECT_DOUBLE_EQ(MakeModelScorer()->Score(ctx, facts), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Cases, ModelScorerTest,
                         ::testing::Values(
                             // The fastest model of the cluster: 100 * 1800 / 1800.
                             ModelCase{"Fastest", {0}, 100},
                             // 100 * 900 / 1800 = 50; 100 * 600 / 1800 = 33.3.
                             ModelCase{"Half", {1}, 50},
                             ModelCase{"Third", {2}, 100.0 * 600 / 1800},
                             // Mixed: the slowest decides, 100 * 600 / 1800.
                             ModelCase{"MixedAtTheSlowest", {0, 2}, 100.0 * 600 / 1800}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(ModelScorerTest, OneModelIsAlways100) {
  // The lab cluster has one model: every candidate 100, no choice changed.
  testing::ScorerWorld w({.gpus = 8});
  EXPECT_DOUBLE_EQ(MakeModelScorer()->Score(w.Context(), w.Facts({{0, 0}, {5, 3}})), 100);
}

TEST(ModelScorerTest, Name) { EXPECT_EQ(MakeModelScorer()->Name(), "model"); }

}  // namespace
}  // namespace nvlplace
