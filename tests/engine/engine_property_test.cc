// Randomized (seeded) property tests of the engine over every config, and an exact solver
// over node subsets as an oracle for the communication cost on small clusters.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/engine/engine.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;

// Marks a random share of the cluster busy: whole nodes and scattered GPUs.
void RandomBusy(std::mt19937& rng, double occupancy, ClusterState* state) {
  const Topology& topo = state->topology();
  std::vector<GpuId> take;
  std::bernoulli_distribution whole(0.5);
  std::uniform_real_distribution<double> u(0, 1);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (u(rng) >= occupancy) continue;
    if (whole(rng)) {
      for (GpuId g : topo.nodes()[n].gpus) take.push_back(g);
    } else {
      for (GpuId g : topo.nodes()[n].gpus) {
        if (whole(rng)) take.push_back(g);
      }
    }
  }
  ASSERT_THAT(state->Allocate(take), IsOk());
}

// Nodes mode (-N with --gpus-per-node, what Slurm sends for `-N2 --gpus-per-node=4`): 1 to
// 8 nodes of 1, 2, 4 or 8 GPUs each, a TP size that divides the job (it may be larger than
// a node's share: then TP groups cross nodes).
RequestSpec RandomNodesRequest(std::mt19937& rng) {
  static const int kSizes[] = {1, 2, 4, 8};
  RequestSpec spec;
  spec.nodes = 1 + static_cast<int>(rng() % 8);
  spec.gpus_per_node = kSizes[rng() % 4];
  do {
    spec.tp = kSizes[rng() % 4];
  } while ((spec.nodes * spec.gpus_per_node) % spec.tp != 0);
  return spec;
}

RequestSpec RandomRequest(std::mt19937& rng, const Topology& topo, int free) {
  static const int kTp[] = {1, 2, 4, 8};
  if (rng() % 4 == 0) {
    RequestSpec spec = RandomNodesRequest(rng);
    spec.nvl = static_cast<NvlMode>(rng() % 3);
    spec.exclusive = rng() % 5 == 0;
    return spec;
  }
  RequestSpec spec;
  spec.tp = kTp[rng() % 4];
  spec.pp = 1 + static_cast<int>(rng() % 2);
  int unit = spec.tp * spec.pp;
  int max_dp = std::max(1, std::min(free, 512) / unit);
  spec.dp = 1 + static_cast<int>(rng() % max_dp);
  spec.gpus = unit * spec.dp;
  spec.nvl = static_cast<NvlMode>(rng() % 3);
  if (rng() % 3 == 0) {
    spec.max_tier = topo.tiers()[rng() % topo.tiers().size()];
    spec.max_tier_required = rng() % 2 == 0;
  }
  spec.exclusive = rng() % 5 == 0;
  if (rng() % 6 == 0) spec.exclude = topo.nodes()[rng() % topo.num_nodes()].name;
  return spec;
}

// The highest tier any DP group crosses, from the ranks alone: DP group (t, p) is the ranks
// t + tp * (d + dp * p), d = 0..dp-1 (Megatron's default order, written out).
int DpTierOf(const Topology& topo, const Request& r, const std::vector<GpuId>& ranks) {
  int tier = Topology::kSameNode;
  for (int p = 0; p < r.pp && r.dp > 1; ++p) {
    for (int t = 0; t < r.tp; ++t) {
      std::vector<NodeId> nodes;
      for (int d = 0; d < r.dp; ++d) {
        nodes.push_back(topo.gpus()[ranks[t + r.tp * (d + r.dp * p)]].node);
      }
      tier = std::max(tier, topo.CommonTier(nodes));
    }
  }
  return tier;
}

// Whether the usable free GPUs hold the request's TP groups each inside one NVLink domain:
// in nodes mode, r.nodes nodes whose islands hold their share as whole groups (when TP
// divides the share); else num_groups() groups in the free domains. Single-node domains only
// (a multi-node domain can hold a group across nodes): false otherwise, so nothing is checked.
// All of it on the nodes of one GPU model.
bool WholeGroupsFit(const ClusterState& state, const Request& r) {
  const Topology& topo = state.topology();
  int share = r.nodes > 0 ? r.gpus / r.nodes : 0;
  if (r.nodes > 0 && share % r.tp != 0) return false;
  // Per GPU model: the bundled policies place a job on one model (mix_models off).
  std::vector<int> units(topo.gpu_models().size(), 0);  // nodes that hold their share, or groups
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (!r.allowed_node[n] || (r.exclusive && !state.node_all_free(n))) continue;
    if (topo.nodes()[n].model < 0) continue;  // no GPUs
    int groups = 0;
    for (DomainId d : topo.nodes()[n].domains) {
      if (topo.domains()[d].multi_node) return false;
      int free = 0;
      for (GpuId g : topo.domains()[d].gpus) free += state.busy(g) ? 0 : 1;
      groups += free / r.tp;
    }
    units[topo.nodes()[n].model] += r.nodes > 0 ? (groups >= share / r.tp ? 1 : 0) : groups;
  }
  int need = r.nodes > 0 ? r.nodes : r.num_groups();
  return std::any_of(units.begin(), units.end(), [&](int u) { return u >= need; });
}

