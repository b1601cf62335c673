// Fuzzes a policy file (ParsePolicyYaml); an accepted policy must place a small job on an
// empty lab-islands, as `nvlplace place --policy FILE` would.
#include <cmath>
#include <memory>
#include <string>

#include "placement/engine/engine.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"
#include "policies/policy_loader.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  auto policy = ParsePolicyYaml(fuzz::AsText(data, size), "fuzz-policy.yaml");
  if (!policy.ok()) return 0;
  FUZZ_CHECK(!(*policy)->scorers.empty(), "no scorer");
  for (const Policy::Weighted& w : (*policy)->scorers) {
    FUZZ_CHECK(w.scorer != nullptr, "null scorer");
    FUZZ_CHECK(std::isfinite(w.weight) && w.weight > 0 && w.weight <= 1e6, "weight %g", w.weight);
  }
  static const std::shared_ptr<const Topology> topo = fuzz::LabIslands();
  static const ClusterState empty(topo);
  RequestSpec spec;
  spec.gpus = 8;
  spec.tp = 4;
  auto request = ResolveRequest(spec, *topo);
  FUZZ_CHECK(request.ok(), "%s", fuzz::Message(request.status()).c_str());
  Engine engine(topo, *policy);
  PlacementResult r = engine.Place(empty, *request);
  FUZZ_CHECK(r.placed && r.ranks.size() == 8, "8 GPUs TP=4 not placed on an empty cluster: %s",
             r.reason.c_str());
  return 0;
}
