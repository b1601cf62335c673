// tier: how low in the fabric the job and its DP groups stay (lowest common switch tier).
#include <algorithm>

#include "policies/scorers.h"

namespace nvlplace {
namespace {

// 100 for one node, falling linearly to 0 for the top tier: 100 * (T - 1 - tier) / T.
double TierScore(int tier, int num_tiers) {
  if (tier == Topology::kDisconnected) return 0;
  tier = std::clamp(tier, -1, num_tiers - 1);
  return 100.0 * (num_tiers - 1 - tier) / num_tiers;
}

class TierScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "tier"; }
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    int tiers = static_cast<int>(ctx.topo.tiers().size());
    // The DP all-reduce crosses dp_tier every step; the job as a whole matters less.
    return 0.5 * TierScore(facts.dp_tier, tiers) + 0.5 * TierScore(facts.job_tier, tiers);
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeTierScorer() { return std::make_unique<TierScorer>(); }

}  // namespace nvlplace
