// The earliest start of a job that cannot start now: the estimate the select plugin gives
// backfill and the replay reserves with (placement/engine/earliest_start.h).
#include "placement/engine/earliest_start.h"

#include <algorithm>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;

std::shared_ptr<const Topology> Lab() {
  auto spec = ParseTopologyYaml(testing::kLabYaml, "lab.yaml");
  EXPECT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

Engine TopoEngine(std::shared_ptr<const Topology> topo) {
  auto p = LoadPolicy("configs/policies/topo.yaml");
  EXPECT_THAT(p, IsOk());
  return Engine(std::move(topo), *p);
}

// The GPUs idx.. of node n.
std::vector<GpuId> On(const Topology& topo, int n, std::vector<int> idx) {
  std::vector<GpuId> out;
  for (int i : idx) out.push_back(topo.nodes()[n].gpus[i]);
  return out;
}

// Every node of the lab (8 x 8 GPUs) full; the running jobs' GPUs free at their end times.
class EarliestStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    topo_ = Lab();
    state_ = std::make_unique<ClusterState>(topo_);
    std::vector<GpuId> all;
    for (GpuId g = 0; g < topo_->num_gpus(); ++g) all.push_back(g);
    ASSERT_THAT(state_->Allocate(all), IsOk());
  }
  Request Req(RequestSpec spec) {
    auto r = ResolveRequest(spec, *topo_);
    EXPECT_THAT(r, IsOk());
    return *r;
  }
  std::shared_ptr<const Topology> topo_;
  std::unique_ptr<ClusterState> state_;
};

TEST_F(EarliestStartTest, AStrictTpGroupWaitsForTheReleaseThatCompletesADomain) {
  Engine engine = TopoEngine(topo_);
  // 8 GPUs are free at t=10 (4 on node0, 4 on node1) but no node is whole until node1's
  // other half ends at t=30; node0's other half ends at t=50. Counting GPUs says 10.
  std::vector<Release> releases = {{10, On(*topo_, 0, {0, 1, 2, 3})},
                                   {10, On(*topo_, 1, {0, 1, 2, 3})},
                                   {30, On(*topo_, 1, {4, 5, 6, 7})},
                                   {50, On(*topo_, 0, {4, 5, 6, 7})}};
  EarliestStart e = FindEarliestStart(engine, state_.get(), Req({.gpus = 8, .tp = 8}), releases,
                                      /*from=*/0, /*until=*/0);
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.time, 30);
  ASSERT_EQ(e.placement.ranks.size(), 8u);
  for (GpuId g : e.placement.ranks) EXPECT_EQ(topo_->gpus()[g].node, 1);
  // Without TP groups the first 8 free GPUs do.
  EarliestStart plain = FindEarliestStart(engine, state_.get(),
                                          Req({.gpus = 8, .nvl = NvlMode::kOff}), releases, 0, 0);
  ASSERT_TRUE(plain.found);
  EXPECT_EQ(plain.time, 10);
}

TEST_F(EarliestStartTest, TheWindowBoundsTheAnswer) {
  Engine engine = TopoEngine(topo_);
  std::vector<Release> releases = {{10, On(*topo_, 0, {0, 1, 2, 3})},
                                   {30, On(*topo_, 0, {4, 5, 6, 7})}};
  RequestSpec tp8{.gpus = 8, .tp = 8};
  EXPECT_FALSE(FindEarliestStart(engine, state_.get(), Req(tp8), releases, 0, /*until=*/20).found);
  // A release before `from` counts as at `from`.
  EarliestStart e = FindEarliestStart(engine, state_.get(), Req(tp8), releases, /*from=*/40, 0);
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.time, 40);
  // Nothing released: never.
  EXPECT_FALSE(FindEarliestStart(engine, state_.get(), Req(tp8), {}, 0, 0).found);
}

TEST_F(EarliestStartTest, AdvanceToFreesEveryReleaseUpToTheTime) {
  std::vector<Release> releases = {{10, On(*topo_, 2, {0})}, {20, On(*topo_, 3, {1, 2})}};
  auto free_at = [&](double from, double t) {
    ClusterState s(*state_);
    AdvanceTo(&s, releases, from, t);
    return s.num_free();
  };
  EXPECT_EQ(free_at(0, 5), 0);
  EXPECT_EQ(free_at(0, 10), 1);
  EXPECT_EQ(free_at(0, 20), 3);
  EXPECT_EQ(free_at(25, 25), 3);  // both before `from`
}

