// Tests for the placement engine: decisions, constraints, reasons and explanations.
#include "placement/engine/engine.h"

#include <climits>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/engine/cost_model.h"
#include "placement/engine/explain.h"
#include "placement/formats/busy_list.h"
#include "placement/formats/read_file.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/limits.h"
#include "policies/policy_loader.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRacks[] = R"(name: racks
tiers: [leaf, spine]
gpu_models: [{name: GB200, nvlink_gbps: 1800}]
nodes:
  - {names: "gb[01-12]", gpus: 4, model: GB200}
nvlink_domains:
  - {name: rack1, nodes: "gb[01-06]"}
  - {name: rack2, nodes: "gb[07-12]"}
switches:
  - {name: leaf1, tier: leaf, nodes: "gb[01-06]"}
  - {name: leaf2, tier: leaf, nodes: "gb[07-12]"}
  - {name: spine, tier: spine, switches: "leaf[1-2]"}
)";

std::shared_ptr<const Topology> Topo(const char* yaml) {
  auto spec = ParseTopologyYaml(yaml, "test.yaml");
  EXPECT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

std::shared_ptr<const Policy> Pol(const std::string& name) {
  auto p = LoadPolicy("configs/policies/" + name + ".yaml");
  EXPECT_THAT(p, IsOk());
  return *p;
}

Request Req(const Topology& topo, RequestSpec spec) {
  auto r = ResolveRequest(spec, topo);
  EXPECT_THAT(r, IsOk());
  return *r;
}

void Busy(ClusterState& state, const std::string& list) {
  ASSERT_THAT(LoadBusyList(list, "busy", &state), IsOk());
}

std::set<std::string> Nodes(const PlacementResult& r, const Topology& topo) {
  std::set<std::string> out;
  for (GpuId g : r.ranks) out.insert(topo.nodes()[topo.gpus()[g].node].name);
  return out;
}

TEST(EngineTest, TpGroupsStayInsideNodes) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  // node0-2 have 2 free GPUs each, node4 is full: TP=4 groups cannot use node0-2.
  Busy(state, "node[0-2]:0-5\nnode4\n");
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 16, .tp = 4}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(r.tp_groups_split, 0);
  EXPECT_EQ(r.ranks.size(), 16u);
  for (GpuId g : r.ranks) EXPECT_FALSE(state.busy(g));
  for (int grp = 0; grp < 4; ++grp) {
    EXPECT_EQ(topo->gpus()[r.ranks[grp * 4]].node, topo->gpus()[r.ranks[grp * 4 + 3]].node);
  }
  // 16 GPUs fit in leaf1 (node5-7 free: 24 GPUs), so the job stays under one leaf.
  EXPECT_EQ(r.job_tier, 0);
  EXPECT_EQ(Nodes(r, *topo), (std::set<std::string>{"node5", "node6"}));
}

// Listed first under the one leaf: nodes kept from nvlplace (placed: false) and CPU-only
// nodes, then two nodes it places on.
constexpr char kMixedYaml[] = R"(name: mixed
tiers: [leaf]
gpu_models: [{name: H100}]
nodes:
  - {names: "k[0-1]", gpus: 8, model: H100, placed: false}
  - {names: "cpu[0-1]", gpus: 0}
  - {names: "g[0-1]", gpus: 8, model: H100}
switches:
  - {name: leaf0, tier: leaf, nodes: "k[0-1],cpu[0-1],g[0-1]"}
)";

TEST(EngineTest, NeverPlacesOnCpuOnlyOrUnplacedNodes) {
  auto topo = Topo(kMixedYaml);
  for (const char* policy : {"topo", "pack", "firstfit", "random"}) {
    ClusterState state(topo);
    Engine engine(topo, Pol(policy));
    for (RequestSpec spec : {RequestSpec{.gpus = 16, .tp = 8}, RequestSpec{.gpus = 4},
                             RequestSpec{.gpus = 0, .nodes = 2, .gpus_per_node = 8}}) {
      PlacementResult r = engine.Place(state, Req(*topo, spec));
      ASSERT_TRUE(r.placed) << policy << ": " << r.reason;
      for (const std::string& n : Nodes(r, *topo)) {
        EXPECT_THAT(n, ::testing::StartsWith("g")) << policy;
      }
    }
  }
  // More GPUs than the placed nodes hold is refused, and says why.
  auto r = ResolveRequest({.gpus = 24}, *topo);
  EXPECT_THAT(r.status().message(),
              HasSubstr("has 16 that nvlplace places on (16 more are on nodes with placed: "
                        "false)"));
}

TEST(EngineTest, StrictSaysWhyNot) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-7]:0-3\n");  // 4 free GPUs on every node
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 16, .tp = 8}));
  EXPECT_FALSE(r.placed);
  EXPECT_THAT(r.reason, HasSubstr("needs 2 TP groups of 8 GPUs, each inside one NVLink domain"));
  EXPECT_THAT(r.reason, HasSubstr("largest free domain has 4 GPUs"));
}

TEST(EngineTest, PreferRelaxesAndSaysSo) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-7]:0-3\n");
  Engine engine(topo, Pol("topo"));
  PlacementResult r =
      engine.Place(state, Req(*topo, {.gpus = 16, .tp = 8, .nvl = NvlMode::kPrefer}));
  ASSERT_TRUE(r.placed) << r.reason;
  ASSERT_FALSE(r.relaxations.empty());
  EXPECT_THAT(r.relaxations[0], HasSubstr("may span NVLink domains"));
  EXPECT_EQ(r.tp_groups_split, 2);  // each TP group of 8 spans two 4-GPU halves
}

// Launchers give each node consecutive ranks (torchrun's node rank, the rank map's first
// rank), so the rank order the engine reports, and the split TP groups it counts, are the
// node-contiguous ones: here the topo policy's first candidate took n0's island 0 remains,
// then n1's, then n0's island 1 (n0 in two runs), which no job could run as.
TEST(EngineTest, RankOrderGivesEachNodeConsecutiveRanks) {
  auto topo = Topo(R"(name: isl8
tiers: [leaf]
gpu_models: [{name: H100-PCIe, nvlink_gbps: 600}]
nodes:
  - {names: "n[0-3]", gpus: 8, model: H100-PCIe, islands: [[0, 1, 2, 3], [4, 5, 6, 7]]}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-3]"}
)");
  ClusterState state(topo);
  Busy(state, "n0:0,6\nn1:6,7\nn2:7\nn3:2,7\n");
  Engine engine(topo, Pol("topo"));
  PlacementResult r =
      engine.Place(state, Req(*topo, {.gpus = 12, .tp = 4, .nvl = NvlMode::kPrefer}));
  ASSERT_TRUE(r.placed) << r.reason;
  std::vector<NodeId> runs;
  for (GpuId g : r.ranks) {
    if (runs.empty() || runs.back() != topo->gpus()[g].node) runs.push_back(topo->gpus()[g].node);
  }
  EXPECT_EQ(std::set<NodeId>(runs.begin(), runs.end()).size(), runs.size())
      << "a node in two runs of ranks";
  int split = 0;
  for (size_t g = 0; g < 3; ++g) {
    std::set<DomainId> domains;
    for (size_t t = 0; t < 4; ++t) domains.insert(topo->DomainOf(r.ranks[g * 4 + t]));
    split += domains.size() > 1;
  }
  EXPECT_EQ(r.tp_groups_split, split);
}

