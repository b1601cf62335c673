// A set of small integers emptied in O(1), for per-call scratch kept per thread (the cost
// model's domains of a TP group, the fragmentation scorer's leaves and nodes).
#ifndef NVLPLACE_PLACEMENT_ENGINE_STAMPS_H_
#define NVLPLACE_PLACEMENT_ENGINE_STAMPS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvlplace {

// A stamp per element; the set is the elements stamped with the current call's number.
class Stamps {
 public:
  // Empties the set and makes room for elements 0..size-1.
  void Begin(size_t size) {
    if (stamp_.size() < size) stamp_.resize(size, 0);
    if (++now_ == 0) {  // the counter wrapped: forget every old stamp
      std::fill(stamp_.begin(), stamp_.end(), 0);
      now_ = 1;
    }
  }
  // Adds i; true when it was not in the set yet.
  bool Mark(int i) {
    if (stamp_[static_cast<size_t>(i)] == now_) return false;
    stamp_[static_cast<size_t>(i)] = now_;
    return true;
  }

 private:
  std::vector<uint32_t> stamp_;
  uint32_t now_ = 0;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_STAMPS_H_
