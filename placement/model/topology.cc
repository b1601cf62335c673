// Builds and validates the cluster model and answers its topology queries.
#include "placement/model/topology.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <new>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"

namespace nvlplace {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

absl::Status ErrorAt(const SourceLoc& loc, absl::string_view message) {
  return absl::InvalidArgumentError(FormatAt(loc, message));
}

SourceLoc Sub(const SourceLoc& loc, absl::string_view key) {
  SourceLoc out = loc;
  if (!out.path.empty()) out.path = absl::StrCat(out.path, "/", key);
  return out;
}

std::string LineRef(const SourceLoc& loc) {
  return loc.line > 0 ? absl::StrCat(" (line ", loc.line, ")") : "";
}

std::string FirstOn(const SourceLoc& loc) {
  return loc.line > 0 ? absl::StrCat(" (first on line ", loc.line, ")") : "";
}

// Valid numbers (NaN fails every comparison).
bool Bandwidth(double v) { return v > 0 && v <= limits::kMaxBandwidth; }
bool Latency(double v) { return v >= 0 && v <= limits::kMaxLatencyUs; }

// The shortest text of a limit ("1000000", not "1e+06").
std::string LimitText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

std::string BandwidthRule() { return absl::StrCat("up to ", LimitText(limits::kMaxBandwidth)); }

std::string LatencyRule() {
  return absl::StrCat("latencies must be numbers of microseconds from 0 to ",
                      LimitText(limits::kMaxLatencyUs));
}

std::string OversubscriptionRule() {
  return absl::StrCat("oversubscription is a downlink:uplink ratio and must be from 1 to ",
                      LimitText(limits::kMaxOversubscription));
}

absl::Status CheckNameAt(const SourceLoc& loc, absl::string_view name, absl::string_view what) {
  absl::Status ok = CheckName(name, what);
  return ok.ok() ? ok : ErrorAt(loc, ok.message());
}

}  // namespace

std::string FormatAt(const SourceLoc& loc, absl::string_view message) {
  std::string out;
  if (!loc.file.empty()) {
    out = loc.file;
    if (loc.line > 0) {
      absl::StrAppend(&out, ":", loc.line);
      if (loc.col > 0) absl::StrAppend(&out, ":", loc.col);
    }
    out += ": ";
  } else if (loc.line > 0) {
    absl::StrAppend(&out, "line ", loc.line, ": ");
  }
  if (!loc.path.empty()) absl::StrAppend(&out, loc.path, ": ");
  absl::StrAppend(&out, message);
  return out;
}

absl::StatusOr<std::shared_ptr<const Topology>> Topology::Create(const TopologySpec& spec,
                                                                 int max_table_leaf_groups) {
  try {
    return Build(spec, max_table_leaf_groups);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        FormatAt(spec.loc, "out of memory while building the model of the cluster"));
  }
}

