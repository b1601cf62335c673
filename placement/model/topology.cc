// The cluster model's queries, its spec and its comparison; built by topology_builder.cc.
#include "placement/model/topology.h"

#include <algorithm>
#include <limits>
#include <map>
#include <new>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/model/hostlist.h"
#include "placement/model/topology_builder.h"

namespace nvlplace {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

absl::StatusOr<std::shared_ptr<const Topology>> Topology::Create(const TopologySpec& spec) {
  try {
    return TopologyBuilder(spec).Build();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        FormatAt(spec.loc, "out of memory while building the model of the cluster"));
  }
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

std::pair<int, int> Topology::FirstCommonComponent(SwitchId x, SwitchId y) const {
  const size_t tiers = tiers_.size();
  const size_t rx = leaf_row_[x] * tiers, ry = leaf_row_[y] * tiers;
  for (size_t t = 0; t < tiers; ++t) {
    int c = leaf_component_[rx + t];
    if (c >= 0 && c == leaf_component_[ry + t]) return {static_cast<int>(t), c};
  }
  return {-1, -1};  // apart even at the top tier
}

std::pair<int, double> Topology::LeafPath(SwitchId x, SwitchId y) const {
  if (leaf_component_.empty()) return SwitchPath(x, y);
  auto [t, c] = FirstCommonComponent(x, y);
  if (t < 0) return {kDisconnected, 0};
  if (component_flags_[c] != (kTierExact | kGbpsExact)) return SwitchPath(x, y);
  const size_t tiers = tiers_.size();
  return {t, std::min(leaf_gbps_[leaf_row_[x] * tiers + t], leaf_gbps_[leaf_row_[y] * tiers + t])};
}

int Topology::LeafTier(SwitchId x, SwitchId y) const {
  if (leaf_component_.empty()) return SwitchPath(x, y).first;
  auto [t, c] = FirstCommonComponent(x, y);
  if (t < 0) return kDisconnected;
  if (!(component_flags_[c] & kTierExact)) return SwitchPath(x, y).first;
  return t;
}

std::pair<int, double> Topology::GroupPath(int a, int b) const {
  const auto& la = group_leaves_[a];
  const auto& lb = group_leaves_[b];
  int tier;
  double gbps;
  if (la.size() == lb.size()) {
    // Rail by rail: the worst rail decides.
    tier = -1;
    gbps = kInf;
    for (size_t r = 0; r < la.size(); ++r) {
      auto [rt, rg] = LeafPath(la[r], lb[r]);
      tier = std::max(tier, rt);
      gbps = std::min(gbps, rg);
    }
  } else {
    // Mixed rail counts: the best pair of leaves.
    tier = kDisconnected;
    gbps = 0;
    for (SwitchId x : la) {
      for (SwitchId y : lb) {
        auto [rt, rg] = LeafPath(x, y);
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
  const auto& la = group_leaves_[a];
  const auto& lb = group_leaves_[b];
  if (la.size() != lb.size()) {
    int tier = kDisconnected;
    for (SwitchId x : la) {
      for (SwitchId y : lb) tier = std::min(tier, LeafTier(x, y));
    }
    return tier;
  }
  if (!group_component_.empty()) {
    // The first tier where every rail meets, when each rail's component there is exact.
    const size_t tiers = tiers_.size();
    const size_t ra = a * tiers, rb = b * tiers;
    for (size_t t = 0; t < tiers; ++t) {
      int c = group_component_[ra + t];
      if (c < 0 || c != group_component_[rb + t]) continue;
      if (group_component_exact_[c]) return static_cast<int>(t);
      break;
    }
    // A rail apart at the top tier is disconnected (different components are always right).
    if (group_component_[ra + tiers - 1] != group_component_[rb + tiers - 1]) {
      return kDisconnected;
    }
  }
  int tier = -1;
  for (size_t r = 0; r < la.size(); ++r) tier = std::max(tier, LeafTier(la[r], lb[r]));
  return tier;
}

int Topology::GroupsTier(absl::Span<const int> groups) const {
  constexpr int kCannotTell = -2;
  if (group_component_.empty()) return kCannotTell;
  const size_t tiers = tiers_.size();
  const size_t leaves = group_leaves_[groups[0]].size();
  for (int g : groups) {
    if (group_leaves_[g].size() != leaves) return kCannotTell;
  }
  for (size_t t = 0; t < tiers; ++t) {
    int c = group_component_[groups[0] * tiers + t];
    if (c < 0) continue;
    bool one = std::all_of(groups.begin(), groups.end(),
                           [&](int g) { return group_component_[g * tiers + t] == c; });
    if (!one) continue;
    return group_component_exact_[c] ? static_cast<int>(t) : kCannotTell;
  }
  // Two of them are apart at the top tier: that pair has no common switch.
  return kDisconnected;
}

NodeId Topology::FindNode(absl::string_view name) const { return node_index_.Find(name); }

NodeId Topology::FindNode(absl::string_view name, NodeId guess) const {
  if (guess >= 0 && guess < num_nodes() && nodes_[guess].name == name) return guess;
  return FindNode(name);
}

NodeId Topology::FindNode(const HostNames::Iterator& name) const {
  RunHint hint;
  return FindNode(name, &hint);
}

NodeId Topology::FindNode(const HostNames::Iterator& name, RunHint* hint) const {
  const HostNames::Run& r = name.run();
  uint64_t number = name.number();
  if (hint->run == &r) {  // the same run: the key matched; only the number is to check
    const DeclaredRun& d = declared_runs_[hint->declared];
    if (number - d.first < d.count) return d.first_id + static_cast<NodeId>(number - d.first);
  }
  if (r.width >= 0) {
    // The last declared run of the name's key that starts at or before its number.
    auto after = std::upper_bound(declared_runs_.begin(), declared_runs_.end(), r,
                                  [number](const HostNames::Run& x, const DeclaredRun& d) {
                                    return std::tie(x.head, x.tail, x.width, number) <
                                           std::tie(d.head, d.tail, d.width, d.first);
                                  });
    if (after != declared_runs_.begin()) {
      const DeclaredRun& d = *std::prev(after);
      if (d.width == r.width && number - d.first < d.count && d.head == r.head &&
          d.tail == r.tail) {
        *hint = {&r, static_cast<size_t>(std::distance(declared_runs_.begin(), after) - 1)};
        return d.first_id + static_cast<NodeId>(number - d.first);
      }
    }
  }
  return FindNode(*name);
}

SwitchId Topology::FindSwitch(absl::string_view name) const { return switch_index_.Find(name); }

DomainId Topology::FindDomain(absl::string_view name) const { return domain_index_.Find(name); }

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
  std::vector<NodeId> sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return CommonTierDistinct(sorted);
}

int Topology::CommonTierDistinct(absl::Span<const NodeId> nodes) const {
  bool by_groups = false;
  return CommonTierDistinct(nodes, &by_groups);
}

int Topology::CommonTierDistinct(absl::Span<const NodeId> nodes, bool* by_groups) const {
  *by_groups = false;
  // Distinct leaf groups first: a job spans few of them, and pairs inside a group share its
  // leaves. All pairs are needed: a multi-rooted tree is not an ultrametric. A group's nodes
  // are mostly consecutive, so the nodes are read as runs of one group: (group, whether the
  // run has more than one node; the nodes are distinct, so that says two of them). Both lists
  // are short: kept inline, no allocation.
  if (nodes.size() < 2) return kSameNode;
  absl::InlinedVector<std::pair<int, bool>, 16> runs;
  for (NodeId n : nodes) {
    int g = leaf_group_[n];
    if (!runs.empty() && runs.back().first == g) {
      runs.back().second = true;
    } else {
      runs.push_back({g, false});
    }
  }
  std::sort(runs.begin(), runs.end());
  int tier = kSameNode;
  absl::InlinedVector<int, 16> groups;
  for (size_t i = 0; i < runs.size(); ++i) {
    int g = runs[i].first;
    if (!groups.empty() && groups.back() == g) continue;
    groups.push_back(g);
    // Two nodes of the group: in one run, or in two runs (sorted next to each other).
    bool several = runs[i].second || (i + 1 < runs.size() && runs[i + 1].first == g);
    if (several) tier = std::max(tier, GroupTier(g, g));
  }
  if (groups.size() > 1) {
    // Where the groups' components tell, the pairs inside a group need no look: their
    // leaves are present at any tier where the group's components are.
    int all = GroupsTier(groups);
    if (all != -2) {
      *by_groups = true;
      return all;
    }
  }
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
  if (ga == gb && !group_self_gbps_.empty()) return group_self_gbps_[ga];
  return GroupPath(ga, gb).second;
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
    const GpuModelSpec* of = ModelOf(n);
    std::string model = of == nullptr ? "" : of->name;
    int gpus = static_cast<int>(node.gpus.size());
    // Left out where it is the default (a rail-optimized node's is always its rail count).
    bool rails = !node.leaves.empty() && switches_[node.leaves[0]].rail >= 0;
    int nics = rails || node.nics == gpus ? kDefaultNics : node.nics;
    if (!spec.node_groups.empty()) {
      NodeGroupSpec& last = spec.node_groups.back();
      if (last.gpus == gpus && last.model == model && last.islands == islands &&
          last.placed == node.placed && last.nics == nics) {
        last.names.push_back(node.name);
        continue;
      }
    }
    NodeGroupSpec g;
    g.names.push_back(node.name);
    g.gpus = gpus;
    g.model = model;
    g.islands = std::move(islands);
    g.placed = node.placed;
    g.nics = nics;
    spec.node_groups.push_back(std::move(g));
  }
  for (const NvlDomain& d : domains_) {
    if (!d.multi_node) continue;
    DomainSpec ds;
    ds.name = d.name;
    for (NodeId n : d.nodes) ds.nodes.push_back(nodes_[n].name);
    ds.expected_gpus = static_cast<int>(d.gpus.size());
    ds.spares = d.spares;
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

std::vector<std::string> SortedNames(const Topology& t, absl::Span<const NodeId> nodes) {
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
  std::map<std::string, std::pair<double, double>> ma, mb;
  for (const auto& m : a.gpu_models()) ma[m.name] = {m.nvlink_gbps, m.pcie_gbps};
  for (const auto& m : b.gpu_models()) mb[m.name] = {m.nvlink_gbps, m.pcie_gbps};
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
    const GpuModelSpec* ma_of = a.ModelOf(a.FindNode(na.name));
    const GpuModelSpec* mb_of = b.ModelOf(nb_id);
    std::string model_a = ma_of == nullptr ? "(none)" : ma_of->name;
    std::string model_b = mb_of == nullptr ? "(none)" : mb_of->name;
    if (model_a != model_b) return differ("GPU model of node " + na.name, model_a, model_b);
    if (na.placed != nb.placed) {
      return differ("placed of node " + na.name, na.placed ? "true" : "false",
                    nb.placed ? "true" : "false");
    }
    if (na.nics != nb.nics) return differ("NICs of node " + na.name, num(na.nics), num(nb.nics));
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
    if (da.spares != db.spares) {
      return differ("spares of NVLink domain " + da.name, num(da.spares), num(db.spares));
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
