// The host tree and the search state, on the lab cluster and a small island cluster (the
// generators over them are tested in policies/).
#include "placement/engine/search.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/busy_list.h"
#include "placement/formats/topology_yaml.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::Pair;

std::shared_ptr<const Topology> Topo(const char* yaml) {
  auto spec = ParseTopologyYaml(yaml, "test.yaml");
  EXPECT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

Request Req(const Topology& topo, RequestSpec spec) {
  auto r = ResolveRequest(spec, topo);
  EXPECT_THAT(r, IsOk());
  return *r;
}

// GPUs taken per node name, in the order the ranks list them.
std::vector<std::pair<std::string, int>> PerNode(const Topology& topo,
                                                 const std::vector<GpuId>& ranks) {
  std::vector<std::pair<std::string, int>> out;
  for (GpuId g : ranks) {
    const std::string& name = topo.nodes()[topo.gpus()[g].node].name;
    if (out.empty() || out.back().first != name) out.push_back({name, 0});
    ++out.back().second;
  }
  return out;
}

TEST(HierarchyTest, LabHasHostsLeavesAndARoot) {
  auto topo = Topo(testing::kLabYaml);
  Hierarchy h(*topo);
  // Levels: hosts (8 nodes), leaf (2 groups), spine (1), root.
  EXPECT_EQ(h.num_levels(), 4);
  EXPECT_EQ(h.hosts().size(), 8u);
  EXPECT_EQ(h.at_level(1).size(), 2u);
  EXPECT_EQ(h.at_level(2).size(), 1u);
  EXPECT_EQ(h.nodes()[h.root()].children.size(), 1u);
  EXPECT_EQ(h.nodes()[h.at_level(1)[0]].label, "leaf0");
  EXPECT_EQ(h.nodes()[h.at_level(1)[0]].children.size(), 4u);
}

// Two nodes of 8 GPUs, each in two 4-GPU NVLink islands, under one leaf.
constexpr char kTwoIslandNodes[] = R"(name: isl
tiers: [leaf]
gpu_models: [{name: H100, nvlink_gbps: 900}]
nodes:
  - {names: "n[0-1]", gpus: 8, model: H100, islands: [[0, 1, 2, 3], [4, 5, 6, 7]]}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-1]"}
)";

TEST(SearchStateTest, CapacityCountsWholeChunksPerIsland) {
  // n0: islands {0-3}, {4-7}; GPUs 0-1 and 4 busy: islands hold 2 and 3 free GPUs.
  auto topo = Topo(kTwoIslandNodes);
  ClusterState state(topo);
  ASSERT_THAT(LoadBusyList("n0:0-1,4\n", "busy", &state), IsOk());
  Hierarchy h(*topo);
  Request r = Req(*topo, {.gpus = 4, .tp = 2});
  SearchState s(h, state, r, ChunkRule{2, false});
  // n0: 2 / 2 + 3 / 2 = 2 chunks of 2; n1: 4 / 2 + 4 / 2 = 4.
  EXPECT_EQ(s.capacity(h.hosts()[0]), 2);
  EXPECT_EQ(s.capacity(h.hosts()[1]), 4);
  EXPECT_EQ(s.total_capacity(), 6);
  EXPECT_EQ(s.largest_free_domain(), 4);  // n1's islands
  EXPECT_EQ(s.usable_free(), 13);         // 5 + 8
  // Chunks of 4 (TP=4): only n1's islands hold one each.
  SearchState s4(h, state, Req(*topo, {.gpus = 4, .tp = 4}), ChunkRule{4, false});
  EXPECT_EQ(s4.capacity(h.hosts()[0]), 0);
  EXPECT_EQ(s4.capacity(h.hosts()[1]), 2);
}

