// Tests for the topology model: validation and the fast queries.
#include "placement/topology.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/topology_yaml.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const Topology> Build(const std::string& yaml) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(yaml, "test.yaml");
  EXPECT_THAT(spec, IsOk());
  if (!spec.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return topo.ok() ? *topo : nullptr;
}

absl::Status BuildError(const std::string& yaml) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(yaml, "test.yaml");
  if (!spec.ok()) return spec.status();
  return Topology::Create(*spec).status();
}

// Two leaves of two nodes under one spine; a second spine tree under a core.
constexpr char kTree[] = R"(name: tree
gpu_models: [{name: H100}]
nodes:
  - {names: "n[0-7]", gpus: 8, model: H100}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-1]"}
  - {name: leaf1, tier: leaf, nodes: "n[2-3]"}
  - {name: leaf2, tier: leaf, nodes: "n[4-5]", link_gbps: 200}
  - {name: leaf3, tier: leaf, nodes: "n[6-7]"}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
  - {name: spine1, tier: spine, switches: "leaf[2-3]", oversubscription: 2}
  - {name: core0, tier: core, switches: "spine[0-1]"}
)";

TEST(TopologyTest, CountsAndDomains) {
  auto topo = Build(kTree);
  ASSERT_NE(topo, nullptr);
  EXPECT_EQ(topo->num_nodes(), 8);
  EXPECT_EQ(topo->num_gpus(), 64);     // 8 nodes x 8 GPUs
  EXPECT_EQ(topo->num_domains(), 8);   // one NVLink domain per HGX node
  EXPECT_EQ(topo->num_switches(), 7);
  NodeId n3 = topo->FindNode("n3");
  ASSERT_EQ(n3, 3);
  GpuId g = topo->nodes()[n3].gpus[5];
  EXPECT_EQ(g, 3 * 8 + 5);
  EXPECT_EQ(topo->domains()[topo->DomainOf(g)].name, "n3");
  EXPECT_EQ(topo->FindNode("n9"), -1);
  EXPECT_EQ(topo->FindSwitch("spine1"), 5);
  EXPECT_EQ(topo->FindTier("core"), 2);
}

struct PairCase {
  std::string a, b;
  int tier;
  int hops;
};

class CommonTierTest : public ::testing::TestWithParam<PairCase> {};

TEST_P(CommonTierTest, TierAndHops) {
  static const std::shared_ptr<const Topology> topo = Build(kTree);
  ASSERT_NE(topo, nullptr);
  NodeId a = topo->FindNode(GetParam().a), b = topo->FindNode(GetParam().b);
  EXPECT_EQ(topo->CommonTier(a, b), GetParam().tier);
  EXPECT_EQ(topo->CommonTier(b, a), GetParam().tier);
  EXPECT_EQ(topo->Hops(a, b), GetParam().hops);
}

INSTANTIATE_TEST_SUITE_P(
    Tree, CommonTierTest,
    ::testing::Values(PairCase{"n0", "n0", Topology::kSameNode, 0},
                      PairCase{"n0", "n1", 0, 2},   // node-leaf-node
                      PairCase{"n0", "n3", 1, 4},   // up to the spine: 2*(1+1)
                      PairCase{"n0", "n7", 2, 6},   // up to the core: 2*(2+1)
                      PairCase{"n4", "n6", 1, 4}));

TEST(TopologyTest, GroupTierAndGpusUnder) {
  auto topo = Build(kTree);
  ASSERT_NE(topo, nullptr);
  EXPECT_EQ(topo->CommonTier(std::vector<NodeId>{0, 1}), 0);
  EXPECT_EQ(topo->CommonTier(std::vector<NodeId>{0, 1, 2}), 1);
  EXPECT_EQ(topo->CommonTier(std::vector<NodeId>{0, 5}), 2);
  EXPECT_EQ(topo->CommonTier(std::vector<NodeId>{4}), Topology::kSameNode);
  std::vector<GpuId> under = topo->GpusUnder(topo->FindSwitch("spine0"));
  ASSERT_EQ(under.size(), 32u);  // 4 nodes x 8
  EXPECT_EQ(under.front(), 0);
  EXPECT_EQ(under.back(), 31);
  EXPECT_EQ(topo->GpusUnder(topo->FindSwitch("leaf3")).size(), 16u);
}