// Megatron's default rank order (TP, then DP, PP outermost): a stage is TP x DP consecutive
// ranks, so with each stage on the nodes of one leaf only the pipeline crosses leaves and
// every DP group stays under one leaf.
TEST(EngineTest, DpGroupsFollowMegatronsDefaultOrder) {
  auto topo = Topo(R"(name: two-leaves
tiers: [leaf, spine]
gpu_models: [{name: H100, nvlink_gbps: 900}]
nodes:
  - {names: "n[0-3]", gpus: 8, model: H100}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-1]"}
  - {name: leaf1, tier: leaf, nodes: "n[2-3]"}
  - {name: spine, tier: spine, switches: "leaf[0-1]"}
)");
  ClusterState state(topo);
  Engine engine(topo, Pol("topo"));
  Request req = Req(*topo, {.gpus = 32, .tp = 8, .pp = 2, .dp = 2});
  PlacementResult r = engine.Place(state, req);
  ASSERT_TRUE(r.placed) << r.reason;
  ASSERT_EQ(r.ranks.size(), 32u);
  // Whole nodes in rank order; stage p = ranks [16p, 16p + 16).
  auto node_of = [&](size_t rank) { return topo->nodes()[topo->gpus()[r.ranks[rank]].node].name; };
  std::set<std::string> stage0 = {node_of(0), node_of(8)}, stage1 = {node_of(16), node_of(24)};
  bool stages_by_leaf =
      (stage0 == std::set<std::string>{"n0", "n1"} ||
       stage0 == std::set<std::string>{"n2", "n3"}) &&
      (stage1 == std::set<std::string>{"n0", "n1"} || stage1 == std::set<std::string>{"n2", "n3"});
  ASSERT_TRUE(stages_by_leaf) << "stages on " << node_of(0) << "," << node_of(8) << " and "
                              << node_of(16) << "," << node_of(24);
  EXPECT_EQ(r.dp_tier, 0) << "DP groups under one leaf";
  // Whatever the order, the DP tier is that of the groups (t, p): ranks t + 8 (d + 2 p).
  int tier = Topology::kSameNode;
  for (int p = 0; p < 2; ++p) {
    for (int t = 0; t < 8; ++t) {
      tier = std::max(tier, topo->CommonTier({topo->gpus()[r.ranks[t + 8 * (2 * p)]].node,
                                              topo->gpus()[r.ranks[t + 8 * (1 + 2 * p)]].node}));
    }
  }
  EXPECT_EQ(r.dp_tier, tier);
  EXPECT_EQ(req.Rank(3, 1, 1), 3u + 8 * (1 + 2 * 1));
  EXPECT_EQ(req.DpStride(), 8u);
}

TEST(EngineTest, MaxTierRequiredAndPreferred) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-1]\nnode[4-5]\n");  // 16 free GPUs per leaf
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 24, .tp = 8, .max_tier = "leaf"}));
  EXPECT_FALSE(r.placed);
  EXPECT_THAT(r.reason, HasSubstr("under one leaf switch"));
  PlacementResult p = engine.Place(
      state, Req(*topo, {.gpus = 24, .tp = 8, .max_tier = "leaf", .max_tier_required = false}));
  ASSERT_TRUE(p.placed) << p.reason;
  EXPECT_EQ(p.job_tier, 1);
  ASSERT_FALSE(p.relaxations.empty());
  EXPECT_THAT(p.relaxations[0], HasSubstr("max-tier leaf preferred"));
}

TEST(EngineTest, BestFitLeavesWholeNodesFree) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node3:0-3\n");  // node3 has 4 free GPUs; every other node is empty
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 4, .tp = 4}));
  ASSERT_TRUE(r.placed);
  EXPECT_EQ(Nodes(r, *topo), (std::set<std::string>{"node3"}));
}

TEST(EngineTest, SaysWhenItTradesLocality) {
  // node0 and node1 have 2 free GPUs each, every other node 8. A 4-GPU job fits one node
  // (the hierarchical generator's candidates); a policy that weighs only first fit takes
  // node0:6-7 + node1:6-7 (the firstfit generator's) and must say what it gave up.
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-1]:0-5\n");
  auto lowest_first = ParsePolicyYaml(
      "name: lowest-first\ngenerators: [hierarchical, firstfit]\nweights: {firstfit: 1}\n",
      "lowest-first.yaml");
  ASSERT_THAT(lowest_first, IsOk());
  PlacementResult far = Engine(topo, *lowest_first).Place(state, Req(*topo, {.gpus = 4}));
  ASSERT_TRUE(far.placed);
  EXPECT_EQ(Nodes(far, *topo), (std::set<std::string>{"node0", "node1"}));
  EXPECT_THAT(far.locality_traded,
              AllOf(HasSubstr("would be 1 NVLink domain on one node, the choice is 2 NVLink "
                              "domains under one leaf"),
                    HasSubstr("lower firstfit")));
  EXPECT_THAT(PlacementText(far, *topo), HasSubstr("\nlocality traded: best fit under node"));
  EXPECT_TRUE(PlacementToJson(far, *topo).contains("locality_traded"));
  // The default policy, with the same generators, keeps the job on one node: nothing said.
  PlacementResult near = Engine(topo, Pol("topo")).Place(state, Req(*topo, {.gpus = 4}));
  ASSERT_TRUE(near.placed);
  EXPECT_EQ(Nodes(near, *topo).size(), 1u);
  EXPECT_EQ(near.locality_traded, "");
  EXPECT_THAT(PlacementText(near, *topo), Not(HasSubstr("locality traded")));
  EXPECT_FALSE(PlacementToJson(near, *topo).contains("locality_traded"));
}

TEST(EngineTest, LocalityRankKeepsTheOrderTheEngineChoosesBy) {
  // One NVLink domain first, then the lower tier, then the fewer domains: the rank of every
  // pair of spans compares as the tuple (split, tier, domains) does, tiers from one node
  // (-1) to the last of kMaxTiers and disconnected fabrics above them.
  std::vector<std::pair<int, int>> spans;  // (domains, tier)
  for (int domains : {1, 2, 3, 17, 1 << 24}) {
    for (int tier : {Topology::kSameNode, 0, 1, limits::kMaxTiers - 1, Topology::kDisconnected}) {
      spans.push_back({domains, tier});
    }
  }
  for (auto [da, ta] : spans) {
    for (auto [db, tb] : spans) {
      auto key = [](int d, int t) { return std::tuple(d > 1, t, d); };
      SCOPED_TRACE(absl::StrCat(da, " domains at tier ", ta, " vs ", db, " at tier ", tb));
      EXPECT_EQ(LocalityRank(da, ta) < LocalityRank(db, tb), key(da, ta) < key(db, tb));
      EXPECT_EQ(LocalityRank(da, ta) == LocalityRank(db, tb), key(da, ta) == key(db, tb));
    }
  }
  EXPECT_EQ(LocalityRank(1, Topology::kSameNode), 1u);                      // 0 + 0 x 10^10 + 1
  EXPECT_EQ(LocalityRank(2, 0), 1'010'000'000'002u);                        // 10^12 + 1 x 10^10 + 2
  EXPECT_EQ(LocalityRank(2, Topology::kDisconnected), 1'170'000'000'002u);  // tier as 16
}

TEST(EngineTest, SpanOfNamesDomainsNodesAndTier) {
  auto topo = Topo(kRacks);  // gb[01-06] rack1 under leaf1, gb[07-12] rack2 under leaf2
  auto gpus = [&](std::vector<std::string> names) {
    std::vector<GpuId> out;
    for (const std::string& n : names) out.push_back(topo->nodes()[topo->FindNode(n)].gpus[0]);
    return out;
  };
  Span one = SpanOf(gpus({"gb01"}), *topo);
  EXPECT_EQ(std::tuple(one.domains, one.nodes, SpanTierName(*topo, one.tier)),
            std::tuple(1, 1, std::string("node")));
  Span rack = SpanOf(gpus({"gb01", "gb06"}), *topo);  // one multi-node NVLink domain
  EXPECT_EQ(std::tuple(rack.domains, rack.nodes, SpanTierName(*topo, rack.tier)),
            std::tuple(1, 2, std::string("leaf")));
  Span two = SpanOf(gpus({"gb12", "gb01", "gb02"}), *topo);
  EXPECT_EQ(std::tuple(two.domains, two.nodes, SpanTierName(*topo, two.tier)),
            std::tuple(2, 3, std::string("spine")));
  EXPECT_LT(LocalityRank(rack.domains, rack.tier), LocalityRank(two.domains, two.tier));
}