absl::StatusOr<std::shared_ptr<const Topology>> Topology::Build(const TopologySpec& spec,
                                                                int max_table_leaf_groups) {
  std::shared_ptr<Topology> t(new Topology());
  t->name_ = spec.name;
  t->link_gbps_ = spec.link_gbps;
  t->nvlink_alpha_us_ = spec.nvlink_alpha_us;
  t->net_alpha_us_ = spec.net_alpha_us;
  if (spec.name.empty()) return ErrorAt(spec.loc, "the cluster needs a name");
  NVL_RETURN_IF_ERROR(CheckNameAt(spec.loc, spec.name, "cluster name"));
  if (!Bandwidth(spec.link_gbps)) {
    return ErrorAt(Sub(spec.loc, "link_gbps"),
                   absl::StrCat("link_gbps must be a positive number of Gb/s ", BandwidthRule()));
  }
  if (!Latency(spec.nvlink_alpha_us) || !Latency(spec.net_alpha_us)) {
    return ErrorAt(Sub(spec.loc, "latency"), LatencyRule());
  }

  // Tiers.
  if (spec.tiers.empty()) return ErrorAt(Sub(spec.loc, "tiers"), "at least one tier is needed");
  if (spec.tiers.size() > static_cast<size_t>(limits::kMaxTiers)) {
    return ErrorAt(Sub(spec.loc, "tiers"), absl::StrCat(spec.tiers.size(), " tiers; at most ",
                                                        limits::kMaxTiers, " are allowed"));
  }
  for (const std::string& tier : spec.tiers) {
    NVL_RETURN_IF_ERROR(CheckNameAt(Sub(spec.loc, "tiers"), tier, "tier name"));
    if (t->FindTier(tier) >= 0) {
      return ErrorAt(Sub(spec.loc, "tiers"), absl::StrCat("tier '", tier, "' is listed twice"));
    }
    t->tiers_.push_back(tier);
  }

  // GPU models.
  if (spec.gpu_models.empty()) {
    return ErrorAt(Sub(spec.loc, "gpu_models"), "at least one GPU model is needed");
  }
  absl::flat_hash_map<std::string, int> model_index;
  for (const GpuModelSpec& m : spec.gpu_models) {
    if (m.name.empty()) return ErrorAt(m.loc, "a GPU model needs a name");
    NVL_RETURN_IF_ERROR(CheckNameAt(m.loc, m.name, "GPU model name"));
    if (!model_index.emplace(m.name, static_cast<int>(t->gpu_models_.size())).second) {
      return ErrorAt(m.loc, absl::StrCat("GPU model '", m.name, "' is declared twice"));
    }
    if (!Bandwidth(m.nvlink_gbps)) {
      return ErrorAt(
          m.loc, absl::StrCat("nvlink_gbps must be a positive number of GB/s ", BandwidthRule()));
    }
    t->gpu_models_.push_back(m);
  }
  auto model_names = [&] {
    std::vector<std::string> names;
    for (const auto& m : spec.gpu_models) names.push_back(m.name);
    return absl::StrJoin(names, ", ");
  };

  // Nodes.
  if (spec.node_groups.empty()) return ErrorAt(Sub(spec.loc, "nodes"), "no nodes are declared");
  int64_t total_gpus = 0;
  for (const NodeGroupSpec& g : spec.node_groups) {
    total_gpus += static_cast<int64_t>(g.names.size()) * std::clamp(g.gpus, 0, 1 << 20);
    if (total_gpus > std::numeric_limits<GpuId>::max()) {
      return ErrorAt(g.loc, absl::StrCat("the cluster has more than ",
                                         std::numeric_limits<GpuId>::max(), " GPUs"));
    }
  }
  size_t total_nodes = 0;
  for (const NodeGroupSpec& g : spec.node_groups) total_nodes += g.names.size();
  t->nodes_.reserve(total_nodes);
  t->node_index_.reserve(total_nodes);
  std::vector<int> node_group;  // per node: index into spec.node_groups
  node_group.reserve(total_nodes);
  std::vector<std::vector<std::vector<int>>> group_islands(spec.node_groups.size());
  for (size_t gi = 0; gi < spec.node_groups.size(); ++gi) {
    const NodeGroupSpec& g = spec.node_groups[gi];
    if (g.names.empty()) return ErrorAt(g.loc, "a node group needs at least one node name");
    if (g.gpus < 1 || g.gpus > limits::kMaxGpusPerNode) {
      return ErrorAt(g.loc, absl::StrCat("gpus must be between 1 and ", limits::kMaxGpusPerNode,
                                         ", not ", g.gpus));
    }
    auto model = model_index.find(g.model);
    if (model == model_index.end()) {
      return ErrorAt(g.loc, absl::StrCat("unknown GPU model '", Printable(g.model),
                                         "'; declared models: ", model_names()));
    }
    // Islands: every index exactly once.
    std::vector<std::vector<int>>& islands = group_islands[gi];
    islands = g.islands;
    if (islands.empty()) {
      islands.emplace_back();
      for (int i = 0; i < g.gpus; ++i) islands.back().push_back(i);
    }
    std::vector<int> seen(g.gpus, 0);
    int covered = 0;
    for (auto& island : islands) {
      if (island.empty()) return ErrorAt(g.loc, "an NVLink island must hold at least one GPU");
      for (int idx : island) {
        if (idx < 0 || idx >= g.gpus) {
          return ErrorAt(
              g.loc, absl::StrCat("island GPU index ", idx, " is out of range: ", "the nodes have ",
                                  g.gpus, " GPUs (0..", g.gpus - 1, ")"));
        }
        if (seen[idx]++) {
          return ErrorAt(g.loc, absl::StrCat("GPU ", idx, " is in two NVLink islands"));
        }
        ++covered;
      }
      std::sort(island.begin(), island.end());
    }
    if (covered != g.gpus) {
      return ErrorAt(g.loc, absl::StrCat("the islands cover ", covered, " GPUs but the nodes have ",
                                         g.gpus, "; list every GPU index once"));
    }
    std::sort(islands.begin(), islands.end());
    for (const std::string& name : g.names) {
      NVL_RETURN_IF_ERROR(CheckNameAt(g.loc, name, "node name"));
      NodeId id = t->num_nodes();
      auto [it, inserted] = t->node_index_.emplace(name, id);
      if (!inserted) {
        return ErrorAt(g.loc, absl::StrCat("node '", name, "' is declared twice",
                                           FirstOn(spec.node_groups[node_group[it->second]].loc)));
      }
      Node node;
      node.name = name;
      node.model = model->second;
      t->nodes_.push_back(std::move(node));
      node_group.push_back(static_cast<int>(gi));
    }
  }
  auto group_of = [&](NodeId n) -> const NodeGroupSpec& { return spec.node_groups[node_group[n]]; };
  auto islands_of = [&](NodeId n) -> const std::vector<std::vector<int>>& {
    return group_islands[node_group[n]];
  };

  // Multi-node NVLink domains.
  std::vector<int> node_domain_spec(t->num_nodes(), -1);
  absl::flat_hash_map<absl::string_view, size_t> domain_names;
  for (size_t d = 0; d < spec.domains.size(); ++d) {
    const DomainSpec& ds = spec.domains[d];
    if (ds.name.empty()) return ErrorAt(ds.loc, "an NVLink domain needs a name");
    NVL_RETURN_IF_ERROR(CheckNameAt(ds.loc, ds.name, "NVLink domain name"));
    if (ds.nodes.empty()) return ErrorAt(ds.loc, "an NVLink domain needs at least one node");
    if (!domain_names.emplace(ds.name, d).second) {
      return ErrorAt(ds.loc, absl::StrCat("NVLink domain '", ds.name, "' is declared twice"));
    }
    if (t->FindNode(ds.name) >= 0) {
      return ErrorAt(ds.loc, absl::StrCat("NVLink domain '", ds.name,
                                          "' has the name of a node; pick another name"));
    }
    int64_t gpus = 0;
    for (const std::string& name : ds.nodes) {
      NodeId n = t->FindNode(name);
      if (n < 0) {
        return ErrorAt(ds.loc,
                       absl::StrCat("node '", Printable(name), "' is not declared under nodes"));
      }
      if (node_domain_spec[n] >= 0) {
        const DomainSpec& other = spec.domains[node_domain_spec[n]];
        return ErrorAt(
            ds.loc, absl::StrCat("node '", name, "' is in two NVLink domains: '", other.name, "'",
                                 LineRef(other.loc), " and '", ds.name, "'"));
      }
      if (islands_of(n).size() != 1) {
        return ErrorAt(ds.loc, absl::StrCat("node '", name, "' has ", islands_of(n).size(),
                                            " NVLink islands; a node in a multi-node NVLink "
                                            "domain must have one"));
      }
      node_domain_spec[n] = static_cast<int>(d);
      gpus += group_of(n).gpus;
    }
    if (ds.expected_gpus > 0 && ds.expected_gpus != gpus) {
      return ErrorAt(ds.loc, absl::StrCat("NVLink domain '", ds.name, "' declares ",
                                          ds.expected_gpus, " GPUs but its nodes have ", gpus));
    }
  }

  // GPUs and domains: multi-node domains first (declaration order), then node islands.
  t->gpus_.reserve(static_cast<size_t>(total_gpus));
  t->domains_.reserve(spec.domains.size() + total_nodes);
  t->domain_index_.reserve(spec.domains.size() + total_nodes);
  for (NodeId n = 0; n < t->num_nodes(); ++n) {
    t->nodes_[n].gpus.reserve(group_of(n).gpus);
    for (int i = 0; i < group_of(n).gpus; ++i) {
      t->nodes_[n].gpus.push_back(t->num_gpus());
      t->gpus_.push_back(Gpu{n, i, -1});
    }
  }
  {
    std::vector<std::vector<NodeId>> domain_nodes(spec.domains.size());  // ascending
    for (NodeId n = 0; n < t->num_nodes(); ++n) {
      if (node_domain_spec[n] >= 0) domain_nodes[node_domain_spec[n]].push_back(n);
    }
    for (size_t d = 0; d < spec.domains.size(); ++d) {
      NvlDomain dom;
      dom.name = spec.domains[d].name;
      dom.multi_node = true;
      dom.nvlink_gbps = kInf;
      DomainId id = t->num_domains();
      for (NodeId n : domain_nodes[d]) {
        dom.nodes.push_back(n);
        dom.nvlink_gbps = std::min(dom.nvlink_gbps, t->gpu_models_[t->nodes_[n].model].nvlink_gbps);
        for (GpuId g : t->nodes_[n].gpus) {
          dom.gpus.push_back(g);
          t->gpus_[g].domain = id;
        }
        t->nodes_[n].domains.push_back(id);
      }
      t->domain_index_.emplace(dom.name, id);
      t->domains_.push_back(std::move(dom));
    }
  }
  for (NodeId n = 0; n < t->num_nodes(); ++n) {
    if (node_domain_spec[n] >= 0) continue;
    const auto& islands = islands_of(n);
    for (size_t k = 0; k < islands.size(); ++k) {
      NvlDomain dom;
      dom.name =
          islands.size() == 1 ? t->nodes_[n].name : absl::StrCat(t->nodes_[n].name, ":nvl", k);
      dom.multi_node = false;
      dom.nvlink_gbps = t->gpu_models_[t->nodes_[n].model].nvlink_gbps;
      dom.nodes.push_back(n);
      DomainId id = t->num_domains();
      for (int idx : islands[k]) {
        GpuId g = t->nodes_[n].gpus[idx];
        dom.gpus.push_back(g);
        t->gpus_[g].domain = id;
      }
      t->nodes_[n].domains.push_back(id);
      if (!t->domain_index_.emplace(dom.name, id).second) {
        return ErrorAt(group_of(n).loc,
                       absl::StrCat("NVLink domain name '", dom.name, "' is used twice"));
      }
      t->domains_.push_back(std::move(dom));
    }
  }

  // Switches.
  if (spec.switches.empty()) {
    return ErrorAt(Sub(spec.loc, "switches"),
                   "no switches are declared: every node must be "
                   "under a leaf switch");
  }
  if (spec.switches.size() > static_cast<size_t>(std::numeric_limits<SwitchId>::max())) {
    return ErrorAt(Sub(spec.loc, "switches"), "too many switches");
  }
  for (const SwitchSpec& s : spec.switches) {
    if (s.name.empty()) return ErrorAt(s.loc, "a switch needs a name");
    NVL_RETURN_IF_ERROR(CheckNameAt(s.loc, s.name, "switch name"));
    SwitchId id = t->num_switches();
    if (!t->switch_index_.emplace(s.name, id).second) {
      return ErrorAt(s.loc, absl::StrCat("switch '", s.name, "' is declared twice",
                                         FirstOn(spec.switches[t->FindSwitch(s.name)].loc)));
    }
    Switch sw;
    sw.name = s.name;
    sw.tier = t->FindTier(s.tier);  // linear, over at most limits::kMaxTiers tiers
    if (sw.tier < 0) {
      return ErrorAt(Sub(s.loc, "tier"),
                     absl::StrCat("unknown tier '", Printable(s.tier), "'; tiers are ",
                                  absl::StrJoin(t->tiers_, ", ")));
    }
    if (!s.nodes.empty() && !s.switches.empty()) {
      return ErrorAt(s.loc, absl::StrCat("switch '", s.name,
                                         "' lists both nodes and switches; a "
                                         "leaf holds nodes, a higher switch holds switches"));
    }
    if (s.nodes.empty() && s.switches.empty()) {
      return ErrorAt(s.loc, absl::StrCat("switch '", s.name, "' has no nodes and no switches"));
    }
    if (s.link_gbps != 0 && !Bandwidth(s.link_gbps)) {
      return ErrorAt(Sub(s.loc, "link_gbps"),
                     absl::StrCat("link_gbps must be a positive number of Gb/s ", BandwidthRule()));
    }
    sw.link_gbps = s.link_gbps > 0 ? s.link_gbps : spec.link_gbps;
    if (!(s.oversubscription >= 1.0 && s.oversubscription <= limits::kMaxOversubscription)) {
      return ErrorAt(Sub(s.loc, "oversubscription"), OversubscriptionRule());
    }
    sw.oversubscription = s.oversubscription;
    sw.rail = s.rail;
    if (s.rail < -1) return ErrorAt(Sub(s.loc, "rail"), "rail must be 0 or more");
    if (s.rail >= 0 && s.nodes.empty()) {
      return ErrorAt(Sub(s.loc, "rail"), "only a leaf switch that holds nodes carries a rail");
    }
    t->switches_.push_back(std::move(sw));
  }
  // Node attachments and children.
  std::vector<std::vector<std::pair<int, SwitchId>>> attach(t->num_nodes());  // (rail, leaf)
  for (SwitchId id = 0; id < t->num_switches(); ++id) {
    const SwitchSpec& s = spec.switches[id];
    Switch& sw = t->switches_[id];
    absl::flat_hash_set<NodeId> listed;
    for (const std::string& name : s.nodes) {
      NodeId n = t->FindNode(name);
      if (n < 0) {
        return ErrorAt(Sub(s.loc, "nodes"),
                       absl::StrCat("node '", Printable(name), "' is not declared under nodes"));
      }
      if (!listed.insert(n).second) {
        return ErrorAt(Sub(s.loc, "nodes"), absl::StrCat("node '", name, "' is listed twice"));
      }
      if (s.rail >= group_of(n).gpus) {
        return ErrorAt(Sub(s.loc, "rail"),
                       absl::StrCat("rail ", s.rail, " does not exist on node '", name,
                                    "', which has ", group_of(n).gpus, " GPUs"));
      }
      sw.nodes.push_back(n);
      attach[n].emplace_back(s.rail, id);
    }
    absl::flat_hash_set<SwitchId> children;
    for (const std::string& name : s.switches) {
      SwitchId c = t->FindSwitch(name);
      if (c < 0) {
        return ErrorAt(Sub(s.loc, "switches"),
                       absl::StrCat("switch '", Printable(name), "' is not declared"));
      }
      if (!children.insert(c).second) {
        return ErrorAt(Sub(s.loc, "switches"), absl::StrCat("switch '", name, "' is listed twice"));
      }
      sw.children.push_back(c);
      t->switches_[c].parents.push_back(id);
    }
  }
  // Cycles (depth-first, colours), reported before tier order so the message says "cycle".
  {
    std::vector<int> colour(t->num_switches(), 0);  // 0 new, 1 on stack, 2 done
    std::vector<SwitchId> stack_path;
    std::vector<std::pair<SwitchId, size_t>> stack;
    for (SwitchId root = 0; root < t->num_switches(); ++root) {
      if (colour[root]) continue;
      stack.push_back({root, 0});
      colour[root] = 1;
      stack_path.push_back(root);
      while (!stack.empty()) {
        auto& [s, next] = stack.back();
        if (next < t->switches_[s].children.size()) {
          SwitchId c = t->switches_[s].children[next++];
          if (colour[c] == 1) {
            std::vector<std::string> cycle;
            auto from = std::find(stack_path.begin(), stack_path.end(), c);
            for (auto it = from; it != stack_path.end(); ++it) {
              cycle.push_back(t->switches_[*it].name);
            }
            cycle.push_back(t->switches_[c].name);
            return ErrorAt(Sub(spec.switches[s].loc, "switches"),
                           absl::StrCat("switch cycle: ", absl::StrJoin(cycle, " -> ")));
          }
          if (colour[c] == 0) {
            colour[c] = 1;
            stack_path.push_back(c);
            stack.push_back({c, 0});
          }
        } else {
          colour[s] = 2;
          stack_path.pop_back();
          stack.pop_back();
        }
      }
    }
  }
  for (SwitchId id = 0; id < t->num_switches(); ++id) {
    for (SwitchId c : t->switches_[id].children) {
      if (t->switches_[c].tier >= t->switches_[id].tier) {
        return ErrorAt(
            Sub(spec.switches[id].loc, "switches"),
            absl::StrCat("switch '", t->switches_[c].name, "' (tier ",
                         t->tiers_[t->switches_[c].tier], ") is below '", t->switches_[id].name,
                         "' (tier ", t->tiers_[t->switches_[id].tier],
                         "); a child's tier must be lower than its parent's"));
      }
    }
  }
  // Each node: one leaf, or one leaf per rail 0..R-1.
  for (NodeId n = 0; n < t->num_nodes(); ++n) {
    auto& a = attach[n];
    const Node& node = t->nodes_[n];
    const SourceLoc& loc = group_of(n).loc;
    if (a.empty()) {
      return ErrorAt(loc, absl::StrCat("node '", node.name,
                                       "' is under no leaf switch; list it in the nodes of one "
                                       "leaf (or of one leaf per rail)"));
    }
    std::sort(a.begin(), a.end());
    if (a[0].first < 0) {
      if (a.size() > 1) {
        return ErrorAt(
            loc, absl::StrCat("node '", node.name, "' is under several leaf switches (",
                              t->switches_[a[0].second].name, ", ", t->switches_[a[1].second].name,
                              "); only rail leaves (rail: r) may share a node"));
      }
    } else {
      for (size_t r = 0; r < a.size(); ++r) {
        if (a[r].first != static_cast<int>(r)) {
          return ErrorAt(loc, absl::StrCat("node '", node.name, "' has rail leaves for rails ",
                                           absl::StrJoin(a, ",",
                                                         [](std::string* out, const auto& p) {
                                                           absl::StrAppend(out, p.first);
                                                         }),
                                           "; every rail 0..R-1 needs exactly one leaf"));
        }
      }
    }
    for (const auto& [rail, leaf] : a) t->nodes_[n].leaves.push_back(leaf);
  }

  // nodes_under, bottom-up by tier; the pairs merged are counted against the limit.
  std::vector<SwitchId> by_tier(t->num_switches());
  for (SwitchId i = 0; i < t->num_switches(); ++i) by_tier[i] = i;
  std::stable_sort(by_tier.begin(), by_tier.end(), [&](SwitchId a, SwitchId b) {
    return t->switches_[a].tier < t->switches_[b].tier;
  });
  {
    int64_t pairs = 0;
    for (SwitchId id : by_tier) {
      Switch& sw = t->switches_[id];
      std::vector<NodeId> under = sw.nodes;
      pairs += static_cast<int64_t>(under.size());
      for (SwitchId c : sw.children) {
        const auto& cu = t->switches_[c].nodes_under;
        pairs += static_cast<int64_t>(cu.size());
        if (pairs > limits::kMaxSwitchNodePairs) {
          return ErrorAt(spec.switches[id].loc,
                         absl::StrCat("the fabric is too densely connected to model: listing "
                                      "the nodes under each switch passes ",
                                      limits::kMaxSwitchNodePairs, " entries at switch '", sw.name,
                                      "'; check the switches lists"));
        }
        under.insert(under.end(), cu.begin(), cu.end());
      }
      std::sort(under.begin(), under.end());
      under.erase(std::unique(under.begin(), under.end()), under.end());
      sw.nodes_under = std::move(under);
    }
  }

  // Ancestors of each switch with upward bottlenecks, top-down (highest tier first). Sorted by
  // id; a merge through a slot per switch, so linear in the pairs merged (which are bounded).
  t->ancestors_.resize(t->num_switches());
  {
    int64_t pairs = 0;
    std::vector<int> slot(t->num_switches(), -1);
    std::vector<Ancestor> merged;
    for (auto it = by_tier.rbegin(); it != by_tier.rend(); ++it) {
      SwitchId id = *it;
      const Switch& sw = t->switches_[id];
      merged.clear();
      merged.push_back(Ancestor{id, sw.tier, kInf});
      slot[id] = 0;
      double up = sw.link_gbps / sw.oversubscription;
      for (SwitchId p : sw.parents) {
        pairs += static_cast<int64_t>(t->ancestors_[p].size());
        if (pairs > limits::kMaxSwitchAncestorPairs) {
          for (const Ancestor& a : merged) slot[a.id] = -1;
          return ErrorAt(spec.switches[id].loc,
                         absl::StrCat("the fabric is too densely connected to model: listing "
                                      "the switches above each switch passes ",
                                      limits::kMaxSwitchAncestorPairs, " entries at switch '",
                                      sw.name, "'; check the switches lists"));
        }
        for (const Ancestor& pa : t->ancestors_[p]) {
          double via = std::min(up, pa.up_gbps);
          if (slot[pa.id] < 0) {
            slot[pa.id] = static_cast<int>(merged.size());
            merged.push_back(Ancestor{pa.id, pa.tier, via});
          } else {
            Ancestor& a = merged[slot[pa.id]];
            a.up_gbps = std::max(a.up_gbps, via);
          }
        }
      }
      for (const Ancestor& a : merged) slot[a.id] = -1;
      std::sort(merged.begin(), merged.end(),
                [](const Ancestor& a, const Ancestor& b) { return a.id < b.id; });
      t->ancestors_[id] = merged;
    }
  }

  // Leaf groups, and their tables when there are few enough of them.
  {
    absl::flat_hash_map<std::vector<SwitchId>, int> groups;
    t->leaf_group_.resize(t->num_nodes());
    for (NodeId n = 0; n < t->num_nodes(); ++n) {
      auto [it, inserted] =
          groups.emplace(t->nodes_[n].leaves, static_cast<int>(t->group_leaves_.size()));
      if (inserted) t->group_leaves_.push_back(t->nodes_[n].leaves);
      t->leaf_group_[n] = it->second;
    }
    int g = t->num_leaf_groups_ = static_cast<int>(t->group_leaves_.size());
    // Each entry merges the two groups' ancestor lists: all of them take about g times the
    // total length of those lists. Past kMaxTableWork steps the entries are left on demand.
    int64_t work = 0;
    if (g <= max_table_leaf_groups) {
      for (const std::vector<SwitchId>& leaves : t->group_leaves_) {
        for (SwitchId leaf : leaves) work += static_cast<int64_t>(t->ancestors_[leaf].size());
      }
      work *= g;
    }
    if (g <= max_table_leaf_groups && work <= kMaxTableWork) {
      t->group_tier_.assign(static_cast<size_t>(g) * g, kDisconnected);
      t->group_gbps_.assign(static_cast<size_t>(g) * g, 0.0);
      for (int a = 0; a < g; ++a) {
        for (int b = a; b < g; ++b) {
          auto [tier, gbps] = t->ComputeGroupPath(a, b);
          t->group_tier_[static_cast<size_t>(a) * g + b] = tier;
          t->group_tier_[static_cast<size_t>(b) * g + a] = tier;
          t->group_gbps_[static_cast<size_t>(a) * g + b] = gbps;
          t->group_gbps_[static_cast<size_t>(b) * g + a] = gbps;
        }
      }
    }
  }
  return std::shared_ptr<const Topology>(std::move(t));
}

