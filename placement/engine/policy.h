// A policy: the candidate generators and the weighted scorers of one decision, by value.
#ifndef NVLPLACE_PLACEMENT_ENGINE_POLICY_H_
#define NVLPLACE_PLACEMENT_ENGINE_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "placement/engine/generator.h"
#include "placement/engine/scorer.h"

namespace nvlplace {

// Copyable: scorers and generators are stateless and shared by the copies; what a decision
// varies on (weights, seed, candidate limit) is held by value. Built and validated by
// policies/ (ParsePolicyYaml, WithWeights).
struct Policy {
  struct Weighted {
    std::shared_ptr<const Scorer> scorer;
    double weight;
  };
  std::string name;
  std::string description;
  std::vector<std::shared_ptr<const Generator>> generators;  // run in this order
  std::vector<Weighted> scorers;                             // in the order of the registry
  uint64_t seed = 1;  // of seeded scorers and generators (ScoringContext, GenerateContext)
  int candidates = kDefaultCandidates;  // hierarchical candidates per level per decision
  // For large jobs, fewer: a job of g GPUs gets max(2, candidate_gpus / g) per level (when
  // fewer than `candidates`), so that a decision scores a bounded number of GPUs. 2,048
  // since 2026-11-29 (4,096 before): in 19 of 20 replays (3,000 jobs of up to 1,024 GPUs,
  // GB200 and H100 fabrics of 16k and 131k GPUs) every placement stayed the same, and a
  // 1,024-GPU decision prices about half as many candidates (contrib/bench/RESULTS.md,
  // "Frontier scale").
  int candidate_gpus = kDefaultCandidateGpus;
  // Whether one placement may span GPU models. Off: a request without a model is placed on
  // one model at a time and the best kept; on: when no single model can hold the job, it
  // may take GPUs of several, and the relaxation names them.
  bool mix_models = false;
  // Whether jobs may take the trays a multi-node domain keeps as spares (NvlDomain::spares).
  // Off: only a job that asks (a replacement, RequestSpec::may_use_spares) takes them.
  bool use_spares = false;
  // Above 0: a placement whose estimated communication per step is more than this many
  // times the same job's best placement on the idle cluster is not taken; the job waits for
  // a more local one (PlacementResult::comm_ratio_is_why), as topology/block makes a job
  // without --segment wait for one block. 0: off.
  double max_comm_ratio = 0;

  // This policy with another seed: the same decisions as a policy loaded with that seed.
  Policy WithSeed(uint64_t new_seed) const {
    Policy copy = *this;
    copy.seed = new_seed;
    return copy;
  }
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_POLICY_H_
