// The registry: the one place where the names of scorers and generators are written.
#ifndef NVLPLACE_POLICIES_REGISTRY_H_
#define NVLPLACE_POLICIES_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/engine/generator.h"
#include "placement/engine/scorer.h"

namespace nvlplace {

// One literal table per extension point, name -> factory (registry.cc). The names, in the
// tables' order (the order of a policy's scorers, and of every list of valid names).
const std::vector<std::string>& ScorerNames();     // nvlink, tier, comm, fragmentation, ...
const std::vector<std::string>& GeneratorNames();  // hierarchical, firstfit, random

// A new scorer or generator of that name; an unknown name is InvalidArgument listing the
// valid names ("unknown scorer 'x'; scorers are nvlink, tier, ...").
absl::StatusOr<std::shared_ptr<const Scorer>> MakeScorer(absl::string_view name);
absl::StatusOr<std::shared_ptr<const Generator>> MakeGenerator(absl::string_view name);

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_REGISTRY_H_
