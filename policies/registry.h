// The registry: the one place where the names of scorers and generators are written.
#ifndef NVLPLACE_POLICIES_REGISTRY_H_
#define NVLPLACE_POLICIES_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "placement/engine/scorer.h"

namespace nvlplace {

// The registry: a literal list of names. Unknown names are errors that list these.
const std::vector<std::string>& ScorerNames();
const std::vector<std::string>& GeneratorNames();  // hierarchical, firstfit, random
absl::StatusOr<std::unique_ptr<Scorer>> MakeScorer(absl::string_view name, uint64_t seed);

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_REGISTRY_H_
