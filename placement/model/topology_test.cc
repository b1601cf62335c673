// Tests for the topology model: validation and the fast queries.
#include "placement/model/topology.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <limits>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/slurm_import.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/hostlist.h"
#include "placement/model/status_macros.h"
#include "placement/model/topology_builder.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

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
  EXPECT_EQ(topo->num_gpus(), 64);    // 8 nodes x 8 GPUs
  EXPECT_EQ(topo->num_domains(), 8);  // one NVLink domain per HGX node
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

// A node's GPUs are read as the list they stand for: every GPU of the node, in index order,
// each pointing back at the node; nodes of different sizes and CPU-only nodes between them.
TEST(TopologyTest, NodeGpusReadAsTheNodesList) {
  auto topo = Build(R"(name: mixed
gpu_models: [{name: H100}, {name: GB200}]
nodes:
  - {names: "a[0-1]", gpus: 8, model: H100}
  - {names: "cpu0", gpus: 0}
  - {names: "b[0-2]", gpus: 4, model: GB200}
switches:
  - {name: leaf0, tier: leaf, nodes: "a[0-1],cpu0,b[0-2]"}
)");
  ASSERT_NE(topo, nullptr);
  std::vector<GpuId> seen;
  for (NodeId n = 0; n < topo->num_nodes(); ++n) {
    const NodeGpus& gpus = topo->nodes()[n].gpus;
    std::vector<GpuId> listed(gpus.begin(), gpus.end());
    ASSERT_EQ(listed.size(), gpus.size());
    EXPECT_EQ(topo->num_gpus_on(n), static_cast<int>(gpus.size()));  // the 2-byte list's count
    EXPECT_EQ(gpus.empty(), listed.empty());
    for (size_t i = 0; i < gpus.size(); ++i) {
      EXPECT_EQ(gpus[i], listed[i]);
      EXPECT_EQ(topo->gpus()[gpus[i]].node, n);
      EXPECT_EQ(topo->gpus()[gpus[i]].index, static_cast<int>(i));
    }
    if (!gpus.empty()) {
      EXPECT_EQ(gpus.front(), listed.front());
      EXPECT_EQ(gpus.back(), listed.back());
      EXPECT_EQ(std::vector<GpuId>(std::make_reverse_iterator(gpus.end()),
                                   std::make_reverse_iterator(gpus.begin())),
                std::vector<GpuId>(listed.rbegin(), listed.rend()));
      EXPECT_EQ(std::find(gpus.begin(), gpus.end(), listed.back()) - gpus.begin(),
                static_cast<std::ptrdiff_t>(listed.size() - 1));
    }
    seen.insert(seen.end(), listed.begin(), listed.end());
  }
  EXPECT_EQ(topo->nodes()[2].gpus.size(), 0u);  // cpu0
  // Every GPU once, in node order: the ids 0..num_gpus()-1.
  ASSERT_EQ(seen.size(), static_cast<size_t>(topo->num_gpus()));
  for (size_t g = 0; g < seen.size(); ++g) EXPECT_EQ(seen[g], static_cast<GpuId>(g));
}

TEST(TopologyTest, FindNodeWithAGuessAnswersAsWithout) {
  auto topo = Build(kTree);
  ASSERT_NE(topo, nullptr);
  for (NodeId guess : {-5, -1, 0, 3, 4, 7, 8, 1000}) {
    for (const char* name : {"n0", "n3", "n4", "n7", "n9", ""}) {
      EXPECT_EQ(topo->FindNode(name, guess), topo->FindNode(name)) << name << " " << guess;
    }
  }
  EXPECT_EQ(topo->FindNode("n4", 4), 4);
  EXPECT_EQ(topo->FindNode("n4", 5), 4);
  EXPECT_EQ(topo->FindNode("n9", 8), -1);
  // The indexes' keys are the model's own names: a lookup with a name built elsewhere finds
  // each node and domain.
  for (NodeId n = 0; n < topo->num_nodes(); ++n) {
    std::string name = absl::StrCat("n", n);
    EXPECT_EQ(topo->FindNode(name), n);
    EXPECT_EQ(topo->domains()[topo->FindDomain(name)].nodes, std::vector<NodeId>{n});
  }
}

