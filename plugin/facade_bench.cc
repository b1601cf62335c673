// What one select_p_job_test costs the engine side inside slurmctld: nvl_facade_place on
// the live state as plain structs, for a job that fits and one that does not, on the 128-GPU
// lab-islands cluster (the integration tests' and bench.sh's) and the 1,152-GPU NVL72 one.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "plugin/nvlplace_facade.h"

namespace {

struct World {
  nvl_facade_t* facade = nullptr;
  std::vector<std::string> names;
  std::vector<std::vector<int>> free;
};

// Loads `config` (run from the source root) and marks `busy` of every node's GPUs taken,
// seeded, so that each node keeps free GPUs at random indexes.
World Make(const std::string& config, const char* name_format, int first, int num_nodes, int gpus,
           double busy) {
  World w;
  std::string dir = std::filesystem::temp_directory_path() / "nvlplace-facade-bench";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/nvlplace.yaml";
  std::ofstream(path) << "topology: " << std::filesystem::current_path().string() << "/" << config
                      << "\n";
  char err[1024] = "";
  w.facade = nvl_facade_load(path.c_str(), err, sizeof(err));
  if (w.facade == nullptr) std::fprintf(stderr, "facade_bench: %s\n", err);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < num_nodes; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), name_format, first + i);
    w.names.push_back(name);
    std::vector<int> f;
    for (int g = 0; g < gpus; ++g) {
      if (u(rng) >= busy) f.push_back(g);
    }
    w.free.push_back(f);
  }
  return w;
}

void Run(benchmark::State& state, World& w, nvl_request_t q, int want_status) {
  if (w.facade == nullptr) {
    state.SkipWithError("configuration not loaded");
    return;
  }
  // The live state as the select plugin hands it over (pointers into w, built once).
  std::vector<nvl_node_t> nodes;
  for (size_t i = 0; i < w.names.size(); ++i) {
    nodes.push_back({w.names[i].c_str(), 1, w.free[i].data(), static_cast<int>(w.free[i].size())});
  }
  for (auto _ : state) {
    nvl_result_t r;
    int status = nvl_facade_place(w.facade, nodes.data(), static_cast<int>(nodes.size()), &q, &r);
    if (status != want_status) state.SkipWithError("unexpected status");
    benchmark::DoNotOptimize(r.num_candidates);
    nvl_result_clear(&r);
  }
}

// lab-islands, 50% busy, loaded once for both cases.
World& Lab() {
  static World w = Make("configs/lab-islands.yaml", "node%02d", 0, 16, 8, 0.5);
  return w;
}

// 4 GPUs fit (TP=4); 128 do not (more than is free).
void BM_LabFits(benchmark::State& state) {
  nvl_request_t q{};
  q.gpus = 4;
  q.tp = 4;
  q.nvl = "prefer";
  Run(state, Lab(), q, NVL_PLACED);
}
void BM_LabNoRoom(benchmark::State& state) {
  nvl_request_t q{};
  q.gpus = 128;
  q.nvl = "prefer";
  Run(state, Lab(), q, NVL_NO_ROOM);
}
void BM_Nvl72Fits(benchmark::State& state) {
  static World w = Make("configs/gb200-nvl72-2su.yaml", "gb%03d", 1, 288, 4, 0.5);
  nvl_request_t q{};
  q.gpus = 64;
  q.tp = 4;
  Run(state, w, q, NVL_PLACED);
}
BENCHMARK(BM_LabFits);
BENCHMARK(BM_LabNoRoom);
BENCHMARK(BM_Nvl72Fits);

}  // namespace

BENCHMARK_MAIN();
