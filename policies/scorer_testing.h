// Test helpers for the scorers: a scoring context over the lab cluster (tests/test_data.h:
// 8 nodes x 8 GPUs, one NVLink domain per node, two leaf switches under one spine).
#ifndef NVLPLACE_POLICIES_SCORER_TESTING_H_
#define NVLPLACE_POLICIES_SCORER_TESTING_H_

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "placement/engine/scorer.h"
#include "placement/formats/busy_list.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/cluster_state.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace::testing {

// The lab topology, its state (busy GPUs from a busy list) and a request, held together so
// that a context or a search state can point into them (scorer and generator tests).
struct LabWorld {
  explicit LabWorld(RequestSpec spec, const std::string& busy = "") {
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
  }

  std::shared_ptr<const Topology> topo;
  std::unique_ptr<ClusterState> state;
  Request request;
};

struct ScorerWorld : LabWorld {
  using LabWorld::LabWorld;
  ScoringContext Context(CommEstimate ideal = {}, uint64_t seed = 1) const {
    return ScoringContext{*topo, *state, request, ideal, seed};
  }
  // Facts with the ranks, nodes and domains of the GPUs `node:index` given.
  CandidateFacts Facts(const std::vector<std::pair<int, int>>& gpus) const {
    CandidateFacts f;
    for (auto [node, index] : gpus) {
      GpuId g = topo->nodes()[node].gpus[index];
      f.ranks.push_back(g);
      f.nodes.push_back(node);
      f.domains.push_back(topo->DomainOf(g));
    }
    for (auto* v : {&f.nodes, &f.domains}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    return f;
  }
};

}  // namespace nvlplace::testing

#endif  // NVLPLACE_POLICIES_SCORER_TESTING_H_
