// Policies as YAML presets, parsed once and validated against the registry, and their
// adjusted copies (WithWeights; Policy::WithSeed needs no registry).
#ifndef NVLPLACE_POLICIES_POLICY_LOADER_H_
#define NVLPLACE_POLICIES_POLICY_LOADER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/engine/policy.h"

namespace nvlplace {

// A weight the engine takes: positive, finite, at most kMaxWeight (checked once, when a
// policy is built, so that no sum of weighted scores overflows).
inline constexpr double kMaxWeight = 1e6;
inline constexpr char kWeightRule[] = "a weight must be a positive number up to 1e6";
static_assert(kMaxWeight == 1e6, "kWeightRule states kMaxWeight in words: change both");
bool IsValidWeight(double weight);

// Reads a policy:
//   name: topo
//   description: ...
//   generators: [hierarchical, firstfit]
//   weights: {nvlink: 40, comm: 30, tier: 15, fragmentation: 15}
//   seed: 1          # optional, for random
//   candidates: 16   # optional
// Weights are checked here, once: positive, finite, at most 1e6, at least one.
absl::StatusOr<std::shared_ptr<const Policy>> ParsePolicyYaml(absl::string_view text,
                                                              const std::string& file);

// `base` with some weights replaced, and scorers it lacks added (from the registry), named
// "<base>+weights"; the scorers stay in the registry's order, so the result decides as a
// policy file with those weights would. Every weight is checked as ParsePolicyYaml does;
// an unknown scorer is InvalidArgument listing the valid names. `base` is not changed.
absl::StatusOr<Policy> WithWeights(const Policy& base,
                                   const std::vector<std::pair<std::string, double>>& weights);

// The policy as a preset file that ParsePolicyYaml reads back into the same policy (the same
// generators, weights in the registry's order, seed and limits): a policy kept beside a
// configuration snapshot does not depend on the presets installed.
std::string WritePolicyYaml(const Policy& policy);

// `name_or_path`: a file path (contains '/' or ends in .yaml), else a name looked up as
// <dir>/<name>.yaml in $NVLPLACE_POLICY_DIR, then the installed and source configs.
absl::StatusOr<std::shared_ptr<const Policy>> LoadPolicy(const std::string& name_or_path);

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_POLICY_LOADER_H_
