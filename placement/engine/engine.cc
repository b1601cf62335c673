// The placement engine: filter, generate, score, choose, explain.
#include "placement/engine/engine.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <numeric>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "placement/engine/generator.h"
#include "placement/engine/scorer.h"
#include "placement/engine/sorted_ids.h"
#include "placement/engine/stamps.h"
#include "placement/model/limits.h"
#include "placement/model/mix64.h"

namespace nvlplace {
namespace {

// A candidate with its facts and scores (the per-candidate part of the pipeline): its GPUs
// are facts.ranks.
struct Scored {
  CandidateOrigin origin;  // Candidate::origin
  CandidateFacts facts;
  absl::InlinedVector<double, 8> scores;  // one per scorer: inline, no allocation
  uint64_t gpus_fingerprint = 0;          // SetFingerprint of its GPUs
  double total = 0;
  bool tier_ok = true;
};

// Per thread, kept between calls, so that a candidate's facts allocate only what they keep.
struct FactsScratch {
  std::vector<NodeId> node;                    // ComputeFacts: each rank's node ...
  std::vector<DomainId> domain;                // ... and NVLink domain
  std::vector<NodeId> nodes;                   // ComputeFacts: one per run of ranks on a node
  IdBits node_bits;                            // ComputeFacts: to sort them
  std::vector<std::pair<DomainId, int>> runs;  // ComputeFacts: (domain, GPUs) per run of ranks
  std::vector<NodeId> group, last;             // DpTier: the nodes of a DP group, of the last
  std::vector<NodeId> distinct;                // DpTier: the group's distinct nodes
  Stamps seen;                                 // DpTier: the nodes listed in `distinct`
};

FactsScratch& Scratch() {
  thread_local FactsScratch s;
  return s;
}

// The highest tier any DP group crosses: the group of (t, p) is ranks Request::Rank(t, p, d),
// on `node` (each rank's node). Every (t, p) counts: when TP groups span nodes, rank t of one
// group and rank t of another can sit on different switches while their first ranks share a
// node. No group crosses more than the whole job (`job_tier`): the first that does ends the
// search.
int DpTier(const Topology& topo, const Request& r, absl::Span<const NodeId> node, int job_tier) {
  int tier = Topology::kSameNode;
  if (r.dp <= 1) return tier;
  FactsScratch& scratch = Scratch();
  std::vector<NodeId>& group = scratch.group;
  std::vector<NodeId>& last = scratch.last;
  std::vector<NodeId>& distinct = scratch.distinct;
  last.clear();
  const size_t stride = r.DpStride();
  group.resize(static_cast<size_t>(r.dp));
  distinct.resize(group.size());
  for (int p = 0; p < r.pp; ++p) {
    for (int t = 0; t < r.tp && tier < job_tier; ++t) {
      const NodeId* first = node.data() + r.Rank(t, p, 0);
      for (size_t d = 0; d < group.size(); ++d) group[d] = first[d * stride];
      // Ranks t and t - 1 of every group on the same nodes (GPUs of one node): same tier.
      if (group == last) continue;
      last = group;
      // Its distinct nodes in rank order (CommonTierDistinct takes any order): no sort.
      scratch.seen.Begin(static_cast<size_t>(topo.num_nodes()));
      size_t n = 0;
      for (NodeId m : group) {
        if (scratch.seen.Mark(m)) distinct[n++] = m;
      }
      tier = std::max(tier, topo.CommonTierDistinct(absl::MakeConstSpan(distinct.data(), n)));
    }
  }
  return tier;
}

// `ranks` with each node's GPUs brought together where the node first appears, each node's
// in their order: the order a job gets, since launchers give each node consecutive ranks
// (torchrun's node rank, the rank map's NVLPLACE_FIRST_RANK).
std::vector<GpuId> NodeContiguous(const Topology& topo, const std::vector<GpuId>& ranks) {
  // Node -> its place in first appearance (-1: not met). A rare case: allocated per call.
  std::vector<int> slot(static_cast<size_t>(topo.num_nodes()), -1);
  std::vector<std::vector<GpuId>> by_node;
  for (GpuId g : ranks) {
    int& k = slot[static_cast<size_t>(topo.gpus()[g].node)];
    if (k < 0) {
      k = static_cast<int>(by_node.size());
      by_node.emplace_back();
    }
    by_node[static_cast<size_t>(k)].push_back(g);
  }
  std::vector<GpuId> out;
  out.reserve(ranks.size());
  for (const std::vector<GpuId>& gpus : by_node) out.insert(out.end(), gpus.begin(), gpus.end());
  return out;
}

// The candidate's GPUs (`ranks`) become the facts' own. Each rank's node and domain are read
// from the topology once, into the scratch, and every fact is taken from there; the
// communication estimate only with `price_comm` (else Decide prices the few that need it).
CandidateFacts ComputeFacts(const Topology& topo, const Request& r, const ModelProfile& model,
                            std::vector<GpuId> ranks, bool price_comm) {
  CandidateFacts f;
  f.ranks = std::move(ranks);
  const std::vector<GpuId>& gpus = f.ranks;
  FactsScratch& scratch = Scratch();
  std::vector<NodeId>& node = scratch.node;
  std::vector<DomainId>& domain = scratch.domain;
  // Runs of one node and of one domain too (candidates take GPUs host by host), to be sorted
  // next: the same distinct lists and counts as sorting every rank, for less. Written by
  // index into vectors sized for the worst case: push_back was a call per rank.
  std::vector<NodeId>& nodes = scratch.nodes;
  std::vector<std::pair<DomainId, int>>& runs = scratch.runs;
  node.resize(gpus.size());
  domain.resize(gpus.size());
  nodes.resize(gpus.size());
  runs.resize(gpus.size());
  // A TP group is split when a run of one domain begins inside it, so the split groups are
  // counted where runs begin (a group counted once however many begin in it). The current
  // runs' node and domain are kept apart from the lists (which every store to them would
  // make the compiler read again), and a domain run is written with its first rank: its
  // count is where the next begins, less that.
  size_t node_runs = 0, domain_runs = 0;
  const size_t tp = static_cast<size_t>(r.tp);
  size_t last_split = SIZE_MAX;
  NodeId run_node = -1;
  DomainId run_domain = -1;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const Gpu& gpu = topo.gpus()[gpus[i]];
    node[i] = gpu.node;
    domain[i] = gpu.domain;
    if (node_runs == 0 || gpu.node != run_node) nodes[node_runs++] = run_node = gpu.node;
    if (domain_runs == 0 || gpu.domain != run_domain) {
      if (i % tp != 0 && i / tp != last_split) {
        last_split = i / tp;
        ++f.tp_groups_split;
      }
      runs[domain_runs++] = {run_domain = gpu.domain, static_cast<int>(i)};
    }
  }
  for (size_t k = 0; k < domain_runs; ++k) {
    int end = k + 1 < domain_runs ? runs[k + 1].second : static_cast<int>(gpus.size());
    runs[k].second = end - runs[k].second;
  }
  nodes.resize(node_runs);
  runs.resize(domain_runs);
  scratch.node_bits.SortDistinct(&nodes, topo.num_nodes());
  // A node in two runs: the job would get the node-contiguous order, so the facts are its.
  if (nodes.size() < node_runs) {
    return ComputeFacts(topo, r, model, NodeContiguous(topo, f.ranks), price_comm);
  }
  f.nodes.assign(nodes.begin(), nodes.end());
  std::sort(runs.begin(), runs.end());
  f.domains.reserve(runs.size());
  f.used_per_domain.reserve(runs.size());
  for (const auto& [d, used] : runs) {
    if (!f.domains.empty() && f.domains.back() == d) {
      f.used_per_domain.back() += used;
    } else {
      f.domains.push_back(d);
      f.used_per_domain.push_back(used);
    }
  }
  bool tier_by_groups = false;
  f.job_tier = topo.CommonTierDistinct(f.nodes, &tier_by_groups);
  // With one stage and every TP group inside one NVLink domain whose nodes share a leaf
  // group (Topology::domains_say_links), each DP group has a rank in every TP group, so it
  // touches just the job's leaf groups: where those alone gave the job's tier, they give
  // every DP group's.
  const bool dp_is_job =
      r.dp > 1 && r.pp == 1 && f.tp_groups_split == 0 && tier_by_groups && topo.domains_say_links();
  f.dp_tier = dp_is_job ? f.job_tier : DpTier(topo, r, node, f.job_tier);
  if (price_comm) {
    f.comm = EstimateComm(topo, gpus, {node, domain, f.tp_groups_split == 0, f.domains}, r, model);
  }
  return f;
}

std::string TierName(const Topology& topo, int tier) {
  if (tier == Topology::kSameNode) return "one node";
  if (tier == Topology::kDisconnected) return "disconnected fabrics";
  return topo.tiers()[tier];
}

// Why there is no room, in topology terms.
std::string NoRoomReason(const Request& r, const ChunkRule& rule, const SearchState& s, int k) {
  if (rule.per_node && rule.nodes > 1) {
    std::string what =
        r.one_domain && rule.nodes == r.nodes
            ? absl::StrCat("the whole job inside one NVLink domain (", r.one_domain_why, ")")
        : r.segment > 0 && rule.nodes == r.segment
            ? absl::StrCat(k, " segment", k == 1 ? "" : "s", " of ", rule.nodes,
                           " nodes, each inside one NVLink domain")
        : r.segment > 0
            ? absl::StrCat(k, " group", k == 1 ? "" : "s", " of ", rule.nodes,
                           " nodes (segments of ", r.segment, " and TP groups of ", r.tp,
                           " GPUs), each inside one NVLink domain")
            : absl::StrCat(k, " TP group", k == 1 ? "" : "s", " of ", r.tp, " GPUs over ",
                           rule.nodes, " nodes, each group inside one NVLink domain");
    return absl::StrFormat(
        "needs %s, each node with %d free GPUs%s; the free NVLink domains hold only %d such "
        "group%s (largest free domain has %d GPUs)",
        what, rule.size, r.exclusive ? " (whole nodes free)" : "", s.total_capacity(),
        s.total_capacity() == 1 ? "" : "s", s.largest_free_domain());
  }
  if (!rule.per_node && r.one_domain) {
    return absl::StrFormat(
        "needs the whole job (%d GPUs) inside one NVLink domain (%s); the largest free domain "
        "has %d GPUs (%d GPUs free in all)",
        r.gpus, r.one_domain_why, s.largest_free_domain(), s.usable_free());
  }
  if (rule.per_node) {
    std::string as_groups =
        rule.group > 1
            ? absl::StrFormat(" as whole TP groups of %d inside NVLink domains", rule.group)
            : "";
    return absl::StrFormat(
        "needs %d nodes with %d free GPUs each%s on allowed nodes%s; only %d such nodes", k,
        rule.size, as_groups, r.exclusive ? " (whole nodes free)" : "", s.total_capacity());
  }
  if (rule.size > 1) {
    int fit = s.total_capacity();
    if (k == 1) {
      return absl::StrFormat(
          "needs 1 TP group of %d GPUs inside one NVLink domain; no free NVLink domain "
          "holds it (largest free domain has %d GPUs, %d GPUs free in all)",
          rule.size, s.largest_free_domain(), s.usable_free());
    }
    return absl::StrFormat(
        "needs %d TP groups of %d GPUs, each inside one NVLink domain; the free NVLink "
        "domains hold only %d such group%s (largest free domain has %d GPUs, %d GPUs free "
        "in all)",
        k, rule.size, fit, fit == 1 ? "" : "s", s.largest_free_domain(), s.usable_free());
  }
  return absl::StrFormat("needs %d GPUs; only %d are free on the allowed nodes%s", k,
                         s.usable_free(), r.exclusive ? " that are wholly free" : "");
}

// The scorers where `loser` lost to `winner` (scores in the policy's scorer order).
std::string WhyLost(const Policy& policy, absl::Span<const double> winner,
                    absl::Span<const double> loser) {
  std::vector<std::pair<double, std::string>> gaps;
  for (size_t i = 0; i < policy.scorers.size(); ++i) {
    double gap = policy.scorers[i].weight * (winner[i] - loser[i]);
    if (gap > 1e-9) {
      gaps.push_back(
          {gap, absl::StrFormat("%s %.1f vs %.1f (weight %g)", policy.scorers[i].scorer->Name(),
                                loser[i], winner[i], policy.scorers[i].weight)});
    }
  }
  std::sort(gaps.begin(), gaps.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (gaps.empty()) return "tied on every scorer; the more local candidate wins, then the first";
  std::string out = "lower ";
  for (size_t i = 0; i < gaps.size(); ++i) absl::StrAppend(&out, i ? "; " : "", gaps[i].second);
  return out;
}

// How local a candidate is, lower is better (LocalityRank, engine.h).
uint64_t Locality(const CandidateFacts& f) {
  return LocalityRank(static_cast<int>(std::min<size_t>(f.domains.size(), INT32_MAX)), f.job_tier);
}

std::string LocalityText(const Topology& topo, const CandidateFacts& f) {
  std::string within = f.job_tier == Topology::kSameNode
                           ? "on one node"
                           : absl::StrCat("under one ", TierName(topo, f.job_tier));
  return absl::StrCat(f.domains.size(),
                      f.domains.size() == 1 ? " NVLink domain " : " NVLink domains ", within);
}

std::vector<ScoreLine> Lines(const Policy& policy, absl::Span<const double> scores) {
  std::vector<ScoreLine> out;
  for (size_t i = 0; i < policy.scorers.size(); ++i) {
    out.push_back(
        {std::string(policy.scorers[i].scorer->Name()), policy.scorers[i].weight, scores[i]});
  }
  return out;
}

// The unit the search takes (a TP group, one node's share in nodes mode, else one GPU), how
// many the request needs, and the search state over the usable free GPUs in those units.
struct Chunking {
  ChunkRule rule;
  int k = 0;
  std::optional<SearchState> search;
};

// The chunks that keep every TP group inside one NVLink domain: TP groups; in nodes mode each
// node's share as whole TP groups inside its islands (when TP divides the share; else the
// groups cross nodes whatever is chosen and the share is any free GPUs of the node, from as
// few islands as it can); single GPUs when there is no TP.
// Nodes mode: nodes that must share one NVLink domain, taken together: the segment, the whole
// job for one_domain, and with `whole_groups` the nodes a TP group larger than a node's share
// spans (their least common multiple; each divides the node count, so it does too).
int NodesTogether(const Request& r, bool whole_groups) {
  int share = r.gpus / r.nodes;
  int together = std::max(r.segment, 1);
  if (r.one_domain) together = r.nodes;
  if (whole_groups && r.tp > share && r.tp % share == 0) {
    together = std::lcm(together, r.tp / share);
  }
  return together;
}

Chunking WholeGroupChunks(const Request& r) {
  Chunking c;
  c.k = r.gpus;
  if (r.nodes > 0) {
    int share = r.gpus / r.nodes;
    bool whole = r.tp > 1 && share % r.tp == 0;
    c.rule = {share, true, whole ? r.tp : 1, r.tp > 1, NodesTogether(r, true), r.spread_segments};
    c.k = r.nodes / c.rule.nodes;
  } else if (r.one_domain) {
    c.rule = {r.gpus, false};  // the whole job: one chunk inside one domain
    c.k = 1;
  } else if (r.tp > 1) {
    c.rule = {r.tp, false};
    c.k = r.num_groups();
  }
  return c;
}

// The chunks when TP groups may span domains: single GPUs; in nodes mode each node's share
// from as few islands as it can. Segments and one_domain still hold: they are not TP groups.
Chunking SplitGroupChunks(const Request& r) {
  Chunking c;
  c.k = r.gpus;
  c.rule = {1, false};
  if (r.nodes > 0) {
    c.rule = {r.gpus / r.nodes, true, 1, true, NodesTogether(r, false), r.spread_segments};
    c.k = r.nodes / c.rule.nodes;
  } else if (r.one_domain) {
    c.rule = {r.gpus, false};
    c.k = 1;
  }
  return c;
}

// Whether the chunks are TP groups kept inside domains (so that splitting could make room).
bool KeepsGroupsWhole(const Request& r, const ChunkRule& rule) {
  if (r.tp <= 1) return false;
  if (rule.per_node) return rule.group > 1 || rule.nodes > NodesTogether(r, false);
  return !r.one_domain && rule.size > 1;
}

std::string SplitRelaxation(const Request& r, const Chunking& whole) {
  if (whole.rule.per_node && whole.rule.nodes > 1) {
    return absl::StrFormat(
        "nvl=prefer: TP groups of %d GPUs may span NVLink domains, because the free domains "
        "hold only %d of the %d groups of %d nodes that keep them whole",
        r.tp, whole.search->total_capacity(), whole.k, whole.rule.nodes);
  }
  if (whole.rule.per_node) {
    return absl::StrFormat(
        "nvl=prefer: TP groups of %d GPUs may span NVLink domains, because only %d of the %d "
        "nodes needed hold %d free GPUs as whole TP groups inside NVLink domains",
        r.tp, whole.search->total_capacity(), whole.k, whole.rule.size);
  }
  return absl::StrFormat(
      "nvl=prefer: TP groups of %d GPUs may span NVLink domains, because the free domains "
      "hold only %d of the %d groups needed (largest free domain has %d GPUs)",
      whole.rule.size, whole.search->total_capacity(), whole.k,
      whole.search->largest_free_domain());
}

// Filter: the chunking of the request. When the free NVLink domains cannot hold its TP
// groups, nvl=off takes split groups (TP groups still go inside domains when there is room,
// without a note) and nvl=prefer does the same with the relaxation noted in `relaxations`.
Chunking ChooseChunking(const Hierarchy& hierarchy, const ClusterState& state, const Request& r,
                        bool keep_spares, std::vector<std::string>* relaxations) {
  Chunking c = WholeGroupChunks(r);
  c.rule.keep_spares = keep_spares;
  c.search.emplace(hierarchy, state, r, c.rule);
  bool groups_do_not_fit = c.search->total_capacity() < c.k && KeepsGroupsWhole(r, c.rule);
  if (groups_do_not_fit && r.nvl != NvlMode::kStrict) {
    if (r.nvl == NvlMode::kPrefer) relaxations->push_back(SplitRelaxation(r, c));
    Chunking split = SplitGroupChunks(r);
    split.rule.keep_spares = keep_spares;
    c.rule = split.rule;
    c.k = split.k;
    c.search.emplace(hierarchy, state, r, c.rule);
  }
  return c;
}

// Generate: every generator of the policy in its order, over the same search state; only
// candidates of exactly the request's GPUs are kept. When TP groups may split (single GPUs
// taken), each candidate's GPUs are regrouped into TP groups over the fewest domains. A
// candidate with the very ranks of an earlier one is dropped: it would score the same and
// lose the tie to the first (on large fabrics several levels of the tree often give the
// same best fit, and scoring is most of a decision's time). Each candidate kept has its
// fingerprint.
std::vector<Candidate> GenerateCandidates(const Topology& topo, const Policy& policy,
                                          const Chunking& chunks, const Request& r,
                                          uint64_t decision) {
  GenerateContext ctx;
  ctx.candidates = policy.candidates;
  ctx.candidate_gpus = policy.candidate_gpus;
  ctx.seed = policy.seed;
  ctx.decision = decision;
  bool regroup = r.tp > 1 && !chunks.rule.per_node && chunks.rule.size == 1;
  std::vector<Candidate> out;
  for (const std::shared_ptr<const Generator>& gen : policy.generators) {
    for (Candidate& c : gen->Generate(*chunks.search, chunks.k, ctx)) {
      if (static_cast<int>(c.ranks.size()) != r.gpus) continue;
      if (regroup) c.ranks = GroupRanks(topo, c.ranks, r.tp);
      // Regrouping reorders the GPUs, not the set: a generator's fingerprint still holds. A
      // decision has a few tens of candidates at most: each earlier one is checked.
      if (!c.fingerprint) c.fingerprint = SetFingerprint(topo, c.ranks);
      bool again = std::any_of(out.begin(), out.end(), [&](const Candidate& o) {
        return *o.fingerprint == *c.fingerprint && o.ranks == c.ranks;
      });
      if (!again) out.push_back(std::move(c));
    }
  }
  return out;
}

struct Scoring {
  std::vector<Scored> candidates;  // in the order generated, less those dropped
  bool strict_split = false;       // some candidate was dropped for splitting a TP group
  bool comm_priced = false;        // every candidate's facts have their comm (ReadsComm)
};

// Whether a scorer of the policy reads the communication estimate.
bool ReadsComm(const Policy& policy) {
  return std::any_of(policy.scorers.begin(), policy.scorers.end(),
                     [](const Policy::Weighted& w) { return w.scorer->ReadsComm(); });
}

// PreScore and Score: each candidate's facts, computed once, whether it meets the tier limit,
// and each scorer's score clamped to 0..100. Under nvl=strict a candidate that splits a TP
// group is dropped (nodes mode can cut a TP group across hosts).
Scoring ScoreCandidates(const Topology& topo, const ClusterState& state, const Request& r,
                        const Policy& policy, const ModelProfile& model, uint64_t decision,
                        std::vector<Candidate> candidates) {
  Scoring out;
  out.comm_priced = ReadsComm(policy);
  ScoringContext ctx{topo,        state,
                     r,           out.comm_priced ? IdealComm(topo, r, model) : CommEstimate{},
                     policy.seed, decision};
  out.candidates.reserve(candidates.size());  // a move per candidate, not one per growth
  for (Candidate& c : candidates) {
    Scored sc;
    sc.gpus_fingerprint = *c.fingerprint;  // GenerateCandidates gave every candidate one
    sc.origin = std::move(c.origin);
    sc.facts = ComputeFacts(topo, r, model, std::move(c.ranks), out.comm_priced);
    if (r.nvl == NvlMode::kStrict && sc.facts.tp_groups_split > 0) {
      out.strict_split = true;
      continue;
    }
    sc.tier_ok = r.max_tier < 0 || sc.facts.job_tier <= r.max_tier;
    sc.scores.reserve(policy.scorers.size());
    for (const Policy::Weighted& w : policy.scorers) {
      sc.scores.push_back(std::clamp(w.scorer->Score(ctx, sc.facts), 0.0, 100.0));
    }
    out.candidates.push_back(std::move(sc));
  }
  return out;
}

// Normalize per scorer across the candidates, then the framework's weighted mean (the total).
void NormalizeAndWeigh(const Policy& policy, std::vector<Scored>* scored) {
  double weight_sum = 0;
  for (const Policy::Weighted& w : policy.scorers) weight_sum += w.weight;
  std::vector<double> column;
  column.reserve(scored->size());
  for (size_t i = 0; i < policy.scorers.size(); ++i) {
    column.clear();
    for (const Scored& sc : *scored) column.push_back(sc.scores[i]);
    policy.scorers[i].scorer->Normalize(&column);
    for (size_t c = 0; c < scored->size(); ++c) {
      (*scored)[c].scores[i] = std::clamp(column[c], 0.0, 100.0);
      (*scored)[c].total += policy.scorers[i].weight * (*scored)[c].scores[i] / weight_sum;
    }
  }
}

// What a decision is, for seeded generators and scorers to draw afresh per decision (issue 11:
// one draw per seed made random first fit over one fixed order): a hash of the request, of
// which GPUs are busy (the state's fingerprint, kept as GPUs change: a pass over every free GPU
// was a quarter of a random replay) and of its allowed nodes. A function of the decision's inputs,
// so the same state and request decide the same (a replay is reproducible) with no state kept
// between decisions (an engine shared by threads needs no lock).
uint64_t DecisionKey(const ClusterState& state, const Request& r) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over 64-bit words
  auto add = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  for (int v : {r.gpus, r.tp, r.pp, r.dp, r.nodes, r.gpu_model}) add(static_cast<uint64_t>(v));
  add(state.busy_fingerprint());
  // Every node or one model's nodes is said by allowed_set alone; only a listed set is read.
  add(static_cast<uint64_t>(static_cast<int64_t>(r.allowed_set)));
  if (r.allowed_set == Request::kListed) {
    uint64_t listed = 0;  // XOR of the allowed nodes' mixed ids: no chain of multiplies
    for (size_t n = 0; n < r.allowed_node.size(); ++n) {
      if (r.allowed_node[n]) listed ^= Mix64(n);
    }
    add(listed);
  }
  return h;
}

// Whether any generator or scorer of the policy draws per decision: only then is the
// decision's key computed.
bool Seeded(const Policy& policy) {
  return std::any_of(policy.generators.begin(), policy.generators.end(),
                     [](const auto& g) { return g->Seeded(); }) ||
         std::any_of(policy.scorers.begin(), policy.scorers.end(),
                     [](const Policy::Weighted& w) { return w.scorer->Seeded(); });
}

// Why no candidate is left when the search had room.
std::string NoCandidateReason(const Request& r, bool strict_split) {
  if (!strict_split) return "no candidate placement";
  return absl::StrFormat(
      "every candidate of %d nodes splits a TP group of %d GPUs across "
      "NVLink domains (nvl=strict)",
      r.nodes, r.tp);
}

// The max-tier limit over the scored candidates: whether any meets it (then only those may
// be chosen); when none does, the refusal (max-tier required) or the relaxation to note.
struct TierLimit {
  bool any_ok = true;
  std::string refusal;
  std::string relaxation;
};

TierLimit CheckTierLimit(const Topology& topo, const Request& r, const Chunking& chunks,
                         const std::vector<Scored>& scored) {
  TierLimit limit;
  limit.any_ok =
      std::any_of(scored.begin(), scored.end(), [](const Scored& x) { return x.tier_ok; });
  if (r.max_tier < 0 || limit.any_ok) return limit;
  int level = r.max_tier + 1;
  std::string why = absl::StrFormat(
      "needs %d %s under one %s switch; the best, %s, has room for %d", chunks.k,
      chunks.rule.size > 1 ? absl::StrCat("TP groups of ", chunks.rule.size, " GPUs") : "GPUs",
      topo.tiers()[r.max_tier], chunks.search->label_of_best_at_level(level),
      chunks.search->best_capacity_at_level(level));
  if (r.max_tier_required) {
    limit.refusal = absl::StrCat(why, " (max-tier ", topo.tiers()[r.max_tier], " required)");
  } else {
    limit.relaxation = absl::StrCat("max-tier ", topo.tiers()[r.max_tier], " preferred but ", why);
  }
  return limit;
}

// A candidate the choice may take: within the tier limit when any candidate is.
bool Allowed(const Scored& sc, bool any_tier_ok) { return !any_tier_ok || sc.tier_ok; }

// Choose: the best total among the allowed candidates; a tie goes to the more local
// candidate, then to the first. RET its index.
int Choose(const std::vector<Scored>& scored, bool any_tier_ok) {
  int best = -1;
  for (size_t i = 0; i < scored.size(); ++i) {
    if (!Allowed(scored[i], any_tier_ok)) continue;
    if (best < 0 || scored[i].total > scored[best].total + 1e-9 ||
        (scored[i].total > scored[best].total - 1e-9 &&
         Locality(scored[i].facts) < Locality(scored[best].facts))) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

// Locality traded: when an allowed candidate is more local than the choice (the most local
// one), what it would have been and the scorers it lost on; else empty.
std::string LocalityTraded(const Topology& topo, const Policy& policy,
                           const std::vector<Scored>& scored, int best, bool any_tier_ok) {
  int local = best;
  for (size_t i = 0; i < scored.size(); ++i) {
    if (!Allowed(scored[i], any_tier_ok)) continue;
    if (Locality(scored[i].facts) < Locality(scored[local].facts)) local = static_cast<int>(i);
  }
  if (local == best) return "";
  const Scored& win = scored[best];
  const Scored& near = scored[local];
  return absl::StrFormat("%s would be %s, the choice is %s; it scored %.1f against %.1f: %s",
                         near.origin.Text(), LocalityText(topo, near.facts),
                         LocalityText(topo, win.facts), near.total, win.total,
                         WhyLost(policy, win.scores, near.scores));
}

// The runner-up: the best total after the choice with a different GPU set; -1 for none.
int RunnerUp(const std::vector<Scored>& scored, int best) {
  uint64_t mine = scored[best].gpus_fingerprint;
  int second = -1;
  for (size_t i = 0; i < scored.size(); ++i) {
    if (static_cast<int>(i) == best) continue;
    if (scored[i].gpus_fingerprint == mine) continue;  // the same GPUs
    if (second < 0 || scored[i].total > scored[second].total) second = static_cast<int>(i);
  }
  return second;
}

// The best rejected alternative: the runner-up, if any.
std::optional<Alternative> BestRejected(const Topology& topo, const Policy& policy,
                                        const Request& r, const std::vector<Scored>& scored,
                                        int best, bool any_tier_ok) {
  const Scored& win = scored[best];
  int second = RunnerUp(scored, best);
  if (second < 0) return std::nullopt;
  const Scored& alt = scored[second];
  std::string why = WhyLost(policy, win.scores, alt.scores);
  if (!Allowed(alt, any_tier_ok)) {
    why = absl::StrCat("spans ", TierName(topo, alt.facts.job_tier), ", above max-tier ",
                       topo.tiers()[r.max_tier], "; ", why);
  }
  return Alternative{alt.origin.Text(),         alt.facts.ranks, alt.total,
                     Lines(policy, alt.scores), alt.facts.comm,  why};
}

// Explain: the chosen candidate (`best`) into `result`: its GPUs, scores and facts, the TP
// groups it splits under nvl=prefer and, with `text`, its origin and score lines, the
// locality traded and the best rejected alternative.
void Explain(const Topology& topo, const Policy& policy, const Request& r,
             const std::vector<Scored>& scored, int best, bool any_tier_ok, bool text,
             PlacementResult* result) {
  const Scored& win = scored[best];
  result->placed = true;
  result->ranks = win.facts.ranks;
  if (text) {
    result->origin = win.origin.Text();
    result->scores = Lines(policy, win.scores);
  }
  result->total = win.total;
  result->comm = win.facts.comm;
  result->job_tier = win.facts.job_tier;
  result->dp_tier = win.facts.dp_tier;
  result->tp_groups_split = win.facts.tp_groups_split;
  result->candidates = static_cast<int>(scored.size());
  if (result->tp_groups_split > 0 && r.nvl == NvlMode::kPrefer && r.tp > 1) {
    result->relaxations.push_back(absl::StrFormat("%d of %d TP groups span NVLink domains",
                                                  result->tp_groups_split, r.num_groups()));
  }
  if (!text) return;
  result->locality_traded = LocalityTraded(topo, policy, scored, best, any_tier_ok);
  result->best_rejected = BestRejected(topo, policy, r, scored, best, any_tier_ok);
}

// The request on the nodes of one GPU model only.
Request OnlyModel(const Topology& topo, const Request& r, int model) {
  Request out = r;
  out.gpu_model = model;
  out.allowed_node.resize(topo.num_nodes(), true);
  out.allowed_set =
      r.allowed_set == Request::kEveryNode || r.allowed_set == model ? model : Request::kListed;
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (topo.nodes()[n].model != model) out.allowed_node[n] = false;
  }
  return out;
}

// Why no single GPU model can hold the job (mix_models off): too few free GPUs of every
// model, else each model's own reason.
std::string NoSingleModelReason(const Topology& topo, const ClusterState& state, const Request& r,
                                const std::vector<int>& models,
                                const std::vector<PlacementResult>& tried) {
  std::vector<int64_t> free(topo.gpu_models().size(), 0);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    const Node& node = topo.nodes()[n];
    if (node.model < 0 || (!r.allowed_node.empty() && !r.allowed_node[n])) continue;
    free[node.model] += state.free_on_node(n);
  }
  std::vector<std::string> parts;
  bool any_has_room = false;
  for (int m : models) {
    parts.push_back(absl::StrCat(topo.gpu_models()[m].name, " ", free[m]));
    any_has_room = any_has_room || free[m] >= r.gpus;
  }
  if (!any_has_room) {
    return absl::StrCat("no GPU model has ", r.gpus, " free GPUs: ", absl::StrJoin(parts, ", "),
                        "; ask for a model or allow mix_models");
  }
  parts.clear();
  for (size_t i = 0; i < models.size(); ++i) {
    parts.push_back(absl::StrCat(topo.gpu_models()[models[i]].name, ": ", tried[i].reason));
  }
  return absl::StrCat("no single GPU model can hold the job (mix_models off); ",
                      absl::StrJoin(parts, "; "));
}

// The best placement on another GPU model (`other`, named `model`) becomes the winner's best
// rejected alternative when it scored above the winner's own runner-up.
void OfferAlternative(const Policy& policy, const std::string& model, const PlacementResult& other,
                      PlacementResult* win) {
  if (win->best_rejected && win->best_rejected->total >= other.total) return;
  std::vector<double> ws, os;
  for (const ScoreLine& l : win->scores) ws.push_back(l.score);
  for (const ScoreLine& l : other.scores) os.push_back(l.score);
  std::string why =
      other.total < win->total - 1e-9 ? WhyLost(policy, ws, os) : "tied; the first GPU model wins";
  win->best_rejected =
      Alternative{other.origin, other.ranks, other.total,
                  other.scores, other.comm,  absl::StrCat("GPU model ", model, "; ", why)};
}

}  // namespace