// Every hard constraint, checked from the outside.
void CheckPlacement(const ClusterState& state, const Request& r, const PlacementResult& res,
                    const std::string& where) {
  const Topology& topo = state.topology();
  if (!res.placed) {
    EXPECT_FALSE(res.reason.empty()) << where;
    // Room for every TP group inside a domain and no tier limit: nothing may stop it.
    EXPECT_FALSE(r.max_tier < 0 && WholeGroupsFit(state, r)) << where << ": " << res.reason;
    return;
  }
  ASSERT_EQ(static_cast<int>(res.ranks.size()), r.gpus) << where;
  std::set<GpuId> distinct(res.ranks.begin(), res.ranks.end());
  EXPECT_EQ(distinct.size(), res.ranks.size()) << where << ": a GPU is used twice";
  std::vector<NodeId> nodes;
  for (GpuId g : res.ranks) {
    EXPECT_FALSE(state.busy(g)) << where << ": GPU " << g << " is busy";
    NodeId n = topo.gpus()[g].node;
    EXPECT_TRUE(r.allowed_node[n]) << where << ": node " << topo.nodes()[n].name << " excluded";
    if (r.exclusive) {
      EXPECT_TRUE(state.node_all_free(n)) << where << ": node not wholly free";
    }
    nodes.push_back(n);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (r.max_tier >= 0 && r.max_tier_required) {
    EXPECT_LE(topo.CommonTier(nodes), r.max_tier) << where << ": job above max-tier";
  }
  if (r.nvl == NvlMode::kStrict) {
    for (int g = 0; g < r.num_groups(); ++g) {
      for (int t = 1; t < r.tp; ++t) {
        EXPECT_EQ(topo.DomainOf(res.ranks[g * r.tp + t]), topo.DomainOf(res.ranks[g * r.tp]))
            << where << ": strict TP group " << g << " spans NVLink domains";
      }
    }
  }
  if (r.nodes > 0) {
    EXPECT_EQ(static_cast<int>(nodes.size()), r.nodes) << where << ": not the nodes asked for";
    for (NodeId n : nodes) {
      EXPECT_EQ(std::count_if(res.ranks.begin(), res.ranks.end(),
                              [&](GpuId g) { return topo.gpus()[g].node == n; }),
                r.gpus / r.nodes)
          << where << ": node " << topo.nodes()[n].name << " has another share";
    }
  }
  EXPECT_EQ(res.dp_tier, DpTierOf(topo, r, res.ranks)) << where << ": DP tier";
  int split = 0;
  for (int g = 0; g < r.num_groups(); ++g) {
    for (int t = 1; t < r.tp; ++t) {
      if (topo.DomainOf(res.ranks[g * r.tp + t]) != topo.DomainOf(res.ranks[g * r.tp])) {
        ++split;
        break;
      }
    }
  }
  EXPECT_EQ(res.tp_groups_split, split) << where << ": TP groups split";
  if (res.tp_groups_split > 0) {
    EXPECT_FALSE(WholeGroupsFit(state, r)) << where << ": splits TP groups with room for them";
  }
  bool any_relaxed_tier = false;
  for (const std::string& x : res.relaxations) any_relaxed_tier |= x.find("max-tier") == 0;
  if (r.max_tier >= 0 && !r.max_tier_required && topo.CommonTier(nodes) > r.max_tier) {
    EXPECT_TRUE(any_relaxed_tier) << where << ": tier relaxed silently";
  }
}

TEST(EnginePropertyTest, HardConstraintsHoldOnEveryConfig) {
  std::vector<std::string> files = testing::ConfigFiles();
  ASSERT_GE(files.size(), 4u);
  const char* policies[] = {"topo", "pack", "firstfit", "random"};
  std::mt19937 rng(20261122);
  int placed = 0, not_placed = 0;
  for (const std::string& file : files) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk());
    int rounds = (*topo)->num_gpus() > 4096 ? 20 : 60;
    for (const char* name : policies) {
      auto policy = LoadPolicy(std::string("configs/policies/") + name + ".yaml");
      ASSERT_THAT(policy, IsOk());
      Engine engine(*topo, *policy);
      for (int i = 0; i < rounds; ++i) {
        ClusterState state(*topo);
        std::uniform_real_distribution<double> occ(0, 0.95);
        RandomBusy(rng, occ(rng), &state);
        RequestSpec spec = RandomRequest(rng, **topo, std::max(1, state.num_free()));
        auto request = ResolveRequest(spec, **topo);
        if (!request.ok()) continue;  // e.g. more GPUs than the cluster has
        PlacementResult res = engine.Place(state, *request);
        CheckPlacement(state, *request, res,
                       file + " " + name + " " + DescribeRequest(*request, **topo));
        (res.placed ? placed : not_placed)++;
      }
    }
  }
  // Both outcomes must occur, or the test would not test much.
  EXPECT_GT(placed, 100);
  EXPECT_GT(not_placed, 10);
  std::printf("property test: %d placed, %d not placeable\n", placed, not_placed);
}

