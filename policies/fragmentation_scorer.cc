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
    // Nodes under the leaf switches touched, each counted once (rail leaves share their
    // nodes): marks instead of sorting, the same sum.
    std::vector<bool> leaf_seen(ctx.topo.num_switches(), false);
    std::vector<bool> node_seen(ctx.topo.num_nodes(), false);
    long free_leaves = 0;
    for (NodeId n : facts.nodes) {
      for (SwitchId s : ctx.topo.nodes()[n].leaves) {
        if (leaf_seen[s]) continue;
        leaf_seen[s] = true;
        for (NodeId m : ctx.topo.switches()[s].nodes) {
          if (node_seen[m]) continue;
          node_seen[m] = true;
          free_leaves += ctx.state.free_on_node(m);
        }
      }
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
