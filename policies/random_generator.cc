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
  // this decision (DecisionSeed(ctx.seed, ctx.decision), mt19937_64). The shuffle is a
  // Fisher-Yates that stops once the hosts drawn hold k chunks: a draw per host taken, not
  // per host of the cluster (the whole shuffle of 16,384 hosts was 39% of a 1M-job replay).
  std::vector<Candidate> Generate(const SearchState& s, int k,
                                  const GenerateContext& ctx) const override {
    if (s.total_capacity() < k) return {};
    std::vector<int> order = s.hierarchy().hosts();
    std::mt19937_64 rng(DecisionSeed(ctx.seed, ctx.decision));
    size_t drawn = 0;
    for (int need = k; need > 0 && drawn < order.size(); ++drawn) {
      std::uniform_int_distribution<size_t> pick(drawn, order.size() - 1);
      std::swap(order[drawn], order[pick(rng)]);
      need -= s.capacity(order[drawn]);
    }
    order.resize(drawn);
    Candidate c;
    c.origin = absl::StrCat("random (seed ", ctx.seed, ")");
    s.TakeInOrder(order, k, &c.ranks);
    return {std::move(c)};
  }
};

}  // namespace

std::unique_ptr<Generator> MakeRandomGenerator() { return std::make_unique<RandomGenerator>(); }

}  // namespace nvlplace
