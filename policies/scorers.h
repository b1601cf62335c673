// Factories of the built-in scorers, one per file; registry.cc maps names to them.
#ifndef NVLPLACE_POLICIES_SCORERS_H_
#define NVLPLACE_POLICIES_SCORERS_H_

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "placement/engine/scorer.h"
#include "placement/engine/stamps.h"

namespace nvlplace {

std::unique_ptr<Scorer> MakeNvlinkScorer();
std::unique_ptr<Scorer> MakeTierScorer();
std::unique_ptr<Scorer> MakeCommScorer();
std::unique_ptr<Scorer> MakeFragmentationScorer();
std::unique_ptr<Scorer> MakeModelScorer();
std::unique_ptr<Scorer> MakeFirstFitScorer();
std::unique_ptr<Scorer> MakeRandomScorer();  // seeded by ScoringContext::seed
std::unique_ptr<Scorer> MakeBalanceScorer();
std::unique_ptr<Scorer> MakeSpreadScorer();

// Calls fn(group, leaves) once for each leaf group (Topology::LeafGroup: nodes with the same
// leaf switches) among `nodes`, with that group's leaves, so that a job of many nodes under
// few leaves (a rack's trays, a rail-optimized unit's nodes) is not walked node by node.
template <typename Fn>
void ForEachLeafGroup(const Topology& topo, absl::Span<const NodeId> nodes, Fn fn) {
  thread_local Stamps seen;
  seen.Begin(static_cast<size_t>(topo.num_leaf_groups()));
  int last = -1;  // a group's nodes come in runs (ascending ids): a run is marked once
  for (NodeId n : nodes) {
    int g = topo.LeafGroup(n);
    if (g == last) continue;
    last = g;
    if (seen.Mark(g)) fn(g, topo.nodes()[n].leaves);
  }
}

// A Normalize step for scorers whose raw score is 100 x ideal / cost: against the best
// candidate instead, 100 x score / best, so that a candidate twice as costly as the best
// scores 50 even when every candidate is far from the ideal. Unchanged when none is positive.
inline void NormalizeToBest(std::vector<double>* scores) {
  double best = 0;
  for (double s : *scores) best = std::max(best, s);
  if (best <= 0) return;
  for (double& s : *scores) s = 100.0 * s / best;
}

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_SCORERS_H_
