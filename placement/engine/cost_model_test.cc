// The communication cost model on hand-built clusters, with the arithmetic beside each number.
#include "placement/engine/cost_model.h"

#include <algorithm>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;

// Two leaves of two nodes, 8 H100 each; n0 has two 4-GPU islands. leaf1's ports run at
// 200 Gb/s. NVLink 900 GB/s, PCIe 128 GB/s (the table's H100: Gen5 x16), alpha 0.6 us over
// NVLink and 2.7 us over the network.
constexpr char kYaml[] = R"(name: cost
tiers: [leaf, spine]
gpu_models: [{name: H100, nvlink_gbps: 900}]
nodes:
  - {names: "n0", gpus: 8, model: H100, islands: [[0, 1, 2, 3], [4, 5, 6, 7]]}
  - {names: "n[1-3]", gpus: 8, model: H100}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-1]"}
  - {name: leaf1, tier: leaf, nodes: "n[2-3]", link_gbps: 200}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
)";

class CostModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = ParseTopologyYaml(kYaml, "cost.yaml");
    ASSERT_THAT(spec, IsOk());
    auto topo = Topology::Create(*spec);
    ASSERT_THAT(topo, IsOk());
    topo_ = *topo;
  }
  // GPU `index` of node `name`.
  GpuId G(const char* name, int index) const {
    return topo_->nodes()[topo_->FindNode(name)].gpus[index];
  }
  std::vector<GpuId> On(const char* name, std::initializer_list<int> indexes) const {
    std::vector<GpuId> out;
    for (int i : indexes) out.push_back(G(name, i));
    return out;
  }
  static std::vector<GpuId> Join(std::vector<GpuId> a, const std::vector<GpuId>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  std::shared_ptr<const Topology> topo_;
};

constexpr double kS = 1e9;  // bytes all-reduced

TEST_F(CostModelTest, LinkBetweenEachKindOfHop) {
  Link nvl = LinkBetween(*topo_, G("n1", 0), G("n1", 7));
  EXPECT_DOUBLE_EQ(nvl.bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(nvl.alpha_s, 0.6e-6);
  Link pcie = LinkBetween(*topo_, G("n0", 0), G("n0", 4));  // islands of one node
  EXPECT_DOUBLE_EQ(pcie.bytes_per_s, 128e9);                // H100's PCIe Gen5 x16
  EXPECT_DOUBLE_EQ(pcie.alpha_s, 2.7e-6);
  Link leaf = LinkBetween(*topo_, G("n0", 0), G("n1", 0));
  EXPECT_DOUBLE_EQ(leaf.bytes_per_s, 50e9);  // 400 Gb/s / 8
  Link spine = LinkBetween(*topo_, G("n1", 0), G("n2", 0));
  EXPECT_DOUBLE_EQ(spine.bytes_per_s, 25e9);  // the slowest port on the way: 200 Gb/s / 8
}

TEST_F(CostModelTest, RingInsideOneNvlinkDomain) {
  // 2 (n-1)/n S/B + 2 (n-1) alpha = 2 * 7/8 * 1e9 / 900e9 + 14 * 0.6e-6
  //   = 1.9444e-3 + 8.4e-6 = 1.95278e-3 s
  EXPECT_NEAR(RingAllReduceSeconds(*topo_, On("n1", {0, 1, 2, 3, 4, 5, 6, 7}), kS),
              1.75e9 / 900e9 + 8.4e-6, 1e-12);
  EXPECT_EQ(RingAllReduceSeconds(*topo_, On("n1", {3}), kS), 0);  // one GPU: nothing to do
}

TEST_F(CostModelTest, RingAcrossIslandsGoesOverPcie) {
  // n0:0-1 and n0:4-5: 2 * 3/4 * 1e9 / 128e9 + 6 * 2.7e-6 = 11.71875e-3 + 16.2e-6
  EXPECT_NEAR(RingAllReduceSeconds(*topo_, On("n0", {0, 1, 4, 5}), kS), 1.5e9 / 128e9 + 16.2e-6,
              1e-12);
}

TEST(CostModelPcieTest, IslandsTalkAtTheirNodesModelsPcie) {
  // Two bridged models on one leaf: pcie_gbps given for one, from the table (A100-PCIe: Gen4
  // x16, 64 GB/s) for the other.
  auto spec = ParseTopologyYaml(R"(name: pcie
tiers: [leaf]
gpu_models: [{name: X, nvlink_gbps: 300, pcie_gbps: 32}, {name: A100-PCIe}]
nodes:
  - {names: x0, gpus: 4, model: X, islands: [[0, 1], [2, 3]]}
  - {names: a0, gpus: 4, model: A100-PCIe, islands: [[0, 1], [2, 3]]}
switches:
  - {name: leaf0, tier: leaf, nodes: "x0,a0"}
)",
                                "pcie.yaml");
  ASSERT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  const Node& x0 = t.nodes()[t.FindNode("x0")];
  const Node& a0 = t.nodes()[t.FindNode("a0")];
  EXPECT_DOUBLE_EQ(LinkBetween(t, x0.gpus[0], x0.gpus[2]).bytes_per_s, 32e9);
  EXPECT_DOUBLE_EQ(LinkBetween(t, a0.gpus[0], a0.gpus[2]).bytes_per_s, 64e9);
  EXPECT_DOUBLE_EQ(LinkBetween(t, a0.gpus[0], a0.gpus[1]).bytes_per_s, 600e9);  // the bridge
}

