// random: hosts in a seeded random order, a baseline with no knowledge at all.
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "policies/generators.h"

namespace nvlplace {
namespace {

class RandomGenerator : public Generator {
 public:
  absl::string_view Name() const override { return "random"; }
  bool Seeded() const override { return true; }
  // One candidate: chunks from the hosts in an order shuffled by the seed drawn afresh for
  // this decision (DecisionSeed(ctx.seed, ctx.decision), mt19937_64).
  std::vector<Candidate> Generate(const SearchState& s, int k,
                                  const GenerateContext& ctx) const override {
    if (s.total_capacity() < k) return {};
    std::vector<int> order = s.hierarchy().hosts();
    std::mt19937_64 rng(DecisionSeed(ctx.seed, ctx.decision));
    std::shuffle(order.begin(), order.end(), rng);
    Candidate c;
    c.origin = absl::StrCat("random (seed ", ctx.seed, ")");
    s.TakeInOrder(order, k, &c.ranks);
    return {std::move(c)};
  }
};

}  // namespace

std::unique_ptr<Generator> MakeRandomGenerator() { return std::make_unique<RandomGenerator>(); }

}  // namespace nvlplace
