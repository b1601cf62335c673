// model: how fast the candidate's GPUs are, by their model's NVLink bandwidth.
#include <algorithm>
#include <limits>

#include "policies/scorers.h"

namespace nvlplace {
namespace {

class ModelScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "model"; }
  // 100 * the slowest model among the candidate's GPUs / the fastest model of the cluster
  // (NVLink GB/s): a synchronous job runs at the pace of its slowest GPU. 100 on a cluster
  // of one model, so there it changes no choice.
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    const std::vector<GpuModelSpec>& models = ctx.topo.gpu_models();
    double fastest = 0, slowest_model = std::numeric_limits<double>::infinity();
    for (const GpuModelSpec& m : models) {
      fastest = std::max(fastest, m.nvlink_gbps);
      slowest_model = std::min(slowest_model, m.nvlink_gbps);
    }
    // Every model as fast (one model): 100 without reading the candidate's nodes (a 1,024-GPU
    // job on GB200 touches hundreds of trays).
    if (fastest <= 0 || slowest_model >= fastest || facts.ranks.empty()) return 100;
    double slowest = fastest;
    for (NodeId n : facts.nodes) {
      int m = ctx.topo.nodes()[n].model;
      if (m >= 0) slowest = std::min(slowest, models[m].nvlink_gbps);
    }
    return 100.0 * slowest / fastest;
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeModelScorer() { return std::make_unique<ModelScorer>(); }

}  // namespace nvlplace