TEST_F(CostModelTest, RingAcrossNodesRunsAtItsSlowestHop) {
  double alpha8 = 14 * 2.7e-6;  // 2 (n-1) alpha over the network, n = 8
  // 4 + 4 over n0's second island and n1, one leaf: 50 GB/s a port,
  // 2 * 7/8 * 1e9 / 50e9 = 35e-3.
  std::vector<GpuId> even = Join(On("n0", {4, 5, 6, 7}), On("n1", {0, 1, 2, 3}));
  EXPECT_NEAR(RingAllReduceSeconds(*topo_, even, kS), 1.75e9 / 50e9 + alpha8, 1e-12);
  // 7 + 1 through the spine, whose slowest port (leaf1's) is 200 Gb/s: 1.75e9 / 25e9.
  std::vector<GpuId> lopsided = Join(On("n1", {0, 1, 2, 3, 4, 5, 6}), On("n2", {0}));
  EXPECT_NEAR(RingAllReduceSeconds(*topo_, lopsided, kS), 1.75e9 / 25e9 + alpha8, 1e-12);
  // 2 + 2 + 2 + 2 over four nodes: the hops n1 -> n2 and n3 -> n0 cross the spine.
  std::vector<GpuId> spread =
      Join(Join(On("n0", {4, 5}), On("n1", {0, 1})), Join(On("n2", {0, 1}), On("n3", {0, 1})));
  EXPECT_NEAR(RingAllReduceSeconds(*topo_, spread, kS), 1.75e9 / 25e9 + alpha8, 1e-12);
}

TEST_F(CostModelTest, RingAcrossNodesAndIslandsTakesItsSlowestHop) {
  // n0:0 -> n0:4 over PCIe (128 GB/s), n0:4 -> n1:0 and n1:1 -> n0:0 over the leaf (50 GB/s).
  std::vector<GpuId> g = Join(On("n0", {0, 4}), On("n1", {0, 1}));
  EXPECT_NEAR(RingAllReduceSeconds(*topo_, g, kS), 1.5e9 / 50e9 + 6 * 2.7e-6, 1e-12);
}