TEST(SearchStateTest, NodesModeSharesAreWholeGroupsInsideIslands) {
  // n0: GPUs 0-1 and 4 busy (islands keep 2-3 and 5-7); n1: 0-1 busy (2-3 and 4-7).
  auto topo = Topo(kTwoIslandNodes);
  ClusterState state(topo);
  ASSERT_THAT(LoadBusyList("n0:0-1,4\nn1:0-1\n", "busy", &state), IsOk());
  Hierarchy h(*topo);
  Request r = Req(*topo, {.nodes = 2, .gpus_per_node = 4, .tp = 4});
  auto indexes = [&](const std::vector<GpuId>& gpus) {
    std::vector<int> out;
    for (GpuId g : gpus) out.push_back(topo->gpus()[g].index);
    return out;
  };
  // A group of 4 inside an island: only n1 (4-7) has one.
  SearchState whole(h, state, r, ChunkRule{4, true, 4});
  EXPECT_EQ(whole.capacity(h.hosts()[0]), 0);
  EXPECT_EQ(whole.capacity(h.hosts()[1]), 1);
  std::vector<GpuId> got;
  whole.TakeInOrder(h.hosts(), 1, &got);
  EXPECT_THAT(indexes(got), ElementsAre(4, 5, 6, 7));
  // Groups of 2: n0 gives 2-3 and 5-6 (best fit: the smaller island first).
  SearchState pairs(h, state, r, ChunkRule{4, true, 2});
  got.clear();
  pairs.TakeInOrder(h.hosts(), 1, &got);
  EXPECT_THAT(indexes(got), ElementsAre(2, 3, 5, 6));
  // Compact: any 4 GPUs, the roomiest island first (5-7, then 2).
  SearchState compact(h, state, r, ChunkRule{4, true, 1, true});
  got.clear();
  compact.TakeInOrder(h.hosts(), 1, &got);
  EXPECT_THAT(indexes(got), ElementsAre(5, 6, 7, 2));
  // Plain nodes mode: the lowest indexes.
  SearchState plain(h, state, r, ChunkRule{4, true});
  got.clear();
  plain.TakeInOrder(h.hosts(), 1, &got);
  EXPECT_THAT(indexes(got), ElementsAre(2, 3, 5, 6));
}