// Names read from a HostNames are found by number in the runs the nodes were declared in:
// every name of a list finds what its name finds, whatever its run (another group, another
// zero padding, a tail, a single name, a name no node has).
TEST(TopologyTest, FindNodeByItsRunAnswersAsByName) {
  auto topo = Build(R"(name: runs
gpu_models: [{name: H100}]
nodes:
  - {names: "gb[008-012],a[1-2]b[1-3]x,login", gpus: 8, model: H100}
  - {names: "gb[013-014],gb[8-9],c7", gpus: 8, model: H100}
switches:
  - {name: leaf0, tier: leaf, nodes: "gb[008-014],a[1-2]b[1-3]x,login,gb[8-9],c7"}
)");
  ASSERT_NE(topo, nullptr);
  // Each list and how many of its names are nodes.
  std::vector<std::pair<const char*, int>> lists = {{"gb[007-015]", 7},
                                                    {"gb[7-15]", 2},
                                                    {"gb[0008-0010]", 0},
                                                    {"a[0-3]b[0-4]x", 6},
                                                    {"a1b2,login,c7,c[6-8],gb9,gb08", 4}};
  for (const auto& [list, nodes] : lists) {
    absl::StatusOr<HostNames> names = ParseHostlist(list);
    ASSERT_TRUE(names.ok()) << names.status();
    HostNames one_by_one(names->Expand());  // the same names cut into other runs
    for (const HostNames* h : {&*names, &one_by_one}) {
      int found = 0;
      Topology::RunHint hint;  // kept over the list, as the builder and the readers keep it
      for (auto name = h->begin(); name != h->end(); ++name) {
        NodeId n = topo->FindNode(name);
        EXPECT_EQ(n, topo->FindNode(*name)) << *name << " in " << list;
        EXPECT_EQ(topo->FindNode(name, &hint), n) << *name << " in " << list;
        if (n < 0) continue;
        EXPECT_EQ(topo->nodes()[n].name, *name);
        ++found;
      }
      EXPECT_EQ(found, nodes) << list;
    }
  }
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

INSTANTIATE_TEST_SUITE_P(Tree, CommonTierTest,
                         ::testing::Values(PairCase{"n0", "n0", Topology::kSameNode, 0},
                                           PairCase{"n0", "n1", 0, 2},  // node-leaf-node
                                           PairCase{"n0", "n3", 1, 4},  // up to the spine: 2*(1+1)
                                           PairCase{"n0", "n7", 2, 6},  // up to the core: 2*(2+1)
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

// Rail 0 spans four nodes; rail 1 is two leaves of two nodes each.
constexpr char kSharedRail[] = R"(name: shared-rail
tiers: [leaf, spine]
gpu_models: [{name: H100}]
nodes:
  - {names: "d[1-4]", gpus: 2, model: H100}
switches:
  - {name: rail0, tier: leaf, nodes: "d[1-4]", rail: 0}
  - {name: rail1a, tier: leaf, nodes: "d[1-2]", rail: 1}
  - {name: rail1b, tier: leaf, nodes: "d[3-4]", rail: 1}
  - {name: spine, tier: spine, switches: "rail0,rail1a,rail1b"}
)";

TEST(TopologyTest, ALeafGroupIsClosedWhenItsLeavesHoldOnlyItsNodes) {
  auto rails = Build(kRails);
  ASSERT_NE(rails, nullptr);
  EXPECT_EQ(rails->num_leaf_groups(), 1);  // every node on the same four rail leaves
  EXPECT_TRUE(rails->LeafGroupClosed(0));
  auto tree = Build(kTree);
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->num_leaf_groups(), 4);
  for (int g = 0; g < 4; ++g) EXPECT_TRUE(tree->LeafGroupClosed(g)) << g;
  // d1-d2 and d3-d4 differ in rail 1, and rail 0 holds both: its nodes are not one group's.
  auto shared = Build(kSharedRail);
  ASSERT_NE(shared, nullptr);
  ASSERT_EQ(shared->num_leaf_groups(), 2);
  EXPECT_EQ(shared->LeafGroup(shared->FindNode("d1")), shared->LeafGroup(shared->FindNode("d2")));
  EXPECT_NE(shared->LeafGroup(shared->FindNode("d1")), shared->LeafGroup(shared->FindNode("d3")));
  EXPECT_FALSE(shared->LeafGroupClosed(0));
  EXPECT_FALSE(shared->LeafGroupClosed(1));
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
  EXPECT_THAT(CompareTopologies(*a, *b),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("leaf2")));
}

// Mixed: H100 nodes, CPU-only nodes under the same leaves, nodes kept from nvlplace
// (placed: false), and T4 nodes without NVLink.
constexpr char kMixed[] = R"(name: mixed
tiers: [leaf, spine]
gpu_models: [{name: H100}, {name: T4}, {name: X9, nvlink_gbps: 100}]
nodes:
  - {names: "g[0-1]", gpus: 8, model: H100}
  - {names: "cpu[0-1]", gpus: 0}
  - {names: "k0", gpus: 4, model: H100, placed: false}
  - {names: "t0", gpus: 4, model: T4}
  - {names: "x0", gpus: 2, model: X9}