TEST_F(CostModelTest, TpGroupInsideOneDomainIsTheRing) {
  std::vector<GpuId> g = On("n1", {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_DOUBLE_EQ(TpAllReduceSeconds(*topo_, g, kS), RingAllReduceSeconds(*topo_, g, kS));
}

TEST_F(CostModelTest, SplitTpGroupCostGrowsWithTheDomainsItSpans) {
  double nvl = 0.6e-6, net = 2.7e-6;
  // 7 + 1 over n1 and n2 (the spine; 25 GB/s at leaf1's ports): inside, a ring of 7 over
  // NVLink, 2 * 6/7 * 1e9 / 900e9 + 12 * 0.6e-6; between the 2 domains,
  // 2 * 1/2 * 1e9 / 25e9 + 2 * 2.7e-6 = 40e-3 + 5.4e-6.
  std::vector<GpuId> lopsided = Join(On("n1", {0, 1, 2, 3, 4, 5, 6}), On("n2", {0}));
  double seven_one = (12.0 / 7) * 1e9 / 900e9 + 12 * nvl + 1e9 / 25e9 + 2 * net;
  EXPECT_NEAR(TpAllReduceSeconds(*topo_, lopsided, kS), seven_one, 1e-12);
  // 2 + 2 + 2 + 2 over n0's second island, n1, n2, n3: inside, rings of 2,
  // 2 * 1/2 * 1e9 / 900e9 + 2 * 0.6e-6; between the 4 domains, the slowest hop (25 GB/s):
  // 2 * 3/4 * 1e9 / 25e9 + 6 * 2.7e-6 = 60e-3 + 16.2e-6. Half as slow again as 7 + 1.
  std::vector<GpuId> spread =
      Join(Join(On("n0", {4, 5}), On("n1", {0, 1})), Join(On("n2", {0, 1}), On("n3", {0, 1})));
  double two_each = 1e9 / 900e9 + 2 * nvl + 1.5e9 / 25e9 + 6 * net;
  EXPECT_NEAR(TpAllReduceSeconds(*topo_, spread, kS), two_each, 1e-12);
  EXPECT_GT(two_each, 1.4 * seven_one);
  // 2 + 2 over n0's islands: PCIe between them (H100: 128 GB/s), 2 * 1/2 * 1e9 / 128e9 + 2
  // * 2.7e-6.
  EXPECT_NEAR(TpAllReduceSeconds(*topo_, On("n0", {0, 1, 4, 5}), kS),
              1e9 / 900e9 + 2 * nvl + 1e9 / 128e9 + 2 * net, 1e-12);
}

TEST_F(CostModelTest, EstimateCommSplitsTpPpAndDp) {
  // TP=4 DP=2 on n1:0-3 and n2:0-3: TP inside a node, DP rings of one GPU per node.
  RequestSpec rs;
  rs.gpus = 8;
  rs.tp = 4;
  auto r = ResolveRequest(rs, *topo_);
  ASSERT_THAT(r, IsOk());
  ModelProfile m;  // 70e9 params, hidden 8192, 80 layers, seq 4096, 8 micro-batches, bf16
  std::vector<GpuId> ranks = Join(On("n1", {0, 1, 2, 3}), On("n2", {0, 1, 2, 3}));
  CommEstimate e = EstimateComm(*topo_, ranks, *r, m);
  // TP: 4 * 80 / 1 * 8 = 2,560 all-reduces of 1 * 4096 * 8192 * 2 = 67,108,864 bytes,
  //   each 2 * 3/4 * 67108864 / 900e9 + 6 * 0.6e-6 = 111.85e-6 + 3.6e-6 s.
  double tp_one = 1.5 * 67108864.0 / 900e9 + 3.6e-6;
  EXPECT_NEAR(e.tp_s, 2560 * tp_one, 1e-9);
  EXPECT_EQ(e.pp_s, 0);
  // DP: rings of 2 (one GPU on n1, one on n2, through the spine at 25 GB/s) over
  //   70e9 * 2 / 4 = 35e9 bytes: 2 * 1/2 * 35e9 / 25e9 + 2 * 2.7e-6 = 1.4 + 5.4e-6 s.
  EXPECT_NEAR(e.dp_s, 1.4 + 5.4e-6, 1e-9);
}

// EstimateComm prices only the DP rings whose hops differ from the ring before; the phase
// still costs its slowest ring, each ring priced on its own (RingAllReduceSeconds). On every
// bundled cluster with a NIC per GPU (no shares), for jobs of whole TP groups taken node by
// node in a random order of nodes (rank t of each group on a rack's other tray: other nodes,
// the same domains and leaf groups) and for the same GPUs shuffled.
TEST(CostModelRingsTest, DpPhaseIsItsSlowestRingPricedAlone) {
  int compared = 0;
  for (const std::string& file : testing::ConfigFiles()) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk()) << file;
    const Topology& t = **topo;
    if (!t.nic_per_gpu()) continue;
    std::mt19937 rng(5);
    for (int tp : {2, 4, 8}) {
      for (int pp : {1, 2}) {
        std::vector<NodeId> order(t.num_nodes());
        for (NodeId n = 0; n < t.num_nodes(); ++n) order[n] = n;
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<GpuId> ranks;
        for (NodeId n : order) {
          for (GpuId g : t.nodes()[n].gpus) ranks.push_back(g);
        }
        int dp = std::min<int>(16, static_cast<int>(ranks.size()) / (tp * pp));
        if (dp < 2) continue;
        ranks.resize(static_cast<size_t>(tp) * pp * dp);
        RequestSpec rs;
        rs.gpus = static_cast<int>(ranks.size());
        rs.tp = tp;
        rs.pp = pp;
        auto r = ResolveRequest(rs, t);
        ASSERT_THAT(r, IsOk()) << file;
        ModelProfile m;
        for (int shuffled = 0; shuffled < 2; ++shuffled) {
          if (shuffled) std::shuffle(ranks.begin(), ranks.end(), rng);
          double slowest = 0;
          double dp_bytes = m.params * m.bytes_per_value / (tp * pp);
          for (int p = 0; p < pp; ++p) {
            for (int i = 0; i < tp; ++i) {
              std::vector<GpuId> ring;
              for (int d = 0; d < dp; ++d) ring.push_back(ranks[i + tp * (d + dp * p)]);
              slowest = std::max(slowest, RingAllReduceSeconds(t, ring, dp_bytes));
            }
          }
          EXPECT_DOUBLE_EQ(EstimateComm(t, ranks, *r, m).dp_s, slowest)
              << file << " tp " << tp << " pp " << pp << " shuffled " << shuffled;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 20);
}

// The engine hands EstimateComm each rank's node and domain, and for jobs whose TP groups
// are whole their distinct domains, so that the TP rings are priced per domain: the same
// estimate as from the ranks alone. On every bundled cluster (some of several GPU models,
// some with NICs shared), for jobs of whole TP groups taken node by node in a random order of
// nodes, and for the same GPUs shuffled (groups split).
TEST(CostModelRingsTest, CountedPlacesPriceAsTheRanksAlone) {
  int whole = 0, split = 0;
  for (const std::string& file : testing::ConfigFiles()) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk()) << file;
    const Topology& t = **topo;
    std::mt19937 rng(11);
    for (int tp : {1, 2, 4, 8}) {
      std::vector<NodeId> order(t.num_nodes());
      for (NodeId n = 0; n < t.num_nodes(); ++n) order[n] = n;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<GpuId> ranks;
      for (NodeId n : order) {
        const NodeGpus& gpus = t.nodes()[n].gpus;
        // Whole groups of the node's GPUs, in its first island when it has several.
        int take = static_cast<int>(gpus.size()) / tp * tp;
        for (int i = 0; i < take; ++i) ranks.push_back(gpus[i]);
      }
      int groups = std::min<int>(32, static_cast<int>(ranks.size()) / tp);
      if (groups < 2) continue;
      ranks.resize(static_cast<size_t>(tp) * groups);
      RequestSpec rs;
      rs.gpus = static_cast<int>(ranks.size());
      rs.tp = tp;
      auto r = ResolveRequest(rs, t);
      ASSERT_THAT(r, IsOk()) << file;
      for (int shuffled = 0; shuffled < 2; ++shuffled) {
        if (shuffled) std::shuffle(ranks.begin(), ranks.end(), rng);
        std::vector<NodeId> node;
        std::vector<DomainId> domain;
        for (GpuId g : ranks) {
          node.push_back(t.gpus()[g].node);
          domain.push_back(t.gpus()[g].domain);
        }
        bool groups_whole = true;
        for (size_t i = 0; i < ranks.size(); ++i) groups_whole &= domain[i] == domain[i / tp * tp];
        std::vector<DomainId> domains = domain;
        std::sort(domains.begin(), domains.end());
        domains.erase(std::unique(domains.begin(), domains.end()), domains.end());
        CommEstimate alone = EstimateComm(t, ranks, *r, ModelProfile{});
        CommEstimate counted =
            EstimateComm(t, ranks, {node, domain, groups_whole, domains}, *r, ModelProfile{});
        std::string what = absl::StrCat(file, " tp ", tp, " shuffled ", shuffled);
        EXPECT_DOUBLE_EQ(counted.tp_s, alone.tp_s) << what;
        EXPECT_DOUBLE_EQ(counted.pp_s, alone.pp_s) << what;
        EXPECT_DOUBLE_EQ(counted.dp_s, alone.dp_s) << what;
        ++(groups_whole && tp > 1 ? whole : split);
      }
    }
  }
  EXPECT_GT(whole, 10);
  EXPECT_GT(split, 10);
}

// Two NVL racks of two 4-GPU trays; each rack's first tray under a 400 Gb/s leaf, its second
// under a 200 Gb/s one. TP=8 x DP=2, a TP group per rack: the DP ring of ranks 0-3 runs over
// the fast leaf, that of ranks 4-7 (the same racks, other trays) over the slow one and
// decides. A skip of rings by their racks alone would price the fast one only.
TEST(CostModelRingsTest, RingsOverTheSameRacksOnOtherLeavesArePriced) {
  auto spec = ParseTopologyYaml(R"(name: racks
tiers: [leaf, spine]
gpu_models: [{name: GB200, nvlink_gbps: 1800}]
nodes: [{names: "t[0-3]", gpus: 4, model: GB200}]
nvlink_domains:
  - {name: r0, nodes: "t[0-1]", gpus: 8}
  - {name: r1, nodes: "t[2-3]", gpus: 8}
switches:
  - {name: fast, tier: leaf, nodes: "t[0,2]"}
  - {name: slow, tier: leaf, nodes: "t[1,3]", link_gbps: 200}
  - {name: spine, tier: spine, switches: "fast,slow"}
)",
                                "racks.yaml");
  ASSERT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  ASSERT_TRUE(t.nic_per_gpu());
  EXPECT_FALSE(t.domains_say_links());  // a rack's trays on two leaves: priced by the nodes
  std::vector<GpuId> ranks;
  for (const char* tray : {"t0", "t1", "t2", "t3"}) {
    for (GpuId g : t.nodes()[t.FindNode(tray)].gpus) ranks.push_back(g);
  }
  RequestSpec rs;
  rs.gpus = 16;
  rs.tp = 8;
  auto r = ResolveRequest(rs, t);
  ASSERT_THAT(r, IsOk());
  ModelProfile m;
  // 70e9 * 2 / 8 = 17.5e9 bytes over rings of 2 at 25 GB/s: 2 * 1/2 * 17.5e9 / 25e9 + 2 * 2.7e-6.
  EXPECT_NEAR(EstimateComm(t, ranks, *r, m).dp_s, 0.7 + 5.4e-6, 1e-9);
}

