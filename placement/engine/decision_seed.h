// The start of a seeded scorer's or generator's stream for one decision.
#ifndef NVLPLACE_PLACEMENT_ENGINE_DECISION_SEED_H_
#define NVLPLACE_PLACEMENT_ENGINE_DECISION_SEED_H_

#include <cstdint>

#include "placement/model/mix64.h"

namespace nvlplace {

// A seeded stream's start for one decision: the seed mixed with the decision's key
// (splitmix64 steps). Different decisions start different streams; the same seed and the
// same decision, the same stream, in any thread.
inline uint64_t DecisionSeed(uint64_t seed, uint64_t decision) {
  return Mix64(seed ^ Mix64(decision));
}

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_DECISION_SEED_H_