TEST(TopologyTest, PathBandwidthIsTheBottleneck) {
  auto topo = Build(kTree);
  ASSERT_NE(topo, nullptr);
  auto gbps = [&](const char* a, const char* b) {
    return topo->PathGbps(topo->FindNode(a), topo->FindNode(b));
  };
  EXPECT_DOUBLE_EQ(gbps("n0", "n1"), 400);  // one default leaf
  EXPECT_DOUBLE_EQ(gbps("n4", "n5"), 200);  // leaf2 runs at 200 Gb/s
  EXPECT_DOUBLE_EQ(gbps("n6", "n7"), 400);
  EXPECT_DOUBLE_EQ(gbps("n0", "n3"), 400);
  // n6 -> spine1 crosses a 2:1 oversubscribed uplink: 400 / 2 = 200.
  EXPECT_DOUBLE_EQ(gbps("n6", "n0"), 200);
  // n4 -> leaf2 at 200 Gb/s, then spine1 2:1: min(200, 400 / 2) = 200.
  EXPECT_DOUBLE_EQ(gbps("n4", "n0"), 200);
}

// A rail-optimized scalable unit: 4 nodes, 4 GPUs each, rail r on leaf r.
constexpr char kRails[] = R"(name: rails
tiers: [leaf, spine]
gpu_models: [{name: H100}]
nodes:
  - {names: "d[1-4]", gpus: 4, model: H100}
switches:
  - {name: rail0, tier: leaf, nodes: "d[1-4]", rail: 0}
  - {name: rail1, tier: leaf, nodes: "d[1-4]", rail: 1}
  - {name: rail2, tier: leaf, nodes: "d[1-4]", rail: 2}
  - {name: rail3, tier: leaf, nodes: "d[1-4]", rail: 3}
  - {name: spine1, tier: spine, switches: "rail[0-3]"}
  - {name: spine2, tier: spine, switches: "rail[0-3]"}
)";

TEST(TopologyTest, RailsKeepTrafficOnTheLeaf) {
  auto topo = Build(kRails);
  ASSERT_NE(topo, nullptr);
  const Node& d1 = topo->nodes()[topo->FindNode("d1")];
  ASSERT_EQ(d1.leaves.size(), 4u);
  EXPECT_EQ(topo->switches()[d1.leaves[2]].name, "rail2");
  // Rail r of every node meets on leaf r: the common tier is the leaf.
  EXPECT_EQ(topo->CommonTier(0, 3), 0);
  EXPECT_EQ(topo->Hops(0, 3), 2);
  // Two spines over every rail leaf: a multi-rooted tree with both as parents.
  EXPECT_EQ(topo->switches()[topo->FindSwitch("rail1")].parents.size(), 2u);
  EXPECT_EQ(topo->GpusUnder(topo->FindSwitch("rail1")).size(), 16u);
}

// GB200 NVL72-like racks, shrunk: 2 racks of 3 nodes x 4 GPUs.
constexpr char kRacks[] = R"(name: racks
tiers: [leaf, spine]
gpu_models: [{name: GB200, nvlink_gbps: 1800}]
nodes:
  - {names: "gb[1-6]", gpus: 4, model: GB200}
nvlink_domains:
  - {name: rack1, nodes: "gb[1-3]", gpus: 12}
  - {name: rack2, nodes: "gb[4-6]"}
switches:
  - {name: leaf1, tier: leaf, nodes: "gb[1-3]"}
  - {name: leaf2, tier: leaf, nodes: "gb[4-6]"}
  - {name: spine, tier: spine, switches: "leaf[1-2]"}
)";