// Topology::domains_say_links, which lets EstimateComm price a stage's DP rings by their
// domains alone: where it holds, two GPUs' link is their domains' (any GPU of each domain
// gives the same link), on every bundled cluster it holds for; it holds for the GB200 racks
// and the one-domain H100 nodes, not for nodes of two NVLink islands (lab-islands), nor for
// racks whose trays hang on different leaves (the test above).
TEST(CostModelRingsTest, WhereDomainsSayLinksAGpusLinkIsItsDomains) {
  int held = 0, pairs = 0;
  for (const std::string& file : testing::ConfigFiles()) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk()) << file;
    const Topology& t = **topo;
    bool gb200 = file.find("gb200") != std::string::npos;
    bool islands = file.find("lab-islands") != std::string::npos;
    if (gb200 || file.find("h100") != std::string::npos) {
      EXPECT_TRUE(t.domains_say_links()) << file;
    }
    if (islands) {
      EXPECT_FALSE(t.domains_say_links()) << file;
    }
    if (!t.domains_say_links()) continue;
    ++held;
    std::mt19937 rng(3);
    auto other_in = [&](GpuId g) {
      absl::Span<const GpuId> gpus = t.domains()[t.gpus()[g].domain].gpus;
      return gpus[rng() % gpus.size()];
    };
    for (int i = 0; i < 2000; ++i) {
      GpuId a = static_cast<GpuId>(rng() % t.num_gpus());
      GpuId b = static_cast<GpuId>(rng() % t.num_gpus());
      GpuId a2 = other_in(a), b2 = other_in(b);
      if (t.gpus()[a].domain == t.gpus()[b].domain) continue;
      Link l = LinkBetween(t, a, b), l2 = LinkBetween(t, a2, b2);
      EXPECT_EQ(l.bytes_per_s, l2.bytes_per_s)
          << file << " " << a << "-" << b << " " << a2 << "-" << b2;
      EXPECT_EQ(l.alpha_s, l2.alpha_s) << file;
      ++pairs;
    }
  }
  EXPECT_GE(held, 4);
  EXPECT_GT(pairs, 5000);
}

