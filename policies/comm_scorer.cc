// comm: estimated communication seconds per step against the all-NVLink lower bound.
#include "policies/scorers.h"

namespace nvlplace {
namespace {

class CommScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "comm"; }
  // 100 * ideal / estimate: 100 when no placement could do better, 50 when twice as slow.
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    double estimate = facts.comm.total();
    if (estimate <= 0) return 100;
    return 100.0 * ctx.ideal.total() / estimate;
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeCommScorer() { return std::make_unique<CommScorer>(); }

}  // namespace nvlplace
