// Spread of communication groups, fragmentation, step time.
#include "contrib/replay/metrics.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace nvlplace::replay {
namespace {

// Distinct units of `level` over the GPUs ranks[first + k * stride], k < count. Above the
// NVLink domain level only the group's first GPU in each domain counts: the group's traffic
// inside a domain runs over NVLink and leaves it through one GPU's NIC, so a group inside
// one domain spans one unit of every tier (counted per GPU, a rail-optimized node's 8 GPUs
// were 8 rail leaves, and every 8-GPU job "spanned" them under any policy).
int Distinct(const Topology& topo, const std::vector<GpuId>& ranks, size_t first, size_t stride,
             size_t count, int level, std::vector<int>* scratch) {
  scratch->clear();
  if (level == 0) {
    for (size_t k = 0; k < count; ++k) scratch->push_back(topo.DomainOf(ranks[first + k * stride]));
  } else {
    // (domain, rank) of each GPU, sorted: the first of each domain is its first in rank order.
    thread_local std::vector<std::pair<DomainId, size_t>> by_domain;  // reused: no allocation
    by_domain.clear();
    for (size_t k = 0; k < count; ++k) {
      by_domain.emplace_back(topo.DomainOf(ranks[first + k * stride]), k);
    }
    std::sort(by_domain.begin(), by_domain.end());
    for (size_t i = 0; i < by_domain.size(); ++i) {
      if (i > 0 && by_domain[i].first == by_domain[i - 1].first) continue;
      scratch->push_back(UnitOf(topo, ranks[first + by_domain[i].second * stride], level));
    }
  }
  std::sort(scratch->begin(), scratch->end());
  return static_cast<int>(std::unique(scratch->begin(), scratch->end()) - scratch->begin());
}

bool SizesMatch(const std::vector<GpuId>& ranks, int tp, int pp, int dp) {
  return tp >= 1 && pp >= 1 && dp >= 1 &&
         static_cast<int64_t>(tp) * pp * dp == static_cast<int64_t>(ranks.size());
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
  const Node& node = topo.nodes()[gpu.node];
  if (node.leaves.empty()) return -1;
  SwitchId sw = node.leaves[static_cast<size_t>(gpu.index) % node.leaves.size()];
  const int tier = level - 1;
  while (topo.switches()[sw].tier < tier && !topo.switches()[sw].parents.empty()) {
    sw = topo.switches()[sw].parents[0];
  }
  return sw;
}

namespace {

// The spread of `groups` groups of `count` ranks each, group g's k-th rank at
// first(g) + k * stride: the mean per level, and the largest into `widest` when given.
template <typename First>
std::vector<double> GroupSpread(const Topology& topo, const std::vector<GpuId>& ranks,
                                size_t groups, size_t count, size_t stride, First first,
                                std::vector<double>* widest) {
  const int levels = static_cast<int>(SpreadLevels(topo).size());
  std::vector<double> mean(levels, 0.0);
  if (widest != nullptr) widest->assign(levels, 0.0);
  std::vector<int> scratch;
  for (size_t group = 0; group < groups; ++group) {
    for (int level = 0; level < levels; ++level) {
      const int units = Distinct(topo, ranks, first(group), stride, count, level, &scratch);
      mean[level] += units;
      if (widest != nullptr) (*widest)[level] = std::max<double>((*widest)[level], units);
    }
  }
  for (double& v : mean) v /= static_cast<double>(groups);
  return mean;
}

}  // namespace

std::vector<double> TpGroupSpread(const Topology& topo, const std::vector<GpuId>& ranks, int tp,
                                  int pp, int dp, std::vector<double>* widest) {
  if (widest != nullptr) widest->clear();
  if (tp <= 1 || !SizesMatch(ranks, tp, pp, dp)) return {};
  const size_t t = static_cast<size_t>(tp);
  return GroupSpread(
      topo, ranks, static_cast<size_t>(pp) * dp, t, 1, [t](size_t group) { return group * t; },
      widest);
}

std::vector<double> DpGroupSpread(const Topology& topo, const std::vector<GpuId>& ranks, int tp,
                                  int pp, int dp, std::vector<double>* widest) {
  if (widest != nullptr) widest->clear();
  if (dp <= 1 || !SizesMatch(ranks, tp, pp, dp)) return {};
  // Group (t, p) starts at rank t + tp * p; its members are tp * pp apart.
  const size_t groups = static_cast<size_t>(tp) * pp;
  return GroupSpread(
      topo, ranks, groups, static_cast<size_t>(dp), groups, [](size_t group) { return group; },
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
