// The registry: the one place where the names of scorers and generators are written.
#ifndef NVLPLACE_POLICIES_REGISTRY_H_
#define NVLPLACE_POLICIES_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/engine/scorer.h"

namespace nvlplace {

// The registry: a literal list of names. Unknown names are errors that list these.
const std::vector<std::string>& ScorerNames();
const std::vector<std::string>& GeneratorNames();  // hierarchical, firstfit, random
// A new scorer of that name (seeded ones read ScoringContext::seed).
absl::StatusOr<std::unique_ptr<Scorer>> MakeScorer(absl::string_view name);

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_REGISTRY_H_
