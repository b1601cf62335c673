// The distinct ids of one candidate (its nodes: hundreds for a 1,024-GPU job on GB200 trays),
// ascending, in linear time: std::sort of them was an eighth of such a decision's scoring.
#ifndef NVLPLACE_PLACEMENT_ENGINE_SORTED_IDS_H_
#define NVLPLACE_PLACEMENT_ENGINE_SORTED_IDS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/numeric/bits.h"

namespace nvlplace {

// A set of ids below a bound as a bitmap, kept per thread and all clear between calls.
class IdBits {
 public:
  // `ids` (each in 0..bound-1) ascending, each once. Many ids for the bound (at least one
  // per 16 words of the bitmap): each sets its bit, then the words between the lowest and
  // the highest are read in order (and cleared). Few: std::sort, which compares less.
  void SortDistinct(std::vector<int>* ids, int bound) {
    const size_t words = (static_cast<size_t>(std::max(bound, 0)) + 63) / 64;
    if (ids->size() * 16 < words || ids->size() < 32) {
      std::sort(ids->begin(), ids->end());
      ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
      return;
    }
    if (bits_.size() < words) bits_.resize(words, 0);
    size_t low = words, high = 0;
    for (int id : *ids) {
      size_t w = static_cast<size_t>(id) / 64;
      bits_[w] |= uint64_t{1} << (static_cast<unsigned>(id) % 64);
      low = std::min(low, w);
      high = std::max(high, w);
    }
    size_t n = 0;
    for (size_t w = low; w <= high && w < words; ++w) {
      for (uint64_t b = bits_[w]; b != 0; b &= b - 1) {
        (*ids)[n++] = static_cast<int>(w * 64 + static_cast<size_t>(absl::countr_zero(b)));
      }
      bits_[w] = 0;
    }
    ids->resize(n);
  }

 private:
  std::vector<uint64_t> bits_;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_SORTED_IDS_H_
