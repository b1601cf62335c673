// Fuzzes ResolveRequest + Engine::Place on lab-islands with arbitrary request ints, strings,
// busy GPUs and policy; every hard constraint of a placement is checked from the outside.
// Input: flags (bits 0-1 nvl mode, 2 max-tier preferred, 3 exclusive, 4-5 policy, 6 the
// policy with max_comm_ratio: 2), six
// little-endian int32 (gpus, nodes, gpus_per_node, tp, pp, dp), three length-prefixed
// strings (max_tier, include, exclude), then a bitmap of busy GPUs (16 bytes for 128).
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "placement/engine/engine.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"
#include "policies/policy_loader.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace nvlplace;

// Policy 0-3 as shipped; 4-7 the same with max_comm_ratio: 2.
const Engine& EngineFor(int policy) {
  static const std::vector<std::unique_ptr<Engine>> engines = [] {
    std::vector<std::unique_ptr<Engine>> out;
    for (double ratio : {0.0, 2.0}) {
      for (const char* name : {"topo", "pack", "firstfit", "random"}) {
        auto p =
            LoadPolicy(std::string(NVLPLACE_SOURCE_DIR) + "/configs/policies/" + name + ".yaml");
        FUZZ_CHECK(p.ok(), "%s", fuzz::Message(p.status()).c_str());
        auto with = std::make_shared<Policy>(**p);
        with->max_comm_ratio = ratio;
        out.push_back(std::make_unique<Engine>(fuzz::LabIslands(), with));
      }
    }
    return out;
  }();
  return *engines[policy];
}

