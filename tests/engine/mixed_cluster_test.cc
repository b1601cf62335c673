// The mixed-cluster check of issue 11: on configs/lab-mixed.yaml (three GPU models, PCIe
// islands of NVLink-bridged pairs, CPU-only nodes), 1,000 random typed and untyped requests
// on random busy states, under every bundled policy, never mix GPU models, never give a
// typed job another model, never use a CPU-only node, and never split a strict TP group.
#include <cctype>
#include <random>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/engine/engine.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;

RequestSpec RandomMixedRequest(std::mt19937& rng, const Topology& topo) {
  static const int kTp[] = {1, 2, 4, 8};
  RequestSpec spec;
  spec.tp = kTp[rng() % 4];
  spec.dp = 1 + static_cast<int>(rng() % 6);
  if (rng() % 4 == 0) {  // nodes mode, as Slurm sends -N --gpus-per-node
    spec.nodes = 1 + static_cast<int>(rng() % 4);
    spec.gpus_per_node = spec.tp * (1 + static_cast<int>(rng() % (8 / spec.tp)));
    spec.dp = 0;
  } else {
    spec.gpus = spec.tp * spec.dp;
  }
  spec.nvl = static_cast<NvlMode>(rng() % 3);
  // Typed half the time, in the case a user may write (the model's own, or lower case).
  if (rng() % 2 == 0) {
    const GpuModelSpec& m = topo.gpu_models()[rng() % topo.gpu_models().size()];
    spec.gpu_model = m.name;
    if (rng() % 2 == 0) {
      for (char& c : spec.gpu_model) c = static_cast<char>(std::tolower(c));
    }
  }
  return spec;
}

TEST(MixedClusterTest, ThousandTypedAndUntypedPlacementsNeverMixModelsOrSplitStrictGroups) {
  auto topo = LoadTopologyFile("configs/lab-mixed.yaml");
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  ASSERT_GE(t.gpu_models().size(), 3u);
  int cpu_only = 0;
  for (const Node& n : t.nodes()) cpu_only += n.gpus.empty() ? 1 : 0;
  ASSERT_GE(cpu_only, 1);

  const char* policies[] = {"topo", "pack", "firstfit", "random"};
  std::mt19937 rng(20261125);
  int placed = 0, typed_placed = 0, strict_checked = 0, requests = 0;
  while (requests < 1000) {
    const char* name = policies[requests % 4];
    auto policy = LoadPolicy(std::string("configs/policies/") + name + ".yaml");
    ASSERT_THAT(policy, IsOk());
    Engine engine(*topo, *policy);
    ClusterState state(*topo);
    std::vector<GpuId> busy;
    std::bernoulli_distribution take(std::uniform_real_distribution<double>(0, 0.8)(rng));
    for (GpuId g = 0; g < t.num_gpus(); ++g) {
      if (take(rng)) busy.push_back(g);
    }
    ASSERT_THAT(state.Allocate(busy), IsOk());
    RequestSpec spec = RandomMixedRequest(rng, t);
    auto request = ResolveRequest(spec, t);
    if (!request.ok()) continue;  // more GPUs than the model has: refused, as it should be
    ++requests;
    PlacementResult res = engine.Place(state, *request);
    std::string where = std::string(name) + " " + DescribeRequest(*request, t);
    if (!res.placed) {
      EXPECT_FALSE(res.reason.empty()) << where;
      continue;
    }
    ++placed;
    ASSERT_EQ(static_cast<int>(res.ranks.size()), request->gpus) << where;
    std::set<int> models;
    for (GpuId g : res.ranks) {
      const Node& node = t.nodes()[t.gpus()[g].node];
      EXPECT_FALSE(state.busy(g)) << where;
      models.insert(node.model);
    }
    EXPECT_EQ(models.size(), 1u) << where << ": GPU models mixed";
    if (request->gpu_model >= 0) {
      ++typed_placed;
      EXPECT_EQ(*models.begin(), request->gpu_model) << where << ": another model";
    }
    if (request->nvl == NvlMode::kStrict) {
      ++strict_checked;
      for (int g = 0; g < request->num_groups(); ++g) {
        for (int k = 1; k < request->tp; ++k) {
          EXPECT_EQ(t.DomainOf(res.ranks[g * request->tp + k]),
                    t.DomainOf(res.ranks[g * request->tp]))
              << where << ": strict TP group " << g << " spans NVLink domains";
        }
      }
    }
  }
  // Enough of each kind, or the check would check little.
  EXPECT_GT(placed, 300);
  EXPECT_GT(typed_placed, 100);
  EXPECT_GT(strict_checked, 100);
  std::printf("mixed cluster: %d requests, %d placed (%d typed), %d strict checked\n", requests,
              placed, typed_placed, strict_checked);
}

}  // namespace
}  // namespace nvlplace
