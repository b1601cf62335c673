// balance: a job over several NVLink domains takes the same share of each (24 trays of two
// NVL72 racks as 12 + 12, not 18 + 6), so that every domain's part of a DP ring or
// hierarchical all-reduce carries the same load and each rack keeps the same room.
#include <algorithm>

#include "policies/scorers.h"

namespace nvlplace {
namespace {

class BalanceScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "balance"; }
  // 100 for one domain; else 100 x the smallest share over the largest (12 + 12: 100;
  // 18 + 6: 100 x 6 / 18 = 33.3).
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    (void)ctx;
    if (facts.used_per_domain.size() <= 1) return 100;
    auto [least, most] =
        std::minmax_element(facts.used_per_domain.begin(), facts.used_per_domain.end());
    return *most > 0 ? 100.0 * *least / *most : 100;
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeBalanceScorer() { return std::make_unique<BalanceScorer>(); }

}  // namespace nvlplace