switches:
  - {name: leaf0, tier: leaf, nodes: "g0,cpu0,k0"}
  - {name: leaf1, tier: leaf, nodes: "g1,cpu1,t0,x0"}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
)";

TEST(TopologyTest, CpuOnlyNodesAreInTheFabricWithoutGpus) {
  auto topo = Build(kMixed);
  ASSERT_NE(topo, nullptr);
  const Topology& t = *topo;
  EXPECT_EQ(t.num_nodes(), 7);
  EXPECT_EQ(t.num_gpus(), 26);         // 2 x 8 + 4 + 4 + 2
  EXPECT_EQ(t.num_placed_gpus(), 22);  // k0's 4 are not placed
  NodeId cpu0 = t.FindNode("cpu0");
  ASSERT_GE(cpu0, 0);
  const Node& c = t.nodes()[cpu0];
  EXPECT_EQ(c.model, -1);
  EXPECT_EQ(t.ModelOf(cpu0), nullptr);
  EXPECT_TRUE(c.gpus.empty());
  EXPECT_TRUE(c.domains.empty());
  EXPECT_EQ(t.switches()[c.leaves[0]].name, "leaf0");
  EXPECT_EQ(t.CommonTier(cpu0, t.FindNode("g0")), 0);
  EXPECT_EQ(t.Hops(cpu0, t.FindNode("cpu1")), 4);             // through the spine
  EXPECT_EQ(t.GpusUnder(t.FindSwitch("leaf0")).size(), 12u);  // g0's 8 and k0's 4
  EXPECT_FALSE(t.nodes()[t.FindNode("k0")].placed);
  EXPECT_TRUE(t.nodes()[t.FindNode("g0")].placed);
}

TEST(TopologyTest, ModelsTakeTheirFiguresFromTheTable) {
  auto topo = Build(kMixed);
  ASSERT_NE(topo, nullptr);
  const std::vector<GpuModelSpec>& m = topo->gpu_models();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].nvlink_gbps, 900);  // H100 (SXM5)
  EXPECT_EQ(m[0].pcie_gbps, 128);    // Gen5 x16
  EXPECT_EQ(m[1].nvlink_gbps, 0);    // T4: no NVLink
  EXPECT_EQ(m[1].pcie_gbps, 32);     // Gen3 x16
  EXPECT_EQ(m[2].nvlink_gbps, 100);  // not in the table: as given
  EXPECT_EQ(m[2].pcie_gbps, 64);     // kDefaultPcieGbps
}

TEST(TopologyTest, GpusWithoutNvlinkAreIslandsOfOne) {
  auto topo = Build(kMixed);
  ASSERT_NE(topo, nullptr);
  const Node& t0 = topo->nodes()[topo->FindNode("t0")];
  ASSERT_EQ(t0.domains.size(), 4u);
  for (DomainId d : t0.domains) EXPECT_EQ(topo->domains()[d].gpus.size(), 1u);
}

TEST(TopologyTest, MixedModelRoundTripsAndComparesPlaced) {
  auto topo = Build(kMixed);
  ASSERT_NE(topo, nullptr);
  absl::StatusOr<std::shared_ptr<const Topology>> back = Topology::Create(topo->ToSpec());
  ASSERT_THAT(back, IsOk());
  EXPECT_THAT(CompareTopologies(*topo, **back), IsOk());
  std::string placed = kMixed;
  placed.replace(placed.find(", placed: false"), 15, "");
  auto all_placed = Build(placed);
  ASSERT_NE(all_placed, nullptr);
  EXPECT_THAT(CompareTopologies(*topo, *all_placed),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("placed of node k0")));
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