std::pair<int, double> Topology::SwitchPath(SwitchId x, SwitchId y) const {
  const auto& ax = ancestors_[x];
  const auto& ay = ancestors_[y];
  int best_tier = kDisconnected;
  double best_gbps = 0;
  size_t i = 0, j = 0;
  while (i < ax.size() && j < ay.size()) {
    if (ax[i].id < ay[j].id) {
      ++i;
    } else if (ay[j].id < ax[i].id) {
      ++j;
    } else {
      const Switch& c = switches_[ax[i].id];
      double gbps = std::min({ax[i].up_gbps, ay[j].up_gbps, c.link_gbps});
      if (c.tier < best_tier || (c.tier == best_tier && gbps > best_gbps)) {
        best_tier = c.tier;
        best_gbps = gbps;
      }
      ++i;
      ++j;
    }
  }
  return {best_tier, best_gbps};
}

std::pair<int, double> Topology::ComputeGroupPath(int a, int b) const {
  const auto& la = group_leaves_[a];
  const auto& lb = group_leaves_[b];
  int tier;
  double gbps;
  if (la.size() == lb.size()) {
    // Rail by rail: the worst rail decides.
    tier = -1;
    gbps = kInf;
    for (size_t r = 0; r < la.size(); ++r) {
      auto [rt, rg] = SwitchPath(la[r], lb[r]);
      tier = std::max(tier, rt);
      gbps = std::min(gbps, rg);
    }
  } else {
    // Mixed rail counts: the best pair of leaves.
    tier = kDisconnected;
    gbps = 0;
    for (SwitchId x : la) {
      for (SwitchId y : lb) {
        auto [rt, rg] = SwitchPath(x, y);
        if (rt < tier || (rt == tier && rg > gbps)) {
          tier = rt;
          gbps = rg;
        }
      }
    }
  }
  if (tier >= kDisconnected) gbps = 0;
  return {tier, gbps};
}

