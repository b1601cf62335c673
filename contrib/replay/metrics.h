// The placement metrics of the papers a replay is compared with: the spread of a job's
// communication groups over NVLink domains and switches (Arnold, NeurIPS'25), fragmented GPUs
// for the trace's job shapes (FGD, ATC'23), and the step time the cost model estimates.
#ifndef NVLPLACE_CONTRIB_REPLAY_METRICS_H_
#define NVLPLACE_CONTRIB_REPLAY_METRICS_H_

#include <map>
#include <string>
#include <vector>

#include "placement/model/topology.h"

namespace nvlplace::replay {

// What a group can spread over, narrowest first: NVLink domains ("nvlink_domain"), then one
// level per switch tier, named as the topology's tiers ("leaf", "spine", ...).
std::vector<std::string> SpreadLevels(const Topology& topo);

// The unit of `level` holding GPU g: its NVLink domain for level 0; for level 1 + t its
// switch of tier t: the leaf its NIC reaches (on a rail-optimized node, the leaf of rail
// index % rails), then first parents up to tier t (the highest switch reached when the tree
// ends below t). -1 for a node attached to no switch.
int UnitOf(const Topology& topo, GpuId g, int level);

// UnitOf for every GPU, from tables made once per topology: each GPU's leaf (4 bytes a GPU)
// and each switch's switch of every tier (switches x tiers ids). Walking up first parents
// read a switch record and its list of parents per step, three quarters of a replay's group
// spreads (perf, 100,000 jobs on 131,072 H100 GPUs under random). Holds a reference to the
// topology.
class SpreadUnits {
 public:
  explicit SpreadUnits(const Topology& topo);
  const Topology& topology() const { return topo_; }
  // UnitOf(topology(), g, level), the same value.
  int Unit(GpuId g, int level) const {
    if (level == 0) return topo_.DomainOf(g);
    return Up(Leaf(g), level - 1);
  }
  // The leaf switch GPU g's NIC reaches (on a rail-optimized node, the leaf of rail
  // index % rails); -1 for a node attached to no switch. From a table per GPU: reading the
  // node's record for it was a cache miss per node of a job placed at random.
  SwitchId Leaf(GpuId g) const { return leaf_[static_cast<size_t>(g)]; }
  // From `sw` up by first parents to its first switch of tier `tier` or above (the highest
  // reached when the tree ends below it); -1 stays -1.
  SwitchId Up(SwitchId sw, int tier) const {
    return sw < 0 ? -1 : up_[static_cast<size_t>(sw) * tiers_ + static_cast<size_t>(tier)];
  }

 private:
  const Topology& topo_;
  size_t tiers_;
  std::vector<SwitchId> leaf_;  // [GPU]
  std::vector<SwitchId> up_;    // [switch x tiers + tier]
};

// Mean over a job's groups of the units each spans, per level (SpreadLevels); with `widest`,
// also the largest per level there (the job's widest group, which its slowest all-reduce
// waits for), from the same pass. The job's rank r runs on ranks[r], in Megatron's default
// order (Request::Rank: TP innermost, then DP, PP outermost): TP group (p, d) is ranks
// tp * (d + dp * p) + [0, tp), DP group (t, p) the ranks t + tp * d + tp * dp * p for every
// d. Empty (both) when the groups
// have one GPU (tp == 1, dp == 1) or the sizes do not match the ranks.
std::vector<double> TpGroupSpread(const SpreadUnits& units, const std::vector<GpuId>& ranks, int tp,
                                  int pp, int dp, std::vector<double>* widest = nullptr);
std::vector<double> DpGroupSpread(const SpreadUnits& units, const std::vector<GpuId>& ranks, int tp,
                                  int pp, int dp, std::vector<double>* widest = nullptr);

// FGD's fragmentation, for whole GPUs and NVLink domains: the free GPUs a job drawn from
// `chunk_weights` cannot use, in expectation. A job's chunk is the GPUs it needs inside one
// domain (its TP size when it keeps TP groups in a domain, else 1), and its weight its share
// of the trace's jobs (the weights add up to 1). Domain d with f free GPUs counts f for each
// chunk larger than f: sum over d of f_d x P(chunk > f_d).
double FragmentedGpus(const std::vector<int>& free_in_domain,
                      const std::map<int, double>& chunk_weights);
// P(chunk > f) for f = 0..max_free: the table FragmentedGpus reads, for a replay to keep.
std::vector<double> LargerChunkShare(const std::map<int, double>& chunk_weights, int max_free);

// The cost model's step time against the job's best placement on the empty cluster: the
// communication share s of a step on the best placement (comm_best) scales with the
// placement's estimate (comm), capped at 10x: (1 - s) + s x min(10, comm / comm_best).
// 1 when comm_best is 0 (nothing to communicate).
double StepTimeRatio(double comm_s, double best_comm_s, double share);

// The share used when the replay was given none (--comm-share 0): 30% of the step, as
// assumed in report.html.
inline constexpr double kAssumedCommShare = 0.3;

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_METRICS_H_
