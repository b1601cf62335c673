// The registry: scorer and generator names and their factories.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/engine/policy.h"
#include "policies/scorers.h"

namespace nvlplace {

const std::vector<std::string>& ScorerNames() {
  static const auto* names =
      new std::vector<std::string>{"nvlink", "tier", "comm", "fragmentation", "firstfit", "random"};
  return *names;
}

const std::vector<std::string>& GeneratorNames() {
  static const auto* names = new std::vector<std::string>{"hierarchical", "firstfit", "random"};
  return *names;
}

absl::StatusOr<std::unique_ptr<Scorer>> MakeScorer(absl::string_view name) {
  if (name == "nvlink") return MakeNvlinkScorer();
  if (name == "tier") return MakeTierScorer();
  if (name == "comm") return MakeCommScorer();
  if (name == "fragmentation") return MakeFragmentationScorer();
  if (name == "firstfit") return MakeFirstFitScorer();
  if (name == "random") return MakeRandomScorer();
  return absl::InvalidArgumentError(absl::StrCat("unknown scorer '", name, "'; scorers are ",
                                                 absl::StrJoin(ScorerNames(), ", ")));
}

}  // namespace nvlplace