// Small clusters for the oracle, 64 GPUs each: the lab (tests/test_data.h) and this one with
// 4-GPU islands, leaves of uneven size, an oversubscribed leaf and a slow one.
constexpr char kUneven[] = R"(name: uneven
tiers: [leaf, spine]
gpu_models: [{name: H100, nvlink_gbps: 900}]
nodes:
  - {names: "n[0-7]", gpus: 8, model: H100, islands: [[0, 1, 2, 3], [4, 5, 6, 7]]}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-2]"}
  - {name: leaf1, tier: leaf, nodes: "n[3-5]", oversubscription: 2}
  - {name: leaf2, tier: leaf, nodes: "n[6-7]", link_gbps: 200}
  - {name: spine0, tier: spine, switches: "leaf[0-2]"}
)";

// The exact optimum over node subsets: for each subset, the request's chunks (TP groups in
// strict mode) taken from those nodes only, every way of splitting them over the nodes. In
// nodes mode each node of the subset gives its share, r.gpus / r.nodes GPUs, as chunks;
// exactly r.nodes nodes. nvl=off may split TP groups: both chunk sizes are searched (a split
// share comes from the roomiest islands first). Inside a node, chunks come from its islands
// in order, or all from the first island that holds them, split shares from its first or its
// last islands: other island choices are not searched. Split groups are ranked node by node or as
// GroupRanks arranges them, the better of the two; other rank orders are not searched.
double OracleCostWithChunk(const ClusterState& state, const Request& r, int chunk);

double OracleCost(const ClusterState& state, const Request& r) {
  bool whole = r.nodes == 0 || (r.gpus / r.nodes) % r.tp == 0;
  double best = whole ? OracleCostWithChunk(state, r, r.tp) : -1;
  if (r.nvl == NvlMode::kOff && r.tp > 1) {
    double split = OracleCostWithChunk(state, r, 1);
    if (split >= 0 && (best < 0 || split < best)) best = split;
  }
  return best;
}

double OracleCostWithChunk(const ClusterState& state, const Request& r, int chunk) {
  const Topology& topo = state.topology();
  int nodes = topo.num_nodes();
  // Chunks per unit: a node's share in nodes mode, else one chunk; units needed.
  int per_unit = r.nodes > 0 ? r.gpus / r.nodes / chunk : 1;
  int k = r.nodes > 0 ? r.nodes : r.gpus / chunk;
  // Free GPUs per (node, island), as chunks each island can give.
  std::vector<std::vector<std::vector<GpuId>>> free(nodes);
  for (NodeId n = 0; n < nodes; ++n) {
    for (DomainId d : topo.nodes()[n].domains) {
      std::vector<GpuId> gpus;
      for (GpuId g : topo.domains()[d].gpus) {
        if (!state.busy(g) && topo.gpus()[g].node == n) gpus.push_back(g);
      }
      free[n].push_back(gpus);
    }
    if (r.nodes > 0 && chunk == 1) {
      std::stable_sort(free[n].begin(), free[n].end(),
                       [](const auto& a, const auto& b) { return a.size() > b.size(); });
    }
  }
  double best = -1;
  ModelProfile model;
  // counts[n]: units from node n; enumerate all vectors with sum k (small clusters only).
  std::vector<int> cap(nodes, 0);
  for (NodeId n = 0; n < nodes; ++n) {
    for (const auto& island : free[n]) cap[n] += static_cast<int>(island.size()) / chunk;
    cap[n] /= per_unit;
    if (r.nodes > 0) cap[n] = std::min(cap[n], 1);
  }
  std::vector<int> counts(nodes, 0);
  // The ranks of one choice of counts, each node's chunks from its islands in order or, when
  // `reversed`, from its last islands first; with `together`, from the first island that
  // holds them all where one does.
  auto ranks_of = [&](bool reversed, bool together = false) {
    std::vector<GpuId> ranks;
    for (NodeId m = 0; m < nodes; ++m) {
      int want = counts[m] * per_unit;
      size_t one = free[m].size();
      for (size_t j = 0; together && j < free[m].size() && one == free[m].size(); ++j) {
        if (static_cast<int>(free[m][j].size()) / chunk >= want) one = j;
      }
      for (size_t j = 0; j < free[m].size(); ++j) {
        size_t at = reversed ? free[m].size() - 1 - j : j;
        if (one < free[m].size() && at != one) continue;
        const auto& island = free[m][at];
        for (size_t i = 0; want > 0 && i + chunk <= island.size(); i += chunk, --want) {
          ranks.insert(ranks.end(), island.begin() + i, island.begin() + i + chunk);
        }
      }
    }
    return ranks;
  };
  std::function<void(int, int)> rec = [&](int n, int left) {
    if (n == nodes) {
      if (left != 0) return;
      std::vector<GpuId> first = ranks_of(false);
      std::vector<std::vector<GpuId>> orders = {first};
      if (std::vector<GpuId> together = ranks_of(false, true); together != first) {
        orders.push_back(std::move(together));
      }
      if (chunk < r.tp) {  // split groups: the last islands first too, and regrouped
        std::vector<GpuId> last = ranks_of(true);
        if (last != first) orders.push_back(last);
        for (size_t i = 0, n = orders.size(); i < n; ++i) {
          std::vector<GpuId> grouped = GroupRanks(topo, orders[i], r.tp);
          if (grouped != orders[i]) orders.push_back(std::move(grouped));
        }
      }
      for (const std::vector<GpuId>& ranks : orders) {
        double cost = EstimateComm(topo, ranks, r, model).total();
        if (best < 0 || cost < best) best = cost;
      }
      return;
    }
    for (int c = 0; c <= std::min(cap[n], left); ++c) {
      counts[n] = c;
      rec(n + 1, left - c);
    }
    counts[n] = 0;
  };
  rec(0, k);
  return best;
}

