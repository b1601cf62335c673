// fragmentation: prefer filling partly used NVLink domains and switches, so that whole
// free blocks remain for large jobs (best fit).
#include <algorithm>
#include <vector>

#include "placement/engine/stamps.h"
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
    // Free GPUs on the nodes under the leaf switches touched, each node counted once. A
    // closed leaf group (its leaves hold only its nodes: a rack under its leaf, a
    // rail-optimized unit under its rail leaves) is one count the state keeps; else its
    // leaves' nodes are walked, leaves and nodes marked with this call's stamp (a 1,024-GPU
    // job on GB200 touches dozens of racks: walking their nodes was 10% of its decision).
    thread_local Stamps seen_leaf, seen_node;
    seen_leaf.Begin(ctx.topo.switches().size());
    seen_node.Begin(ctx.topo.nodes().size());
    long free_leaves = 0;
    ForEachLeafGroup(ctx.topo, facts.nodes, [&](int g, const NodeLeaves& leaves) {
      if (ctx.topo.LeafGroupClosed(g)) {
        free_leaves += ctx.state.free_in_leaf_group(g);
        return;
      }
      for (SwitchId s : leaves) {
        if (!seen_leaf.Mark(s)) continue;
        for (NodeId m : ctx.topo.switches()[s].nodes) {
          if (seen_node.Mark(m)) free_leaves += ctx.state.free_on_node(m);
        }
      }
    });
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
