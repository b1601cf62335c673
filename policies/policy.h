// Policies: named presets of scorer weights and candidate generators, read from YAML.
#ifndef NVLPLACE_POLICIES_POLICY_H_
#define NVLPLACE_POLICIES_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policies/scorer.h"

namespace nvlplace {

// The registry: a literal list of names. Unknown names are errors that list these.
const std::vector<std::string>& ScorerNames();
const std::vector<std::string>& GeneratorNames();  // hierarchical, firstfit, random
absl::StatusOr<std::unique_ptr<Scorer>> MakeScorer(absl::string_view name, uint64_t seed);

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

#endif  // NVLPLACE_POLICIES_POLICY_H_
