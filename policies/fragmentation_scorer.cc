// fragmentation: prefer filling partly used NVLink domains and switches, so that whole
// free blocks remain for large jobs (best fit).
#include <algorithm>

#include "policies/scorers.h"

namespace nvlplace {
namespace {

class FragmentationScorer : public Scorer {
 public:
  absl::string_view Name() const override { return "fragmentation"; }
  // Domains: GPUs taken / free GPUs of the touched domains before placing (1 when the job
  // uses up every domain it touches). Leaves: the same over the leaf switches touched.
  // Score = 100 * (0.6 * domains + 0.4 * leaves).
  double Score(const ScoringContext& ctx, const CandidateFacts& facts) const override {
    int taken = static_cast<int>(facts.ranks.size());
    if (taken == 0) return 100;
    long free_domains = 0;
    for (DomainId d : facts.domains) free_domains += ctx.state.free_in_domain(d);
    // Nodes under the leaf switches touched, each counted once: the distinct leaves, then
    // their distinct lists of nodes (a rail-optimized node's leaves all hold the same nodes),
    // then the nodes of those lists.
    std::vector<SwitchId> leaves;
    const std::vector<SwitchId>* previous = nullptr;
    for (NodeId n : facts.nodes) {
      const std::vector<SwitchId>& mine = ctx.topo.nodes()[n].leaves;
      if (previous != nullptr && *previous == mine) continue;  // neighbours share leaves
      leaves.insert(leaves.end(), mine.begin(), mine.end());
      previous = &mine;
    }
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    std::vector<const std::vector<NodeId>*> lists;
    for (SwitchId s : leaves) {
      const std::vector<NodeId>& under = ctx.topo.switches()[s].nodes;
      bool seen = std::any_of(lists.begin(), lists.end(),
                              [&](const std::vector<NodeId>* l) { return *l == under; });
      if (!seen) lists.push_back(&under);
    }
    long free_leaves = 0;
    if (lists.size() == 1) {
      for (NodeId m : *lists[0]) free_leaves += ctx.state.free_on_node(m);
    } else {
      std::vector<NodeId> near;
      for (const std::vector<NodeId>* l : lists) near.insert(near.end(), l->begin(), l->end());
      std::sort(near.begin(), near.end());
      near.erase(std::unique(near.begin(), near.end()), near.end());
      for (NodeId m : near) free_leaves += ctx.state.free_on_node(m);
    }
    double d = free_domains > 0 ? std::min(1.0, static_cast<double>(taken) / free_domains) : 1;
    double l = free_leaves > 0 ? std::min(1.0, static_cast<double>(taken) / free_leaves) : 1;
    return 100.0 * (0.6 * d + 0.4 * l);
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeFragmentationScorer() {
  return std::make_unique<FragmentationScorer>();
}

}  // namespace nvlplace