INSTANTIATE_TEST_SUITE_P(Validation, CreateErrorTest,
                         ::testing::Values(ErrorCase{"UnknownModelWithoutFigures", R"(name: x
gpu_models: [{name: X100}]
nodes: [{names: n0, gpus: 8, model: X100}]
switches: [{name: l, tier: leaf, nodes: n0}]
)",
                                                     "test.yaml:2:14: #/gpu_models/0: GPU model "
                                                     "'X100' is not in nvlplace's table of known "
                                                     "models; give its nvlink_gbps"},
                                           ErrorCase{"BridgedIslandsOfAModelWithoutNvlink",
                                                     R"(name: x
gpu_models: [{name: L40S}]
nodes: [{names: n0, gpus: 4, model: L40S, islands: [[0, 1], [2, 3]]}]
switches: [{name: l, tier: leaf, nodes: n0}]
)",
                                                     "GPU model 'L40S' has no NVLink (nvlink_gbps "
                                                     "0): each GPU is its own island"},
                                           ErrorCase{"CpuOnlyNodeInAMultiNodeDomain", R"(name: x
gpu_models: [{name: GB200}]
nodes:
  - {names: "n0", gpus: 4, model: GB200}
  - {names: "c0", gpus: 0}
nvlink_domains: [{name: rack, nodes: "n0,c0"}]
switches: [{name: l, tier: leaf, nodes: "n0,c0"}]
)",
                                                     "node 'c0' has no GPUs; only nodes with "
                                                     "NVLink GPUs join a multi-node NVLink domain"},
                                           ErrorCase{"NodeTwice", R"(name: x
gpu_models: [{name: H100}]
nodes:
  - {names: "n[0-1]", gpus: 8, model: H100}
  - {names: "n1", gpus: 8, model: H100}
switches: [{name: l, tier: leaf, nodes: "n[0-1]"}]
)",
                                                     "node 'n1' is declared twice"},
                                           ErrorCase{"RailGap", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100}]
switches:
  - {name: r0, tier: leaf, nodes: "n[0-1]", rail: 0}
  - {name: r2, tier: leaf, nodes: "n[0-1]", rail: 2}
)",
                                                     "rails"},
                                           ErrorCase{"ParentTierNotHigher", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100}]
switches:
  - {name: l0, tier: leaf, nodes: "n[0-1]"}
  - {name: l1, tier: leaf, switches: l0}
)",
                                                     "#/switches/1/switches"},
                                           ErrorCase{"NodesAndSwitches", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100}]
switches:
  - {name: l0, tier: leaf, nodes: "n[0-1]"}
  - {name: s0, tier: spine, nodes: n0, switches: l0}
)",
                                                     "both nodes and switches"},
                                           ErrorCase{"DomainNodeWithIslands", R"(name: x
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 4, model: H100, islands: [[0, 1], [2, 3]]}]
nvlink_domains: [{name: d, nodes: "n[0-1]"}]
switches: [{name: l0, tier: leaf, nodes: "n[0-1]"}]
)",
                                                     "islands"}),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           return info.param.name;
                         });

// ---------------------------------------------------------------------------------------
// Tier components give the answers of the ancestor lists.

// 600 nodes of 4 GPUs: 300 under 150 plain leaves, 300 rail-optimized in 30 units of 10 nodes
// with one leaf per rail (120 rail leaves); 40 spines over random leaves (multi-rooted,
// random speeds and oversubscription, some leaves under no spine), 6 cores over random spines.
TopologySpec ManyLeaves() {
  std::mt19937 rng(7);
  TopologySpec spec;
  spec.name = "many";
  spec.gpu_models.push_back(GpuModelSpec{"H100", 900, 128, {}});
  NodeGroupSpec plain, railed;
  for (int i = 0; i < 300; ++i) plain.names.push_back(absl::StrCat("p", i));
  for (int i = 0; i < 300; ++i) railed.names.push_back(absl::StrCat("r", i));
  plain.gpus = railed.gpus = 4;
  plain.model = railed.model = "H100";
  spec.node_groups = {plain, railed};
  std::vector<std::string> leaves;
  for (int l = 0; l < 150; ++l) {
    SwitchSpec s;
    s.name = absl::StrCat("leaf", l);
    s.tier = "leaf";
    s.nodes = {plain.names[2 * l], plain.names[2 * l + 1]};
    s.link_gbps = 100.0 * (1 + rng() % 4);
    spec.switches.push_back(s);
    leaves.push_back(s.name);
  }
  for (int unit = 0; unit < 30; ++unit) {
    for (int rail = 0; rail < 4; ++rail) {
      SwitchSpec s;
      s.name = absl::StrCat("u", unit, "rail", rail);
      s.tier = "leaf";
      s.rail = rail;
      for (int k = 0; k < 10; ++k) s.nodes.push_back(railed.names[unit * 10 + k]);
      spec.switches.push_back(s);
      leaves.push_back(s.name);
    }
  }
  std::vector<std::string> spines;
  for (int i = 0; i < 40; ++i) {
    SwitchSpec s;
    s.name = absl::StrCat("spine", i);
    s.tier = "spine";
    for (const std::string& leaf : leaves) {
      if (rng() % 8 == 0) s.switches.push_back(leaf);
    }
    if (s.switches.empty()) s.switches.push_back(leaves[i]);
    s.oversubscription = 1 + rng() % 3;
    spec.switches.push_back(s);
    spines.push_back(s.name);
  }
  for (int i = 0; i < 6; ++i) {
    SwitchSpec s;
    s.name = absl::StrCat("core", i);
    s.tier = "core";
    for (const std::string& spine : spines) {
      if (rng() % 3 == 0) s.switches.push_back(spine);
    }
    if (s.switches.empty()) s.switches.push_back(spines[i]);
    s.link_gbps = 800;
    spec.switches.push_back(s);
  }
  return spec;
}

