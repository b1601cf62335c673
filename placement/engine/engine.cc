// The placement engine: filter, generate, score, choose, explain.
#include "placement/engine/engine.h"

#include <algorithm>
#include <exception>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "placement/engine/generator.h"
#include "placement/engine/scorer.h"

namespace nvlplace {
namespace {

// A candidate with its facts and scores (the per-candidate part of the pipeline).
struct Scored {
  Candidate candidate;
  CandidateFacts facts;
  std::vector<double> scores;
  double total = 0;
  bool tier_ok = true;
};

CandidateFacts ComputeFacts(const Topology& topo, const Request& r, const ModelProfile& model,
                            const std::vector<GpuId>& ranks) {
  CandidateFacts f;
  f.ranks = ranks;
  std::vector<DomainId> doms;
  for (GpuId g : ranks) {
    f.nodes.push_back(topo.gpus()[g].node);
    doms.push_back(topo.gpus()[g].domain);
  }
  std::sort(f.nodes.begin(), f.nodes.end());
  f.nodes.erase(std::unique(f.nodes.begin(), f.nodes.end()), f.nodes.end());
  std::sort(doms.begin(), doms.end());
  for (size_t i = 0; i < doms.size();) {
    size_t j = i;
    while (j < doms.size() && doms[j] == doms[i]) ++j;
    f.domains.push_back(doms[i]);
    f.used_per_domain.push_back(static_cast<int>(j - i));
    i = j;
  }
  f.job_tier = topo.CommonTier(f.nodes);
  // DP groups: ranks t + tp * (p + pp * d) for fixed (t, p); the t = 0 groups stand for all.
  std::vector<NodeId> group;
  for (int p = 0; p < r.pp && r.dp > 1; ++p) {
    group.clear();
    for (int d = 0; d < r.dp; ++d) group.push_back(topo.gpus()[ranks[r.tp * (p + r.pp * d)]].node);
    std::sort(group.begin(), group.end());
    group.erase(std::unique(group.begin(), group.end()), group.end());
    f.dp_tier = std::max(f.dp_tier, topo.CommonTier(group));
  }
  for (int g = 0; g < r.num_groups(); ++g) {
    DomainId d = topo.gpus()[ranks[g * r.tp]].domain;
    for (int t = 1; t < r.tp; ++t) {
      if (topo.gpus()[ranks[g * r.tp + t]].domain != d) {
        ++f.tp_groups_split;
        break;
      }
    }
  }
  f.comm = EstimateComm(topo, ranks, r, model);
  return f;
}

std::string TierName(const Topology& topo, int tier) {
  if (tier == Topology::kSameNode) return "one node";
  if (tier == Topology::kDisconnected) return "disconnected fabrics";
  return topo.tiers()[tier];
}

// Why there is no room, in topology terms.
std::string NoRoomReason(const Topology& topo, const Request& r, const ChunkRule& rule,
                         const SearchState& s, int k) {
  if (rule.per_node) {
    return absl::StrFormat("needs %d nodes with %d free GPUs each on allowed nodes%s; only %d "
                           "such nodes",
                           k, rule.size, r.exclusive ? " (whole nodes free)" : "",
                           s.total_capacity());
  }
  if (rule.size > 1) {
    int fit = s.total_capacity();
    if (k == 1) {
      return absl::StrFormat("needs 1 TP group of %d GPUs inside one NVLink domain; no free "
                             "NVLink domain holds it (largest free domain has %d GPUs, %d GPUs "
                             "free in all)",
                             rule.size, s.largest_free_domain(), s.usable_free());
    }
    return absl::StrFormat("needs %d TP groups of %d GPUs, each inside one NVLink domain; the "
                           "free NVLink domains hold only %d such group%s (largest free "
                           "domain has %d GPUs, %d GPUs free in all)",
                           k, rule.size, fit, fit == 1 ? "" : "s", s.largest_free_domain(),
                           s.usable_free());
  }
  return absl::StrFormat("needs %d GPUs; only %d are free on the allowed nodes%s", k,
                         s.usable_free(), r.exclusive ? " that are wholly free" : "");
  (void)topo;
}

std::string WhyLost(const Policy& policy, const Scored& winner, const Scored& loser) {
  std::vector<std::pair<double, std::string>> gaps;
  for (size_t i = 0; i < policy.scorers.size(); ++i) {
    double gap = policy.scorers[i].weight * (winner.scores[i] - loser.scores[i]);
    if (gap > 1e-9) {
      gaps.push_back({gap, absl::StrFormat("%s %.1f vs %.1f (weight %g)",
                                           policy.scorers[i].scorer->Name(), loser.scores[i],
                                           winner.scores[i], policy.scorers[i].weight)});
    }
  }
  std::sort(gaps.begin(), gaps.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (gaps.empty()) return "tied on every scorer; the more local candidate wins, then the first";
  std::string out = "lower ";
  for (size_t i = 0; i < gaps.size(); ++i) absl::StrAppend(&out, i ? "; " : "", gaps[i].second);
  return out;
}

// How local a candidate is, lower is better: inside one NVLink domain first, then the
// highest fabric tier its nodes cross, then the number of NVLink domains it spans (what
// stock cons_tres with topology.conf minimizes: the lowest switch, then the fewest nodes).
std::tuple<int, int, size_t> Locality(const CandidateFacts& f) {
  return {f.domains.size() > 1 ? 1 : 0, f.job_tier, f.domains.size()};
}

std::string LocalityText(const Topology& topo, const CandidateFacts& f) {
  std::string within = f.job_tier == Topology::kSameNode
                           ? "on one node"
                           : absl::StrCat("under one ", TierName(topo, f.job_tier));
  return absl::StrCat(f.domains.size(), f.domains.size() == 1 ? " NVLink domain " : " NVLink domains ",
                      within);
}

std::vector<ScoreLine> Lines(const Policy& policy, const std::vector<double>& scores) {
  std::vector<ScoreLine> out;
  for (size_t i = 0; i < policy.scorers.size(); ++i) {
    out.push_back({std::string(policy.scorers[i].scorer->Name()), policy.scorers[i].weight,
                   scores[i]});
  }
  return out;
}

}  // namespace

Engine::Engine(std::shared_ptr<const Topology> topo, std::shared_ptr<const Policy> policy,
               ModelProfile model)
    : topo_(std::move(topo)), policy_(std::move(policy)), model_(model), hierarchy_(*topo_) {}

PlacementResult Engine::Place(const ClusterState& state, const Request& r) const try {
  const Topology& topo = *topo_;
  PlacementResult result;
  result.request = DescribeRequest(r, topo);
  result.policy = policy_->name;

  // Filter: what a chunk is, and how many are needed.
  ChunkRule rule;
  int k = r.gpus;
  if (r.nodes > 0) {
    rule = {r.gpus / r.nodes, true};
    k = r.nodes;
  } else if (r.tp > 1) {
    rule = {r.tp, false};
    k = r.num_groups();
  }
  std::optional<SearchState> s;
  s.emplace(hierarchy_, state, r, rule);
  // nvl=off: TP groups still go inside NVLink domains when there is room, without a note.
  if (s->total_capacity() < k && !rule.per_node && rule.size > 1 && r.nvl == NvlMode::kOff) {
    rule = {1, false};
    k = r.gpus;
    s.emplace(hierarchy_, state, r, rule);
  }
  if (s->total_capacity() < k && !rule.per_node && rule.size > 1 && r.nvl == NvlMode::kPrefer) {
    result.relaxations.push_back(absl::StrFormat(
        "nvl=prefer: TP groups of %d GPUs may span NVLink domains, because the free domains "
        "hold only %d of the %d groups needed (largest free domain has %d GPUs)",
        rule.size, s->total_capacity(), k, s->largest_free_domain()));
    rule = {1, false};
    k = r.gpus;
    s.emplace(hierarchy_, state, r, rule);
  }
  if (s->total_capacity() < k) {
    result.reason = NoRoomReason(topo, r, rule, *s, k);
    return result;
  }

  // Generate.
  std::vector<Candidate> candidates;
  GenerateContext gen_ctx;
  gen_ctx.candidates = policy_->candidates;
  gen_ctx.seed = policy_->seed;
  for (const std::shared_ptr<const Generator>& gen : policy_->generators) {
    for (Candidate& c : gen->Generate(*s, k, gen_ctx)) {
      if (static_cast<int>(c.ranks.size()) == r.gpus) candidates.push_back(std::move(c));
    }
  }

  // PreScore and Score.
  ScoringContext ctx{topo, state, r, IdealComm(topo, r, model_), policy_->seed};
  std::vector<Scored> scored;
  double weight_sum = 0;
  for (const Policy::Weighted& w : policy_->scorers) weight_sum += w.weight;
  bool strict_split = false;
  for (Candidate& c : candidates) {
    Scored sc;
    sc.facts = ComputeFacts(topo, r, model_, c.ranks);
    sc.candidate = std::move(c);
    if (r.nvl == NvlMode::kStrict && sc.facts.tp_groups_split > 0) {
      strict_split = true;  // nodes mode can cut a TP group across hosts
      continue;
    }
    sc.tier_ok = r.max_tier < 0 || sc.facts.job_tier <= r.max_tier;
    for (const Policy::Weighted& w : policy_->scorers) {
      sc.scores.push_back(std::clamp(w.scorer->Score(ctx, sc.facts), 0.0, 100.0));
    }
    scored.push_back(std::move(sc));
  }
  // Normalize per scorer across the candidates, then the framework's weighted mean.
  for (size_t i = 0; i < policy_->scorers.size(); ++i) {
    std::vector<double> column;
    for (const Scored& sc : scored) column.push_back(sc.scores[i]);
    policy_->scorers[i].scorer->Normalize(&column);
    for (size_t c = 0; c < scored.size(); ++c) {
      scored[c].scores[i] = std::clamp(column[c], 0.0, 100.0);
      scored[c].total += policy_->scorers[i].weight * scored[c].scores[i] / weight_sum;
    }
  }
  if (scored.empty()) {
    result.reason = strict_split
                        ? absl::StrFormat("every candidate of %d nodes splits a TP group of %d "
                                          "GPUs across NVLink domains (nvl=strict)",
                                          r.nodes, r.tp)
                        : "no candidate placement";
    return result;
  }
  bool any_tier_ok = std::any_of(scored.begin(), scored.end(),
                                 [](const Scored& x) { return x.tier_ok; });
  if (r.max_tier >= 0 && !any_tier_ok) {
    int level = r.max_tier + 1;
    std::string why = absl::StrFormat(
        "needs %d %s under one %s switch; the best, %s, has room for %d", k,
        rule.size > 1 ? absl::StrCat("TP groups of ", rule.size, " GPUs") : "GPUs",
        topo.tiers()[r.max_tier], s->label_of_best_at_level(level),
        s->best_capacity_at_level(level));
    if (r.max_tier_required) {
      result.reason = absl::StrCat(why, " (max-tier ", topo.tiers()[r.max_tier], " required)");
      return result;
    }
    result.relaxations.push_back(
        absl::StrCat("max-tier ", topo.tiers()[r.max_tier], " preferred but ", why));
  }

  // Choose: the best total among candidates that meet the tier limit (or all, relaxed); a
  // tie goes to the more local candidate, then to the first.
  int best = -1;
  for (size_t i = 0; i < scored.size(); ++i) {
    if (any_tier_ok && !scored[i].tier_ok) continue;
    if (best < 0 || scored[i].total > scored[best].total + 1e-9 ||
        (scored[i].total > scored[best].total - 1e-9 &&
         Locality(scored[i].facts) < Locality(scored[best].facts))) {
      best = static_cast<int>(i);
    }
  }
  const Scored& win = scored[best];
  result.placed = true;
  result.ranks = win.candidate.ranks;
  result.origin = win.candidate.origin;
  result.scores = Lines(*policy_, win.scores);
  result.total = win.total;
  result.comm = win.facts.comm;
  result.job_tier = win.facts.job_tier;
  result.dp_tier = win.facts.dp_tier;
  result.tp_groups_split = win.facts.tp_groups_split;
  result.candidates = static_cast<int>(scored.size());
  if (result.tp_groups_split > 0 && r.nvl == NvlMode::kPrefer && r.tp > 1) {
    result.relaxations.push_back(absl::StrFormat("%d of %d TP groups span NVLink domains",
                                                 result.tp_groups_split, r.num_groups()));
  }
  // Locality traded: the most local candidate allowed, when it is more local than the choice.
  int local = best;
  for (size_t i = 0; i < scored.size(); ++i) {
    if (any_tier_ok && !scored[i].tier_ok) continue;
    if (Locality(scored[i].facts) < Locality(scored[local].facts)) local = static_cast<int>(i);
  }
  if (local != best) {
    const Scored& near = scored[local];
    result.locality_traded = absl::StrFormat(
        "%s would be %s, the choice is %s; it scored %.1f against %.1f: %s",
        near.candidate.origin, LocalityText(topo, near.facts), LocalityText(topo, win.facts),
        near.total, win.total, WhyLost(*policy_, win, near));
  }
  // The best rejected alternative: the runner-up with a different GPU set.
  std::vector<GpuId> mine = win.candidate.ranks;
  std::sort(mine.begin(), mine.end());
  int second = -1;
  for (size_t i = 0; i < scored.size(); ++i) {
    if (static_cast<int>(i) == best) continue;
    std::vector<GpuId> theirs = scored[i].candidate.ranks;
    std::sort(theirs.begin(), theirs.end());
    if (theirs == mine) continue;
    if (second < 0 || scored[i].total > scored[second].total) second = static_cast<int>(i);
  }
  if (second >= 0) {
    const Scored& alt = scored[second];
    std::string why = WhyLost(*policy_, win, alt);
    if (any_tier_ok && !alt.tier_ok) {
      why = absl::StrCat("spans ", TierName(topo, alt.facts.job_tier), ", above max-tier ",
                         topo.tiers()[r.max_tier], "; ", why);
    }
    result.best_rejected = Alternative{alt.candidate.origin, alt.candidate.ranks, alt.total,
                                       Lines(*policy_, alt.scores), alt.facts.comm, why};
  }
  return result;
} catch (const std::exception& e) {
  PlacementResult failed;
  failed.internal_error = true;
  failed.reason = absl::StrCat("internal error: ", e.what());
  return failed;
}

}  // namespace nvlplace