TEST(EngineOracleTest, WithinFivePercentOfTheOptimum) {
  auto policy = LoadPolicy("configs/policies/topo.yaml");
  ASSERT_THAT(policy, IsOk());
  std::mt19937 rng(7);
  std::vector<double> ratios;
  int worst_shown = 0;
  for (const char* yaml : {testing::kLabYaml, kUneven}) {
    auto spec = ParseTopologyYaml(yaml, "oracle.yaml");
    ASSERT_THAT(spec, IsOk());
    auto topo = Topology::Create(*spec);
    ASSERT_THAT(topo, IsOk());
    Engine engine(*topo, *policy);
    while (ratios.size() < (yaml == testing::kLabYaml ? 500u : 1000u)) {
      ClusterState state(*topo);
      std::uniform_real_distribution<double> occ(0.2, 0.8);
      RandomBusy(rng, occ(rng), &state);
      if (state.num_free() < 2) continue;
      RequestSpec rs;
      static const int kTp[] = {1, 2, 4, 8};
      if (rng() % 3 == 0) {
        rs = RandomNodesRequest(rng);  // nodes mode, up to 64 GPUs
      } else {
        rs.tp = kTp[rng() % 4];
        rs.dp = 1 + static_cast<int>(rng() % std::max(1, std::min(state.num_free(), 16) / rs.tp));
        rs.gpus = rs.tp * rs.dp;
      }
      rs.nvl = rng() % 4 == 0 ? NvlMode::kOff : NvlMode::kStrict;
      auto r = ResolveRequest(rs, **topo);
      ASSERT_THAT(r, IsOk());
      PlacementResult res = engine.Place(state, *r);
      double opt = OracleCost(state, *r);
      ASSERT_EQ(res.placed, opt >= 0) << DescribeRequest(*r, **topo) << " " << res.reason;
      if (!res.placed) continue;
      double cost = res.comm.total();
      double ratio = opt > 0 ? cost / opt : (cost == 0 ? 1.0 : 2.0);
      if ((ratio > 1.05 || ratio < 1 - 1e-9) && worst_shown++ < 5) {
        std::printf("off by %.2fx: %s on %s: %s\n", ratio, DescribeRequest(*r, **topo).c_str(),
                    (*topo)->name().c_str(), res.origin.c_str());
      }
      ratios.push_back(ratio);
    }
  }
  std::sort(ratios.begin(), ratios.end());
  auto pct = [&](double p) { return ratios[static_cast<size_t>(p * (ratios.size() - 1))]; };
  size_t within = std::count_if(ratios.begin(), ratios.end(), [](double x) { return x <= 1.05; });
  std::printf(
      "oracle: %zu decisions; cost / optimum: p50 %.4f p90 %.4f p99 %.4f max %.4f; "
      "within 5%%: %.2f%%\n",
      ratios.size(), pct(0.5), pct(0.9), pct(0.99), ratios.back(), 100.0 * within / ratios.size());
  EXPECT_GE(static_cast<double>(within) / ratios.size(), 0.99);
  EXPECT_GE(ratios.front(), 1.0 - 1e-9) << "the engine beat the exact optimum: oracle is wrong";
}

}  // namespace
}  // namespace nvlplace