// The model of `spec` with its tier components and without (every answer from the exact
// merge of ancestor lists).
struct BothWays {
  std::shared_ptr<const Topology> fast;
  std::shared_ptr<const Topology> exact;
};

BothWays BuildBothWays(const TopologySpec& spec) {
  TopologyBuilder::Bounds merges_only;
  merges_only.tier_components = false;
  absl::StatusOr<std::shared_ptr<const Topology>> fast = Topology::Create(spec);
  absl::StatusOr<std::shared_ptr<const Topology>> exact =
      TopologyBuilder(spec, merges_only).Build();
  EXPECT_THAT(fast, IsOk());
  EXPECT_THAT(exact, IsOk());
  if (!fast.ok() || !exact.ok()) return {};
  EXPECT_TRUE((*fast)->has_tier_components());
  EXPECT_FALSE((*exact)->has_tier_components());
  return {*fast, *exact};
}

// The same CommonTier and PathGbps both ways for every pair of leaf groups (two nodes of each
// group, so that pairs inside a group are compared too) and for random sets of nodes, spread
// over the cluster or drawn from a few groups. Returns the answers' tiers.
std::set<int> ExpectSameAnswers(const BothWays& m, const std::string& what) {
  std::set<int> tiers;
  if (m.fast == nullptr) return tiers;
  const Topology& a = *m.fast;
  const Topology& b = *m.exact;
  std::vector<std::vector<NodeId>> by_group(a.num_leaf_groups());
  for (NodeId n = 0; n < a.num_nodes(); ++n) {
    if (by_group[a.LeafGroup(n)].size() < 2) by_group[a.LeafGroup(n)].push_back(n);
  }
  std::vector<NodeId> some;  // up to two nodes per group
  for (const auto& nodes : by_group) some.insert(some.end(), nodes.begin(), nodes.end());
  for (NodeId x : some) {
    for (NodeId y : some) {
      EXPECT_EQ(a.CommonTier(x, y), b.CommonTier(x, y)) << what << ": " << x << " " << y;
      EXPECT_EQ(a.PathGbps(x, y), b.PathGbps(x, y)) << what << ": " << x << " " << y;
      if (a.CommonTier(x, y) != b.CommonTier(x, y) || a.PathGbps(x, y) != b.PathGbps(x, y)) {
        return tiers;
      }
      tiers.insert(a.CommonTier(x, y));
    }
  }
  std::mt19937 rng(3);
  for (int round = 0; round < 2000; ++round) {
    std::vector<NodeId> nodes(1 + rng() % 16);
    if (round % 2 == 0) {
      for (NodeId& n : nodes) n = static_cast<NodeId>(rng() % a.num_nodes());
    } else {
      // From at most three groups.
      int g[3];
      for (int& x : g) x = static_cast<int>(rng() % by_group.size());
      for (NodeId& n : nodes) {
        const std::vector<NodeId>& of = by_group[g[rng() % 3]];
        n = of[rng() % of.size()];
      }
    }
    EXPECT_EQ(a.CommonTier(nodes), b.CommonTier(nodes)) << what << ": round " << round;
    if (a.CommonTier(nodes) != b.CommonTier(nodes)) break;
  }
  return tiers;
}

absl::StatusOr<TopologySpec> ReadSpec(const std::string& path) {
  NVL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseTopologyYaml(text, path);
}