TEST(EngineTest, SaysWhenItSpansMoreDomainsForLessFragmentation) {
  // leaf0: node0 2 free, node1 5, node2 1 (node3 full); leaf1: node4 6 free, node5 3 (node6
  // and node7 full). A plain 8-GPU job: first fit fills leaf0's three partial nodes
  // (fragmentation 100: it takes every free GPU of the nodes and the leaf it touches); best
  // fit under leaf1 takes 6 + 2 on two nodes and leaves one GPU of node5 (8 of 9: 88.9).
  // Both stay under one leaf and all-reduce as fast (the slowest hop is one leaf port), so
  // the default policy takes the three nodes, and says that two would do.
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node0:0-5\nnode1:0-2\nnode2:0-6\nnode3\nnode4:0-1\nnode5:0-4\nnode[6-7]\n");
  PlacementResult r = Engine(topo, Pol("topo")).Place(state, Req(*topo, {.gpus = 8}));
  ASSERT_TRUE(r.placed);
  EXPECT_EQ(Nodes(r, *topo), (std::set<std::string>{"node0", "node1", "node2"}));
  EXPECT_THAT(r.locality_traded,
              AllOf(HasSubstr("best fit under leaf1 would be 2 NVLink domains under one leaf, "
                              "the choice is 3 NVLink domains under one leaf"),
                    HasSubstr("lower fragmentation 88.9 vs 100.0 (weight 2)")));
}

TEST(EngineTest, TiesGoToTheMoreLocalCandidate) {
  // leaf0 free: node0 2, node1 5, node2 1, node3 6; leaf1 full. A policy that weighs only the
  // tier sees every candidate under leaf0 as equal; first fit (generated first) takes three
  // nodes, the hierarchical generator's two: the tie goes to two.
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node0:0-5\nnode1:0-2\nnode2:0-6\nnode3:0-1\nnode[4-7]\n");
  auto tier_only = ParsePolicyYaml(
      "name: tier-only\ngenerators: [firstfit, hierarchical]\nweights: {tier: 1}\n", "t.yaml");
  ASSERT_THAT(tier_only, IsOk());
  PlacementResult r = Engine(topo, *tier_only).Place(state, Req(*topo, {.gpus = 8}));
  ASSERT_TRUE(r.placed);
  EXPECT_EQ(Nodes(r, *topo).size(), 2u);
  EXPECT_EQ(r.locality_traded, "");
  ASSERT_TRUE(r.best_rejected.has_value());
  EXPECT_THAT(r.best_rejected->why,
              HasSubstr("tied on every scorer; the more local candidate wins"));
}

TEST(EngineTest, FirstFitTakesLowestIndexes) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node0:0-3\n");
  Engine engine(topo, Pol("firstfit"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 8}));
  ASSERT_TRUE(r.placed);
  EXPECT_EQ(Nodes(r, *topo), (std::set<std::string>{"node0", "node1"}));
}

TEST(EngineTest, MultiNodeDomainHoldsWideTpGroups) {
  auto topo = Topo(kRacks);
  ClusterState state(topo);
  Busy(state, "gb[01-03]\n");  // rack1 keeps 12 free GPUs, rack2 24
  Engine engine(topo, Pol("topo"));
  // TP=8 spans two 4-GPU trays inside one NVL rack: allowed, NVLink all the way.
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 16, .tp = 8}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(r.tp_groups_split, 0);
  for (GpuId g : r.ranks) EXPECT_EQ(topo->domains()[topo->DomainOf(g)].name, "rack2");
}

// GB200 as sites run it (issue 25). kRacks: rack1 = gb[01-06], rack2 = gb[07-12], 4 GPUs a tray.
// The racks of a node set, in rank order of first use.
std::vector<std::string> RacksInRankOrder(const PlacementResult& r, const Topology& topo) {
  std::vector<std::string> out;
  for (GpuId g : r.ranks) {
    const std::string& d = topo.domains()[topo.DomainOf(g)].name;
    if (out.empty() || out.back() != d) out.push_back(d);
  }
  return out;
}

// Slurm's --segment=4 with -N8: two segments of 4 trays, each inside one rack, its trays
// consecutive in rank order. Rack2 with 3 free trays holds none: the job waits, and says so.
TEST(EngineTest, SegmentsStayInsideOneDomainEach) {
  auto topo = Topo(kRacks);
  Engine engine(topo, Pol("topo"));
  RequestSpec spec{.nodes = 8, .gpus_per_node = 4, .segment = 4};
  ClusterState three(topo);
  Busy(three, "gb06\ngb[10-12]\n");  // rack1: 5 free trays, rack2: 3
  PlacementResult no = engine.Place(three, Req(*topo, spec));
  ASSERT_FALSE(no.placed);
  EXPECT_EQ(no.reason,
            "needs 2 segments of 4 nodes, each inside one NVLink domain, each node with 4 free "
            "GPUs; the free NVLink domains hold only 1 such group (largest free domain has 20 "
            "GPUs)");
  ClusterState four(topo);
  Busy(four, "gb[11-12]\n");  // rack1: 6 free, rack2: 4
  PlacementResult r = engine.Place(four, Req(*topo, spec));
  ASSERT_TRUE(r.placed) << r.reason;
  ASSERT_EQ(r.ranks.size(), 32u);
  // Ranks 0-15 are one segment, 16-31 the other: each inside one rack.
  for (int seg = 0; seg < 2; ++seg) {
    DomainId d = topo->DomainOf(r.ranks[seg * 16]);
    for (int i = seg * 16; i < seg * 16 + 16; ++i) EXPECT_EQ(topo->DomainOf(r.ranks[i]), d) << i;
  }
  EXPECT_THAT(r.request, HasSubstr("segment=4"));
}

// A TP group of 8 over trays of 4 (nodes mode) is two trays of one rack, consecutive in rank
// order. With 3 free trays in each rack, -N4 --nvl-tp=8 takes a pair from each; a first
// choice that took 3 + 1 would split a group.
TEST(EngineTest, TpGroupsWiderThanATrayArePairsOfOneRack) {
  auto topo = Topo(kRacks);
  ClusterState state(topo);
  Busy(state, "gb[04-06]\ngb[10-12]\n");
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.nodes = 4, .gpus_per_node = 4, .tp = 8}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(r.tp_groups_split, 0);
  EXPECT_THAT(RacksInRankOrder(r, *topo), ::testing::UnorderedElementsAre("rack1", "rack2"));
}

// --nvl-domain=one: the whole job inside one rack, or it waits with the reason.
TEST(EngineTest, OneDomainKeepsTheWholeJobInOneRackOrWaits) {
  auto topo = Topo(kRacks);
  Engine engine(topo, Pol("topo"));
  ClusterState split(topo);
  Busy(split, "gb[02-06]\ngb[08-12]\n");  // one free tray in each rack
  RequestSpec one{.gpus = 8, .one_domain = true};
  PlacementResult no = engine.Place(split, Req(*topo, one));
  ASSERT_FALSE(no.placed);
  EXPECT_EQ(no.reason,
            "needs the whole job (8 GPUs) inside one NVLink domain (--nvl-domain=one); the "
            "largest free domain has 4 GPUs (8 GPUs free in all)");
  // Without it the same job spans the two racks.
  EXPECT_TRUE(engine.Place(split, Req(*topo, {.gpus = 8})).placed);
  ClusterState room(topo);
  Busy(room, "gb[02-06]\ngb[09-12]\n");  // rack2 has two free trays
  PlacementResult r = engine.Place(room, Req(*topo, one));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_THAT(RacksInRankOrder(r, *topo), ::testing::ElementsAre("rack2"));
  EXPECT_THAT(r.request, HasSubstr("one NVLink domain"));
}

