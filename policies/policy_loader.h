// Policies as YAML presets: parsed once, validated against the registry.
#ifndef NVLPLACE_POLICIES_POLICY_LOADER_H_
#define NVLPLACE_POLICIES_POLICY_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/engine/policy.h"

namespace nvlplace {

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

// `name_or_path`: a file path (contains '/' or ends in .yaml), else a name looked up as
// <dir>/<name>.yaml in $NVLPLACE_POLICY_DIR, then the installed and source configs.
absl::StatusOr<std::shared_ptr<const Policy>> LoadPolicy(const std::string& name_or_path);

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_POLICY_LOADER_H_
