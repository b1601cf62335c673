// A policy: the candidate generators and the weighted scorers of one decision, by value.
#ifndef NVLPLACE_PLACEMENT_ENGINE_POLICY_H_
#define NVLPLACE_PLACEMENT_ENGINE_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "placement/engine/scorer.h"

namespace nvlplace {

struct Policy {
  struct Weighted {
    std::unique_ptr<Scorer> scorer;
    double weight;
  };
  std::string name;
  std::string description;
  std::vector<std::string> generators;
  std::vector<Weighted> scorers;  // in the order written
  uint64_t seed = 1;
  int candidates = 16;  // hierarchical candidates per decision
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_POLICY_H_
