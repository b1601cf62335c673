// Decision time of the engine on the 1,152-GPU NVL72 and the 16,384-GPU configs, at 50% and
// 85% occupancy, for the topo policy beside firstfit (the baseline measured in the same run).
#include <benchmark/benchmark.h>

#include <cstddef>

#include "contrib/bench/occupancy.h"
#include "placement/engine/engine.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"

namespace nvlplace {
namespace {

struct Setup {
  std::shared_ptr<const Topology> topo;
  std::unique_ptr<ClusterState> state;
  Request request;
  std::unique_ptr<Engine> engine;
};

// Occupancy as jobs leave it (occupancy.h).
void Occupy(double occupancy, ClusterState* state) {
  (void)state->Allocate(bench::OccupiedGpus(state->topology(), occupancy));
}

Setup Make(const char* config, double occupancy, int tp, int dp, const char* policy) {
  Setup s;
  auto topo = LoadTopologyFile(std::string(NVLPLACE_SOURCE_DIR "/configs/") + config);
  auto pol = LoadPolicy(std::string(NVLPLACE_SOURCE_DIR "/configs/policies/") + policy + ".yaml");
  if (!topo.ok() || !pol.ok()) std::abort();
  s.topo = *topo;
  s.state = std::make_unique<ClusterState>(s.topo);
  Occupy(occupancy, s.state.get());
  RequestSpec spec;
  spec.tp = tp;
  spec.dp = dp;
  spec.gpus = tp * dp;
  auto r = ResolveRequest(spec, *s.topo);
  if (!r.ok()) std::abort();
  s.request = *r;
  s.engine = std::make_unique<Engine>(s.topo, *pol);
  return s;
}

// Args: occupancy percent, TP, DP; the policy and config are in the benchmark's name.
template <int kConfig, int kPolicy>
void BM_Place(benchmark::State& st) {
  static const char* kConfigs[] = {"gb200-nvl72-2su.yaml", "h100-multi-su-16k.yaml"};
  static const char* kPolicies[] = {"topo", "firstfit"};
  Setup s = Make(kConfigs[kConfig], static_cast<double>(st.range(0)) / 100.0,
                 static_cast<int>(st.range(1)), static_cast<int>(st.range(2)), kPolicies[kPolicy]);
  int placed = 0;
  for (auto _ : st) {
    PlacementResult r = s.engine->Place(*s.state, s.request);
    placed += r.placed;
    benchmark::DoNotOptimize(r);
  }
  st.counters["placed"] = static_cast<double>(placed) / static_cast<double>(st.iterations());
  st.counters["free_gpus"] = s.state->num_free();
}

#define NVL_ARGS                                                        \
  ->Args({50, 8, 8})                                                    \
      ->Args({85, 8, 8})                                                \
      ->Args({50, 4, 16})                                               \
      ->Args({85, 4, 16})                                               \
      ->Args({50, 8, 32})                                               \
      ->Unit(benchmark::kMicrosecond)                                   \
      ->ComputeStatistics("median", [](const std::vector<double>& v) {  \
        std::vector<double> c = v;                                      \
        std::nth_element(c.begin(), c.begin() + c.size() / 2, c.end()); \
        return c[c.size() / 2];                                         \
      })

BENCHMARK_TEMPLATE(BM_Place, 0, 0)->Name("nvl72_1152/topo") NVL_ARGS;
BENCHMARK_TEMPLATE(BM_Place, 0, 1)->Name("nvl72_1152/firstfit") NVL_ARGS;
BENCHMARK_TEMPLATE(BM_Place, 1, 0)->Name("h100_16k/topo") NVL_ARGS;
BENCHMARK_TEMPLATE(BM_Place, 1, 1)->Name("h100_16k/firstfit") NVL_ARGS;

}  // namespace
}  // namespace nvlplace

BENCHMARK_MAIN();