// Under Slurm's topology/block a job without -N, or of no more nodes than a block plans for,
// stays inside one block: the engine makes only such node sets (cons_tres would refuse the
// others); a larger job without --segment is Slurm's to spread, said as a relaxation.
TEST(EngineTest, SlurmBlocksKeepSmallJobsInsideOneRack) {
  auto topo = Topo(kRacks);
  Request plain = Req(*topo, {.gpus = 8, .slurm_blocks = true});
  EXPECT_TRUE(plain.one_domain);
  EXPECT_EQ(plain.one_domain_why, "topology/block keeps a job without -N inside one block");
  Request small = Req(*topo, {.nodes = 6, .gpus_per_node = 4, .slurm_blocks = true});
  EXPECT_TRUE(small.one_domain);
  EXPECT_EQ(small.one_domain_why,
            "topology/block keeps a job of 6 nodes inside one block (6 planned)");
  Request big = Req(*topo, {.nodes = 8, .gpus_per_node = 4, .slurm_blocks = true});
  EXPECT_FALSE(big.one_domain);
  ASSERT_EQ(big.relaxations.size(), 1u);
  EXPECT_THAT(big.relaxations[0], HasSubstr("give --segment to keep its parts"));
  Request segmented =
      Req(*topo, {.nodes = 8, .gpus_per_node = 4, .segment = 4, .slurm_blocks = true});
  EXPECT_FALSE(segmented.one_domain);
  EXPECT_EQ(segmented.segment, 4);
  EXPECT_TRUE(segmented.relaxations.empty());
  // On a cluster without multi-node domains blocks are not NVLink domains: nothing changes.
  auto lab = Topo(testing::kLabYaml);
  EXPECT_FALSE(Req(*lab, {.gpus = 8, .slurm_blocks = true}).one_domain);
}

// A rack keeps its spare trays free for a replacement (spares: 2): a TP group that needs
// them waits, unless the job (place --use-spares: a replacement for a failed tray) or the policy
// may use them; a job that fits beside the spares runs.
TEST(EngineTest, SparesStayFreeUnlessTheJobMayUseThem) {
  std::string yaml = kRacks;
  yaml.replace(yaml.find("{name: rack1, nodes: \"gb[01-06]\"}"),
               std::string("{name: rack1, nodes: \"gb[01-06]\"}").size(),
               "{name: rack1, nodes: \"gb[01-06]\", spares: 2}");
  auto topo = Topo(yaml.c_str());
  Engine engine(topo, Pol("topo"));
  ClusterState state(topo);
  Busy(state, "gb[07-12]\n");  // rack2 full: rack1's 6 free trays are the only room
  PlacementResult four = engine.Place(state, Req(*topo, {.gpus = 16, .tp = 16}));
  ASSERT_TRUE(four.placed) << four.reason;
  EXPECT_THAT(RacksInRankOrder(four, *topo), ::testing::ElementsAre("rack1"));
  PlacementResult five = engine.Place(state, Req(*topo, {.gpus = 20, .tp = 20}));
  ASSERT_FALSE(five.placed);
  EXPECT_THAT(five.reason, HasSubstr("spares"));
  PlacementResult spare =
      engine.Place(state, Req(*topo, {.gpus = 20, .tp = 20, .may_use_spares = true}));
  ASSERT_TRUE(spare.placed) << spare.reason;
  EXPECT_EQ(Nodes(spare, *topo).size(), 5u);
}

// max_comm_ratio: a job whose best placement now spends far more on communication than its
// best on the idle cluster waits for a more local one (as topology/block makes a job without
// --segment wait for one block); a job that spans racks even on the idle cluster runs.
TEST(EngineTest, MaxCommRatioMakesASpreadJobWait) {
  auto topo = Topo(kRacks);
  auto policy = std::make_shared<Policy>(*Pol("topo"));
  policy->max_comm_ratio = 3;
  Engine engine(topo, policy);
  Engine unlimited(topo, Pol("topo"));
  ClusterState state(topo);
  Busy(state, "gb[02-06]\ngb[08-12]\n");  // gb01 in rack1 and gb07 in rack2 free
  const Request plain = Req(*topo, {.gpus = 8});
  PlacementResult spread = unlimited.Place(state, plain);
  ASSERT_TRUE(spread.placed) << spread.reason;
  EXPECT_EQ(Nodes(spread, *topo), (std::set<std::string>{"gb01", "gb07"}));
  PlacementResult waits = engine.Place(state, plain);
  EXPECT_FALSE(waits.placed);
  EXPECT_TRUE(waits.comm_ratio_is_why);
  EXPECT_TRUE(waits.ranks.empty());
  EXPECT_THAT(waits.reason, AllOf(HasSubstr("2 NVLink domains"), HasSubstr("1 NVLink domain,"),
                                  HasSubstr("max_comm_ratio 3")));
  // A second free tray in rack1: the job runs there.
  ASSERT_THAT(
      state.Release(std::vector<GpuId>(topo->nodes()[1].gpus.begin(), topo->nodes()[1].gpus.end())),
      IsOk());
  PlacementResult local = engine.Place(state, plain);
  ASSERT_TRUE(local.placed) << local.reason;
  EXPECT_EQ(Nodes(local, *topo), (std::set<std::string>{"gb01", "gb02"}));
  // 40 GPUs span both racks even on the idle cluster: no better to wait for.
  ClusterState idle(topo);
  PlacementResult big = engine.Place(idle, Req(*topo, {.gpus = 40, .tp = 4}));
  EXPECT_TRUE(big.placed) << big.reason;
  EXPECT_FALSE(big.comm_ratio_is_why);
}

// Detail::kPlacement (a replay's scheduling passes, the start-time search): a job that does
// not fit gets its flags but no text; a placed one gets all that kFull gives.
TEST(EngineTest, PlacementDetailLeavesOutOnlyTheTextOfARefusal) {
  using Detail = Engine::Detail;
  auto lab = Topo(testing::kLabYaml);
  Engine engine(lab, Pol("topo"));
  ClusterState state(lab);
  Busy(state, "node[0-7]:0-3\n");  // 4 free GPUs on every node
  const Request strict = Req(*lab, {.gpus = 16, .tp = 8});
  PlacementResult full = engine.Place(state, strict, Detail::kFull);
  PlacementResult terse = engine.Place(state, strict, Detail::kPlacement);
  ASSERT_FALSE(full.placed);
  ASSERT_FALSE(terse.placed);
  EXPECT_FALSE(full.reason.empty());
  EXPECT_FALSE(full.request.empty());
  EXPECT_TRUE(terse.reason.empty());
  EXPECT_TRUE(terse.request.empty());
  EXPECT_FALSE(terse.internal_error);
  // Placed (prefer relaxes the same job): every field as kFull's.
  const Request prefer = Req(*lab, {.gpus = 16, .tp = 8, .nvl = NvlMode::kPrefer});
  full = engine.Place(state, prefer, Detail::kFull);
  terse = engine.Place(state, prefer, Detail::kPlacement);
  ASSERT_TRUE(full.placed) << full.reason;
  ASSERT_TRUE(terse.placed);
  EXPECT_EQ(terse.ranks, full.ranks);
  EXPECT_EQ(terse.request, full.request);
  EXPECT_EQ(terse.origin, full.origin);
  EXPECT_EQ(terse.relaxations, full.relaxations);
  EXPECT_EQ(terse.total, full.total);
  EXPECT_EQ(terse.candidates, full.candidates);
  EXPECT_EQ(terse.locality_traded, full.locality_traded);
  EXPECT_EQ(terse.comm.total(), full.comm.total());
  ASSERT_EQ(terse.scores.size(), full.scores.size());
  ASSERT_EQ(terse.best_rejected.has_value(), full.best_rejected.has_value());
  if (terse.best_rejected) {
    EXPECT_EQ(terse.best_rejected->why, full.best_rejected->why);
  }
  // The flags of a refusal stay: spares, and max_comm_ratio.
  std::string yaml = kRacks;
  yaml.replace(yaml.find("{name: rack1, nodes: \"gb[01-06]\"}"),
               std::string("{name: rack1, nodes: \"gb[01-06]\"}").size(),
               "{name: rack1, nodes: \"gb[01-06]\", spares: 2}");
  auto racks = Topo(yaml.c_str());
  ClusterState rack1_only(racks);
  Busy(rack1_only, "gb[07-12]\n");
  PlacementResult spares =
      Engine(racks, Pol("topo"))
          .Place(rack1_only, Req(*racks, {.gpus = 20, .tp = 20}), Detail::kPlacement);
  EXPECT_FALSE(spares.placed);
  EXPECT_TRUE(spares.spares_are_why);
  EXPECT_TRUE(spares.reason.empty());
  auto limited = std::make_shared<Policy>(*Pol("topo"));
  limited->max_comm_ratio = 3;
  auto two_racks = Topo(kRacks);
  ClusterState apart(two_racks);
  Busy(apart, "gb[02-06]\ngb[08-12]\n");
  PlacementResult waits =
      Engine(two_racks, limited).Place(apart, Req(*two_racks, {.gpus = 8}), Detail::kPlacement);
  EXPECT_FALSE(waits.placed);
  EXPECT_TRUE(waits.comm_ratio_is_why);
  EXPECT_TRUE(waits.reason.empty());
  EXPECT_TRUE(waits.ranks.empty());
}