// TP=2 x DP=2 on n0 alone: TP groups n0:0,2 and n0:1,4. The DP ring of rank 0 (n0:0, n0:1)
// stays inside island {0-3}, that of rank 1 (n0:2, n0:4) crosses to island {4-7} over PCIe
// and decides. Both rings run over the same nodes (n0, n0): a skip of rings by their nodes
// alone would price the NVLink one only.
TEST_F(CostModelTest, DpRingsOverTheSameNodesInOtherIslandsArePriced) {
  RequestSpec rs;
  rs.gpus = 4;
  rs.tp = 2;
  auto r = ResolveRequest(rs, *topo_);
  ASSERT_THAT(r, IsOk());
  ModelProfile m;
  // 70e9 * 2 / 2 = 70e9 bytes over a ring of 2 at 128 GB/s: 2 * 1/2 * 70e9 / 128e9 + 2 * 2.7e-6.
  EXPECT_NEAR(EstimateComm(*topo_, On("n0", {0, 2, 1, 4}), *r, m).dp_s, 0.546875 + 5.4e-6, 1e-9);
}

// Two 8-GPU H100 nodes under one 400 Gb/s (50 GB/s) leaf with `nics` NICs each ("" leaves it
// out: one per GPU).
std::shared_ptr<const Topology> TwoNodes(const std::string& nics) {
  std::string yaml = absl::StrCat(R"(name: nics
tiers: [leaf]
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 8, model: H100)",
                                  nics, R"(}]
switches: [{name: leaf0, tier: leaf, nodes: "n[0-1]"}]
)");
  auto spec = ParseTopologyYaml(yaml, "nics.yaml");
  if (!spec.ok()) return nullptr;
  auto topo = Topology::Create(*spec);
  return topo.ok() ? *topo : nullptr;
}

