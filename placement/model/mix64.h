// A 64-bit mix of a number: splitmix64's step (an add of the golden ratio and its finalizer).
#ifndef NVLPLACE_PLACEMENT_MODEL_MIX64_H_
#define NVLPLACE_PLACEMENT_MODEL_MIX64_H_

#include <cstdint>

namespace nvlplace {

// Spreads `z` over all 64 bits: sums and XORs of mixed ids tell sets apart, and mixing a
// counter gives a stream of well-spread numbers (splitmix64).
inline uint64_t Mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_MIX64_H_
