// comm: estimated communication seconds per step against the all-NVLink lower bound.
#include <vector>

#include "policies/scorers.h"

namespace nvlplace {
namespace {

class CommScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "comm"; }
  bool ReadsComm() const override { return true; }
  // 100 * ideal / estimate: 100 when no placement could do better, 50 when twice as slow.
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    double estimate = facts.comm.total();
    if (estimate <= 0) return 100;
    return 100.0 * ctx.ideal.total() / estimate;
  }
  // Against the best candidate instead (NormalizeToBest).
  void Normalize(std::vector<double>* scores) const override { NormalizeToBest(scores); }
};

}  // namespace

std::unique_ptr<Scorer> MakeCommScorer() { return std::make_unique<CommScorer>(); }

}  // namespace nvlplace