std::vector<GpuId> AllGpus(const Topology& t) {
  std::vector<GpuId> out;
  for (GpuId g = 0; g < t.num_gpus(); ++g) out.push_back(g);
  return out;
}

struct NicCase {
  std::string name;
  std::string nics;  // the YAML's ", nics: N", or "" for the default
  int tp;
  double tp_s;
  double dp_s;
};

class NicShareTest : public ::testing::TestWithParam<NicCase> {};

TEST_P(NicShareTest, HopsLeavingANodeShareItsNics) {
  auto topo = TwoNodes(GetParam().nics);
  ASSERT_NE(topo, nullptr);
  RequestSpec rs;
  rs.gpus = 16;
  rs.tp = GetParam().tp;
  auto r = ResolveRequest(rs, *topo);
  ASSERT_THAT(r, IsOk());
  std::vector<GpuId> ranks = AllGpus(*topo);  // n0:0-7 then n1:0-7
  if (GetParam().tp == 8) {
    // Each TP group split over the nodes, 4 + 4: n0:0-3 n1:0-3, then n1:4-7 n0:4-7, so that
    // each DP pair (rank t of each group) is on both nodes too.
    ranks = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 4, 5, 6, 7};
  }
  CommEstimate e = EstimateComm(*topo, ranks, *r, ModelProfile{});
  EXPECT_NEAR(e.tp_s, GetParam().tp_s, 1e-9);
  EXPECT_NEAR(e.dp_s, GetParam().dp_s, 1e-9);
}