// Detail::kChoice (a replay's starts): the same choice as kFull, every fact of it, and none
// of the text that explains it; on a cluster of two GPU models, where each model is decided
// alone, too.
TEST(EngineTest, ChoiceDetailGivesTheSameChoiceWithoutItsText) {
  using Detail = Engine::Detail;
  auto lab = Topo(testing::kLabYaml);
  ClusterState state(lab);
  Busy(state, "node[0-7]:0-3\nnode2\n");
  auto two = Topo(testing::kTwoModelYaml);
  ClusterState mixed(two);
  Busy(mixed, "node0:0-3\nnode2:0-1\n");
  struct Case {
    std::shared_ptr<const Topology> topo;
    const ClusterState* state;
    Request request;
  };
  const std::vector<Case> cases = {
      {lab, &state, Req(*lab, {.gpus = 16, .tp = 8, .nvl = NvlMode::kPrefer})},
      {lab, &state, Req(*lab, {.gpus = 8, .tp = 4})},
      {two, &mixed, Req(*two, {.gpus = 6})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(DescribeRequest(c.request, *c.topo));
    Engine engine(c.topo, Pol("topo"));
    PlacementResult full = engine.Place(*c.state, c.request, Detail::kFull);
    PlacementResult chosen = engine.Place(*c.state, c.request, Detail::kChoice);
    ASSERT_TRUE(full.placed) << full.reason;
    ASSERT_TRUE(chosen.placed);
    EXPECT_EQ(chosen.ranks, full.ranks);
    EXPECT_EQ(chosen.total, full.total);
    EXPECT_EQ(chosen.comm.total(), full.comm.total());
    EXPECT_EQ(chosen.job_tier, full.job_tier);
    EXPECT_EQ(chosen.dp_tier, full.dp_tier);
    EXPECT_EQ(chosen.tp_groups_split, full.tp_groups_split);
    EXPECT_EQ(chosen.candidates, full.candidates);
    EXPECT_EQ(chosen.relaxations, full.relaxations);
    EXPECT_FALSE(full.origin.empty());
    EXPECT_FALSE(full.scores.empty());
    EXPECT_FALSE(full.request.empty());
    EXPECT_TRUE(chosen.origin.empty());
    EXPECT_TRUE(chosen.scores.empty());
    EXPECT_TRUE(chosen.request.empty());
    EXPECT_TRUE(chosen.locality_traded.empty());
    EXPECT_FALSE(chosen.best_rejected.has_value());
  }
  // The first case relaxes prefer: said, since a replay counts relaxations.
  Engine engine(lab, Pol("topo"));
  EXPECT_THAT(engine.Place(state, cases[0].request, Detail::kChoice).relaxations,
              ::testing::Not(::testing::IsEmpty()));
  // The mixed case had another model to offer: kFull names it, kChoice does not.
  EXPECT_TRUE(Engine(two, Pol("topo")).Place(mixed, cases[2].request).best_rejected.has_value());
}

TEST(EngineTest, SegmentsAreCheckedAgainstTheNodeCount) {
  auto topo = Topo(kRacks);
  EXPECT_THAT(ResolveRequest({.gpus = 16, .segment = 2}, *topo),
              nvlplace::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("needs an exact node count (-N)")));
  EXPECT_THAT(ResolveRequest({.nodes = 6, .gpus_per_node = 4, .segment = 4}, *topo),
              nvlplace::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("6 nodes do not split into segments of 4")));
  EXPECT_THAT(
      ResolveRequest({.nodes = 2, .gpus_per_node = 4, .segment = -1}, *topo),
      nvlplace::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("segment=-1")));
  // A segment larger than the job is the whole job (Slurm 26.05 ignores it; 24.11 refuses).
  EXPECT_EQ(Req(*topo, {.nodes = 2, .gpus_per_node = 4, .segment = 4}).segment, 2);
  // No multi-node domain to keep it in: left to Slurm, said so.
  auto lab = Topo(testing::kLabYaml);
  Request r = Req(*lab, {.nodes = 4, .gpus_per_node = 8, .segment = 2});
  EXPECT_EQ(r.segment, 0);
  EXPECT_THAT(r.relaxations, ::testing::ElementsAre(HasSubstr("segment=2 is left to Slurm")));
}

// The balanced preset splits a job over several racks evenly (issue 25): 8 trays over two
// empty 6-tray racks as 4 + 4, where topo's best fit fills one rack first (6 + 2); the
// explanation names the balance the runner-up lost on.
TEST(EngineTest, BalancedSplitsAMultiRackJobEvenly) {
  auto topo = Topo(kRacks);
  ClusterState empty(topo);
  RequestSpec spec{.nodes = 8, .gpus_per_node = 4};
  auto per_rack = [&](const PlacementResult& r) {
    std::map<std::string, int> out;
    for (GpuId g : r.ranks) ++out[topo->domains()[topo->DomainOf(g)].name];
    return out;
  };
  PlacementResult packed = Engine(topo, Pol("topo")).Place(empty, Req(*topo, spec));
  ASSERT_TRUE(packed.placed) << packed.reason;
  EXPECT_EQ(per_rack(packed), (std::map<std::string, int>{{"rack1", 24}, {"rack2", 8}}));
  PlacementResult even = Engine(topo, Pol("balanced")).Place(empty, Req(*topo, spec));
  ASSERT_TRUE(even.placed) << even.reason;
  EXPECT_EQ(per_rack(even), (std::map<std::string, int>{{"rack1", 16}, {"rack2", 16}}));
  ASSERT_TRUE(even.best_rejected.has_value());
  EXPECT_THAT(even.best_rejected->why, HasSubstr("balance 33.3 vs 100.0 (weight 20)"));
}

TEST(EngineTest, NodesModeTakesWholeChunks) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-5]:0\n");
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.nodes = 2, .gpus_per_node = 8}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(Nodes(r, *topo), (std::set<std::string>{"node6", "node7"}));
  PlacementResult no = engine.Place(state, Req(*topo, {.nodes = 3, .gpus_per_node = 8}));
  EXPECT_FALSE(no.placed);
  EXPECT_THAT(no.reason, HasSubstr("needs 3 nodes with 8 free GPUs each"));
}

// Nodes mode takes the same GPUs on each node, so a TP group of 4 over 2 nodes x 2 GPUs
// crosses nodes whatever the candidate: strict refuses it with that reason, prefer names it.
TEST(EngineTest, NodesModeNeverSplitsAStrictTpGroup) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Engine engine(topo, Pol("topo"));
  PlacementResult strict =
      engine.Place(state, Req(*topo, {.nodes = 2, .gpus_per_node = 2, .tp = 4}));
  EXPECT_FALSE(strict.placed);
  // A TP group larger than a node's share is taken over whole nodes of one domain (issue 25:
  // the same unit as a segment); on single-node domains there is none.
  EXPECT_EQ(strict.reason,
            "needs 1 TP group of 4 GPUs over 2 nodes, each group inside one NVLink domain, each "
            "node with 2 free GPUs; the free NVLink domains hold only 0 such groups (largest free "
            "domain has 8 GPUs)");
  PlacementResult prefer = engine.Place(
      state, Req(*topo, {.nodes = 2, .gpus_per_node = 2, .tp = 4, .nvl = NvlMode::kPrefer}));
  ASSERT_TRUE(prefer.placed) << prefer.reason;
  EXPECT_EQ(prefer.tp_groups_split, 1);
  EXPECT_EQ(Nodes(prefer, *topo).size(), 2u);
}

