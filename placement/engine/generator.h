// The generator interface: one small named way of proposing candidate placements.
#ifndef NVLPLACE_PLACEMENT_ENGINE_GENERATOR_H_
#define NVLPLACE_PLACEMENT_ENGINE_GENERATOR_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "placement/engine/decision_seed.h"
#include "placement/engine/search.h"

namespace nvlplace {

// The defaults of Policy::candidates and Policy::candidate_gpus (policy.h says why), which
// the engine hands to generators in GenerateContext.
inline constexpr int kDefaultCandidates = 16;
inline constexpr int kDefaultCandidateGpus = 2048;

// The per-decision inputs of every generator, set by the engine from the policy.
struct GenerateContext {
  // At most this many candidates from each level a generator walks ...
  int candidates = kDefaultCandidates;
  // ... and for a job of g GPUs at most max(2, candidate_gpus / g) (Policy::candidate_gpus).
  int candidate_gpus = kDefaultCandidateGpus;
  uint64_t seed = 1;  // for seeded generators: the same seed, the same candidates
  // For seeded generators: what this decision is (DecisionKey), to draw afresh per
  // decision from the seed instead of repeating one draw.
  uint64_t decision = 0;
};

class Generator {
 public:
  virtual ~Generator() = default;
  virtual absl::string_view Name() const = 0;
  // Whether Generate reads GenerateContext::decision (the engine computes it only then).
  virtual bool Seeded() const { return false; }
  // Candidates of `k` chunks (the chunk rule of `s`) from the usable free GPUs of `s`, each
  // with an origin that names the generator and where it took from. None when `s` cannot
  // hold k chunks. A pure function of its arguments: generators hold no state.
  virtual std::vector<Candidate> Generate(const SearchState& s, int k,
                                          const GenerateContext& ctx) const = 0;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_GENERATOR_H_