constexpr double kAct = 67108864.0;  // one TP all-reduce: 1 * 4096 * 8192 * 2 bytes
// TP=1, DP=16: one ring over both nodes, leaving each once; the gradient, 70e9 * 2 = 140e9
// bytes, at its slowest hop: 2 * 15/16 * 140e9 / B + 30 * 2.7e-6.
constexpr double kDp16Over50 = 2 * 15.0 / 16 * 140e9 / 50e9 + 30 * 2.7e-6;  // 5.25 s
// TP=2, DP=8: two rings of 8 (ranks t, t+2, ...), each leaving each node once: 2 hops per
// node. 140e9 / 2 = 70e9 bytes: 2 * 7/8 * 70e9 / B + 14 * 2.7e-6.
constexpr double kDp8Over50 = 2 * 7.0 / 8 * 70e9 / 50e9 + 14 * 2.7e-6;  // 2.45 s
constexpr double kDp8Over25 = 2 * 7.0 / 8 * 70e9 / 25e9 + 14 * 2.7e-6;  // 4.9 s
// TP=2 inside a node: 4 * 80 * 8 = 2,560 all-reduces, 2 * 1/2 * kAct / 900e9 + 2 * 0.6e-6.
constexpr double kTp2 = 2560 * (kAct / 900e9 + 1.2e-6);
// TP=8 split 4 + 4, DP=2: each of the 2,560 all-reduces is a ring of 4 over NVLink,
// 1.5 * kAct / 900e9 + 6 * 0.6e-6, then the ring of the 2 leaders (one per node; 2 groups, so
// 2 hops leave each node): kAct / B + 2 * 2.7e-6.
constexpr double kTp8Inside = 1.5 * kAct / 900e9 + 3.6e-6;
constexpr double kTp8Over50 = 2560 * (kTp8Inside + kAct / 50e9 + 5.4e-6);
constexpr double kTp8Over25 = 2560 * (kTp8Inside + kAct / 25e9 + 5.4e-6);
// DP=2 of the TP=8 job: 8 rings of 2 (n0 GPU to n1 GPU), 8 hops leaving each node, 140e9 / 8
// = 17.5e9 bytes: 2 * 1/2 * 17.5e9 / B + 2 * 2.7e-6.
constexpr double kDp2Over50 = 17.5e9 / 50e9 + 5.4e-6;      // 0.35 s
constexpr double kDp2Over6p25 = 17.5e9 / 6.25e9 + 5.4e-6;  // 2.8 s, a NIC shared by 8

