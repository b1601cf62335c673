// What one select_p_job_test costs the engine side inside slurmctld: nvl_decide on the live
// state as nvl_ctld.c hands it over (the job's GPU counts and SPANK environment, every node's
// free GPU indexes, in WILL_RUN the running jobs' end times), then the steps job_test takes
// (the first node set, taken as decided), on the 128-GPU lab-islands cluster (the integration
// tests' and bench.sh's) and the 1,152-GPU NVL72 one.
//
// With --cluster=FILE [--policy=NAME] [--busy=PERCENT] also on that cluster (a generated one:
// contrib/tools/gen_fabric.py h100-rail 8192 is contrib/cluster/bench.sh's 1,024 nodes,
// 131072 frontier scale), under the policy (default topo), its nodes occupied as scale_bench
// occupies them (occupancy.h: a node wholly busy with probability 0.9 x PERCENT, half busy
// with 0.2 x PERCENT; default 50): TP=8 jobs of 64 and 1,024 GPUs, a plain 4-GPU job, and
// backfill's question for 64 GPUs at TP=8 (every busy GPU's job ends within the hour).
//
// The decider keeps its state between calls, as in slurmctld: each iteration decides on the
// same snapshot, so a figure is the cost of a call on a cluster whose state did not change
// since the last one (in slurmctld one job's nodes change between two).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "contrib/bench/occupancy.h"
#include "placement/formats/topology_yaml.h"
#include "plugin/nvlplace_facade.h"