TEST(TierComponentsTest, AnswerAsTheAncestorListsOnEveryBundledCluster) {
  std::vector<std::string> files;
  for (const char* dir : {"configs", "tests/fixtures/topologies"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 8u) << "run from the source root";
  for (const std::string& file : files) {
    absl::StatusOr<TopologySpec> spec = ReadSpec(file);
    ASSERT_THAT(spec, IsOk());
    BothWays m = BuildBothWays(*spec);
    ExpectSameAnswers(m, file);
    // Fat trees and rail-optimized pods: every answer from the components.
    EXPECT_EQ(m.fast->num_inexact_components(), 0) << file;
  }
}

// The irregular cluster of contrib/tools/gen_irregular_topology.py (leaves of 2 to 8 nodes,
// spines over 1 to 6 leaves, a service leaf under the core, four node kinds), made
// multi-rooted by a second core over every other spine.
TEST(TierComponentsTest, AnswerAsTheAncestorListsOnTheIrregularCluster) {
  absl::StatusOr<std::string> topology = ReadFileToString("tests/fixtures/irregular/topology.conf");
  absl::StatusOr<std::string> gres = ReadFileToString("tests/fixtures/irregular/gres.conf");
  ASSERT_THAT(topology, IsOk());
  ASSERT_THAT(gres, IsOk());
  absl::StatusOr<TopologySpec> spec =
      ImportSlurm(*topology, "topology.conf", *gres, "gres.conf", SlurmImportOptions());
  ASSERT_THAT(spec, IsOk());
  std::set<int> tiers = ExpectSameAnswers(BuildBothWays(*spec), "irregular");
  EXPECT_THAT(tiers, ElementsAre(Topology::kSameNode, 0, 1, 2));
  SwitchSpec core1;
  core1.name = "core1";
  core1.tier = "core";
  core1.link_gbps = 200;
  int spines = 0;
  for (const SwitchSpec& s : spec->switches) {
    if (s.tier == "spine" && spines++ % 2 == 0) core1.switches.push_back(s.name);
  }
  ASSERT_GE(core1.switches.size(), 4u);
  spec->switches.push_back(core1);
  BothWays two_cores = BuildBothWays(*spec);
  tiers = ExpectSameAnswers(two_cores, "irregular with two cores");
  EXPECT_THAT(tiers, ElementsAre(Topology::kSameNode, 0, 1, 2));
}

// Random spines and cores (ManyLeaves): some components cannot answer, and those answers
// come from the ancestor lists.
TEST(TierComponentsTest, AnswerAsTheAncestorListsOnARandomMultiRootedFabric) {
  BothWays m = BuildBothWays(ManyLeaves());
  ASSERT_NE(m.fast, nullptr);
  EXPECT_EQ(m.fast->num_leaf_groups(), 180);  // 150 plain leaves + 30 rail units
  EXPECT_GT(m.fast->num_inexact_components(), 0);
  // Every kind of answer occurs: the same node, a leaf, a spine, a core, no common switch.
  EXPECT_THAT(ExpectSameAnswers(m, "many"),
              ElementsAre(Topology::kSameNode, 0, 1, 2, Topology::kDisconnected));
  const Topology& a = *m.fast;
  const Topology& b = *m.exact;
  for (NodeId x = 0; x < a.num_nodes(); ++x) {
    for (NodeId y = 0; y < a.num_nodes(); ++y) {
      ASSERT_EQ(a.CommonTier(x, y), b.CommonTier(x, y)) << x << " " << y;
      ASSERT_EQ(a.PathGbps(x, y), b.PathGbps(x, y)) << x << " " << y;
    }
  }
}

// leaf0 and leaf1 under spine0, leaf1 and leaf2 under spine1, no core: one component at the
// spine tier, yet leaf0 and leaf2 share no switch. The components must not answer.
constexpr char kZigzag[] = R"(name: zigzag
tiers: [leaf, spine]
gpu_models: [{name: H100}]
nodes: [{names: "n[0-2]", gpus: 8, model: H100}]
switches:
  - {name: leaf0, tier: leaf, nodes: n0}
  - {name: leaf1, tier: leaf, nodes: n1}
  - {name: leaf2, tier: leaf, nodes: n2}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
  - {name: spine1, tier: spine, switches: "leaf[1-2]", link_gbps: 200}
)";

TEST(TierComponentsTest, AZigzagFallsBackToTheAncestorLists) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(kZigzag, "zigzag.yaml");
  ASSERT_THAT(spec, IsOk());
  BothWays m = BuildBothWays(*spec);
  ASSERT_NE(m.fast, nullptr);
  const Topology& t = *m.fast;
  EXPECT_EQ(t.num_inexact_components(), 1);  // the spine tier's one component
  EXPECT_EQ(t.CommonTier(0, 1), 1);
  EXPECT_EQ(t.CommonTier(1, 2), 1);
  EXPECT_EQ(t.CommonTier(0, 2), Topology::kDisconnected);
  EXPECT_EQ(t.CommonTier(std::vector<NodeId>{0, 1}), 1);
  EXPECT_EQ(t.CommonTier(std::vector<NodeId>{0, 1, 2}), Topology::kDisconnected);
  EXPECT_EQ(t.PathGbps(0, 1), 400);
  EXPECT_EQ(t.PathGbps(1, 2), 200);  // spine1's ports
  EXPECT_EQ(t.PathGbps(0, 2), 0);
  ExpectSameAnswers(m, "zigzag");
}