Span SpanOf(const std::vector<GpuId>& gpus, const Topology& topo) {
  std::vector<NodeId> nodes;
  std::vector<DomainId> domains;
  for (GpuId g : gpus) {
    nodes.push_back(topo.gpus()[g].node);
    domains.push_back(topo.DomainOf(g));
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::sort(domains.begin(), domains.end());
  domains.erase(std::unique(domains.begin(), domains.end()), domains.end());
  return Span{static_cast<int>(domains.size()), static_cast<int>(nodes.size()),
              topo.CommonTier(nodes)};
}

std::string SpanTierName(const Topology& topo, int tier) {
  if (tier == Topology::kSameNode) return "node";
  if (tier < 0 || tier >= static_cast<int>(topo.tiers().size())) return "disconnected";
  return topo.tiers()[tier];
}

uint64_t LocalityRank(int domains, int tier) {
  constexpr uint64_t kDomains = 10'000'000'000;  // 10^10
  constexpr uint64_t kSplit = 100 * kDomains;    // 10^12: above every (tier + 1) x 10^10
  static_assert(limits::kMaxTiers + 1 < 100);
  uint64_t d = static_cast<uint64_t>(std::clamp<int64_t>(domains, 0, kDomains - 1));
  int64_t t = tier >= Topology::kDisconnected ? limits::kMaxTiers
                                              : std::clamp(tier, -1, limits::kMaxTiers - 1);
  return (domains > 1 ? kSplit : 0) + static_cast<uint64_t>(t + 1) * kDomains + d;
}

std::vector<std::pair<int, int>> GpuModelCounts(const std::vector<GpuId>& gpus,
                                                const Topology& topo) {
  std::vector<int> count(topo.gpu_models().size(), 0);
  for (GpuId g : gpus) {
    int m = topo.nodes()[topo.gpus()[g].node].model;
    if (m >= 0) ++count[m];
  }
  std::vector<std::pair<int, int>> out;
  for (size_t m = 0; m < count.size(); ++m) {
    if (count[m] > 0) out.push_back({static_cast<int>(m), count[m]});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string GpuModelText(const std::vector<GpuId>& gpus, const Topology& topo) {
  std::vector<std::string> parts;
  for (const auto& [model, n] : GpuModelCounts(gpus, topo)) {
    parts.push_back(absl::StrCat(topo.gpu_models()[model].name, " x", n));
  }
  return absl::StrJoin(parts, ", ");
}

Engine::Engine(std::shared_ptr<const Topology> topo, std::shared_ptr<const Policy> policy,
               ModelProfile model)
    : topo_(std::move(topo)), policy_(std::move(policy)), model_(model), hierarchy_(*topo_) {
  std::vector<bool> seen(topo_->gpu_models().size(), false);
  for (const Node& node : topo_->nodes()) {
    node_model_.push_back(node.gpus.empty() ? -1 : node.model);
    if (node_model_.back() >= 0) seen[node.model] = true;
  }
  for (size_t m = 0; m < seen.size(); ++m) {
    if (seen[m]) models_of_every_node_.push_back(static_cast<int>(m));
  }
  for (const NvlDomain& d : topo_->domains()) spare_nodes_ += d.multi_node ? d.spares : 0;
}

// The GPU models of the request's allowed nodes that have GPUs, ascending: every model for a
// request of every node, else a pass over the nodes.
std::vector<int> Engine::ModelsOf(const Request& r) const {
  if (r.allowed_set == Request::kEveryNode) return models_of_every_node_;
  std::vector<bool> seen(topo_->gpu_models().size(), false);
  for (size_t n = 0; n < node_model_.size(); ++n) {
    if (node_model_[n] >= 0 && (r.allowed_node.empty() || r.allowed_node[n])) {
      seen[node_model_[n]] = true;
    }
  }
  std::vector<int> out;
  for (size_t m = 0; m < seen.size(); ++m) {
    if (seen[m]) out.push_back(static_cast<int>(m));
  }
  return out;
}

// The decision: on a cluster of one GPU model (or a typed request) the stages in Decide;
// else one model at a time (OneModelAtATime).
PlacementResult Engine::Place(const ClusterState& state, const Request& r, Detail detail) const
    try {
  PlacementResult result;
  result.policy = policy_->name;
  DecideAnyModel(state, r, detail, &result);
  if (result.placed && policy_->max_comm_ratio > 0) CheckCommRatio(r, detail, &result);
  if (detail == Detail::kFull || (result.placed && detail == Detail::kPlacement)) {
    result.request = DescribeRequest(r, *topo_);
  }
  // What resolving the request relaxed comes first: it holds for every candidate.
  result.relaxations.insert(result.relaxations.begin(), r.relaxations.begin(), r.relaxations.end());
  return result;
} catch (const std::exception& e) {
  PlacementResult failed;
  failed.internal_error = true;
  failed.reason = absl::StrCat("internal error: ", e.what());
  return failed;
}

void Engine::DecideAnyModel(const ClusterState& state, const Request& r, Detail detail,
                            PlacementResult* result) const {
  // A cluster of one model (or a typed request) needs no pass over the allowed nodes.
  if (r.gpu_model >= 0 || models_of_every_node_.size() <= 1) {
    Decide(state, r, detail, result);
    return;
  }
  std::vector<int> models = ModelsOf(r);
  if (models.size() <= 1) {
    Decide(state, r, detail, result);
  } else {
    OneModelAtATime(state, r, models, detail, result);
  }
}

const ClusterState& Engine::Idle() const {
  std::call_once(idle_once_, [this] { idle_ = std::make_unique<const ClusterState>(topo_); });
  return *idle_;
}

// The yardstick is the same request on the idle cluster (its allowed nodes and model as
// asked): the best it could ever get. It is decided only when the placement's communication
// is over the ratio against the ideal (every GPU in one fastest NVLink domain), which is no
// more than the idle cluster's; most placements stop there.
void Engine::CheckCommRatio(const Request& r, Detail detail, PlacementResult* result) const {
  const double limit = policy_->max_comm_ratio;
  const double comm = result->comm.total();
  const double ideal = IdealComm(*topo_, r, model_).total();
  if (!(ideal > 0) || comm <= limit * ideal) return;
  PlacementResult best;
  DecideAnyModel(Idle(), r, Detail::kChoice, &best);
  const double yardstick = best.comm.total();
  if (!best.placed || !(yardstick > 0) || comm <= limit * yardstick) return;
  PlacementResult waits;
  waits.policy = std::move(result->policy);
  waits.comm_ratio_is_why = true;
  if (detail == Detail::kFull) {
    const Span now = SpanOf(result->ranks, *topo_), then = SpanOf(best.ranks, *topo_);
    waits.reason = absl::StrFormat(
        "the best placement now (%d NVLink domain%s, %s) would spend %.1fx the communication of "
        "the job's best on the idle cluster (%d NVLink domain%s, %s); the policy's "
        "max_comm_ratio %g makes it wait for a more local one",
        now.domains, now.domains == 1 ? "" : "s", SpanTierName(*topo_, now.tier), comm / yardstick,
        then.domains, then.domains == 1 ? "" : "s", SpanTierName(*topo_, then.tier), limit);
  }
  *result = std::move(waits);
}

// The decision as its stages: filter (chunking), generate, score, normalize, tier limit,
// choose, explain. A stage that leaves nothing to choose ends the decision with its reason.
void Engine::Decide(const ClusterState& state, const Request& r, Detail detail,
                    PlacementResult* result) const {
  const bool why = detail == Detail::kFull;     // a refusal's reason
  const bool text = detail != Detail::kChoice;  // a placement's explanation
  Chunking chunks = ChooseChunking(hierarchy_, state, r, !(r.may_use_spares || policy_->use_spares),
                                   &result->relaxations);
  if (chunks.search->total_capacity() < chunks.k) {
    if (why) result->reason = NoRoomReason(r, chunks.rule, *chunks.search, chunks.k);
    // Said only when the spares are what keeps it waiting (one more count, on this path only).
    if (chunks.rule.keep_spares && spare_nodes_ > 0) {
      std::vector<std::string> ignored;
      Chunking with_spares = ChooseChunking(hierarchy_, state, r, false, &ignored);
      if (with_spares.search->total_capacity() >= with_spares.k) {
        result->spares_are_why = true;
        if (why) {
          absl::StrAppend(&result->reason,
                          "; it would fit on the nodes its NVLink domains keep free as spares "
                          "(a replacement, or a policy with use_spares: true, may take them)");
        }
      }
    }
    return;
  }
  uint64_t decision = Seeded(*policy_) ? DecisionKey(state, r) : 0;
  std::vector<Candidate> candidates = GenerateCandidates(*topo_, *policy_, chunks, r, decision);
  Scoring scoring =
      ScoreCandidates(*topo_, state, r, *policy_, model_, decision, std::move(candidates));
  NormalizeAndWeigh(*policy_, &scoring.candidates);
  if (scoring.candidates.empty()) {
    if (why) result->reason = NoCandidateReason(r, scoring.strict_split);
    return;
  }
  TierLimit tier = CheckTierLimit(*topo_, r, chunks, scoring.candidates);
  if (!tier.refusal.empty()) {
    if (why) result->reason = std::move(tier.refusal);
    return;
  }
  if (!tier.relaxation.empty()) result->relaxations.push_back(tier.relaxation);
  int best = Choose(scoring.candidates, tier.any_ok);
  if (!scoring.comm_priced) {
    // No scorer read it: priced for what the result tells (the choice, its alternative).
    auto price = [&](CandidateFacts& f) { f.comm = EstimateComm(*topo_, f.ranks, r, model_); };
    price(scoring.candidates[best].facts);
    int second = text ? RunnerUp(scoring.candidates, best) : -1;
    if (second >= 0) price(scoring.candidates[second].facts);
  }

  Explain(*topo_, *policy_, r, scoring.candidates, best, tier.any_ok, text, result);
}

// Models: a request without a model, on allowed nodes of several, is decided on each model's
// nodes alone and the best total kept (a tie goes to the first model); the best of another
// model becomes the best rejected alternative when it beat the chosen model's own runner-up.
// When no model can hold the job, mix_models lets the decision take every model's GPUs,
// noted as a relaxation; otherwise the reason gives each model's free GPUs or reason.
void Engine::OneModelAtATime(const ClusterState& state, const Request& r,
                             const std::vector<int>& models, Detail detail,
                             PlacementResult* result) const {
  std::vector<PlacementResult> tried(models.size());
  int best = -1;
  // A model that takes the job as asked (no relaxation) beats one that must relax it, one
  // that keeps every TP group whole (nvl=off too) beats one that splits; then the higher total.
  auto better = [](const PlacementResult& a, const PlacementResult& b) {
    if (a.relaxations.empty() != b.relaxations.empty()) return a.relaxations.empty();
    if ((a.tp_groups_split == 0) != (b.tp_groups_split == 0)) return a.tp_groups_split == 0;
    return a.total > b.total + 1e-9;
  };
  for (size_t i = 0; i < models.size(); ++i) {
    Decide(state, OnlyModel(*topo_, r, models[i]), detail, &tried[i]);
    if (tried[i].placed && (best < 0 || better(tried[i], tried[best]))) {
      best = static_cast<int>(i);
    }
  }
  if (best >= 0) {
    PlacementResult& win = tried[best];
    if (detail != Detail::kChoice) {  // the other models' best, as the alternative
      for (size_t i = 0; i < models.size(); ++i) {
        if (static_cast<int>(i) == best || !tried[i].placed) continue;
        OfferAlternative(*policy_, topo_->gpu_models()[models[i]].name, tried[i], &win);
      }
    }
    win.policy = std::move(result->policy);
    *result = std::move(win);
    return;
  }
  if (!policy_->mix_models) {
    if (detail == Detail::kFull)
      result->reason = NoSingleModelReason(*topo_, state, r, models, tried);
    return;
  }
  Decide(state, r, detail, result);
  if (result->placed && GpuModelCounts(result->ranks, *topo_).size() > 1) {
    result->relaxations.push_back(
        absl::StrCat("GPU models mixed: ", GpuModelText(result->ranks, *topo_),
                     " (mix_models: no single model can hold the job)"));
  }
}

}  // namespace nvlplace
