// spread: the fewest leaf switches under the job, Arnold's (NeurIPS'25) measure of how far a
// communication group reaches: on a rail-optimized fabric each DP group crosses one leaf per
// scalable unit the job touches, elsewhere one per leaf its nodes hang from. The cost model
// prices a non-blocking fabric the same at one leaf or five; the spines it then loads are not.
#include <algorithm>
#include <vector>

#include "placement/engine/stamps.h"
#include "policies/scorers.h"

namespace nvlplace {
namespace {

class SpreadScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "spread"; }
  // 100 / (leaf switches under the job's nodes / leaves per node): 100 for one leaf (or one
  // scalable unit of rail leaves), 50 for two; 100 when the nodes hang from no leaf.
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    thread_local Stamps seen;
    seen.Begin(ctx.topo.switches().size());
    size_t leaves = 0, per_node = 1;
    ForEachLeafGroup(ctx.topo, facts.nodes, [&](int, const NodeLeaves& mine) {
      per_node = std::max(per_node, mine.size());
      for (SwitchId s : mine) leaves += seen.Mark(s) ? 1 : 0;
    });
    if (leaves == 0) return 100;
    return 100.0 * static_cast<double>(per_node) / static_cast<double>(leaves);
  }
  // Against the candidate under the fewest leaves (NormalizeToBest): twice its leaves score
  // 50 also where no candidate fits under one.
  void Normalize(std::vector<double>* scores) const override { NormalizeToBest(scores); }
};

}  // namespace

std::unique_ptr<Scorer> MakeSpreadScorer() { return std::make_unique<SpreadScorer>(); }

}  // namespace nvlplace