TEST(SearchStateTest, ChunksThatFitOneIslandStayInIt) {
  // n0: GPU 0 busy, its islands hold 3 (1-3) and 4 (4-7) free GPUs; n1 wholly busy.
  auto topo = Topo(kTwoIslandNodes);
  ClusterState state(topo);
  ASSERT_THAT(LoadBusyList("n0:0\nn1\n", "busy", &state), IsOk());
  Hierarchy h(*topo);
  auto take = [&](const SearchState& s, int k) {
    std::vector<GpuId> got;
    s.TakeInOrder(h.hosts(), k, &got);
    std::vector<int> out;
    for (GpuId g : got) out.push_back(topo->gpus()[g].index);
    return out;
  };
  // Single GPUs: 4 fit only the island 4-7 (chunk by chunk, the fuller island first gave
  // 1-3 and 4: a plain job's all-reduce over PCIe); 3 and 2 fit both islands, the one with
  // less room (1-3) is taken; 5 fit neither: 1-3, then 4-5, as before. The same state is
  // asked each count in turn: its listing of 4 is not the start of its listing of 2.
  Request plain = Req(*topo, {.gpus = 4});
  SearchState singles(h, state, plain, ChunkRule{});
  EXPECT_THAT(take(singles, 4), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(take(singles, 2), ElementsAre(1, 2));
  EXPECT_THAT(take(singles, 3), ElementsAre(1, 2, 3));
  EXPECT_THAT(take(singles, 5), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_THAT(take(singles, 4), ElementsAre(4, 5, 6, 7));
  // Two TP groups of 2: both from 4-7 (group by group gave 1-2, then 4-5).
  Request tp2 = Req(*topo, {.gpus = 4, .tp = 2});
  SearchState pairs(h, state, tp2, ChunkRule{2, false});
  EXPECT_THAT(take(pairs, 2), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(take(pairs, 1), ElementsAre(1, 2));
  // Nodes mode without TP: a share of 4 from the island that holds it (the lowest indexes
  // were 1-4), a share of 3 from the island with the least room that holds it.
  Request one4 = Req(*topo, {.nodes = 1, .gpus_per_node = 4});
  SearchState share4(h, state, one4, ChunkRule{4, true});
  EXPECT_THAT(take(share4, 1), ElementsAre(4, 5, 6, 7));
  Request one3 = Req(*topo, {.nodes = 1, .gpus_per_node = 3});
  SearchState share3(h, state, one3, ChunkRule{3, true});
  EXPECT_THAT(take(share3, 1), ElementsAre(1, 2, 3));
}

// GroupRanks on the lab (one domain per node), GPUs named node:index.
struct GroupCase {
  std::string name;
  std::vector<std::pair<int, int>> gpus;  // (node, index) in the order taken
  int tp;
  std::vector<std::pair<int, int>> want;
};

class GroupRanksTest : public ::testing::TestWithParam<GroupCase> {};

TEST_P(GroupRanksTest, Regroups) {
  auto topo = Topo(testing::kLabYaml);
  auto ids = [&](const std::vector<std::pair<int, int>>& v) {
    std::vector<GpuId> out;
    for (auto [n, i] : v) out.push_back(topo->nodes()[n].gpus[i]);
    return out;
  };
  EXPECT_EQ(GroupRanks(*topo, ids(GetParam().gpus), GetParam().tp), ids(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GroupRanksTest,
    ::testing::Values(
        // Already whole or as few domains as can be: unchanged.
        GroupCase{"whole", {{0, 0}, {0, 1}, {1, 0}, {1, 1}}, 2, {{0, 0}, {0, 1}, {1, 0}, {1, 1}}},
        GroupCase{"seven_one",
                  {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {1, 6}},
                  8,
                  {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {1, 6}}},
        // 3 + 3 + 1 + 1 in that order, TP=4: 3 + 1 twice (2 domains each), not 3 + 1 then
        // 2 + 1 + 1 (3 domains).
        GroupCase{"three_one",
                  {{0, 5}, {0, 6}, {0, 7}, {1, 5}, {1, 6}, {1, 7}, {4, 7}, {5, 7}},
                  4,
                  {{0, 5}, {0, 6}, {0, 7}, {4, 7}, {1, 5}, {1, 6}, {1, 7}, {5, 7}}},
        // A whole group hidden across the order: node0 1 + node1 2 + node0 1, TP=2: node0's
        // two GPUs form one group, node1's the other.
        GroupCase{
            "hidden_whole", {{0, 0}, {1, 0}, {1, 1}, {0, 1}}, 2, {{0, 0}, {0, 1}, {1, 0}, {1, 1}}}),
    [](const auto& info) { return info.param.name; });

class LabSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    topo_ = Topo(testing::kLabYaml);
    state_ = std::make_unique<ClusterState>(topo_);
    h_ = std::make_unique<Hierarchy>(*topo_);
  }
  void Busy(const char* text) { ASSERT_THAT(LoadBusyList(text, "busy", state_.get()), IsOk()); }
  std::shared_ptr<const Topology> topo_;
  std::unique_ptr<ClusterState> state_;
  std::unique_ptr<Hierarchy> h_;
};

TEST_F(LabSearchTest, BestFitTakesTheTightestNodeThatHoldsTheJob) {
  // Free: node0 2, node1 5, node2 1, node3 6 (leaf0); leaf1 empty.
  Busy("node0:0-5\nnode1:0-2\nnode2:0-6\nnode3:0-1\n");
  Request r = Req(*topo_, {.gpus = 5});
  SearchState s(*h_, *state_, r, ChunkRule{});
  std::vector<GpuId> out;
  s.TakeBestFit(h_->at_level(1)[0], 5, &out);                        // under leaf0
  EXPECT_THAT(PerNode(*topo_, out), ElementsAre(Pair("node1", 5)));  // 5 of 5, not 5 of 6
}

TEST_F(LabSearchTest, BestFitFillsTheFullestNodesFirstWhenNoneHoldsTheJob) {
  Busy("node0:0-5\nnode1:0-2\nnode2:0-6\nnode3:0-1\n");
  Request r = Req(*topo_, {.gpus = 8});
  SearchState s(*h_, *state_, r, ChunkRule{});
  std::vector<GpuId> out;
  s.TakeBestFit(h_->at_level(1)[0], 8, &out);
  // node3 (6) first, then the tightest node that holds the other 2: node0 (2).
  EXPECT_THAT(PerNode(*topo_, out), ElementsAre(Pair("node3", 6), Pair("node0", 2)));
}

TEST_F(LabSearchTest, BestFitStartsWhereNoChildHoldsTheJob) {
  // Free: node0 2, node1 5, node2 1, node3 6 under leaf0 (14).
  Busy("node0:0-5\nnode1:0-2\nnode2:0-6\nnode3:0-1\n");
  Request r = Req(*topo_, {.gpus = 8});
  SearchState s(*h_, *state_, r, ChunkRule{});
  const int leaf0 = h_->at_level(1)[0];
  EXPECT_EQ(h_->nodes()[s.BestFitStart(leaf0, 5)].label, "node1");  // 5 of 5
  EXPECT_EQ(s.BestFitStart(leaf0, 8), leaf0);                       // no node holds 8
  // From every part of the fabric and for every size it holds: the start holds the job, none
  // of its children does, and the best fit from there takes the very GPUs (the hierarchical
  // generator copies a best fit whose start it has taken already).
  int compared = 0;
  for (int id = 0; id < static_cast<int>(h_->nodes().size()); ++id) {
    for (int k = 1; k <= s.capacity(id); ++k) {
      int start = s.BestFitStart(id, k);
      EXPECT_GE(s.capacity(start), k);
      for (int child : h_->nodes()[start].children) EXPECT_LT(s.capacity(child), k);
      std::vector<GpuId> from_id, from_start;
      s.TakeBestFit(id, k, &from_id);
      s.TakeBestFit(start, k, &from_start);
      EXPECT_EQ(from_id, from_start) << h_->nodes()[id].label << " k " << k;
      ++compared;
    }
  }
  EXPECT_GT(compared, 50);
}

TEST_F(LabSearchTest, FewestHostsTakesTheRoomiestNodesEvenly) {
  // Free: node0 2, node1 5, node2 1, node3 6. Ten GPUs: node3 + node1 hold 11, so two
  // nodes; evenly: 5 + 5 (node1 gives all 5 it has, node3 the other 5).
  Busy("node0:0-5\nnode1:0-2\nnode2:0-6\nnode3:0-1\n");
  Request r = Req(*topo_, {.gpus = 10});
  SearchState s(*h_, *state_, r, ChunkRule{});
  std::vector<GpuId> out;
  EXPECT_EQ(s.TakeBalanced(h_->at_level(1)[0], 10, &out), 2);
  EXPECT_THAT(PerNode(*topo_, out), ElementsAre(Pair("node1", 5), Pair("node3", 5)));
  // Eight GPUs: still node3 and node1, 4 + 4 (best fit would take 6 + 2).
  out.clear();
  EXPECT_EQ(s.TakeBalanced(h_->at_level(1)[0], 8, &out), 2);
  EXPECT_THAT(PerNode(*topo_, out), ElementsAre(Pair("node1", 4), Pair("node3", 4)));
  // Thirteen: node3 6 + node1 5 + node0 2 (the roomiest three); node0 gives all it has
  // (2 <= 13 / 3), the others share 11: 6 + 5 (node1 has only 5).
  out.clear();
  EXPECT_EQ(s.TakeBalanced(h_->at_level(1)[0], 13, &out), 3);
  EXPECT_THAT(PerNode(*topo_, out),
              ElementsAre(Pair("node0", 2), Pair("node1", 5), Pair("node3", 6)));
}

// Told the best fit's chunks per host, the fewest-hosts take takes nothing when it would take
// just those, and takes as before when not: its GPUs are the same either way.
TEST_F(LabSearchTest, FewestHostsSaysWhenItWouldTakeTheBestFitsChunks) {
  Busy("node0:0-5\nnode1:0-2\nnode2:0-6\nnode3:0-1\n");
  Request r = Req(*topo_, {.gpus = 10});
  SearchState s(*h_, *state_, r, ChunkRule{});
  const int leaf = h_->at_level(1)[0];
  // Best fit of 11 (node3 6, node1 5, no choice left) is the fewest-hosts take too.
  std::vector<GpuId> fit;
  HostChunks taken;
  s.TakeBestFit(leaf, 11, &fit, &taken);
  std::sort(taken.begin(), taken.end());
  std::vector<GpuId> even;
  EXPECT_EQ(s.TakeBalanced(leaf, 11, &even, &taken), 0);
  EXPECT_TRUE(even.empty());
  EXPECT_EQ(s.TakeBalanced(leaf, 11, &even), 2);
  std::sort(even.begin(), even.end());
  std::sort(fit.begin(), fit.end());
  EXPECT_EQ(even, fit);  // the same GPUs
  // Best fit of 8 takes 6 + 2 where the fewest hosts are 4 + 4: taken as without `unless`.
  fit.clear();
  taken.clear();
  s.TakeBestFit(leaf, 8, &fit, &taken);
  std::sort(taken.begin(), taken.end());
  even.clear();
  EXPECT_EQ(s.TakeBalanced(leaf, 8, &even, &taken), 2);
  EXPECT_THAT(PerNode(*topo_, even), ElementsAre(Pair("node1", 4), Pair("node3", 4)));
  EXPECT_NE(PerNode(*topo_, even), PerNode(*topo_, fit));
}

TEST_F(LabSearchTest, TakeInOrderGivesEachHostAllItHasInTheOrderGiven) {
  Busy("node0:0-5\n");  // node0 has 2 free GPUs
  Request r = Req(*topo_, {.gpus = 12});
  SearchState s(*h_, *state_, r, ChunkRule{});
  std::vector<GpuId> out;
  const std::vector<int>& hosts = h_->hosts();
  s.TakeInOrder({hosts[2], hosts[0], hosts[1]}, 12, &out);
  // node2 all 8, node0 its 2, node1 the other 2: 8 + 2 + 2 = 12.
  EXPECT_THAT(PerNode(*topo_, out),
              ElementsAre(Pair("node2", 8), Pair("node0", 2), Pair("node1", 2)));
}

// Leaves that hold every other node: walking the tree does not meet the hosts in index order.
constexpr char kInterleavedYaml[] = R"(name: interleaved
tiers: [leaf, spine]
gpu_models: [{name: H100, nvlink_gbps: 900}]
nodes:
  - {names: "n[0-5]", gpus: 4, model: H100}
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0,2,4]"}
  - {name: leaf1, tier: leaf, nodes: "n[1,3,5]"}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
)";

TEST(HierarchyTest, KnowsWhetherTheTreeMeetsHostsInIndexOrder) {
  EXPECT_TRUE(Hierarchy(*Topo(testing::kLabYaml)).hosts_in_tree_order());
  EXPECT_FALSE(Hierarchy(*Topo(kInterleavedYaml)).hosts_in_tree_order());
}

// The host facts the takes and counts read instead of node and domain records: a one-node,
// one-island host's GPUs are its node's, and a multi-node domain's host keeps its spares,
// on every bundled config (the GB200 ones keep 2 spare trays a rack).
TEST(HierarchyTest, HostFactsAreTheirNodesAndDomains) {
  int single = 0, with_spares = 0;
  for (const std::string& file : testing::ConfigFiles()) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk()) << file;
    Hierarchy h(**topo);
    for (int host : h.hosts()) {
      const auto& nodes = h.nodes()[host].nodes;
      const Node& first = (*topo)->nodes()[nodes[0]];
      if (nodes.size() == 1 && first.domains.size() == 1) {
        EXPECT_EQ(h.single_node(host), nodes[0]) << file;
        EXPECT_TRUE(h.single_node_gpus(host) == first.gpus) << file << ": " << first.name;
        ++single;
      } else {
        EXPECT_EQ(h.single_node(host), -1) << file;
        EXPECT_TRUE(h.single_node_gpus(host).empty()) << file;
      }
      int spares = 0;
      if (nodes.size() > 1) spares = (*topo)->domains()[first.domains[0]].spares;
      EXPECT_EQ(h.host_spares(host), spares) << file << ": " << h.nodes()[host].label;
      with_spares += spares > 0 ? 1 : 0;
    }
  }
  EXPECT_GT(single, 0);
  EXPECT_GT(with_spares, 0);
}

