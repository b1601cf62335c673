// The registry: scorer and generator names and their factories, one literal table each.
#include "policies/registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policies/generators.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

template <typename T>
struct Entry {
  absl::string_view name;
  std::unique_ptr<T> (*make)();
};

// The tables (constant-initialized: nothing registers itself at start-up).
constexpr Entry<Scorer> kScorers[] = {
    {"nvlink", MakeNvlinkScorer}, {"tier", MakeTierScorer},
    {"comm", MakeCommScorer},     {"fragmentation", MakeFragmentationScorer},
    {"model", MakeModelScorer},   {"firstfit", MakeFirstFitScorer},
    {"random", MakeRandomScorer}, {"balance", MakeBalanceScorer},
    {"spread", MakeSpreadScorer},
};
constexpr Entry<Generator> kGenerators[] = {
    {"hierarchical", MakeHierarchicalGenerator},
    {"firstfit", MakeFirstFitGenerator},
    {"random", MakeRandomGenerator},
};

template <typename T, size_t N>
std::vector<std::string> NamesOf(const Entry<T> (&table)[N]) {
  std::vector<std::string> names;
  for (const Entry<T>& e : table) names.emplace_back(e.name);
  return names;
}

// The entry named `name`, else InvalidArgument "unknown <kind> '<name>'; <kind>s are ...".
template <typename T, size_t N>
absl::StatusOr<std::shared_ptr<const T>> Make(const Entry<T> (&table)[N], absl::string_view kind,
                                              const std::vector<std::string>& names,
                                              absl::string_view name) {
  for (const Entry<T>& e : table) {
    if (e.name == name) return std::shared_ptr<const T>(e.make());
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", kind, " '", name, "'; ", kind,
                                                 "s are ", absl::StrJoin(names, ", ")));
}

}  // namespace

const std::vector<std::string>& ScorerNames() {
  static const auto* names = new std::vector<std::string>(NamesOf(kScorers));
  return *names;
}

const std::vector<std::string>& GeneratorNames() {
  static const auto* names = new std::vector<std::string>(NamesOf(kGenerators));
  return *names;
}

absl::StatusOr<std::shared_ptr<const Scorer>> MakeScorer(absl::string_view name) {
  return Make(kScorers, "scorer", ScorerNames(), name);
}

absl::StatusOr<std::shared_ptr<const Generator>> MakeGenerator(absl::string_view name) {
  return Make(kGenerators, "generator", GeneratorNames(), name);
}

}  // namespace nvlplace
