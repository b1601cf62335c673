// firstfit: lowest GPU indexes first, what a site without topology awareness gets.
#include "policies/scorers.h"

namespace nvlplace {
namespace {

class FirstFitScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "firstfit"; }
  // 100 * (1 - mean GPU id / number of GPUs).
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    if (facts.ranks.empty()) return 100;
    double sum = 0;
    for (GpuId g : facts.ranks) sum += g;
    return 100.0 * (1.0 - sum / facts.ranks.size() / ctx.topo.num_gpus());
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeFirstFitScorer() { return std::make_unique<FirstFitScorer>(); }

}  // namespace nvlplace