// A host's chunks are listed once per (host, chunk count) and copied after that
// (SearchState::TakeFromHost): on every bundled cluster of up to 2,048 GPUs, a third of its
// GPUs busy, takes of every count from every host, each asked again after all the others,
// give what a state of their own gives on its first take, for chunk rules of every kind; also
// when another state alive beside it takes from the same host in between (they share a table
// per thread of who listed which host).
TEST(SearchStateTest, RepeatedTakesFromAHostGiveWhatAFreshStateGives) {
  const std::vector<ChunkRule> rules = {{1, false},
                                        {4, false},
                                        {8, false},
                                        {4, true, 1, true},
                                        {4, true, 1, false, 2},
                                        {4, false, 1, false, 1, false, /*keep_spares=*/true}};
  int compared = 0;
  for (const std::string& file : testing::ConfigFiles()) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk()) << file;
    if ((*topo)->num_gpus() > 2048) continue;
    Hierarchy h(**topo);
    ClusterState state(*topo);
    std::mt19937 rng(11);
    std::vector<GpuId> busy;
    for (GpuId g = 0; g < (*topo)->num_gpus(); ++g) {
      if (rng() % 3 == 0) busy.push_back(g);
    }
    ASSERT_THAT(state.Allocate(busy), IsOk());
    Request r = Req(**topo, {.gpus = 1});
    for (const ChunkRule& rule : rules) {
      // first[i][k - 1]: what a state of its own gives on its first take of k from host i.
      std::vector<std::vector<std::vector<GpuId>>> first(h.hosts().size());
      for (size_t i = 0; i < h.hosts().size(); ++i) {
        int host = h.hosts()[i];
        for (int k = 1; k <= SearchState(h, state, r, rule).capacity(host); ++k) {
          SearchState fresh(h, state, r, rule);
          fresh.TakeBestFit(host, k, &first[i].emplace_back());
        }
      }
      SearchState shared(h, state, r, rule);
      for (int pass = 0; pass < 3; ++pass) {
        for (size_t i = 0; i < h.hosts().size(); ++i) {
          int host = h.hosts()[i];
          ASSERT_EQ(static_cast<size_t>(shared.capacity(host)), first[i].size());
          for (int k = 1; k <= shared.capacity(host); ++k) {
            const std::vector<GpuId>& want = first[i][static_cast<size_t>(k - 1)];
            std::vector<GpuId> again;
            shared.TakeBestFit(host, k, &again);
            ASSERT_EQ(again, want) << file << " host " << h.nodes()[host].label << " k " << k
                                   << " rule size " << rule.size << " pass " << pass;
            if (pass == 2) {
              SearchState beside(h, state, r, rule);
              std::vector<GpuId> other;
              beside.TakeBestFit(host, k, &other);
              ASSERT_EQ(other, want) << file << " host " << h.nodes()[host].label;
            }
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

// A chunk larger than any node of a multi-node domain spans its nodes, the fullest first and
// the first of equals, each chunk from what the ones before left; a smaller count of chunks
// asked after a larger one gives the first of them.
TEST(SearchStateTest, ChunksSpanARacksTraysFullestFirst) {
  auto topo = Topo(R"(name: rack
tiers: [leaf]
link_gbps: 400
gpu_models:
  - name: GB200
    nvlink_gbps: 1800
nodes:
  - names: t[0-3]
    gpus: 4
    model: GB200
nvlink_domains:
  - name: rack
    nodes: t[0-3]
    gpus: 16
switches:
  - name: leaf
    tier: leaf
    nodes: t[0-3]
)");
  Hierarchy h(*topo);
  ClusterState state(topo);
  // Free: t0 2, t1 4, t2 3, t3 4.
  auto gpu = [&](int node, int i) { return topo->nodes()[node].gpus[i]; };
  ASSERT_THAT(state.Allocate({gpu(0, 0), gpu(0, 1), gpu(2, 0)}), IsOk());
  Request r = Req(*topo, {.gpus = 12});
  SearchState s(h, state, r, ChunkRule{6, false});
  ASSERT_EQ(s.capacity(h.hosts()[0]), 2);
  std::vector<GpuId> two, one;
  s.TakeBestFit(h.hosts()[0], 2, &two);
  // t1 gives 4, t3 2 (then 2 left, as t0); t2 gives 3, t0 2 (first of equals), t3 1.
  EXPECT_THAT(PerNode(*topo, two), ElementsAre(Pair("t1", 4), Pair("t3", 2), Pair("t2", 3),
                                               Pair("t0", 2), Pair("t3", 1)));
  EXPECT_EQ(two[4], gpu(3, 0));
  EXPECT_EQ(two[11], gpu(3, 2));
  s.TakeBestFit(h.hosts()[0], 1, &one);
  EXPECT_EQ(one, std::vector<GpuId>(two.begin(), two.begin() + 6));
}

// The hosts are the hierarchy's first HNodes, 0 .. n - 1 in node order, on every bundled
// cluster (the random generator shuffles that order without copying it).
TEST(HierarchyTest, HostsAreTheFirstHNodes) {
  for (const std::string& file : testing::ConfigFiles()) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk()) << file;
    Hierarchy h(**topo);
    std::vector<int> expected(h.hosts().size());
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(h.hosts(), expected) << file;
  }
}

// Everything a SearchState answers, as text, for comparing two of them.
std::string Answers(const SearchState& s, int max_k) {
  const Hierarchy& h = s.hierarchy();
  std::string out = absl::StrCat("free ", s.usable_free(), " largest ", s.largest_free_domain());
  for (size_t id = 0; id < h.nodes().size(); ++id) absl::StrAppend(&out, " ", s.capacity(id));
  for (int level = 0; level < h.num_levels(); ++level) {
    absl::StrAppend(&out, "\nlevel ", level, ": best ", s.best_capacity_at_level(level), " at ",
                    s.label_of_best_at_level(level));
    for (int k = 1; k <= max_k; k *= 2) {
      absl::StrAppend(&out, "; k=", k, ":", absl::StrJoin(s.TightestAtLevel(level, k, 5), ","));
    }
  }
  for (int k = 1; k <= std::min(max_k, s.total_capacity()); k *= 3) {
    std::vector<GpuId> ranks;
    s.TakeFirstFit(k, &ranks);
    absl::StrAppend(&out, "\nfirst fit ", k, ": ", absl::StrJoin(ranks, ","));
  }
  return out;
}

// The index a request of a whole GPU model's nodes (or every node) shares with later
// decisions through the cluster state's journal never drifts from one built afresh: after
// every random allocation and release, on every bundled cluster and one whose tree does not
// meet the hosts in index order, for chunk rules of every kind, exclusive or not.
TEST(CapacityIndexTest, KeptUpToDateMatchesBuiltAfresh) {
  std::vector<std::shared_ptr<const Topology>> topos = {
      Topo(testing::kTwoModelYaml), Topo(kInterleavedYaml), Topo(kTwoIslandNodes)};
  for (const std::string& file : testing::ConfigFiles()) {
    auto topo = LoadTopologyFile(file);
    ASSERT_THAT(topo, IsOk()) << file;
    if ((*topo)->num_gpus() <= 2048) topos.push_back(*topo);
  }
  const std::vector<ChunkRule> rules = {{1, false},   {2, false},         {4, false},  {8, false},
                                        {4, true, 2}, {4, true, 1, true}, {2, true, 1}};
  int compared = 0;
  for (const auto& topo : topos) {
    Hierarchy h(*topo);
    std::vector<Request> requests;
    for (int m = -1; m < static_cast<int>(topo->gpu_models().size()); ++m) {
      for (bool exclusive : {false, true}) {
        RequestSpec spec{.gpus = 1, .exclusive = exclusive};
        if (m >= 0) spec.gpu_model = topo->gpu_models()[m].name;
        requests.push_back(Req(*topo, spec));
      }
    }
    // One state per request and rule, so that its one index is kept (not evicted by others).
    for (const Request& kept : requests) {
      Request listed = kept;
      listed.allowed_set = Request::kListed;  // built afresh
      for (const ChunkRule& rule : rules) {
        ClusterState state(topo);
        std::mt19937 rng(7);
        for (int step = 0; step < 40; ++step) {
          // A random node gains or loses a random number of GPUs; half the time one of the
          // first three, so that a node often changes again right after an index read it.
          int among = rng() % 2 ? std::min(3, topo->num_nodes()) : topo->num_nodes();
          NodeId n = static_cast<NodeId>(rng() % among);
          std::vector<GpuId> to_take, to_free;
          for (GpuId g : topo->nodes()[n].gpus) (state.busy(g) ? to_free : to_take).push_back(g);
          bool release = rng() % 3 == 0;
          std::vector<GpuId>& pick = release ? to_free : to_take;
          std::shuffle(pick.begin(), pick.end(), rng);
          pick.resize(pick.empty() ? 0 : rng() % (pick.size() + 1));
          ASSERT_THAT(release ? state.Release(pick) : state.Allocate(pick), IsOk());
          SearchState cached(h, state, kept, rule);
          SearchState fresh(h, state, listed, rule);
          ASSERT_EQ(Answers(cached, 16), Answers(fresh, 16))
              << topo->name() << " step " << step << " rule size " << rule.size;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

}  // namespace
}  // namespace nvlplace
