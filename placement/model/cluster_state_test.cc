// The free/busy view of a cluster: counts per node, domain and cluster, and no change on error.
#include "placement/model/cluster_state.h"

#include <random>

#include "absl/algorithm/container.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

// Two nodes of 4 GPUs; a0 has two islands {0,1} {2,3}; one leaf.
std::shared_ptr<const Topology> TwoNodes() {
  TopologySpec spec;
  spec.name = "two";
  spec.tiers = {"leaf"};
  spec.gpu_models = {{"H100", 900.0, 128.0, {}}};
  spec.node_groups.push_back({{"a0"}, 4, "H100", {{0, 1}, {2, 3}}, {}});
  spec.node_groups.push_back({{"a1"}, 4, "H100", {}, {}});
  SwitchSpec leaf;
  leaf.name = "leaf0";
  leaf.tier = "leaf";
  leaf.nodes = {"a0", "a1"};
  spec.switches.push_back(leaf);
  auto topo = Topology::Create(spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

TEST(ClusterStateTest, CountsFreeGpusPerNodeDomainAndCluster) {
  auto topo = TwoNodes();
  ClusterState state(topo);
  EXPECT_EQ(state.num_free(), 8);
  EXPECT_TRUE(state.node_all_free(0));
  // a0:1 and a0:2 (one in each island), a1:0.
  const auto& a0 = topo->nodes()[0].gpus;
  const auto& a1 = topo->nodes()[1].gpus;
  ASSERT_THAT(state.Allocate({a0[1], a0[2], a1[0]}), IsOk());
  EXPECT_EQ(state.num_free(), 5);       // 8 - 3
  EXPECT_EQ(state.free_on_node(0), 2);  // 4 - 2
  EXPECT_EQ(state.free_on_node(1), 3);  // 4 - 1
  EXPECT_FALSE(state.node_all_free(0));
  EXPECT_EQ(state.free_in_domain(topo->DomainOf(a0[0])), 1);  // island {0,1}: 2 - 1
  EXPECT_EQ(state.free_in_domain(topo->DomainOf(a0[3])), 1);  // island {2,3}: 2 - 1
  EXPECT_EQ(state.free_in_domain(topo->DomainOf(a1[0])), 3);  // the whole node: 4 - 1
  EXPECT_TRUE(state.busy(a0[1]));
  EXPECT_FALSE(state.busy(a0[0]));
  EXPECT_EQ(state.free_in_leaf_group(topo->LeafGroup(0)), 5);  // both nodes on leaf0
  ASSERT_THAT(state.Release({a0[1], a1[0]}), IsOk());
  EXPECT_EQ(state.free_in_leaf_group(topo->LeafGroup(0)), 7);
  EXPECT_EQ(state.num_free(), 7);
  EXPECT_EQ(state.free_on_node(1), 4);
  EXPECT_TRUE(state.node_all_free(1));
}

// A failed call changes nothing: every count is as before.
void ExpectUnchanged(const ClusterState& state, const std::vector<bool>& busy, int free) {
  EXPECT_EQ(state.num_free(), free);
  for (GpuId g = 0; g < static_cast<GpuId>(busy.size()); ++g)
    EXPECT_EQ(state.busy(g), busy[g]) << g;
  int on_nodes = state.free_on_node(0) + state.free_on_node(1);
  EXPECT_EQ(on_nodes, free);
}

TEST(ClusterStateTest, AllocateChangesNothingOnError) {
  auto topo = TwoNodes();
  ClusterState state(topo);
  ASSERT_THAT(state.Allocate({3}), IsOk());
  std::vector<bool> busy = {false, false, false, true, false, false, false, false};
  // GPU 3 is busy: the two before it must not stay allocated.
  EXPECT_THAT(state.Allocate({0, 1, 3}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("GPU 3 of a0 is already")));
  ExpectUnchanged(state, busy, 7);
  // Listed twice.
  EXPECT_THAT(state.Allocate({5, 5}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("GPU 1 of a1")));
  ExpectUnchanged(state, busy, 7);
  // An id past the cluster, after valid ones.
  EXPECT_THAT(state.Allocate({0, 1, 8}),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("no GPU 8")));
  ExpectUnchanged(state, busy, 7);
  EXPECT_THAT(state.Allocate({-1}),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("no GPU -1")));
  ExpectUnchanged(state, busy, 7);
}

