// Test helpers for the generators: the lab cluster (tests/test_data.h: 8 nodes x 8 GPUs, one
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
#include "placement/formats/busy_list.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/cluster_state.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace::testing {

// The lab topology with the GPUs of a busy list allocated, and a search state for `spec`
// (one GPU per chunk), held together so that the state can point into them.
struct GeneratorWorld {
  explicit GeneratorWorld(RequestSpec spec, const std::string& busy = "") {
    auto parsed = ParseTopologyYaml(kLabYaml, "lab.yaml");
    EXPECT_THAT(parsed, IsOk());
    auto created = Topology::Create(*parsed);
    EXPECT_THAT(created, IsOk());
    topo = *created;
    state = std::make_unique<ClusterState>(topo);
    if (!busy.empty()) {
      EXPECT_THAT(LoadBusyList(busy, "busy", state.get()), IsOk());
    }
    auto r = ResolveRequest(spec, *topo);
    EXPECT_THAT(r, IsOk());
    request = *r;
    hierarchy = std::make_unique<Hierarchy>(*topo);
    search = std::make_unique<SearchState>(*hierarchy, *state, request, ChunkRule{});
  }

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

  std::shared_ptr<const Topology> topo;
  std::unique_ptr<ClusterState> state;
  Request request;
  std::unique_ptr<Hierarchy> hierarchy;
  std::unique_ptr<SearchState> search;
};

}  // namespace nvlplace::testing

#endif  // NVLPLACE_POLICIES_GENERATOR_TESTING_H_
