// nvlink: the share of TP groups that sit inside one NVLink domain.
#include "policies/scorers.h"

namespace nvlplace {
namespace {

class NvlinkScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "nvlink"; }
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    int groups = ctx.request.num_groups();
    if (ctx.request.tp <= 1 || groups == 0) return 100;
    return 100.0 * (groups - facts.tp_groups_split) / groups;
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeNvlinkScorer() { return std::make_unique<NvlinkScorer>(); }

}  // namespace nvlplace