// The fingerprint is a function of which GPUs are busy: the order they were taken in, a
// copy, a failed call and a release back to the start leave it as the set says.
TEST(ClusterStateTest, BusyFingerprintFollowsTheBusySet) {
  auto topo = TwoNodes();
  ClusterState a(topo), b(topo);
  const uint64_t empty = a.busy_fingerprint();
  ASSERT_THAT(a.Allocate({1, 6}), IsOk());
  EXPECT_NE(a.busy_fingerprint(), empty);
  ASSERT_THAT(b.Allocate({6}), IsOk());
  EXPECT_NE(b.busy_fingerprint(), a.busy_fingerprint());
  ASSERT_THAT(b.Allocate({1}), IsOk());
  EXPECT_EQ(b.busy_fingerprint(), a.busy_fingerprint());
  EXPECT_EQ(ClusterState(a).busy_fingerprint(), a.busy_fingerprint());
  const uint64_t taken = a.busy_fingerprint();
  EXPECT_FALSE(a.Allocate({0, 1}).ok());
  EXPECT_EQ(a.busy_fingerprint(), taken);
  ClusterState c(topo);
  c = a;
  EXPECT_EQ(c.busy_fingerprint(), taken);
  ASSERT_THAT(a.Release({6, 1}), IsOk());
  EXPECT_EQ(a.busy_fingerprint(), empty);
}

TEST(ClusterStateTest, ReleaseChangesNothingOnError) {
  auto topo = TwoNodes();
  ClusterState state(topo);
  ASSERT_THAT(state.Allocate({0, 1}), IsOk());
  std::vector<bool> busy = {true, true, false, false, false, false, false, false};
  EXPECT_THAT(state.Release({0, 1, 2}), StatusIs(absl::StatusCode::kFailedPrecondition,
                                                 HasSubstr("GPU 2 of a0 is not allocated")));
  ExpectUnchanged(state, busy, 6);
  EXPECT_THAT(state.Release({0, 9}),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("no GPU 9")));
  ExpectUnchanged(state, busy, 6);
}