// Two pods of one leaf under spine0 and spine1; core0 over the spine0s, core1 over the
// spine1s, which are 2:1 oversubscribed. Across pods the tier is the core's, from the
// components, but the way through core0 is faster than through core1: bandwidths come from the
// ancestor lists.
constexpr char kUnevenCores[] = R"(name: uneven
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 8, model: H100}]
switches:
  - {name: leaf0, tier: leaf, nodes: n0}
  - {name: leaf1, tier: leaf, nodes: n1}
  - {name: a-spine0, tier: spine, switches: leaf0}
  - {name: a-spine1, tier: spine, switches: leaf0, oversubscription: 2}
  - {name: b-spine0, tier: spine, switches: leaf1}
  - {name: b-spine1, tier: spine, switches: leaf1, oversubscription: 2}
  - {name: core0, tier: core, switches: "a-spine0,b-spine0"}
  - {name: core1, tier: core, switches: "a-spine1,b-spine1"}
)";

TEST(TierComponentsTest, UnevenWaysUpFallBackForBandwidthOnly) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(kUnevenCores, "uneven.yaml");
  ASSERT_THAT(spec, IsOk());
  BothWays m = BuildBothWays(*spec);
  ASSERT_NE(m.fast, nullptr);
  const Topology& t = *m.fast;
  EXPECT_EQ(t.num_inexact_components(), 1);  // the core tier's one component
  EXPECT_EQ(t.CommonTier(0, 1), 2);
  // Through core0: min(leaf 400, spine0 400 / 1, core 400) = 400; through core1 200.
  EXPECT_EQ(t.PathGbps(0, 1), 400);
  ExpectSameAnswers(m, "uneven");
}

// ---------------------------------------------------------------------------------------
// Validation of specs that do not come from the YAML reader (imports, callers).

