// The start of a seeded scorer's or generator's stream for one decision.
#ifndef NVLPLACE_PLACEMENT_ENGINE_DECISION_SEED_H_
#define NVLPLACE_PLACEMENT_ENGINE_DECISION_SEED_H_

#include <cstdint>

namespace nvlplace {

// A seeded stream's start for one decision: the seed mixed with the decision's key
// (splitmix64 steps). Different decisions start different streams; the same seed and the
// same decision, the same stream, in any thread.
inline uint64_t DecisionSeed(uint64_t seed, uint64_t decision) {
  auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  return mix(seed ^ mix(decision));
}

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_DECISION_SEED_H_