// a0: 4 GPUs nvlplace places on; k0: 4 GPUs it does not (placed: false); c0: no GPUs.
std::shared_ptr<const Topology> WithUnplacedAndCpuNodes() {
  TopologySpec spec;
  spec.name = "mixed";
  spec.tiers = {"leaf"};
  spec.gpu_models = {{"H100", 900.0, 128.0, {}}};
  spec.node_groups.push_back({{"a0"}, 4, "H100", {}, {}});
  NodeGroupSpec kept{{"k0"}, 4, "H100", {}, {}};
  kept.placed = false;
  spec.node_groups.push_back(kept);
  spec.node_groups.push_back({{"c0"}, 0, "", {}, {}});
  SwitchSpec leaf;
  leaf.name = "leaf0";
  leaf.tier = "leaf";
  leaf.nodes = {"a0", "k0", "c0"};
  spec.switches.push_back(leaf);
  auto topo = Topology::Create(spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

TEST(ClusterStateTest, GpusOfUnplacedNodesAreNeverFree) {
  auto topo = WithUnplacedAndCpuNodes();
  ClusterState state(topo);
  const auto& k0 = topo->nodes()[1].gpus;
  EXPECT_EQ(state.num_free(), 4);  // a0's only: 8 GPUs - k0's 4
  EXPECT_EQ(state.free_on_node(1), 0);
  EXPECT_TRUE(state.busy(k0[0]));
  EXPECT_EQ(state.free_in_domain(topo->DomainOf(k0[0])), 0);
  // Releasing or allocating them changes nothing and is no error (a caller's busy list may
  // name them: Slurm allocates them without nvlplace).
  EXPECT_THAT(state.Release({k0[0], k0[1]}), IsOk());
  EXPECT_TRUE(state.busy(k0[0]));
  EXPECT_THAT(state.Allocate({k0[2], topo->nodes()[0].gpus[0]}), IsOk());
  EXPECT_EQ(state.num_free(), 3);  // a0's GPU 0 only
  EXPECT_EQ(state.free_on_node(1), 0);
  // A failed Allocate that passed over them leaves them as they were.
  EXPECT_THAT(state.Allocate({k0[3], topo->nodes()[0].gpus[0]}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already allocated")));
  EXPECT_TRUE(state.busy(k0[3]));
  EXPECT_EQ(state.num_free(), 3);
  // The CPU-only node has nothing free, and nothing to be busy.
  EXPECT_EQ(state.free_on_node(2), 0);
}

// SetNodeFree of every node gives what Allocate of every other GPU gives a fresh state, from
// any state before (held GPUs stay held, whichever way the mask says): the same busy GPUs,
// counts and fingerprint. It journals exactly the nodes that changed, once each, and keeps
// the derived index (which catches up through the journal).
TEST(ClusterStateTest, SetNodeFreeOfEveryNodeIsAllocateOfTheOthersOnAFreshState) {
  struct Derived : ClusterState::Derived {};
  std::mt19937 rng(3);
  for (const auto& topo : {TwoNodes(), WithUnplacedAndCpuNodes()}) {
    ClusterState got(topo);
    got.set_derived(std::make_unique<Derived>());
    for (int round = 0; round < 20; ++round) {
      std::vector<uint8_t> free(static_cast<size_t>(topo->num_gpus()));
      std::vector<GpuId> others;
      for (GpuId g = 0; g < topo->num_gpus(); ++g) {
        free[g] = static_cast<uint8_t>(rng() % 2);
        if (!free[g]) others.push_back(g);
      }
      ClusterState want(topo);
      ASSERT_THAT(want.Allocate(others), IsOk());
      std::vector<NodeId> changed_nodes;
      for (NodeId n = 0; n < topo->num_nodes(); ++n) {
        bool differs = false;
        for (GpuId g : topo->nodes()[n].gpus) differs |= got.busy(g) != want.busy(g);
        if (differs) changed_nodes.push_back(n);
      }
      const uint64_t begin = got.journal_end();
      for (NodeId n = 0; n < topo->num_nodes(); ++n) {
        std::vector<uint8_t> mine;
        for (GpuId g : topo->nodes()[n].gpus) mine.push_back(free[g]);
        EXPECT_EQ(got.SetNodeFree(n, mine), absl::c_linear_search(changed_nodes, n)) << n;
      }
      ASSERT_NE(got.derived(), nullptr);
      ASSERT_LE(got.journal_begin(), begin);  // small: nothing was trimmed
      std::vector<NodeId> journaled;
      for (uint64_t p = begin; p < got.journal_end(); ++p) journaled.push_back(got.journal_at(p));
      EXPECT_EQ(journaled, changed_nodes);
      EXPECT_EQ(got.num_free(), want.num_free());
      EXPECT_EQ(got.busy_fingerprint(), want.busy_fingerprint());
      for (GpuId g = 0; g < topo->num_gpus(); ++g) EXPECT_EQ(got.busy(g), want.busy(g)) << g;
      for (NodeId n = 0; n < topo->num_nodes(); ++n) {
        EXPECT_EQ(got.free_on_node(n), want.free_on_node(n)) << n;
      }
      for (DomainId d = 0; d < topo->num_domains(); ++d) {
        EXPECT_EQ(got.free_in_domain(d), want.free_in_domain(d)) << d;
      }
      for (int l = 0; l < topo->num_leaf_groups(); ++l) {
        EXPECT_EQ(got.free_in_leaf_group(l), want.free_in_leaf_group(l)) << l;
      }
    }
  }
}

}  // namespace
}  // namespace nvlplace