TEST(CreateLimitTest, RefusesWhatNoReaderWouldPass) {
  auto tiny = [] {
    TopologySpec spec;
    spec.name = "tiny";
    spec.loc = SourceLoc{"spec", 0, 0, "#"};
    spec.gpu_models.push_back(GpuModelSpec{"H100", 900, 128, {}});
    NodeGroupSpec g;
    g.names = {"n0", "n1"};
    g.gpus = 8;
    g.model = "H100";
    spec.node_groups.push_back(g);
    SwitchSpec s;
    s.name = "leaf0";
    s.tier = "leaf";
    s.nodes = {"n0", "n1"};
    spec.switches.push_back(s);
    return spec;
  };
  ASSERT_THAT(Topology::Create(tiny()), IsOk());
  TopologySpec spec = tiny();
  spec.tiers.clear();
  for (int i = 0; i < 17; ++i) spec.tiers.push_back(absl::StrCat("t", i));
  EXPECT_THAT(Topology::Create(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                               "spec: #/tiers: 17 tiers; at most 16 are allowed"));
  spec = tiny();
  spec.link_gbps = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(Topology::Create(spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "spec: #/link_gbps: link_gbps must be a positive number of Gb/s up to "
                       "1000000"));
  spec = tiny();
  spec.net_alpha_us = std::numeric_limits<double>::infinity();
  EXPECT_THAT(Topology::Create(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("#/latency: latencies")));
  spec = tiny();
  spec.gpu_models[0].nvlink_gbps = std::numeric_limits<double>::infinity();
  EXPECT_THAT(Topology::Create(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nvlink_gbps must be")));
  spec = tiny();
  spec.switches[0].oversubscription = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(Topology::Create(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("oversubscription is a downlink")));
  spec = tiny();
  spec.switches[0].name = std::string("leaf\0x", 6);
  absl::Status nul = Topology::Create(spec).status();
  EXPECT_THAT(nul, StatusIs(absl::StatusCode::kInvalidArgument,
                            "switch name 'leaf\\x00x': control character \\x00 is not allowed "
                            "(byte 5); names are printable UTF-8"));
  spec = tiny();
  std::vector<std::string> names = spec.node_groups[0].names.Expand();
  names[1] = "n\xff";
  spec.node_groups[0].names = names;
  names = spec.switches[0].nodes.Expand();
  names[1] = "n\xff";
  spec.switches[0].nodes = names;
  EXPECT_THAT(Topology::Create(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("node name 'n\\xff': byte \\xff")));
  spec = tiny();
  spec.switches[0].tier = "le\naf";
  EXPECT_THAT(Topology::Create(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown tier 'le\\x0aaf'")));
}

TEST(CreateLimitTest, ManyDomainsAreCheckedInLinearTime) {
  // 50,000 NVLink domains of one node each: the duplicate check compared every pair (16 s),
  // and every domain went over every node.
  TopologySpec spec;
  spec.name = "domains";
  spec.gpu_models.push_back(GpuModelSpec{"GB200", 1800, 128, {}});
  NodeGroupSpec g;
  g.gpus = 4;
  g.model = "GB200";
  SwitchSpec leaf;
  leaf.name = "leaf";
  leaf.tier = "leaf";
  for (int i = 0; i < 50000; ++i) {
    g.names.push_back(absl::StrCat("gb", i));
    DomainSpec d;
    d.name = absl::StrCat("rack", i);
    d.nodes = {g.names.back()};
    spec.domains.push_back(d);
  }
  leaf.nodes = g.names;
  spec.node_groups.push_back(g);
  spec.switches.push_back(leaf);
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(spec);
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ((*topo)->num_domains(), 50000);
  // A duplicate is still found, and named.
  spec.domains.back().name = "rack7";
  EXPECT_THAT(Topology::Create(spec), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("NVLink domain 'rack7' is declared "
                                                         "twice")));
}

TEST(CreateLimitTest, NodeDeclaredTwiceNamesTheFirstLine) {
  EXPECT_THAT(BuildError(R"(name: x
gpu_models: [{name: H100}]
nodes:
  - {names: "n[0-1]", gpus: 8, model: H100}
  - {names: "n1", gpus: 8, model: H100}
switches: [{name: l, tier: leaf, nodes: "n[0-1]"}]
)"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "test.yaml:5:5: #/nodes/1: node 'n1' is declared twice (first on line 4)"));
}

// What the build keeps for the cost model (TopologyBuilder::KeepPathFacts) answers as the
// model answers without it, on every bundled cluster: the path between two nodes (mostly
// neighbours, which share a leaf group) and whether every node has a NIC per GPU; and the
// common tier of sorted node sets (CommonTierDistinct, read as runs of one leaf group) is
// that of their worst pair.
TEST(TopologyTest, KeptPathFactsAnswerAsTheModelWithoutThem) {
  int pairs = 0, same_group = 0;
  for (const std::string& file : testing::ConfigFiles()) {
    absl::StatusOr<std::string> text = ReadFileToString(file);
    ASSERT_THAT(text, IsOk()) << file;
    absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(*text, file);
    ASSERT_THAT(spec, IsOk()) << file;
    TopologyBuilder before(*spec);
    for (TopologyBuilder::Step step : TopologyBuilder::Steps()) {
      ASSERT_THAT((before.*step)(), IsOk()) << file;
    }
    const Topology& slow = before.model();
    absl::StatusOr<std::shared_ptr<const Topology>> built = Topology::Create(*spec);
    ASSERT_THAT(built, IsOk()) << file;
    const Topology& fast = **built;
    EXPECT_EQ(fast.nic_per_gpu(),
              std::all_of(fast.nodes().begin(), fast.nodes().end(),
                          [](const Node& n) { return n.nics >= static_cast<int>(n.gpus.size()); }))
        << file;
    EXPECT_FALSE(slow.nic_per_gpu()) << file;
    std::mt19937 rng(5);
    const int n = fast.num_nodes();
    for (int i = 0; i < 3000; ++i) {
      NodeId a = static_cast<NodeId>(rng() % n);
      NodeId b = i % 2 ? static_cast<NodeId>(rng() % n) : std::min(n - 1, a + 1 + int(rng() % 8));
      ASSERT_EQ(fast.PathGbps(a, b), slow.PathGbps(a, b)) << file << " " << a << " " << b;
      ++pairs;
      same_group += fast.LeafGroup(a) == fast.LeafGroup(b) && a != b;
    }
    for (int i = 0; i < 300; ++i) {
      std::vector<NodeId> nodes;
      NodeId first = static_cast<NodeId>(rng() % n);
      int k = 1 + static_cast<int>(rng() % 40);
      for (int j = 0; j < k; ++j) {
        nodes.push_back(i % 2 ? static_cast<NodeId>(rng() % n)
                              : std::min(n - 1, first + static_cast<NodeId>(rng() % 24)));
      }
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      int pairwise = Topology::kSameNode;  // what CommonTier means: the worst pair
      for (size_t x = 0; x < nodes.size(); ++x) {
        for (size_t y = x + 1; y < nodes.size(); ++y) {
          pairwise = std::max(pairwise, slow.CommonTier(nodes[x], nodes[y]));
        }
      }
      ASSERT_EQ(fast.CommonTierDistinct(nodes), pairwise) << file;
      ASSERT_EQ(fast.CommonTier(nodes), pairwise) << file;
    }
  }
  EXPECT_GT(same_group, 1000);
  EXPECT_GT(pairs, 15000);  // seven bundled clusters
}

}  // namespace
}  // namespace nvlplace