TEST(TopologyTest, MultiNodeDomains) {
  auto topo = Build(kRacks);
  ASSERT_NE(topo, nullptr);
  ASSERT_EQ(topo->num_domains(), 2);
  const NvlDomain& rack1 = topo->domains()[topo->FindDomain("rack1")];
  EXPECT_TRUE(rack1.multi_node);
  EXPECT_EQ(rack1.gpus.size(), 12u);  // 3 nodes x 4 GPUs
  EXPECT_THAT(rack1.nodes, ElementsAre(0, 1, 2));
  EXPECT_DOUBLE_EQ(rack1.nvlink_gbps, 1800);
  EXPECT_EQ(topo->DomainOf(topo->nodes()[2].gpus[3]), topo->FindDomain("rack1"));
  EXPECT_EQ(topo->DomainOf(topo->nodes()[3].gpus[0]), topo->FindDomain("rack2"));
}

TEST(TopologyTest, IslandsSplitANode) {
  auto topo = Build(R"(name: islands
gpu_models: [{name: H100}]
nodes:
  - {names: "n[0-1]", gpus: 8, model: H100, islands: [[0, 1, 2, 3], [4, 5, 6, 7]]}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-1]"}
)");
  ASSERT_NE(topo, nullptr);
  EXPECT_EQ(topo->num_domains(), 4);  // 2 nodes x 2 islands
  EXPECT_EQ(topo->domains()[topo->DomainOf(5)].name, "n0:nvl1");
  EXPECT_EQ(topo->domains()[topo->DomainOf(0)].name, "n0:nvl0");
  EXPECT_NE(topo->DomainOf(3), topo->DomainOf(4));
}

TEST(TopologyTest, ToSpecRebuildsAnEqualModel) {
  for (const char* yaml : {kTree, kRails, kRacks}) {
    auto topo = Build(yaml);
    ASSERT_NE(topo, nullptr);
    absl::StatusOr<std::shared_ptr<const Topology>> back = Topology::Create(topo->ToSpec());
    ASSERT_THAT(back, IsOk());
    EXPECT_THAT(CompareTopologies(*topo, **back), IsOk());
  }
}

TEST(TopologyTest, CompareFindsADifference) {
  auto a = Build(kTree);
  std::string changed = kTree;
  changed.replace(changed.find("link_gbps: 200"), 14, "link_gbps: 100");
  auto b = Build(changed);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_THAT(CompareTopologies(*a, *b), StatusIs(absl::StatusCode::kFailedPrecondition,
                                                  HasSubstr("leaf2")));
}

struct ErrorCase {
  std::string name;
  std::string yaml;
  std::string message;
};

class CreateErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(CreateErrorTest, Rejects) {
  EXPECT_THAT(BuildError(GetParam().yaml),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Validation, CreateErrorTest,
    ::testing::Values(
        ErrorCase{"NodeTwice", R"(name: x
gpu_models: [{name: H100}]
nodes:
  - {names: "n[0-1]", gpus: 8, model: H100}
  - {names: "n1", gpus: 8, model: H100}
switches: [{name: l, tier: leaf, nodes: "n[0-1]"}]
)", "node 'n1' is declared twice"},
        ErrorCase{"RailGap", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100}]
switches:
  - {name: r0, tier: leaf, nodes: "n[0-1]", rail: 0}
  - {name: r2, tier: leaf, nodes: "n[0-1]", rail: 2}
)", "rails"},
        ErrorCase{"ParentTierNotHigher", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100}]
switches:
  - {name: l0, tier: leaf, nodes: "n[0-1]"}
  - {name: l1, tier: leaf, switches: l0}
)", "#/switches/1/switches"},
        ErrorCase{"NodesAndSwitches", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100}]
switches:
  - {name: l0, tier: leaf, nodes: "n[0-1]"}
  - {name: s0, tier: spine, nodes: n0, switches: l0}
)", "both nodes and switches"},
        ErrorCase{"DomainNodeWithIslands", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100, islands: [[0, 1], [2, 3]]}]
nvlink_domains: [{name: d, nodes: "n[0-1]"}]
switches: [{name: l0, tier: leaf, nodes: "n[0-1]"}]
)", "islands"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

}  // namespace
}  // namespace nvlplace
