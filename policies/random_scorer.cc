// random: a seeded pseudo-random score per candidate, a baseline with no knowledge at all.
#include "policies/scorers.h"

namespace nvlplace {
namespace {

class RandomScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "random"; }
  bool Seeded() const override { return true; }
  // FNV-1a over the seed drawn for this decision (DecisionSeed of the policy's seed and
  // ctx.decision) and the GPU ids, mapped to [0, 100].
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    uint64_t h = 1469598103934665603ull ^ DecisionSeed(ctx.seed, ctx.decision);
    for (GpuId g : facts.ranks) {
      h ^= static_cast<uint64_t>(g);
      h *= 1099511628211ull;
    }
    return static_cast<double>(h % 10001) / 100.0;
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeRandomScorer() { return std::make_unique<RandomScorer>(); }

}  // namespace nvlplace