TEST_F(EarliestStartTest, TheStateIsAsItWasAfterTheSearch) {
  Engine engine = TopoEngine(topo_);
  // Every release but the last, then it: the search goes forward and back over them.
  std::vector<Release> releases;
  for (int n = 0; n < 8; ++n) releases.push_back({10.0 * (n + 1), On(*topo_, n, {n % 8})});
  releases.push_back({100, On(*topo_, 5, {0, 1, 2, 3, 4, 6, 7})});
  std::vector<bool> before;
  for (GpuId g = 0; g < topo_->num_gpus(); ++g) before.push_back(state_->busy(g));
  EarliestStart e =
      FindEarliestStart(engine, state_.get(), Req({.gpus = 8, .tp = 8}), releases, 0, 0);
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.time, 100);  // node5 is whole only then
  for (GpuId g = 0; g < topo_->num_gpus(); ++g) EXPECT_EQ(state_->busy(g), before[g]) << g;
  // Galloping from the first time: the earliest fit is found whichever index it has.
  for (int k = 1; k <= 8; ++k) {
    EarliestStart one = FindEarliestStart(engine, state_.get(),
                                          Req({.gpus = k, .nvl = NvlMode::kOff}), releases, 0, 0);
    ASSERT_TRUE(one.found);
    EXPECT_EQ(one.time, 10.0 * k) << k << " GPUs";
  }
}

TEST_F(EarliestStartTest, ViewsOfTheReleasesAnswerAsTheReleasesDo) {
  Engine engine = TopoEngine(topo_);
  // Out of time order, as a caller's running jobs are: the views are sorted in place.
  std::vector<Release> releases = {{50, On(*topo_, 0, {4, 5, 6, 7})},
                                   {10, On(*topo_, 0, {0, 1, 2, 3})},
                                   {30, On(*topo_, 1, {4, 5, 6, 7})},
                                   {10, On(*topo_, 1, {0, 1, 2, 3})}};
  std::vector<ReleaseView> views;
  for (const Release& r : releases) views.push_back({r.time, r.gpus});
  for (RequestSpec spec : {RequestSpec{.gpus = 8, .tp = 8}, RequestSpec{.gpus = 4, .tp = 4}}) {
    EarliestStart owned = FindEarliestStart(engine, state_.get(), Req(spec), releases, 0, 0);
    std::vector<ReleaseView> copy = views;
    EarliestStart viewed = FindEarliestStartOfViews(engine, state_.get(), Req(spec), &copy, 0, 0);
    ASSERT_TRUE(owned.found);
    ASSERT_TRUE(viewed.found);
    EXPECT_EQ(viewed.time, owned.time);
    EXPECT_EQ(viewed.placement.ranks, owned.placement.ranks);
    EXPECT_TRUE(std::is_sorted(copy.begin(), copy.end(),
                               [](const auto& a, const auto& b) { return a.time < b.time; }));
  }
  EXPECT_EQ(state_->num_free(), 0);  // as it was
}

TEST_F(EarliestStartTest, AWaitingJobTakesWhatIsReleasedAndLeavesTheIdleGpusToBackfill) {
  Engine engine = TopoEngine(topo_);
  // node0 is idle now; node1 ends at t=10, node4 and node5 at t=10 too. At t=10 two whole
  // nodes under one leaf are node0 + node1 or node4 + node5: as local, and the second keeps
  // node0 free for jobs that backfill before then.
  ASSERT_THAT(state_->Release(On(*topo_, 0, {0, 1, 2, 3, 4, 5, 6, 7})), IsOk());
  std::vector<Release> releases = {{10, On(*topo_, 1, {0, 1, 2, 3, 4, 5, 6, 7})},
                                   {10, On(*topo_, 4, {0, 1, 2, 3, 4, 5, 6, 7})},
                                   {10, On(*topo_, 5, {0, 1, 2, 3, 4, 5, 6, 7})}};
  EarliestStart e = FindEarliestStart(engine, state_.get(), Req({.gpus = 16, .tp = 8}), releases,
                                      /*from=*/0, /*until=*/0);
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.time, 10);
  std::set<NodeId> nodes;
  for (GpuId g : e.placement.ranks) nodes.insert(topo_->gpus()[g].node);
  EXPECT_THAT(nodes, ::testing::ElementsAre(4, 5));
  // 32 GPUs need node0 as well: it is taken.
  EarliestStart all =
      FindEarliestStart(engine, state_.get(), Req({.gpus = 32, .tp = 8}), releases, 0, 0);
  ASSERT_TRUE(all.found);
  EXPECT_EQ(all.time, 10);
  nodes.clear();
  for (GpuId g : all.placement.ranks) nodes.insert(topo_->gpus()[g].node);
  EXPECT_TRUE(nodes.count(0)) << "32 GPUs on node0, node1, node4, node5";
  // A job that starts now is not moved: from t=10 on everything released is free now too.
  EarliestStart now =
      FindEarliestStart(engine, state_.get(), Req({.gpus = 16, .tp = 8}), releases, /*from=*/10, 0);
  ASSERT_TRUE(now.found);
  EXPECT_EQ(now.time, 10);
}

}  // namespace
}  // namespace nvlplace