// configs/lab-islands.yaml: 16 nodes of two 4-GPU islands (0-3, 4-7). With GPUs 0-1 busy
// everywhere, GPUs 4-7 of any node hold a TP group of 4: `-N2 --gpus-per-node=4 --nvl-tp=4`
// takes them, under strict and prefer alike, and relaxes nothing.
TEST(EngineTest, NodesModeKeepsTpGroupsInsideIslands) {
  auto topo = LoadTopologyFile("configs/lab-islands.yaml");
  ASSERT_THAT(topo, IsOk());
  ClusterState state(*topo);
  Busy(state, "node[00-15]:0-1\n");
  Engine engine(*topo, Pol("topo"));
  for (NvlMode nvl : {NvlMode::kStrict, NvlMode::kPrefer}) {
    PlacementResult r =
        engine.Place(state, Req(**topo, {.nodes = 2, .gpus_per_node = 4, .tp = 4, .nvl = nvl}));
    ASSERT_TRUE(r.placed) << r.reason;
    EXPECT_EQ(r.tp_groups_split, 0);
    EXPECT_THAT(r.relaxations, ::testing::IsEmpty());
    EXPECT_EQ(Nodes(r, **topo).size(), 2u);
    for (GpuId g : r.ranks) EXPECT_GE((*topo)->gpus()[g].index, 4);
  }
  // Two TP groups of 2 per node: both in the island 4-7, which holds the node's share whole
  // (group by group, the best fit put them in 2-3 and 4-5: the same room left, a pair per
  // node, but the groups' all-reduce over PCIe), never across.
  PlacementResult two = engine.Place(state, Req(**topo, {.nodes = 2, .gpus_per_node = 4, .tp = 2}));
  ASSERT_TRUE(two.placed) << two.reason;
  EXPECT_EQ(two.tp_groups_split, 0);
  std::multiset<int> indexes;
  for (GpuId g : two.ranks) indexes.insert((*topo)->gpus()[g].index);
  EXPECT_EQ(indexes, (std::multiset<int>{4, 4, 5, 5, 6, 6, 7, 7}));
}

// When no node holds its share as whole TP groups inside islands: strict says so in those
// terms, prefer takes each node's share from as few islands as it can and names the
// relaxation.
TEST(EngineTest, NodesModeSaysWhenNoNodeHoldsWholeTpGroups) {
  auto topo = LoadTopologyFile("configs/lab-islands.yaml");
  ASSERT_THAT(topo, IsOk());
  ClusterState state(*topo);
  Busy(state, "node[00-15]:0-1,4\n");  // islands keep 2 and 3 free GPUs
  Engine engine(*topo, Pol("topo"));
  PlacementResult strict =
      engine.Place(state, Req(**topo, {.nodes = 2, .gpus_per_node = 4, .tp = 4}));
  EXPECT_FALSE(strict.placed);
  EXPECT_EQ(strict.reason,
            "needs 2 nodes with 4 free GPUs each as whole TP groups of 4 inside NVLink domains "
            "on allowed nodes; only 0 such nodes");
  PlacementResult prefer = engine.Place(
      state, Req(**topo, {.nodes = 2, .gpus_per_node = 4, .tp = 4, .nvl = NvlMode::kPrefer}));
  ASSERT_TRUE(prefer.placed) << prefer.reason;
  ASSERT_FALSE(prefer.relaxations.empty());
  EXPECT_THAT(prefer.relaxations[0],
              HasSubstr("because only 0 of the 2 nodes needed hold 4 free GPUs as whole TP "
                        "groups"));
  EXPECT_EQ(prefer.tp_groups_split, 2);
  // Each group: 3 GPUs of island 4-7 and one of 0-3 (2 islands, the fewest possible).
  std::vector<int> indexes;
  for (GpuId g : prefer.ranks) indexes.push_back((*topo)->gpus()[g].index);
  EXPECT_EQ(std::count_if(indexes.begin(), indexes.end(), [](int i) { return i >= 4; }), 6);
}

// lab: node0 has 7 free GPUs, node1 and node4-7 two each, node2-3 none. A TP group of 8 must
// split (prefer): over node0 and node1 it spans 2 NVLink domains, over node4-7 four. The
// estimate prices the four-way split higher (more of the all-reduce on the fabric) and the
// default policy takes two domains.
TEST(EngineTest, SplitTpGroupSpansTheFewestDomains) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node0:0\nnode1:0-5\nnode[2-3]\nnode[4-7]:0-5\n");
  Request req = Req(*topo, {.gpus = 8, .tp = 8, .nvl = NvlMode::kPrefer});
  PlacementResult r = Engine(topo, Pol("topo")).Place(state, req);
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(Nodes(r, *topo), (std::set<std::string>{"node0", "node1"}));
  // pack weighs only fragmentation and takes node4-7: its TP estimate is higher.
  PlacementResult spread = Engine(topo, Pol("pack")).Place(state, req);
  ASSERT_TRUE(spread.placed) << spread.reason;
  ASSERT_EQ(Nodes(spread, *topo).size(), 4u);
  EXPECT_GT(spread.comm.tp_s, 1.3 * r.comm.tp_s);
}

// GPUs taken one by one are regrouped so that TP groups fit domains where they can: node0
// and node1 have 3 free GPUs each, node4 and node5 one (first fit takes node0, node1,
// node4, node5 in that order). TP=4: each group is 3 GPUs of one node and one of another (2
// domains), not node0 x3 + node1 x1 and node1 x2 + node4 + node5 (3 domains).
TEST(EngineTest, SplitTpGroupsAreRegroupedOverFewDomains) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-1]:0-4\nnode[2-3]\nnode[4-5]:0-6\nnode[6-7]\n");
  Request req = Req(*topo, {.gpus = 8, .tp = 4, .nvl = NvlMode::kPrefer});
  PlacementResult r = Engine(topo, Pol("firstfit")).Place(state, req);
  ASSERT_TRUE(r.placed) << r.reason;
  for (int g = 0; g < 2; ++g) {
    std::set<DomainId> domains;
    for (int t = 0; t < 4; ++t) domains.insert(topo->DomainOf(r.ranks[g * 4 + t]));
    EXPECT_EQ(domains.size(), 2u) << "group " << g;
  }
}

// The highest tier any DP group crosses, from the ranks alone: DP group (t, p) is the ranks
// t + tp * (d + dp * p), d = 0..dp-1 (Megatron's default order, written out).
int DpTierOf(const Topology& topo, const Request& r, const std::vector<GpuId>& ranks) {
  int tier = Topology::kSameNode;
  for (int p = 0; p < r.pp && r.dp > 1; ++p) {
    for (int t = 0; t < r.tp; ++t) {
      std::vector<NodeId> nodes;
      for (int d = 0; d < r.dp; ++d)
        nodes.push_back(topo.gpus()[ranks[t + r.tp * (d + r.dp * p)]].node);
      tier = std::max(tier, topo.CommonTier(nodes));
    }
  }
  return tier;
}

// lab: node0 and node1 have GPUs 5-7 free, node4 and node5 GPU 7, the rest is busy. No
// domain holds a TP group of 4, so prefer takes single GPUs and both groups split; first fit
// puts rank 2 on node0 and rank 6 on node4 (or the like): some DP group crosses the spine
// although the first one (ranks 0 and 4) stays under a leaf. The reported tier is every
// group's, and the text says the same.
TEST(EngineTest, DpTierCoversEveryDpGroup) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-1]:0-4\nnode[2-3]\nnode[4-5]:0-6\nnode[6-7]\n");
  Request req = Req(*topo, {.gpus = 8, .tp = 4, .nvl = NvlMode::kPrefer});
  for (const char* policy : {"firstfit", "topo", "pack", "random"}) {
    PlacementResult r = Engine(topo, Pol(policy)).Place(state, req);
    ASSERT_TRUE(r.placed) << policy << ": " << r.reason;
    EXPECT_EQ(r.dp_tier, DpTierOf(*topo, req, r.ranks)) << policy;
  }
}