void CheckPlacement(const ClusterState& state, const Request& r, const PlacementResult& res) {
  const Topology& topo = state.topology();
  if (!res.placed) {
    FUZZ_CHECK(!res.reason.empty(), "not placed without a reason");
    return;
  }
  FUZZ_CHECK(static_cast<int>(res.ranks.size()) == r.gpus, "%zu GPUs for %d", res.ranks.size(),
             r.gpus);
  std::set<GpuId> distinct(res.ranks.begin(), res.ranks.end());
  FUZZ_CHECK(distinct.size() == res.ranks.size(), "a GPU is used twice");
  std::vector<NodeId> nodes;
  for (GpuId g : res.ranks) {
    FUZZ_CHECK(g >= 0 && g < topo.num_gpus(), "GPU %d", g);
    FUZZ_CHECK(!state.busy(g), "GPU %d is busy", g);
    NodeId n = topo.gpus()[g].node;
    FUZZ_CHECK(r.allowed_node[n], "node %s is not allowed", topo.nodes()[n].name.c_str());
    FUZZ_CHECK(!r.exclusive || state.node_all_free(n), "node %s is not wholly free",
               topo.nodes()[n].name.c_str());
    nodes.push_back(n);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  FUZZ_CHECK(r.nodes == 0 || static_cast<int>(nodes.size()) == r.nodes, "%zu nodes for %d",
             nodes.size(), r.nodes);
  if (r.max_tier >= 0 && r.max_tier_required) {
    FUZZ_CHECK(topo.CommonTier(nodes) <= r.max_tier, "job above max-tier");
  }
  if (r.nvl == NvlMode::kStrict) {
    for (int g = 0; g < r.num_groups(); ++g) {
      for (int t = 1; t < r.tp; ++t) {
        FUZZ_CHECK(topo.DomainOf(res.ranks[g * r.tp + t]) == topo.DomainOf(res.ranks[g * r.tp]),
                   "strict TP group %d spans NVLink domains", g);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const Topology> topo = fuzz::LabIslands();
  fuzz::ByteReader in(data, size);
  const uint8_t flags = in.U8();
  RequestSpec spec;
  spec.nvl = (flags & 3) == 1   ? NvlMode::kPrefer
             : (flags & 3) == 2 ? NvlMode::kOff
                                : NvlMode::kStrict;
  spec.max_tier_required = !(flags & 4);
  spec.exclusive = flags & 8;
  spec.gpus = in.I32();
  spec.nodes = in.I32();
  spec.gpus_per_node = in.I32();
  spec.tp = in.I32();
  spec.pp = in.I32();
  spec.dp = in.I32();
  spec.max_tier = in.Str();
  spec.include = in.Str();
  spec.exclude = in.Str();
  ClusterState state(topo);
  std::vector<GpuId> busy;
  for (GpuId g = 0; g < topo->num_gpus(); g += 8) {
    uint8_t bits = in.U8();
    for (int i = 0; i < 8 && g + i < topo->num_gpus(); ++i) {
      if (bits & (1 << i)) busy.push_back(g + i);
    }
  }
  FUZZ_CHECK(state.Allocate(busy).ok(), "Allocate");

  auto request = ResolveRequest(spec, *topo);
  if (!request.ok()) return 0;
  FUZZ_CHECK(request->gpus > 0, "%d GPUs", request->gpus);
  FUZZ_CHECK(request->tp >= 1 && request->pp >= 1 && request->dp >= 1, "sizes %d %d %d",
             request->tp, request->pp, request->dp);
  FUZZ_CHECK(static_cast<int64_t>(request->tp) * request->pp * request->dp == request->gpus,
             "TP %d x PP %d x DP %d != %d GPUs", request->tp, request->pp, request->dp,
             request->gpus);
  FUZZ_CHECK(static_cast<int>(request->allowed_node.size()) == topo->num_nodes(), "allowed");
  (void)DescribeRequest(*request, *topo);
  PlacementResult res = EngineFor((flags >> 4) & 7).Place(state, *request);
  FUZZ_CHECK(!res.comm_ratio_is_why || (!res.placed && (flags & 64) &&
                                        res.reason.find("max_comm_ratio") != std::string::npos),
             "comm_ratio_is_why on a %s result: %s", res.placed ? "placed" : "unplaced",
             res.reason.c_str());
  CheckPlacement(state, *request, res);
  // The same question asking for the placement only (a replay's tries, the start-time
  // search): the same answer and flags; text only on a placed result.
  PlacementResult terse =
      EngineFor((flags >> 4) & 7).Place(state, *request, Engine::Detail::kPlacement);
  FUZZ_CHECK(terse.placed == res.placed && terse.ranks == res.ranks &&
                 terse.spares_are_why == res.spares_are_why &&
                 terse.comm_ratio_is_why == res.comm_ratio_is_why &&
                 terse.internal_error == res.internal_error,
             "kPlacement answered otherwise than kFull (placed %d against %d)", terse.placed,
             res.placed);
  FUZZ_CHECK(terse.placed ? terse.request == res.request && terse.origin == res.origin
                          : terse.internal_error || (terse.reason.empty() && terse.request.empty()),
             "kPlacement text: reason '%s', request '%s'", terse.reason.c_str(),
             terse.request.c_str());
  // Asking for the choice only (a replay's starts): the same choice and facts, no text.
  PlacementResult chosen =
      EngineFor((flags >> 4) & 7).Place(state, *request, Engine::Detail::kChoice);
  FUZZ_CHECK(
      chosen.placed == res.placed && chosen.ranks == res.ranks && chosen.total == res.total &&
          chosen.comm.total() == res.comm.total() && chosen.job_tier == res.job_tier &&
          chosen.tp_groups_split == res.tp_groups_split && chosen.relaxations == res.relaxations &&
          chosen.spares_are_why == res.spares_are_why &&
          chosen.comm_ratio_is_why == res.comm_ratio_is_why &&
          chosen.internal_error == res.internal_error,
      "kChoice answered otherwise than kFull (placed %d against %d)", chosen.placed, res.placed);
  FUZZ_CHECK(chosen.internal_error ||
                 (chosen.request.empty() && chosen.origin.empty() && chosen.scores.empty() &&
                  chosen.locality_traded.empty() && !chosen.best_rejected.has_value() &&
                  (chosen.placed || chosen.reason.empty())),
             "kChoice text: reason '%s', origin '%s'", chosen.reason.c_str(),
             chosen.origin.c_str());
  return 0;
}
