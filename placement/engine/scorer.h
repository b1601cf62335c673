// The scorer interface: one small named part of the weighted decision.
#ifndef NVLPLACE_PLACEMENT_ENGINE_SCORER_H_
#define NVLPLACE_PLACEMENT_ENGINE_SCORER_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "placement/engine/cost_model.h"
#include "placement/engine/decision_seed.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"
#include "placement/model/topology.h"

namespace nvlplace {

// Shared per decision, computed once (the PreScore step).
struct ScoringContext {
  const Topology& topo;
  const ClusterState& state;  // before the placement
  const Request& request;
  // Every GPU in one NVLink domain: the lower bound. Computed only for a policy with a
  // scorer that ReadsComm (zero otherwise).
  CommEstimate ideal;
  uint64_t seed = 1;      // the policy's, for seeded scorers
  uint64_t decision = 0;  // what this decision is (GenerateContext::decision): draw afresh
};

// Facts about one candidate, computed once and shared by every scorer.
struct CandidateFacts {
  std::vector<GpuId> ranks;  // ranks[r]: the GPU of rank r
  // A job spans few nodes and domains in most decisions: kept inline up to 8 (each candidate
  // of a decision has its facts).
  absl::InlinedVector<NodeId, 8> nodes;         // distinct, ascending
  absl::InlinedVector<DomainId, 8> domains;     // distinct, ascending
  absl::InlinedVector<int, 8> used_per_domain;  // parallel to `domains`
  int job_tier = Topology::kSameNode;           // highest tier the job's nodes cross
  int dp_tier = Topology::kSameNode;            // highest tier any DP group crosses
  int tp_groups_split = 0;                      // TP groups spanning NVLink domains
  // The cost model's estimate. Priced for every candidate when a scorer ReadsComm; else
  // for the choice and its best rejected alternative only, after the choice (zero before).
  CommEstimate comm;
};

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual absl::string_view Name() const = 0;
  // Whether Score reads ScoringContext::decision (the engine computes it only then).
  virtual bool Seeded() const { return false; }
  // Whether Score reads CandidateFacts::comm or ScoringContext::ideal (the engine prices
  // every candidate's communication only then: it is most of scoring a large candidate).
  virtual bool ReadsComm() const { return false; }
  // A score in [0, 100], higher is better, on an absolute scale where one exists, so that
  // weights mean the same in every decision.
  virtual double Score(const ScoringContext& ctx, const CandidateFacts& facts) const = 0;
  // Optional NormalizeScore step over all candidates of one decision (still 0..100).
  virtual void Normalize(std::vector<double>* scores) const { (void)scores; }
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_SCORER_H_