TEST(EngineTest, ExplainsTheDecision) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node[0-2]:0-5\n");
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 16, .tp = 8, .dp = 2}));
  ASSERT_TRUE(r.placed);
  ASSERT_TRUE(r.best_rejected.has_value());
  EXPECT_FALSE(r.best_rejected->why.empty());
  EXPECT_EQ(r.scores.size(), 6u);  // nvlink, tier, comm, fragmentation, model, spread
  nlohmann::json j = PlacementToJson(r, *topo);
  EXPECT_EQ(j["schema"], "nvlplace.placement/1");
  EXPECT_EQ(j["ranks"].size(), 16u);
  EXPECT_GT(j["comm_seconds_per_step"]["total"].get<double>(), 0);
  std::string text = PlacementText(r, *topo);
  EXPECT_THAT(text, HasSubstr("rank order:"));
  EXPECT_THAT(text, HasSubstr("best rejected:"));
}

// pack has no scorer that reads the communication estimate, so its candidates are not priced
// while scored; the choice and its best rejected alternative still are, as the cost model
// prices their ranks.
TEST(EngineTest, APolicyWithoutCommStillPricesItsChoiceAndAlternative) {
  auto topo = Topo(testing::kLabYaml);
  ClusterState state(topo);
  Busy(state, "node0:0-3\nnode4:0-5\n");
  Request req = Req(*topo, {.gpus = 16, .tp = 4, .dp = 4});
  PlacementResult r = Engine(topo, Pol("pack")).Place(state, req);
  ASSERT_TRUE(r.placed) << r.reason;
  ASSERT_TRUE(r.best_rejected.has_value());
  EXPECT_NE(r.ranks, r.best_rejected->ranks);
  EXPECT_GT(r.comm.total(), 0);
  EXPECT_EQ(r.comm.total(), EstimateComm(*topo, r.ranks, req, ModelProfile{}).total());
  EXPECT_GT(r.best_rejected->comm.total(), 0);
  EXPECT_EQ(r.best_rejected->comm.total(),
            EstimateComm(*topo, r.best_rejected->ranks, req, ModelProfile{}).total());
}

// Mixed clusters (issue 11). kTwoModelYaml: H100 node[0-1] x 8 GPUs, A100 node[2-3] x 4.

// All the GPU models of a placement.
std::set<std::string> Models(const PlacementResult& r, const Topology& topo) {
  std::set<std::string> out;
  for (GpuId g : r.ranks)
    out.insert(topo.gpu_models()[topo.nodes()[topo.gpus()[g].node].model].name);
  return out;
}

std::shared_ptr<const Policy> MixingModels(const std::shared_ptr<const Policy>& base) {
  auto p = std::make_shared<Policy>(*base);
  p->mix_models = true;
  return p;
}

TEST(EngineModelsTest, AnUntypedRequestStaysOnOneModel) {
  auto topo = Topo(testing::kTwoModelYaml);
  ClusterState state(topo);
  // H100 free: node0 4, node1 8; A100 free: node2 2. Best fit alone would fill node0 and
  // node2 (4 + 2), two models; one model at a time gives H100 only.
  Busy(state, "node0:0-3\nnode2:0-1\nnode3\n");
  Engine engine(topo, Pol("pack"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 6}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(Models(r, *topo), std::set<std::string>{"H100"});
  EXPECT_THAT(r.relaxations, ::testing::IsEmpty());
}

TEST(EngineModelsTest, NoModelHoldsItAndMixingIsOff) {
  auto topo = Topo(testing::kTwoModelYaml);
  ClusterState state(topo);
  Engine engine(topo, Pol("topo"));
  // 20 GPUs: H100 has 16, A100 8.
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 20, .tp = 4}));
  EXPECT_FALSE(r.placed);
  EXPECT_EQ(r.reason,
            "no GPU model has 20 free GPUs: H100 16, A100 8; ask for a model or allow mix_models");
}

TEST(EngineModelsTest, EachModelsReasonWhenOneHasTheGpusButNotTheShape) {
  auto topo = Topo(testing::kTwoModelYaml);
  ClusterState state(topo);
  Busy(state, "node0:0\nnode1:0\n");  // H100: 14 free, no node wholly free for TP=8
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 8, .tp = 8}));
  EXPECT_FALSE(r.placed);
  EXPECT_THAT(r.reason, AllOf(HasSubstr("no single GPU model can hold the job (mix_models off); "
                                        "H100: needs 1 TP group of 8 GPUs"),
                              HasSubstr("; A100: needs 1 TP group of 8 GPUs")));
}

TEST(EngineModelsTest, MixModelsSpansModelsOnlyWhenNoneHoldsItAndSaysSo) {
  auto topo = Topo(testing::kTwoModelYaml);
  ClusterState state(topo);
  Engine engine(topo, MixingModels(Pol("topo")));
  PlacementResult fits = engine.Place(state, Req(*topo, {.gpus = 8}));
  ASSERT_TRUE(fits.placed) << fits.reason;
  EXPECT_EQ(Models(fits, *topo).size(), 1u);
  EXPECT_THAT(fits.relaxations, ::testing::IsEmpty());
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 20, .tp = 4}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(Models(r, *topo), (std::set<std::string>{"H100", "A100"}));
  // 16 H100 and 4 A100 (five TP groups of 4): the most first.
  EXPECT_THAT(r.relaxations, ::testing::Contains(HasSubstr("GPU models mixed: H100 x16, A100 x4")));
}

TEST(EngineModelsTest, FasterGpusWinOverPackingIntoSmallNodes) {
  // The issue's case, smaller: 32 GPUs, TP=1 on an empty cluster of 2-GPU T4 nodes and
  // 8-GPU V100 nodes (two per leaf), both spanning the spine. Fill T4 nodes wholly or four
  // V100 nodes wholly: the same on every other scorer, so without the model scorer the tie went to
  // the first model listed, T4.
  auto topo = Topo(R"(name: t4-v100
tiers: [leaf, spine]
gpu_models: [{name: T4, nvlink_gbps: 32}, {name: V100, nvlink_gbps: 300}]
nodes:
  - {names: "t[00-15]", gpus: 2, model: T4}
  - {names: "v[0-7]", gpus: 8, model: V100}
switches:
  - {name: leaf0, tier: leaf, nodes: "t[00-07]"}
  - {name: leaf1, tier: leaf, nodes: "t[08-15]"}
  - {name: leaf2, tier: leaf, nodes: "v[0-1]"}
  - {name: leaf3, tier: leaf, nodes: "v[2-3]"}
  - {name: leaf4, tier: leaf, nodes: "v[4-5]"}
  - {name: leaf5, tier: leaf, nodes: "v[6-7]"}
  - {name: spine0, tier: spine, switches: "leaf[0-5]"}
)");
  ClusterState state(topo);
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 32, .tp = 1}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(Models(r, *topo), std::set<std::string>{"V100"});
  ASSERT_TRUE(r.best_rejected.has_value());
  // model: T4 scores 100 * 32 / 300 = 10.7 against V100's 100.
  EXPECT_THAT(r.best_rejected->why, HasSubstr("GPU model T4; lower model 10.7 vs 100.0"));
  EXPECT_THAT(PlacementText(r, *topo), HasSubstr("\nmodel: V100 x32\n"));
  EXPECT_EQ(PlacementToJson(r, *topo)["gpu_models"],
            nlohmann::json::parse(R"([{"name": "V100", "gpus": 32}])"));
}

