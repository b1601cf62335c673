// Test helpers for the generators: the lab cluster of scorer_testing.h (8 nodes x 8 GPUs, one
// NVLink domain per node, leaf0 over node0-3 and leaf1 over node4-7, one spine), some of it
// busy, its host tree, and a search state for a request.
#ifndef NVLPLACE_POLICIES_GENERATOR_TESTING_H_
#define NVLPLACE_POLICIES_GENERATOR_TESTING_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "placement/engine/search.h"
#include "policies/scorer_testing.h"

namespace nvlplace::testing {

// The lab world (scorer_testing.h) with its host tree and a search state for `spec` (one GPU
// per chunk).
struct GeneratorWorld : LabWorld {
  explicit GeneratorWorld(RequestSpec spec, const std::string& busy = "")
      : LabWorld(spec, busy),
        hierarchy(std::make_unique<Hierarchy>(*topo)),
        search(std::make_unique<SearchState>(*hierarchy, *state, request, ChunkRule{})) {}

  // GPUs taken per node name, in the order the ranks list them.
  std::vector<std::pair<std::string, int>> PerNode(const std::vector<GpuId>& ranks) const {
    std::vector<std::pair<std::string, int>> out;
    for (GpuId g : ranks) {
      const std::string& name = topo->nodes()[topo->gpus()[g].node].name;
      if (out.empty() || out.back().first != name) out.push_back({name, 0});
      ++out.back().second;
    }
    return out;
  }

  std::unique_ptr<Hierarchy> hierarchy;
  std::unique_ptr<SearchState> search;
};

}  // namespace nvlplace::testing

#endif  // NVLPLACE_POLICIES_GENERATOR_TESTING_H_
