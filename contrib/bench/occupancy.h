// How the benchmarks occupy a cluster, as jobs leave it: seeded, 90% of the occupancy as
// wholly busy nodes and 10% as half-busy ones, so that place_bench, scale_bench and
// facade_bench measure the same clusters.
#ifndef NVLPLACE_CONTRIB_BENCH_OCCUPANCY_H_
#define NVLPLACE_CONTRIB_BENCH_OCCUPANCY_H_

#include <cstddef>
#include <random>
#include <vector>

#include "placement/model/topology.h"

namespace nvlplace::bench {

// Per node, how many of its GPUs (its first ones, by index) are busy at `occupancy` (0 to 1).
inline std::vector<int> BusyGpusPerNode(const Topology& topo, double occupancy) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<int> busy(static_cast<size_t>(topo.num_nodes()), 0);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    const int gpus = static_cast<int>(topo.nodes()[n].gpus.size());
    const double x = u(rng);
    busy[static_cast<size_t>(n)] = x < occupancy * 0.9 ? gpus : x < occupancy * 1.1 ? gpus / 2 : 0;
  }
  return busy;
}

// The busy GPUs of BusyGpusPerNode, for ClusterState::Allocate.
inline std::vector<GpuId> OccupiedGpus(const Topology& topo, double occupancy) {
  std::vector<GpuId> out;
  const std::vector<int> busy = BusyGpusPerNode(topo, occupancy);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    const NodeGpus& gpus = topo.nodes()[n].gpus;
    out.insert(out.end(), gpus.begin(), gpus.begin() + busy[static_cast<size_t>(n)]);
  }
  return out;
}

}  // namespace nvlplace::bench

#endif  // NVLPLACE_CONTRIB_BENCH_OCCUPANCY_H_
