// Frontier-scale figures of one generated cluster file (contrib/tools/gen_fabric.py): reading
// and parsing the YAML, building the model, and the decision time of the topo policy beside
// firstfit (the baseline measured in the same run) at 50% and 85% occupancy, for TP=8 jobs of
// 64 and 1,024 GPUs. Usage: scale_bench --config=FILE [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "contrib/bench/occupancy.h"
#include "placement/engine/engine.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"

namespace nvlplace {
namespace {

std::string g_config;
std::string g_text;
std::shared_ptr<const Topology> g_topo;

void Die(const absl::Status& s) {
  std::fprintf(stderr, "scale_bench: %s\n", std::string(s.message()).c_str());
  std::exit(2);
}

// Occupancy as jobs leave it (occupancy.h).
void Occupy(double occupancy, ClusterState* state) {
  if (absl::Status s = state->Allocate(bench::OccupiedGpus(state->topology(), occupancy));
      !s.ok()) {
    Die(s);
  }
}

void BM_Parse(benchmark::State& st) {
  for ([[maybe_unused]] auto _ : st) {
    auto spec = ParseTopologyYaml(g_text, g_config);
    if (!spec.ok()) Die(spec.status());
    benchmark::DoNotOptimize(spec);
  }
}

void BM_Build(benchmark::State& st) {
  auto spec = ParseTopologyYaml(g_text, g_config);
  if (!spec.ok()) Die(spec.status());
  for ([[maybe_unused]] auto _ : st) {
    auto topo = Topology::Create(*spec);
    if (!topo.ok()) Die(topo.status());
    benchmark::DoNotOptimize(topo);
  }
}

void BM_Engine(benchmark::State& st) {
  auto pol = LoadPolicy(NVLPLACE_SOURCE_DIR "/configs/policies/topo.yaml");
  if (!pol.ok()) Die(pol.status());
  for ([[maybe_unused]] auto _ : st) {
    Engine engine(g_topo, *pol);
    benchmark::DoNotOptimize(engine);
  }
}

// Args: occupancy percent, job GPUs (TP=8), and how the engine sees the state: 1 the index
// kept with the state (a replay: between two decisions one job started and ended, so the
// next decision catches up on the nodes it touched; so does the plugin's kept state when
// Slurm offers every node the job may use), 0 built afresh per decision (the plugin when
// Slurm offers fewer: a listed set). Each iteration places, then starts and ends the job.
void BM_Place(benchmark::State& st, const char* policy) {
  auto pol = LoadPolicy(std::string(NVLPLACE_SOURCE_DIR "/configs/policies/") + policy + ".yaml");
  if (!pol.ok()) Die(pol.status());
  ClusterState state(g_topo);
  Occupy(static_cast<double>(st.range(0)) / 100.0, &state);
  RequestSpec spec;
  spec.tp = 8;
  spec.gpus = static_cast<int>(st.range(1));
  auto request = ResolveRequest(spec, *g_topo);
  if (!request.ok()) Die(request.status());
  if (st.range(2) == 0) request->allowed_set = Request::kListed;
  Engine engine(g_topo, *pol);
  int placed = 0, candidates = 0;
  for ([[maybe_unused]] auto _ : st) {
    PlacementResult r = engine.Place(state, *request);
    placed += r.placed;
    candidates += r.candidates;
    if (absl::Status s = state.Allocate(r.ranks); !s.ok()) Die(s);
    if (absl::Status s = state.Release(r.ranks); !s.ok()) Die(s);
  }
  double n = static_cast<double>(st.iterations());
  st.counters["placed"] = placed / n;
  st.counters["candidates"] = candidates / n;
  st.counters["free_gpus"] = state.num_free();
}

double Median(const std::vector<double>& v) {
  std::vector<double> c = v;
  std::nth_element(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(c.size() / 2), c.end());
  return c[c.size() / 2];
}

// place/POLICY: occupancy, job GPUs and the kept index (BM_Place), medians of the runs.
void PlaceArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"busy%", "gpus", "kept"})
      ->ArgsProduct({{50, 85}, {64, 1024}, {1, 0}})
      ->Unit(benchmark::kMicrosecond)
      ->ComputeStatistics("median", Median);
}

// Registered as place_bench's are, when the program starts; they read the cluster main loads.
BENCHMARK(BM_Parse)->Name("load/parse")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Build)->Name("load/build")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Engine)->Name("load/engine")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Place, topo, "topo")->Name("place/topo")->Apply(PlaceArgs);
BENCHMARK_CAPTURE(BM_Place, firstfit, "firstfit")->Name("place/firstfit")->Apply(PlaceArgs);

}  // namespace
}  // namespace nvlplace

int main(int argc, char** argv) {
  using namespace nvlplace;  // NOLINT(google-build-using-namespace): a benchmark's main
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--config=", 9) == 0) {
      g_config = argv[i] + 9;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (g_config.empty()) {
    std::fprintf(stderr, "usage: scale_bench --config=FILE [benchmark flags]\n");
    return 2;
  }
  auto text = ReadFileToString(g_config, limits::kMaxConfigBytes);
  if (!text.ok()) Die(text.status());
  g_text = *text;
  auto topo = LoadTopologyFile(g_config);
  if (!topo.ok()) Die(topo.status());
  g_topo = *topo;

  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