int Topology::GroupTier(int a, int b) const {
  if (group_tier_.empty()) return ComputeGroupPath(a, b).first;
  return group_tier_[static_cast<size_t>(a) * num_leaf_groups_ + b];
}

NodeId Topology::FindNode(absl::string_view name) const {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? -1 : it->second;
}

SwitchId Topology::FindSwitch(absl::string_view name) const {
  auto it = switch_index_.find(name);
  return it == switch_index_.end() ? -1 : it->second;
}

DomainId Topology::FindDomain(absl::string_view name) const {
  auto it = domain_index_.find(name);
  return it == domain_index_.end() ? -1 : it->second;
}

int Topology::FindTier(absl::string_view name) const {
  for (size_t i = 0; i < tiers_.size(); ++i) {
    if (tiers_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

int Topology::CommonTier(NodeId a, NodeId b) const {
  if (a == b) return kSameNode;
  return GroupTier(leaf_group_[a], leaf_group_[b]);
}

int Topology::CommonTier(const std::vector<NodeId>& nodes) const {
  // Distinct leaf groups first: a job spans few of them, and pairs inside a group share its
  // leaves. All pairs are needed: a multi-rooted tree is not an ultrametric.
  std::vector<int> groups;
  std::vector<NodeId> sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.size() < 2) return kSameNode;
  int tier = kSameNode;
  for (NodeId n : sorted) groups.push_back(leaf_group_[n]);
  std::sort(groups.begin(), groups.end());
  for (size_t i = 0; i < groups.size(); ++i) {
    if (i + 1 < groups.size() && groups[i] == groups[i + 1]) {
      tier = std::max(tier, GroupTier(groups[i], groups[i]));
    }
  }
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  for (size_t i = 0; i < groups.size(); ++i) {
    for (size_t j = i + 1; j < groups.size(); ++j) {
      tier = std::max(tier, GroupTier(groups[i], groups[j]));
    }
  }
  return tier;
}

int Topology::Hops(NodeId a, NodeId b) const {
  int tier = CommonTier(a, b);
  if (tier == kSameNode) return 0;
  if (tier >= kDisconnected) return -1;
  return 2 * (tier + 1);
}

double Topology::PathGbps(NodeId a, NodeId b) const {
  if (a == b) return 0;
  int ga = leaf_group_[a], gb = leaf_group_[b];
  if (group_gbps_.empty()) return ComputeGroupPath(ga, gb).second;
  return group_gbps_[static_cast<size_t>(ga) * num_leaf_groups_ + gb];
}

std::vector<GpuId> Topology::GpusUnder(SwitchId sw) const {
  std::vector<GpuId> out;
  for (NodeId n : switches_[sw].nodes_under) {
    out.insert(out.end(), nodes_[n].gpus.begin(), nodes_[n].gpus.end());
  }
  return out;
}

TopologySpec Topology::ToSpec() const {
  TopologySpec spec;
  spec.name = name_;
  spec.tiers = tiers_;
  spec.link_gbps = link_gbps_;
  spec.nvlink_alpha_us = nvlink_alpha_us_;
  spec.net_alpha_us = net_alpha_us_;
  spec.gpu_models = gpu_models_;
  for (auto& m : spec.gpu_models) m.loc = SourceLoc();
  // Node groups: consecutive nodes of the same shape.
  auto islands_of = [&](NodeId n) {
    std::vector<std::vector<int>> islands;
    const Node& node = nodes_[n];
    if (node.domains.size() == 1) return islands;  // one island (or a multi-node domain)
    for (DomainId d : node.domains) {
      islands.emplace_back();
      for (GpuId g : domains_[d].gpus) islands.back().push_back(gpus_[g].index);
    }
    return islands;
  };
  for (NodeId n = 0; n < num_nodes(); ++n) {
    const Node& node = nodes_[n];
    auto islands = islands_of(n);
    const std::string& model = gpu_models_[node.model].name;
    int gpus = static_cast<int>(node.gpus.size());
    if (!spec.node_groups.empty()) {
      NodeGroupSpec& last = spec.node_groups.back();
      if (last.gpus == gpus && last.model == model && last.islands == islands) {
        last.names.push_back(node.name);
        continue;
      }
    }
    NodeGroupSpec g;
    g.names.push_back(node.name);
    g.gpus = gpus;
    g.model = model;
    g.islands = std::move(islands);
    spec.node_groups.push_back(std::move(g));
  }
  for (const NvlDomain& d : domains_) {
    if (!d.multi_node) continue;
    DomainSpec ds;
    ds.name = d.name;
    for (NodeId n : d.nodes) ds.nodes.push_back(nodes_[n].name);
    ds.expected_gpus = static_cast<int>(d.gpus.size());
    spec.domains.push_back(std::move(ds));
  }
  for (const Switch& sw : switches_) {
    SwitchSpec s;
    s.name = sw.name;
    s.tier = tiers_[sw.tier];
    for (NodeId n : sw.nodes) s.nodes.push_back(nodes_[n].name);
    for (SwitchId c : sw.children) s.switches.push_back(switches_[c].name);
    s.rail = sw.rail;
    s.link_gbps = sw.link_gbps;
    s.oversubscription = sw.oversubscription;
    spec.switches.push_back(std::move(s));
  }
  return spec;
}

namespace {

std::vector<std::string> SortedNames(const Topology& t, const std::vector<NodeId>& nodes) {
  std::vector<std::string> out;
  for (NodeId n : nodes) out.push_back(t.nodes()[n].name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> SortedSwitchNames(const Topology& t, const std::vector<SwitchId>& ids) {
  std::vector<std::string> out;
  for (SwitchId s : ids) out.push_back(t.switches()[s].name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Brief(const std::vector<std::string>& names) { return CompressHostlist(names); }

}  // namespace

absl::Status CompareTopologies(const Topology& a, const Topology& b) {
  auto differ = [](absl::string_view what, absl::string_view x, absl::string_view y) {
    return absl::FailedPreconditionError(absl::StrCat(what, " differs: '", x, "' vs '", y, "'"));
  };
  if (a.name() != b.name()) return differ("cluster name", a.name(), b.name());
  if (a.tiers() != b.tiers()) {
    return differ("tiers", absl::StrJoin(a.tiers(), ","), absl::StrJoin(b.tiers(), ","));
  }
  auto num = [](double v) { return absl::StrCat(v); };
  if (a.link_gbps() != b.link_gbps())
    return differ("link_gbps", num(a.link_gbps()), num(b.link_gbps()));
  if (a.nvlink_alpha_us() != b.nvlink_alpha_us() || a.net_alpha_us() != b.net_alpha_us()) {
    return differ("latency", num(a.nvlink_alpha_us()) + "/" + num(a.net_alpha_us()),
                  num(b.nvlink_alpha_us()) + "/" + num(b.net_alpha_us()));
  }
  if (a.gpu_models().size() != b.gpu_models().size()) {
    return differ("GPU model count", num(a.gpu_models().size()), num(b.gpu_models().size()));
  }
  std::map<std::string, double> ma, mb;
  for (const auto& m : a.gpu_models()) ma[m.name] = m.nvlink_gbps;
  for (const auto& m : b.gpu_models()) mb[m.name] = m.nvlink_gbps;
  if (ma != mb) return absl::FailedPreconditionError("GPU models differ");
  if (a.num_nodes() != b.num_nodes()) {
    return differ("node count", num(a.num_nodes()), num(b.num_nodes()));
  }
  for (const Node& na : a.nodes()) {
    NodeId nb_id = b.FindNode(na.name);
    if (nb_id < 0) return differ("node", na.name, "(missing)");
    const Node& nb = b.nodes()[nb_id];
    if (na.gpus.size() != nb.gpus.size()) {
      return differ("GPU count of node " + na.name, num(na.gpus.size()), num(nb.gpus.size()));
    }
    if (a.gpu_models()[na.model].name != b.gpu_models()[nb.model].name) {
      return differ("GPU model of node " + na.name, a.gpu_models()[na.model].name,
                    b.gpu_models()[nb.model].name);
    }
    std::vector<std::string> la, lb;
    for (SwitchId s : na.leaves) la.push_back(a.switches()[s].name);
    for (SwitchId s : nb.leaves) lb.push_back(b.switches()[s].name);
    if (la != lb) {
      return differ("leaves of node " + na.name, absl::StrJoin(la, ","), absl::StrJoin(lb, ","));
    }
    // NVLink domains: same names, same GPU indexes.
    if (na.domains.size() != nb.domains.size()) {
      return differ("NVLink domain count of node " + na.name, num(na.domains.size()),
                    num(nb.domains.size()));
    }
    for (size_t i = 0; i < na.gpus.size(); ++i) {
      const std::string& da = a.domains()[a.DomainOf(na.gpus[i])].name;
      const std::string& db = b.domains()[b.DomainOf(nb.gpus[i])].name;
      if (da != db) {
        return differ(absl::StrCat("NVLink domain of ", na.name, " GPU ", i), da, db);
      }
    }
  }
  if (a.num_domains() != b.num_domains()) {
    return differ("NVLink domain count", num(a.num_domains()), num(b.num_domains()));
  }
  for (const NvlDomain& da : a.domains()) {
    DomainId id = b.FindDomain(da.name);
    if (id < 0) return differ("NVLink domain", da.name, "(missing)");
    const NvlDomain& db = b.domains()[id];
    if (da.multi_node != db.multi_node || da.nvlink_gbps != db.nvlink_gbps) {
      return differ("NVLink domain " + da.name, num(da.nvlink_gbps), num(db.nvlink_gbps));
    }
    auto na = SortedNames(a, da.nodes), nb = SortedNames(b, db.nodes);
    if (na != nb) return differ("nodes of NVLink domain " + da.name, Brief(na), Brief(nb));
  }
  if (a.num_switches() != b.num_switches()) {
    return differ("switch count", num(a.num_switches()), num(b.num_switches()));
  }
  for (const Switch& sa : a.switches()) {
    SwitchId id = b.FindSwitch(sa.name);
    if (id < 0) return differ("switch", sa.name, "(missing)");
    const Switch& sb = b.switches()[id];
    if (a.tiers()[sa.tier] != b.tiers()[sb.tier]) {
      return differ("tier of switch " + sa.name, a.tiers()[sa.tier], b.tiers()[sb.tier]);
    }
    if (sa.rail != sb.rail) return differ("rail of switch " + sa.name, num(sa.rail), num(sb.rail));
    if (sa.link_gbps != sb.link_gbps || sa.oversubscription != sb.oversubscription) {
      return differ("bandwidth of switch " + sa.name,
                    num(sa.link_gbps) + "x1/" + num(sa.oversubscription),
                    num(sb.link_gbps) + "x1/" + num(sb.oversubscription));
    }
    auto na = SortedNames(a, sa.nodes), nb = SortedNames(b, sb.nodes);
    if (na != nb) return differ("nodes of switch " + sa.name, Brief(na), Brief(nb));
    auto ca = SortedSwitchNames(a, sa.children), cb = SortedSwitchNames(b, sb.children);
    if (ca != cb) {
      return differ("child switches of " + sa.name, absl::StrJoin(ca, ","), absl::StrJoin(cb, ","));
    }
  }
  return absl::OkStatus();
}

}  // namespace nvlplace
