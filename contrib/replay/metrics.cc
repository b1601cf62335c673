// Spread of communication groups, fragmentation, step time.
#include "contrib/replay/metrics.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "placement/engine/stamps.h"
#include "placement/model/request.h"

namespace nvlplace::replay {
namespace {

bool SizesMatch(const std::vector<GpuId>& ranks, int tp, int pp, int dp) {
  return tp >= 1 && pp >= 1 && dp >= 1 &&
         static_cast<int64_t>(tp) * pp * dp == static_cast<int64_t>(ranks.size());
}

// The leaf switch GPU `gpu`'s NIC reaches (on a rail-optimized node, the leaf of rail
// index % rails); -1 for a node attached to no switch.
SwitchId LeafOf(const Topology& topo, const Gpu& gpu) {
  const Node& node = topo.nodes()[gpu.node];
  if (node.leaves.empty()) return -1;
  return node.leaves[static_cast<size_t>(gpu.index) % node.leaves.size()];
}

// From `sw` up by first parents to the first switch of tier `tier` or above (the highest
// reached when the tree ends below it); -1 stays -1.
SwitchId UpTo(const Topology& topo, SwitchId sw, int tier) {
  while (sw >= 0 && topo.switches()[sw].tier < tier && !topo.switches()[sw].parents.empty()) {
    sw = topo.switches()[sw].parents[0];
  }
  return sw;
}

}  // namespace

std::vector<std::string> SpreadLevels(const Topology& topo) {
  std::vector<std::string> levels = {"nvlink_domain"};
  levels.insert(levels.end(), topo.tiers().begin(), topo.tiers().end());
  return levels;
}

int UnitOf(const Topology& topo, GpuId g, int level) {
  const Gpu& gpu = topo.gpus()[g];
  if (level == 0) return gpu.domain;
  return UpTo(topo, LeafOf(topo, gpu), level - 1);
}

SpreadUnits::SpreadUnits(const Topology& topo) : topo_(topo), tiers_(topo.tiers().size()) {
  leaf_.reserve(static_cast<size_t>(topo.num_gpus()));
  for (const Gpu& gpu : topo.gpus()) leaf_.push_back(LeafOf(topo, gpu));
  up_.resize(static_cast<size_t>(topo.num_switches()) * tiers_);
  for (SwitchId sw = 0; sw < topo.num_switches(); ++sw) {
    // Each tier continues where the one below stopped: the same switch UpTo walks to.
    SwitchId at = sw;
    for (size_t t = 0; t < tiers_; ++t) {
      at = UpTo(topo, at, static_cast<int>(t));
      up_[static_cast<size_t>(sw) * tiers_ + t] = at;
    }
  }
}

namespace {

// The spread of `groups` groups of `count` ranks each, group g's k-th rank at
// first(g) + k * stride: the distinct units of each level a group spans (UnitOf), the mean
// per level, and the largest into `widest` when given. Above the NVLink domain level only the
// group's first GPU in each domain counts: the group's traffic inside a domain runs over
// NVLink and leaves it through one GPU's NIC, so a group inside one domain spans one unit of
// every tier (counted per GPU, a rail-optimized node's 8 GPUs were 8 rail leaves, and every
// 8-GPU job "spanned" them under any policy). Each such GPU's units are read from its leaf's
// row of the table.
template <typename First>
std::vector<double> GroupSpread(const SpreadUnits& units, const std::vector<GpuId>& ranks,
                                size_t groups, size_t count, size_t stride, First first,
                                std::vector<double>* widest) {
  const Topology& topo = units.topology();
  const size_t levels = 1 + topo.tiers().size();  // SpreadLevels
  std::vector<double> mean(levels, 0.0);
  if (widest != nullptr) widest->assign(levels, 0.0);
  // The units met so far per level (switch ids of one level: a switch may be reached at two
  // levels when the tree ends below them), kept per thread: a replay calls this twice for
  // every job it starts, and sorting each group's ranks by domain was most of the call.
  thread_local Stamps domains_seen;
  thread_local std::vector<Stamps> switches_seen;  // [level], level >= 1
  thread_local std::vector<int> distinct;          // [level]: units of the group
  if (switches_seen.size() < levels) switches_seen.resize(levels);
  // A node under no switch (UpTo gives -1) is one more unit, stamped past the switches.
  const size_t no_switch = topo.switches().size();
  for (size_t group = 0; group < groups; ++group) {
    domains_seen.Begin(static_cast<size_t>(topo.num_domains()));
    for (size_t level = 1; level < levels; ++level) switches_seen[level].Begin(no_switch + 1);
    distinct.assign(levels, 0);
    for (size_t k = 0; k < count; ++k) {
      const GpuId g = ranks[first(group) + k * stride];
      // The first GPU of each domain in rank order: its switch of each tier.
      if (!domains_seen.Mark(topo.DomainOf(g))) continue;
      ++distinct[0];
      const SwitchId leaf = units.Leaf(g);
      for (size_t level = 1; level < levels; ++level) {
        const SwitchId sw = units.Up(leaf, static_cast<int>(level) - 1);
        distinct[level] += switches_seen[level].Mark(sw < 0 ? static_cast<int>(no_switch) : sw);
      }
    }
    for (size_t level = 0; level < levels; ++level) {
      mean[level] += distinct[level];
      if (widest != nullptr) (*widest)[level] = std::max<double>((*widest)[level], distinct[level]);
    }
  }
  for (double& v : mean) v /= static_cast<double>(groups);
  return mean;
}

}  // namespace

std::vector<double> TpGroupSpread(const SpreadUnits& units, const std::vector<GpuId>& ranks, int tp,
                                  int pp, int dp, std::vector<double>* widest) {
  if (widest != nullptr) widest->clear();
  if (tp <= 1 || !SizesMatch(ranks, tp, pp, dp)) return {};
  const size_t t = static_cast<size_t>(tp);
  return GroupSpread(
      units, ranks, static_cast<size_t>(pp) * dp, t, 1, [t](size_t group) { return group * t; },
      widest);
}

std::vector<double> DpGroupSpread(const SpreadUnits& units, const std::vector<GpuId>& ranks, int tp,
                                  int pp, int dp, std::vector<double>* widest) {
  if (widest != nullptr) widest->clear();
  if (dp <= 1 || !SizesMatch(ranks, tp, pp, dp)) return {};
  // Group (t, p), numbered t + tp * p: the ranks Request::Rank(t, p, d) for every d.
  Request order;
  order.tp = tp;
  order.pp = pp;
  order.dp = dp;
  return GroupSpread(
      units, ranks, static_cast<size_t>(tp) * pp, static_cast<size_t>(dp), order.DpStride(),
      [&order, tp](size_t group) {
        return order.Rank(static_cast<int>(group % tp), static_cast<int>(group / tp), 0);
      },
      widest);
}

std::vector<double> LargerChunkShare(const std::map<int, double>& chunk_weights, int max_free) {
  std::vector<double> out(std::max(0, max_free) + 1, 0.0);
  for (int f = 0; f <= max_free; ++f) {
    for (auto it = chunk_weights.upper_bound(f); it != chunk_weights.end(); ++it) {
      out[f] += it->second;
    }
  }
  return out;
}

double FragmentedGpus(const std::vector<int>& free_in_domain,
                      const std::map<int, double>& chunk_weights) {
  int max_free = 0;
  for (int f : free_in_domain) max_free = std::max(max_free, f);
  std::vector<double> larger = LargerChunkShare(chunk_weights, max_free);
  double total = 0;
  for (int f : free_in_domain) {
    if (f > 0) total += f * larger[f];
  }
  return total;
}

double StepTimeRatio(double comm_s, double best_comm_s, double share) {
  if (!(best_comm_s > 0)) return 1.0;
  return (1 - share) + share * std::min(10.0, comm_s / best_comm_s);
}

}  // namespace nvlplace::replay