INSTANTIATE_TEST_SUITE_P(
    Nics, NicShareTest,
    ::testing::Values(
        // One ring leaving each node once: one NIC is enough.
        NicCase{"Tp1Default", "", 1, 0, kDp16Over50},
        NicCase{"Tp1OneNic", ", nics: 1", 1, 0, kDp16Over50},
        // Two rings: one NIC is shared by two hops (50 / 2 = 25 GB/s each); two NICs are not.
        NicCase{"Tp2Default", "", 2, kTp2, kDp8Over50},
        NicCase{"Tp2TwoNics", ", nics: 2", 2, kTp2, kDp8Over50},
        NicCase{"Tp2OneNic", ", nics: 1", 2, kTp2, kDp8Over25},
        // Split TP groups: their leaders' ring shares the NIC too (2 hops per node), and the DP
        // rings of the DP phase, 8 per node, share it eight ways.
        NicCase{"Tp8SplitDefault", "", 8, kTp8Over50, kDp2Over50},
        NicCase{"Tp8SplitEightNics", ", nics: 8", 8, kTp8Over50, kDp2Over50},
        NicCase{"Tp8SplitOneNic", ", nics: 1", 8, kTp8Over25, kDp2Over6p25}),
    [](const auto& info) { return info.param.name; });

TEST(NicShareTest, ADpHeavyJobCostsMoreOnOneNicThanOnEight) {
  auto one = TwoNodes(", nics: 1");
  auto eight = TwoNodes(", nics: 8");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(eight, nullptr);
  RequestSpec rs;
  rs.gpus = 16;
  rs.tp = 8;  // the same placement on both: n0:0-7 (TP group 0), n1:0-7 (group 1)
  auto r = ResolveRequest(rs, *one);
  ASSERT_THAT(r, IsOk());
  CommEstimate e1 = EstimateComm(*one, AllGpus(*one), *r, ModelProfile{});
  CommEstimate e8 = EstimateComm(*eight, AllGpus(*eight), *r, ModelProfile{});
  EXPECT_EQ(e1.tp_s, e8.tp_s);  // TP inside each node's NVLink
  EXPECT_NEAR(e8.dp_s, kDp2Over50, 1e-9);
  EXPECT_NEAR(e1.dp_s, kDp2Over6p25, 1e-9);
  EXPECT_GT(e1.total(), e8.total() + 2);
  // The per-thread scratch is left clear: the 8-NIC cluster priced again gives the same.
  EXPECT_EQ(EstimateComm(*eight, AllGpus(*eight), *r, ModelProfile{}).dp_s, e8.dp_s);
}

TEST_F(CostModelTest, IdealCommIsEveryGpuInOneFastestDomain) {
  RequestSpec rs;
  rs.gpus = 8;
  rs.tp = 4;
  rs.pp = 2;
  auto r = ResolveRequest(rs, *topo_);
  ASSERT_THAT(r, IsOk());
  ModelProfile m;
  CommEstimate e = IdealComm(*topo_, *r, m);
  // TP: 4 * 80 / 2 * 8 = 1,280 all-reduces, each 1.5 * 67108864 / 900e9 + 3.6e-6.
  EXPECT_NEAR(e.tp_s, 1280 * (1.5 * 67108864.0 / 900e9 + 3.6e-6), 1e-9);
  // PP: 1 boundary, 16 sends of 67108864 / 4 bytes: 16 * (16777216 / 900e9 + 0.6e-6).
  EXPECT_NEAR(e.pp_s, 16 * (16777216.0 / 900e9 + 0.6e-6), 1e-12);
  EXPECT_EQ(e.dp_s, 0);  // DP = 1
}

}  // namespace
}  // namespace nvlplace