TEST(EngineModelsTest, ATypedRequestIsNotSplitByModel) {
  auto topo = Topo(testing::kTwoModelYaml);
  ClusterState state(topo);
  Engine engine(topo, Pol("topo"));
  PlacementResult r = engine.Place(state, Req(*topo, {.gpus = 8, .gpu_model = "a100"}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(Models(r, *topo), std::set<std::string>{"A100"});
}

// Issue 11, point 3: NICs per node. 16 GPUs at TP=2 (two DP rings of 8, each leaving each of
// its two nodes once) on tests/fixtures/topologies/nics.yaml, whose node pairs differ only in
// NICs, the 1-NIC pair listed first. Blind to NICs (every node one per GPU) the tie goes to the
// first pair; with them, a 1-NIC node sends two ring hops at half the link each, so the job
// goes to the 8-NIC pair.
TEST(EngineNicsTest, ADpHeavyJobTakesTheNodesWithMoreNics) {
  absl::StatusOr<std::string> text = ReadFileToString("tests/fixtures/topologies/nics.yaml");
  ASSERT_THAT(text, IsOk());
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(*text, "nics.yaml");
  ASSERT_THAT(spec, IsOk());
  auto nodes_of = [](const PlacementResult& r, const Topology& t) {
    std::set<std::string> out;
    for (GpuId g : r.ranks) out.insert(t.nodes()[t.gpus()[g].node].name);
    return out;
  };
  TopologySpec blind = *spec;
  for (NodeGroupSpec& g : blind.node_groups) g.nics = kDefaultNics;
  auto blind_topo = Topology::Create(blind);
  ASSERT_THAT(blind_topo, IsOk());
  {
    ClusterState state(*blind_topo);
    PlacementResult r =
        Engine(*blind_topo, Pol("topo")).Place(state, Req(**blind_topo, {.gpus = 16, .tp = 2}));
    ASSERT_TRUE(r.placed) << r.reason;
    EXPECT_EQ(nodes_of(r, **blind_topo), (std::set<std::string>{"nic1n0", "nic1n1"}));
  }
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  ClusterState state(*topo);
  PlacementResult r = Engine(*topo, Pol("topo")).Place(state, Req(**topo, {.gpus = 16, .tp = 2}));
  ASSERT_TRUE(r.placed) << r.reason;
  EXPECT_EQ(nodes_of(r, **topo), (std::set<std::string>{"nic8n0", "nic8n1"}));
  // The 1-NIC pair lost on the communication estimate.
  ASSERT_TRUE(r.best_rejected.has_value());
  EXPECT_THAT(r.best_rejected->why, HasSubstr("comm"));
}

// The random policy draws afresh per decision (issue 11: it reseeded on every decision, so it
// was first fit over one fixed shuffled order). Eight states, each with one GPU of another
// node busy and room on every node: a 1-GPU job went to the same first host of that order
// in all eight; fresh draws spread it. The same state and request still decide the same.
TEST(EngineRandomTest, EachDecisionDrawsAfreshAndReplaysTheSame) {
  auto topo = Topo(testing::kLabYaml);
  Engine engine(topo, Pol("random")), again(topo, Pol("random"));
  std::set<std::string> chosen;
  for (int n = 0; n < 8; ++n) {
    ClusterState state(topo);
    Busy(state, absl::StrCat("node", n, ":7\n"));
    Request r = Req(*topo, {.gpus = 1});
    PlacementResult x = engine.Place(state, r);
    ASSERT_TRUE(x.placed) << x.reason;
    EXPECT_EQ(x.ranks, again.Place(state, r).ranks);  // reproducible
    chosen.insert(*Nodes(x, *topo).begin());
  }
  EXPECT_GT(chosen.size(), 2u);
}

struct BadRequest {
  RequestSpec spec;
  std::string message;
};

class RequestErrorTest : public ::testing::TestWithParam<BadRequest> {};

TEST_P(RequestErrorTest, Rejects) {
  auto topo = Topo(testing::kLabYaml);
  EXPECT_THAT(ResolveRequest(GetParam().spec, *topo),
              nvlplace::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, RequestErrorTest,
    ::testing::Values(BadRequest{{.gpus = 12, .tp = 8}, "does not divide 12 GPUs"},
                      BadRequest{{.gpus = 16, .tp = 4, .pp = 2, .dp = 3}, "is not the 16 GPUs"},
                      BadRequest{{.gpus = 1000}, "has 64"},
                      BadRequest{{.gpus = 8, .max_tier = "rack"}, "tiers are leaf, spine"},
                      BadRequest{{.gpus = 8, .max_tier = "Core"}, "tiers are leaf, spine"},
                      BadRequest{{.gpus = 8, .exclude = "node9"}, "node 'node9' is not in"},
                      BadRequest{{}, "needs a GPU count"}));

// One meaning per request (issue 24): a usual tier name above the cluster's highest limits
// nothing. ResolveRequest drops it and every decision names the relaxation, the same in the
// CLI, the replay and the plugin (which alone dropped it, silently, before).
TEST(EngineTest, ATierAboveTheTopIsDroppedAsANamedRelaxation) {
  auto topo = Topo(testing::kLabYaml);  // tiers leaf, spine
  Request r = Req(*topo, {.gpus = 16, .max_tier = "core"});
  EXPECT_EQ(r.max_tier, -1);
  ASSERT_EQ(r.relaxations.size(), 1u);
  ClusterState empty(topo);
  PlacementResult p = Engine(topo, Pol("topo")).Place(empty, r);
  ASSERT_TRUE(p.placed) << p.reason;
  EXPECT_THAT(p.relaxations,
              ::testing::ElementsAre(
                  "max-tier=core limits nothing: cluster lab's highest tier is spine (dropped)"));
  EXPECT_THAT(DescribeRequest(r, *topo), Not(HasSubstr("max-tier")));
  // The highest tier itself is a limit like any other; a name below it that the cluster does
  // not have is refused above.
  EXPECT_EQ(Req(*topo, {.gpus = 16, .max_tier = "spine"}).max_tier, 1);
  EXPECT_TRUE(Req(*topo, {.gpus = 16, .max_tier = "spine"}).relaxations.empty());
}

// Property: ResolveRequest is total. Every combination of extreme values of the six sizes
// returns (no trap, no signed overflow under UBSan), and what it accepts is consistent and
// places without dividing by zero.
TEST(EngineTest, ExtremeRequestSizesNeverTrap) {
  auto topo = Topo(testing::kLabYaml);
  Engine engine(topo, Pol("topo"));
  ClusterState empty(topo);
  const std::vector<int> values = {INT_MIN, -1, 0, 1, 3, 8, 64, 65536, 65537, 1 << 30, INT_MAX};
  std::set<std::tuple<int, int, int, int, int>> accepted;
  int64_t tried = 0;
  for (int gpus : values) {
    for (int nodes : values) {
      for (int gpn : values) {
        for (int tp : values) {
          for (int pp : values) {
            for (int dp : values) {
              RequestSpec spec{
                  .gpus = gpus, .nodes = nodes, .gpus_per_node = gpn, .tp = tp, .pp = pp, .dp = dp};
              ++tried;
              absl::StatusOr<Request> r = ResolveRequest(spec, *topo);
              if (!r.ok()) {
                ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
                continue;
              }
              ASSERT_THAT(CheckRequestSizes(spec), IsOk());
              ASSERT_GE(r->tp, 1);
              ASSERT_GE(r->pp, 1);
              ASSERT_GE(r->dp, 1);
              ASSERT_EQ(int64_t{r->tp} * r->pp * r->dp, r->gpus);
              ASSERT_LE(r->gpus, topo->num_gpus());
              ASSERT_GE(r->nodes, 0);
              if (r->nodes > 0) {
                ASSERT_EQ(r->gpus % r->nodes, 0);
              }
              accepted.insert({r->gpus, r->nodes, r->tp, r->pp, r->dp});
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(tried, 1771561);  // 11^6
  EXPECT_FALSE(accepted.empty());
  // Each accepted shape goes through the engine: its divisions by sizes stay defined.
  for (const auto& [gpus, nodes, tp, pp, dp] : accepted) {
    RequestSpec spec{.gpus = gpus, .nodes = nodes, .tp = tp, .pp = pp, .dp = dp};
    for (NvlMode nvl : {NvlMode::kStrict, NvlMode::kPrefer, NvlMode::kOff}) {
      spec.nvl = nvl;
      absl::StatusOr<Request> r = ResolveRequest(spec, *topo);
      ASSERT_THAT(r, IsOk());
      PlacementResult p = engine.Place(empty, *r);
      if (p.placed) {
        EXPECT_EQ(static_cast<int>(p.ranks.size()), gpus);
      }
    }
  }
}

}  // namespace
}  // namespace nvlplace