namespace {

struct World {
  nvl_facade_t* facade = nullptr;
  std::vector<std::string> names;
  std::vector<std::vector<int>> free, busy;
  std::vector<std::vector<int64_t>> until;
};

constexpr int64_t kNow = 1'800'000'000;

// How Make marks GPUs busy: each GPU at random, or whole and half nodes as scale_bench does.
enum class Occupancy { kGpus, kNodes };

// Loads `config` (a path from the source root, or absolute) with `more` configuration lines
// and marks `busy` (a fraction) of the cluster taken, seeded: each GPU at random (kGpus), or
// whole and half nodes (kNodes); a busy GPU's job ends within the hour. The nodes are the
// topology's, in its order.
World Make(const std::string& config, double busy, Occupancy occupancy = Occupancy::kGpus,
           const std::string& more = "") {
  World w;
  std::string dir = std::filesystem::temp_directory_path() / "nvlplace-facade-bench";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/nvlplace.yaml";
  std::ofstream(path) << "topology: " << std::filesystem::absolute(config).string() << "\n" << more;
  char err[1024] = "";
  w.facade = nvl_facade_load(path.c_str(), err, sizeof(err));
  if (w.facade == nullptr) std::fprintf(stderr, "facade_bench: %s\n", err);
  auto topo = nvlplace::LoadTopologyFile(config);
  if (!topo.ok()) {
    std::fprintf(stderr, "facade_bench: %s\n", std::string(topo.status().message()).c_str());
    w.facade = nullptr;
    return w;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int64_t> end(60, 3600);
  // kNodes: node n's GPUs 0 .. busy_below[n]-1 busy.
  const std::vector<int> busy_below = occupancy == Occupancy::kNodes
                                          ? nvlplace::bench::BusyGpusPerNode(**topo, busy)
                                          : std::vector<int>();
  for (nvlplace::NodeId n = 0; n < (*topo)->num_nodes(); ++n) {
    const nvlplace::Node& node = (*topo)->nodes()[n];
    w.names.push_back(node.name);
    w.free.emplace_back();
    w.busy.emplace_back();
    w.until.emplace_back();
    const int gpus = static_cast<int>(node.gpus.size());
    for (int g = 0; g < gpus; ++g) {
      if (occupancy == Occupancy::kGpus ? u(rng) >= busy
                                        : g >= busy_below[static_cast<size_t>(n)]) {
        w.free.back().push_back(g);
      } else {
        w.busy.back().push_back(g);
        w.until.back().push_back(kNow + end(rng));
      }
    }
  }
  return w;
}

// One job_test's decision: nvl_decide, then (NVL_ACT_TRY) the first node set taken as decided.
void Run(benchmark::State& state, World& w, uint64_t gpus, std::vector<std::string> options,
         int mode, int want_action) {
  if (w.facade == nullptr) {
    state.SkipWithError("configuration not loaded");
    return;
  }
  // The live state as the select plugin hands it over (pointers into w, built once).
  std::vector<nvl_node_t> nodes;
  for (size_t i = 0; i < w.names.size(); ++i) {
    nvl_node_t n{w.names[i].c_str(), 1, w.free[i].data(), static_cast<int>(w.free[i].size())};
    if (mode == NVL_MODE_WILL_RUN) {
      n.busy_gpus = w.busy[i].data();
      n.busy_until = w.until[i].data();
      n.num_busy = static_cast<int>(w.busy[i].size());
    }
    nodes.push_back(n);
  }
  std::vector<char*> env;
  env.reserve(options.size());
  for (std::string& o : options) env.push_back(o.data());
  nvl_job_t job{};
  job.job_id = 42;
  job.mode = mode;
  job.gpus_per_job = gpus;
  job.gpu_requests = 1;
  job.min_nodes = 1;
  job.max_nodes = 500000;
  job.env = env.data();
  job.env_size = static_cast<uint32_t>(env.size());
  job.now = kNow;
  for ([[maybe_unused]] auto _ : state) {
    nvl_decision_t* d = nvl_decide(w.facade, &job, nodes.data(), static_cast<int>(nodes.size()));
    int action = nvl_decision_action(d);
    if (action != want_action) state.SkipWithError("unexpected action");
    if (action == NVL_ACT_TRY) {
      const nvl_candidate_t* c = nvl_decision_candidate(d, 0);
      nvl_layout_t got{c->num_nodes, c->nodes, c->gpu_offsets, c->gpus};
      benchmark::DoNotOptimize(nvl_decision_took(d, 0, &got));
    }
    nvl_decision_free(d);
  }
}

// lab-islands, 50% busy, loaded once for every case.
World& Lab() {
  static World w = Make("configs/lab-islands.yaml", 0.5);
  return w;
}

// 4 GPUs fit (TP=4, prefer); 128 do not (more than is free): left to cons_tres.
void BM_LabFits(benchmark::State& state) {
  Run(state, Lab(), 4, {"NVLPLACE_TP=4", "NVLPLACE_NVL=prefer"}, NVL_MODE_RUN_NOW, NVL_ACT_TRY);
}
void BM_LabNoRoom(benchmark::State& state) {
  Run(state, Lab(), 128, {"NVLPLACE_NVL=prefer"}, NVL_MODE_RUN_NOW, NVL_ACT_CONS_TRES);
}
// Backfill's question for a strict job that waits: when do running jobs free 16 GPUs in whole
// 4-GPU islands.
void BM_LabWillRun(benchmark::State& state) {
  Run(state, Lab(), 64, {"NVLPLACE_TP=4"}, NVL_MODE_WILL_RUN, NVL_ACT_TRY);
}
void BM_Nvl72Fits(benchmark::State& state) {
  static World w = Make("configs/gb200-nvl72-2su.yaml", 0.5);
  Run(state, w, 64, {"NVLPLACE_TP=4"}, NVL_MODE_RUN_NOW, NVL_ACT_TRY);
}
BENCHMARK(BM_LabFits);
BENCHMARK(BM_LabNoRoom);
BENCHMARK(BM_LabWillRun);
BENCHMARK(BM_Nvl72Fits);

}  // namespace

// --cluster=FILE, --policy=NAME and --busy=PERCENT (see the top; taken out before Google
// Benchmark reads the rest).
int main(int argc, char** argv) {
  std::string cluster, policy = "topo";
  double busy = 50;
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (i > 0 && arg.rfind("--cluster=", 0) == 0) {
      cluster = arg.substr(10);
    } else if (i > 0 && arg.rfind("--policy=", 0) == 0) {
      policy = arg.substr(9);
    } else if (i > 0 && arg.rfind("--busy=", 0) == 0) {
      char* end = nullptr;
      busy = std::strtod(arg.c_str() + 7, &end);
      if (*end != '\0' || !(busy >= 0 && busy <= 100)) {
        std::fprintf(stderr, "facade_bench: --busy takes a percent, 0 to 100, not %s\n",
                     arg.c_str() + 7);
        return 2;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  static World w;
  if (!cluster.empty()) {
    w = Make(cluster, busy / 100, Occupancy::kNodes, "policy: " + policy + "\n");
    if (w.facade == nullptr) return 2;
    for (int gpus : {64, 1024}) {
      benchmark::RegisterBenchmark(("cluster/tp8x" + std::to_string(gpus)).c_str(),
                                   [gpus](benchmark::State& state) {
                                     Run(state, w, static_cast<uint64_t>(gpus), {"NVLPLACE_TP=8"},
                                         NVL_MODE_RUN_NOW, NVL_ACT_TRY);
                                   });
    }
    benchmark::RegisterBenchmark("cluster/plain4", [](benchmark::State& state) {
      Run(state, w, 4, {}, NVL_MODE_RUN_NOW, NVL_ACT_TRY);
    });
    benchmark::RegisterBenchmark("cluster/will-run-tp8x64", [](benchmark::State& state) {
      Run(state, w, 64, {"NVLPLACE_TP=8"}, NVL_MODE_WILL_RUN, NVL_ACT_TRY);
    });
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
