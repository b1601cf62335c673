// Builds the cluster model from a TopologySpec in named steps, each checking one part of it.
#include "placement/model/topology_builder.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/model/gpu_models.h"
#include "placement/model/hostlist.h"
#include "placement/model/mix64.h"
#include "placement/model/status_macros.h"

namespace nvlplace {
namespace {

using Ancestor = TopologyBuilder::Ancestor;

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

// One island's GPU indexes: in range and not seen in an earlier island (`seen` counts them).
absl::Status CheckIsland(const NodeGroupSpec& g, const std::vector<int>& island,
                         std::vector<int>& seen) {
  if (island.empty()) return ErrorAt(g.loc, "an NVLink island must hold at least one GPU");
  for (int idx : island) {
    if (idx < 0 || idx >= g.gpus) {
      return ErrorAt(g.loc, absl::StrCat("island GPU index ", idx, " is out of range: ",
                                         "the nodes have ", g.gpus, " GPUs (0..", g.gpus - 1, ")"));
    }
    if (seen[idx]++) return ErrorAt(g.loc, absl::StrCat("GPU ", idx, " is in two NVLink islands"));
  }
  return absl::OkStatus();
}

// A node group's NVLink islands (none declared: one of every GPU, or one per GPU for a model
// without NVLink), each sorted and the list sorted, once they hold every GPU index 0..gpus-1
// exactly once. `g.gpus` is in range; CPU-only nodes have no islands.
absl::StatusOr<std::vector<std::vector<int>>> SortedIslands(const NodeGroupSpec& g, bool nvlink) {
  std::vector<std::vector<int>> islands = g.islands;
  if (islands.empty() && g.gpus > 0) {
    if (nvlink) {
      islands.emplace_back(g.gpus);
      std::iota(islands.back().begin(), islands.back().end(), 0);
    } else {
      for (int i = 0; i < g.gpus; ++i) islands.push_back({i});
    }
  }
  if (!nvlink) {
    for (const std::vector<int>& island : islands) {
      if (island.size() > 1) {
        return ErrorAt(g.loc, absl::StrCat("GPU model '", g.model,
                                           "' has no NVLink (nvlink_gbps 0): each GPU is its own "
                                           "island; leave islands out, or give the model's "
                                           "nvlink_gbps if its GPUs are bridged"));
      }
    }
  }
  std::vector<int> seen(g.gpus, 0);
  int covered = 0;  // at most g.gpus: the indexes checked are in range and distinct
  for (std::vector<int>& island : islands) {
    NVL_RETURN_IF_ERROR(CheckIsland(g, island, seen));
    covered += static_cast<int>(island.size());
    std::sort(island.begin(), island.end());
  }
  if (covered != g.gpus) {
    return ErrorAt(g.loc, absl::StrCat("the islands cover ", covered, " GPUs but the nodes have ",
                                       g.gpus, "; list every GPU index once"));
  }
  std::sort(islands.begin(), islands.end());
  return islands;
}

// A leaf holds nodes, a higher switch holds switches.
absl::Status CheckSwitchKind(const SwitchSpec& s) {
  if (!s.nodes.empty() && !s.switches.empty()) {
    return ErrorAt(s.loc, absl::StrCat("switch '", s.name,
                                       "' lists both nodes and switches; a "
                                       "leaf holds nodes, a higher switch holds switches"));
  }
  if (s.nodes.empty() && s.switches.empty()) {
    return ErrorAt(s.loc, absl::StrCat("switch '", s.name, "' has no nodes and no switches"));
  }
  return absl::OkStatus();
}

// Port speed (0: the cluster's) and oversubscription in range.
absl::Status CheckSwitchLinks(const SwitchSpec& s) {
  if (s.link_gbps != 0 && !Bandwidth(s.link_gbps)) {
    return ErrorAt(Sub(s.loc, "link_gbps"),
                   absl::StrCat("link_gbps must be a positive number of Gb/s ", BandwidthRule()));
  }
  if (!(s.oversubscription >= 1.0 && s.oversubscription <= limits::kMaxOversubscription)) {
    return ErrorAt(Sub(s.loc, "oversubscription"), OversubscriptionRule());
  }
  return absl::OkStatus();
}

// -1, or a rail carried by a leaf.
absl::Status CheckRail(const SwitchSpec& s) {
  if (s.rail < -1) return ErrorAt(Sub(s.loc, "rail"), "rail must be 0 or more");
  if (s.rail >= 0 && s.nodes.empty()) {
    return ErrorAt(Sub(s.loc, "rail"), "only a leaf switch that holds nodes carries a rail");
  }
  return absl::OkStatus();
}

Switch SwitchOf(const SwitchSpec& s, int tier, double default_gbps) {
  Switch sw;
  sw.name = s.name;
  sw.tier = tier;
  sw.rail = s.rail;
  sw.link_gbps = s.link_gbps > 0 ? s.link_gbps : default_gbps;
  sw.oversubscription = s.oversubscription;
  return sw;
}

// Colours of the depth-first search for cycles.
enum Colour { kNew, kOnPath, kDone };

// Folds a parent's ancestors, reached from below at `up` Gb/s, into `merged`; `slot` holds
// each merged switch's index in it (-1 for the others).
void MergeParent(const std::vector<Ancestor>& parent, double up, std::vector<Ancestor>& merged,
                 std::vector<int>& slot) {
  for (const Ancestor& pa : parent) {
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

// Union-find over switches: the root of s's set (halving the path on the way).
SwitchId Root(std::vector<SwitchId>& parent, SwitchId s) {
  while (parent[s] != s) {
    parent[s] = parent[parent[s]];
    s = parent[s];
  }
  return s;
}

void Join(std::vector<SwitchId>& parent, SwitchId a, SwitchId b) {
  parent[Root(parent, b)] = Root(parent, a);
}

// Keeps in `common` (ids, ascending) only the switches among `ancestors` (sorted by id).
void KeepCommon(const std::vector<Ancestor>& ancestors, std::vector<SwitchId>& common) {
  size_t kept = 0, j = 0;
  for (SwitchId s : common) {
    while (j < ancestors.size() && ancestors[j].id < s) ++j;
    if (j < ancestors.size() && ancestors[j].id == s) common[kept++] = s;
  }
  common.resize(kept);
}

// The model with the figures the spec leaves out taken from the table of known models
// (gpu_models.h); a model the table does not know must give its nvlink_gbps, and gets
// kDefaultPcieGbps when it gives no pcie_gbps.
absl::StatusOr<GpuModelSpec> WithTableFigures(GpuModelSpec m) {
  const KnownGpuModel* known = FindKnownGpuModel(m.name);
  if (m.nvlink_gbps == kGbpsFromTable) {
    if (known == nullptr) {
      return ErrorAt(m.loc, absl::StrCat("GPU model '", m.name,
                                         "' is not in nvlplace's table of known models; give its "
                                         "nvlink_gbps (GB/s per GPU, both directions; 0 without "
                                         "NVLink) and pcie_gbps (GB/s, e.g. 64 for PCIe Gen4 x16), "
                                         "or use a known name: ",
                                         KnownGpuModelNames()));
    }
    m.nvlink_gbps = known->nvlink_gbps;
  }
  if (m.pcie_gbps == kGbpsFromTable) {
    m.pcie_gbps = known != nullptr ? known->pcie_gbps : kDefaultPcieGbps;
  }
  return m;
}

}  // namespace

TopologyBuilder::TopologyBuilder(const TopologySpec& spec, const Bounds& bounds)
    : spec_(spec), bounds_(bounds), t_(new Topology()) {}

absl::Span<const TopologyBuilder::Step> TopologyBuilder::Steps() {
  static constexpr Step kSteps[] = {
      &TopologyBuilder::SetCluster,
      &TopologyBuilder::AddTiers,
      &TopologyBuilder::AddGpuModels,
      &TopologyBuilder::AddNodes,
      &TopologyBuilder::AddDomains,
      &TopologyBuilder::AssignGpus,
      &TopologyBuilder::AddSwitches,
      &TopologyBuilder::AttachNodesAndChildren,
      &TopologyBuilder::CheckCycles,
      &TopologyBuilder::CheckTierOrder,
      &TopologyBuilder::AssignLeaves,
      &TopologyBuilder::ComputeNodesUnder,
      &TopologyBuilder::ComputeAncestors,
      &TopologyBuilder::GroupLeaves,
      &TopologyBuilder::ComputeTierComponents,
  };
  return kSteps;
}

absl::StatusOr<std::shared_ptr<const Topology>> TopologyBuilder::Build() {
  for (Step step : Steps()) NVL_RETURN_IF_ERROR((this->*step)());
  KeepPathFacts();
  return std::shared_ptr<const Topology>(std::move(t_));
}

// ---- the cluster, tiers and GPU models ----------------------------------------------------

absl::Status TopologyBuilder::SetCluster() {
  if (spec_.name.empty()) return ErrorAt(spec_.loc, "the cluster needs a name");
  NVL_RETURN_IF_ERROR(CheckNameAt(spec_.loc, spec_.name, "cluster name"));
  if (!Bandwidth(spec_.link_gbps)) {
    return ErrorAt(Sub(spec_.loc, "link_gbps"),
                   absl::StrCat("link_gbps must be a positive number of Gb/s ", BandwidthRule()));
  }
  if (!Latency(spec_.nvlink_alpha_us) || !Latency(spec_.net_alpha_us)) {
    return ErrorAt(Sub(spec_.loc, "latency"), LatencyRule());
  }
  t_->name_ = spec_.name;
  t_->link_gbps_ = spec_.link_gbps;
  t_->nvlink_alpha_us_ = spec_.nvlink_alpha_us;
  t_->net_alpha_us_ = spec_.net_alpha_us;
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddTiers() {
  const SourceLoc loc = Sub(spec_.loc, "tiers");
  if (spec_.tiers.empty()) return ErrorAt(loc, "at least one tier is needed");
  if (spec_.tiers.size() > static_cast<size_t>(limits::kMaxTiers)) {
    return ErrorAt(loc, absl::StrCat(spec_.tiers.size(), " tiers; at most ", limits::kMaxTiers,
                                     " are allowed"));
  }
  for (const std::string& tier : spec_.tiers) NVL_RETURN_IF_ERROR(AddTier(tier));
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddTier(const std::string& tier) {
  const SourceLoc loc = Sub(spec_.loc, "tiers");
  NVL_RETURN_IF_ERROR(CheckNameAt(loc, tier, "tier name"));
  if (t_->FindTier(tier) >= 0) {
    return ErrorAt(loc, absl::StrCat("tier '", tier, "' is listed twice"));
  }
  t_->tiers_.push_back(tier);
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddGpuModels() {
  if (spec_.gpu_models.empty()) {
    return ErrorAt(Sub(spec_.loc, "gpu_models"), "at least one GPU model is needed");
  }
  for (const GpuModelSpec& m : spec_.gpu_models) NVL_RETURN_IF_ERROR(AddGpuModel(m));
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddGpuModel(const GpuModelSpec& m) {
  if (m.name.empty()) return ErrorAt(m.loc, "a GPU model needs a name");
  NVL_RETURN_IF_ERROR(CheckNameAt(m.loc, m.name, "GPU model name"));
  if (!model_index_.emplace(m.name, static_cast<int>(t_->gpu_models_.size())).second) {
    return ErrorAt(m.loc, absl::StrCat("GPU model '", m.name, "' is declared twice"));
  }
  NVL_ASSIGN_OR_RETURN(GpuModelSpec model, WithTableFigures(m));
  if (!(model.nvlink_gbps == 0 || Bandwidth(model.nvlink_gbps))) {
    return ErrorAt(
        Sub(m.loc, "nvlink_gbps"),
        absl::StrCat("nvlink_gbps must be a number of GB/s from 0 (no NVLink) ", BandwidthRule()));
  }
  if (!Bandwidth(model.pcie_gbps)) {
    return ErrorAt(Sub(m.loc, "pcie_gbps"),
                   absl::StrCat("pcie_gbps must be a positive number of GB/s ", BandwidthRule()));
  }
  t_->gpu_models_.push_back(std::move(model));
  return absl::OkStatus();
}

std::string TopologyBuilder::ModelNames() const {
  return absl::StrJoin(spec_.gpu_models, ", ", [](std::string* out, const GpuModelSpec& m) {
    absl::StrAppend(out, m.name);
  });
}

// ---- nodes, NVLink domains and GPUs -------------------------------------------------------

absl::Status TopologyBuilder::AddNodes() {
  if (spec_.node_groups.empty()) return ErrorAt(Sub(spec_.loc, "nodes"), "no nodes are declared");
  NVL_RETURN_IF_ERROR(CountGpus());
  size_t total_nodes = 0;
  for (const NodeGroupSpec& g : spec_.node_groups) total_nodes += g.names.size();
  t_->nodes_.reserve(total_nodes);
  t_->node_index_.reserve(total_nodes);
  node_group_.reserve(total_nodes);
  group_islands_.resize(spec_.node_groups.size());
  for (size_t gi = 0; gi < spec_.node_groups.size(); ++gi) NVL_RETURN_IF_ERROR(AddNodeGroup(gi));
  auto key = [](const Topology::DeclaredRun& d) {
    return std::tie(d.head, d.tail, d.width, d.first);
  };
  std::sort(t_->declared_runs_.begin(), t_->declared_runs_.end(),
            [&key](const auto& a, const auto& b) { return key(a) < key(b); });
  if (total_gpus_ == 0) {
    return ErrorAt(Sub(spec_.loc, "nodes"),
                   "no node has a GPU: give at least one node group a gpus count");
  }
  return absl::OkStatus();
}

// Before anything is allocated for them: the GPUs must be numbered by a GpuId.
absl::Status TopologyBuilder::CountGpus() {
  for (const NodeGroupSpec& g : spec_.node_groups) {
    total_gpus_ += static_cast<int64_t>(g.names.size()) * std::clamp(g.gpus, 0, 1 << 20);
    if (total_gpus_ > std::numeric_limits<GpuId>::max()) {
      return ErrorAt(g.loc, absl::StrCat("the cluster has more than ",
                                         std::numeric_limits<GpuId>::max(), " GPUs"));
    }
  }
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddNodeGroup(size_t gi) {
  const NodeGroupSpec& g = spec_.node_groups[gi];
  if (g.names.empty()) return ErrorAt(g.loc, "a node group needs at least one node name");
  if (g.gpus < 0 || g.gpus > limits::kMaxGpusPerNode) {
    return ErrorAt(g.loc, absl::StrCat("gpus must be between 0 (CPU-only nodes) and ",
                                       limits::kMaxGpusPerNode, ", not ", g.gpus));
  }
  NVL_ASSIGN_OR_RETURN(int model, GroupModel(g));
  NVL_RETURN_IF_ERROR(CheckNics(g));
  bool nvlink = model < 0 || t_->gpu_models_[model].nvlink_gbps > 0;
  NVL_ASSIGN_OR_RETURN(group_islands_[gi], SortedIslands(g, nvlink));
  NodeId first = t_->num_nodes();
  for (const std::string& name : g.names) NVL_RETURN_IF_ERROR(AddNode(name, gi, model));
  // Each run's nodes have consecutive ids: Topology::FindNode finds them by number.
  for (const HostNames::Run& r : g.names.runs()) {
    if (r.width >= 0) {
      t_->declared_runs_.push_back({r.head, r.tail, r.width, r.first, r.count, first});
    }
    first += static_cast<NodeId>(r.count);
  }
  return absl::OkStatus();
}

// The group's model index; -1 for CPU-only nodes, which name no model.
absl::StatusOr<int> TopologyBuilder::GroupModel(const NodeGroupSpec& g) const {
  if (g.gpus == 0) {
    if (!g.model.empty()) {
      return ErrorAt(Sub(g.loc, "model"),
                     absl::StrCat("these nodes have gpus: 0, so no GPU model; remove model '",
                                  Printable(g.model), "' or give their GPU count"));
    }
    if (!g.islands.empty()) {
      return ErrorAt(Sub(g.loc, "islands"), "nodes with gpus: 0 have no NVLink islands");
    }
    return -1;
  }
  if (g.model.empty()) {
    return ErrorAt(g.loc,
                   absl::StrCat("nodes with GPUs need a model; declared models: ", ModelNames()));
  }
  auto model = model_index_.find(g.model);
  if (model == model_index_.end()) {
    return ErrorAt(g.loc, absl::StrCat("unknown GPU model '", Printable(g.model),
                                       "'; declared models: ", ModelNames()));
  }
  return model->second;
}

// The group's NIC count, before any node is built with it. The rail count is checked with the
// leaves (CheckRails).
absl::Status TopologyBuilder::CheckNics(const NodeGroupSpec& g) const {
  if (g.nics == kDefaultNics) return absl::OkStatus();
  if (g.nics < 0 || g.nics > limits::kMaxNicsPerNode) {
    return ErrorAt(Sub(g.loc, "nics"), absl::StrCat("nics must be between 0 (CPU-only nodes) and ",
                                                    limits::kMaxNicsPerNode, ", not ", g.nics));
  }
  if (g.nics == 0 && g.gpus > 0) {
    // Their GPUs could not reach another node: every job spanning nodes would be priced as
    // if it had no network at all.
    return ErrorAt(Sub(g.loc, "nics"),
                   "nodes with GPUs need at least one NIC; nics: 0 is for CPU-only nodes "
                   "(gpus: 0)");
  }
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddNode(const std::string& name, size_t gi, int model) {
  const SourceLoc& loc = spec_.node_groups[gi].loc;
  NVL_RETURN_IF_ERROR(CheckNameAt(loc, name, "node name"));
  const NodeGroupSpec& g = spec_.node_groups[gi];
  // One NIC per GPU unless given; rail-optimized nodes get their rail count (AssignNodeLeaves).
  int nics = g.nics == kDefaultNics ? g.gpus : g.nics;
  t_->nodes_.push_back(Node{name, model, {}, {}, {}, g.placed, nics});
  NodeId first = t_->node_index_.Insert(t_->num_nodes() - 1);
  if (first >= 0) {
    t_->nodes_.pop_back();
    return ErrorAt(
        loc, absl::StrCat("node '", name, "' is declared twice", FirstOn(GroupOf(first).loc)));
  }
  node_group_.push_back(static_cast<int>(gi));
  if (g.placed) t_->num_placed_gpus_ += g.gpus;
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddDomains() {
  node_domain_spec_.assign(t_->num_nodes(), -1);
  absl::flat_hash_map<absl::string_view, size_t> names;  // domain name -> index in spec_.domains
  for (size_t d = 0; d < spec_.domains.size(); ++d) NVL_RETURN_IF_ERROR(AddDomain(d, names));
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddDomain(size_t d,
                                        absl::flat_hash_map<absl::string_view, size_t>& names) {
  const DomainSpec& ds = spec_.domains[d];
  NVL_RETURN_IF_ERROR(CheckDomainName(d, names));
  NVL_ASSIGN_OR_RETURN(int64_t gpus, ClaimDomainNodes(d));
  if (ds.expected_gpus > 0 && ds.expected_gpus != gpus) {
    return ErrorAt(ds.loc, absl::StrCat("NVLink domain '", ds.name, "' declares ", ds.expected_gpus,
                                        " GPUs but its nodes have ", gpus));
  }
  return CheckSpares(d);
}

// Spares are trays kept free inside the domain: at least one node is left to place on.
absl::Status TopologyBuilder::CheckSpares(size_t d) const {
  const DomainSpec& ds = spec_.domains[d];
  int64_t nodes = static_cast<int64_t>(ds.nodes.size());
  if (ds.spares >= 0 && ds.spares < nodes) return absl::OkStatus();
  return ErrorAt(
      ds.spares_loc.line > 0 ? ds.spares_loc : Sub(ds.loc, "spares"),
      absl::StrCat("NVLink domain '", ds.name, "' keeps ", ds.spares, " spare nodes but has ",
                   nodes, "; spares must be from 0 to one less than its nodes (", nodes - 1, ")"));
}

// A name, unlike every other domain's and every node's; and some nodes.
absl::Status TopologyBuilder::CheckDomainName(
    size_t d, absl::flat_hash_map<absl::string_view, size_t>& names) const {
  const DomainSpec& ds = spec_.domains[d];
  if (ds.name.empty()) return ErrorAt(ds.loc, "an NVLink domain needs a name");
  NVL_RETURN_IF_ERROR(CheckNameAt(ds.loc, ds.name, "NVLink domain name"));
  if (ds.nodes.empty()) return ErrorAt(ds.loc, "an NVLink domain needs at least one node");
  if (!names.emplace(ds.name, d).second) {
    return ErrorAt(ds.loc, absl::StrCat("NVLink domain '", ds.name, "' is declared twice"));
  }
  if (t_->FindNode(ds.name) >= 0) {
    return ErrorAt(ds.loc, absl::StrCat("NVLink domain '", ds.name,
                                        "' has the name of a node; pick another name"));
  }
  return absl::OkStatus();
}

// Marks domain d's nodes as its own; returns their GPU count.
absl::StatusOr<int64_t> TopologyBuilder::ClaimDomainNodes(size_t d) {
  int64_t gpus = 0;
  const HostNames& nodes = spec_.domains[d].nodes;
  Topology::RunHint hint;
  for (auto name = nodes.begin(); name != nodes.end(); ++name) {
    NVL_ASSIGN_OR_RETURN(NodeId n, ClaimDomainNode(d, name, &hint));
    gpus += GroupOf(n).gpus;
  }
  return gpus;
}

// The node of domain d that `name_at` names: declared, in no other domain, with one island.
absl::StatusOr<NodeId> TopologyBuilder::ClaimDomainNode(size_t d,
                                                        const HostNames::Iterator& name_at,
                                                        Topology::RunHint* hint) {
  const DomainSpec& ds = spec_.domains[d];
  NodeId n = t_->FindNode(name_at, hint);
  if (n < 0) {
    return ErrorAt(ds.loc,
                   absl::StrCat("node '", Printable(*name_at), "' is not declared under nodes"));
  }
  if (node_domain_spec_[n] >= 0) {
    const DomainSpec& other = spec_.domains[node_domain_spec_[n]];
    return ErrorAt(
        ds.loc, absl::StrCat("node '", *name_at, "' is in two NVLink domains: '", other.name, "'",
                             LineRef(other.loc), " and '", ds.name, "'"));
  }
  const GpuModelSpec* model = t_->ModelOf(n);
  if (model == nullptr || model->nvlink_gbps == 0) {
    return ErrorAt(ds.loc, absl::StrCat("node '", *name_at, "' has ",
                                        model == nullptr ? "no GPUs" : "GPUs without NVLink",
                                        "; only nodes with NVLink GPUs join a multi-node NVLink "
                                        "domain"));
  }
  if (IslandsOf(n).size() != 1) {
    return ErrorAt(ds.loc, absl::StrCat("node '", *name_at, "' has ", IslandsOf(n).size(),
                                        " NVLink islands; a node in a multi-node NVLink "
                                        "domain must have one"));
  }
  node_domain_spec_[n] = static_cast<int>(d);
  return n;
}

absl::Status TopologyBuilder::AssignGpus() {
  // Every domain is counted first: domains_, its index and the lists its domains view are
  // made once (a node is in one multi-node domain or in one domain per island; a GPU is in one
  // domain).
  size_t domains = spec_.domains.size();
  size_t domain_nodes = 0;
  for (NodeId n = 0; n < t_->num_nodes(); ++n) {
    if (node_domain_spec_[n] >= 0) {
      ++domain_nodes;  // in its multi-node domain, counted above
      continue;
    }
    size_t islands = IslandsOf(n).size();  // a domain each, the node in every one
    domains += islands;
    domain_nodes += islands;
  }
  t_->domains_.reserve(domains);
  t_->domain_index_.reserve(domains);
  t_->domain_nodes_.reserve(domain_nodes);
  t_->domain_gpus_.reserve(static_cast<size_t>(total_gpus_));
  AddGpus();
  NVL_RETURN_IF_ERROR(AddMultiNodeDomains());
  for (NodeId n = 0; n < t_->num_nodes(); ++n) {
    if (node_domain_spec_[n] < 0) NVL_RETURN_IF_ERROR(AddIslandDomains(n));
  }
  return absl::OkStatus();
}

void TopologyBuilder::AddGpus() {
  t_->gpus_.reserve(static_cast<size_t>(total_gpus_));
  t_->node_gpu_count_.resize(t_->nodes_.size());
  static_assert(limits::kMaxGpusPerNode <= std::numeric_limits<uint16_t>::max(),
                "node_gpu_count_ holds a node's GPUs");
  for (NodeId n = 0; n < t_->num_nodes(); ++n) {
    t_->nodes_[n].gpus = NodeGpus(t_->num_gpus(), GroupOf(n).gpus);
    t_->node_gpu_count_[n] = static_cast<uint16_t>(GroupOf(n).gpus);
    for (int i = 0; i < GroupOf(n).gpus; ++i) t_->gpus_.push_back(Gpu{n, i, -1});
  }
  t_->gpu_mix_.resize(t_->gpus_.size());
  for (size_t g = 0; g < t_->gpu_mix_.size(); ++g) t_->gpu_mix_[g] = Mix64(g);
}

// One domain's nodes and GPUs appended to the lists the Topology keeps for all domains
// (AssignGpus reserved them), then viewed by the domain.
class TopologyBuilder::DomainLists {
 public:
  explicit DomainLists(Topology& t)
      : t_(t), first_node_(t.domain_nodes_.size()), first_gpu_(t.domain_gpus_.size()) {}
  // Within the room reserved (a push_back past it would move what earlier domains view):
  // checked by ViewIn.
  void AddNode(NodeId n) {
    if (t_.domain_nodes_.size() < t_.domain_nodes_.capacity()) {
      t_.domain_nodes_.push_back(n);
    } else {
      overflow_ = true;
    }
  }
  void AddGpu(GpuId g) {
    if (t_.domain_gpus_.size() < t_.domain_gpus_.capacity()) {
      t_.domain_gpus_.push_back(g);
    } else {
      overflow_ = true;
    }
  }
  absl::Status ViewIn(NvlDomain& dom) const {
    if (overflow_) {
      return absl::InternalError(
          absl::StrCat("NVLink domain '", dom.name, "' has more nodes or GPUs than were counted"));
    }
    dom.nodes = absl::MakeConstSpan(t_.domain_nodes_).subspan(first_node_);
    dom.gpus = absl::MakeConstSpan(t_.domain_gpus_).subspan(first_gpu_);
    return absl::OkStatus();
  }

 private:
  Topology& t_;
  size_t first_node_;
  size_t first_gpu_;
  bool overflow_ = false;
};

absl::Status TopologyBuilder::AddMultiNodeDomains() {
  std::vector<std::vector<NodeId>> members(spec_.domains.size());  // ascending
  for (NodeId n = 0; n < t_->num_nodes(); ++n) {
    if (node_domain_spec_[n] >= 0) members[node_domain_spec_[n]].push_back(n);
  }
  for (size_t d = 0; d < spec_.domains.size(); ++d) {
    NvlDomain dom{spec_.domains[d].name,  {}, {}, kInf, /*multi_node=*/true,
                  spec_.domains[d].spares};
    DomainLists lists(*t_);
    for (NodeId n : members[d]) {
      const Node& node = t_->nodes_[n];
      lists.AddNode(n);
      for (GpuId g : node.gpus) lists.AddGpu(g);
      dom.nvlink_gbps = std::min(dom.nvlink_gbps, t_->gpu_models_[node.model].nvlink_gbps);
    }
    NVL_RETURN_IF_ERROR(lists.ViewIn(dom));
    NVL_RETURN_IF_ERROR(AddDomainToModel(std::move(dom), spec_.domains[d].loc));
  }
  return absl::OkStatus();
}

// One domain per island: named after the node, or "node:nvlK" when it has several.
absl::Status TopologyBuilder::AddIslandDomains(NodeId n) {
  const Node& node = t_->nodes_[n];
  const Islands& islands = IslandsOf(n);
  for (size_t k = 0; k < islands.size(); ++k) {
    std::string name = islands.size() == 1 ? node.name : absl::StrCat(node.name, ":nvl", k);
    NvlDomain dom{std::move(name),      {}, {}, t_->gpu_models_[node.model].nvlink_gbps,
                  /*multi_node=*/false,
                  /*spares=*/0};
    DomainLists lists(*t_);
    lists.AddNode(n);
    for (int idx : islands[k]) lists.AddGpu(node.gpus[idx]);
    NVL_RETURN_IF_ERROR(lists.ViewIn(dom));
    NVL_RETURN_IF_ERROR(AddDomainToModel(std::move(dom), GroupOf(n).loc));
  }
  return absl::OkStatus();
}

// Adds `dom`, its nodes and GPUs filled in, and points them at it; its name must be new.
absl::Status TopologyBuilder::AddDomainToModel(NvlDomain dom, const SourceLoc& loc) {
  DomainId id = t_->num_domains();
  t_->domains_.push_back(std::move(dom));
  const NvlDomain& added = t_->domains_.back();
  if (t_->domain_index_.Insert(id) >= 0) {
    std::string name = added.name;
    t_->domains_.pop_back();
    return ErrorAt(loc, absl::StrCat("NVLink domain name '", name, "' is used twice"));
  }
  for (GpuId g : added.gpus) t_->gpus_[g].domain = id;
  for (NodeId n : added.nodes) t_->nodes_[n].domains.push_back(id);
  return absl::OkStatus();
}

// ---- switches -----------------------------------------------------------------------------

absl::Status TopologyBuilder::AddSwitches() {
  if (spec_.switches.empty()) {
    return ErrorAt(Sub(spec_.loc, "switches"),
                   "no switches are declared: every node must be "
                   "under a leaf switch");
  }
  if (spec_.switches.size() > static_cast<size_t>(std::numeric_limits<SwitchId>::max())) {
    return ErrorAt(Sub(spec_.loc, "switches"), "too many switches");
  }
  t_->switches_.reserve(spec_.switches.size());
  t_->switch_index_.reserve(spec_.switches.size());
  for (const SwitchSpec& s : spec_.switches) NVL_RETURN_IF_ERROR(AddSwitch(s));
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AddSwitch(const SwitchSpec& s) {
  NVL_RETURN_IF_ERROR(CheckSwitchName(s));
  int tier = t_->FindTier(s.tier);  // linear, over at most limits::kMaxTiers tiers
  if (tier < 0) {
    return ErrorAt(Sub(s.loc, "tier"),
                   absl::StrCat("unknown tier '", Printable(s.tier), "'; tiers are ",
                                absl::StrJoin(t_->tiers_, ", ")));
  }
  NVL_RETURN_IF_ERROR(CheckSwitchKind(s));
  NVL_RETURN_IF_ERROR(CheckSwitchLinks(s));
  NVL_RETURN_IF_ERROR(CheckRail(s));
  t_->switches_.push_back(SwitchOf(s, tier, spec_.link_gbps));
  t_->switch_index_.Insert(t_->num_switches() - 1);  // CheckSwitchName found it new
  return absl::OkStatus();
}

// A valid name no switch before has: FindSwitch finds it once the switch is added.
absl::Status TopologyBuilder::CheckSwitchName(const SwitchSpec& s) {
  if (s.name.empty()) return ErrorAt(s.loc, "a switch needs a name");
  NVL_RETURN_IF_ERROR(CheckNameAt(s.loc, s.name, "switch name"));
  if (SwitchId first = t_->FindSwitch(s.name); first >= 0) {
    return ErrorAt(s.loc, absl::StrCat("switch '", s.name, "' is declared twice",
                                       FirstOn(spec_.switches[first].loc)));
  }
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AttachNodesAndChildren() {
  attach_.resize(t_->num_nodes());
  // Per node and per switch: the last switch that listed it (a name listed twice by one switch
  // is refused).
  std::vector<SwitchId> node_listed_by(t_->num_nodes(), -1);
  std::vector<SwitchId> switch_listed_by(t_->num_switches(), -1);
  for (SwitchId id = 0; id < t_->num_switches(); ++id) {
    NVL_RETURN_IF_ERROR(AttachNodes(id, node_listed_by));
    NVL_RETURN_IF_ERROR(AttachChildren(id, switch_listed_by));
  }
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AttachNodes(SwitchId id, std::vector<SwitchId>& listed_by) {
  const SwitchSpec& s = spec_.switches[id];
  t_->switches_[id].nodes.reserve(s.nodes.size());
  Topology::RunHint hint;
  for (auto name = s.nodes.begin(); name != s.nodes.end(); ++name) {
    NodeId n = t_->FindNode(name, &hint);
    if (n < 0) {
      return ErrorAt(Sub(s.loc, "nodes"),
                     absl::StrCat("node '", Printable(*name), "' is not declared under nodes"));
    }
    if (listed_by[n] == id) {
      return ErrorAt(Sub(s.loc, "nodes"), absl::StrCat("node '", *name, "' is listed twice"));
    }
    listed_by[n] = id;
    if (s.rail >= GroupOf(n).gpus) {
      return ErrorAt(Sub(s.loc, "rail"),
                     absl::StrCat("rail ", s.rail, " does not exist on node '", *name,
                                  "', which has ", GroupOf(n).gpus, " GPUs"));
    }
    t_->switches_[id].nodes.push_back(n);
    attach_[n].emplace_back(s.rail, id);
  }
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AttachChildren(SwitchId id, std::vector<SwitchId>& listed_by) {
  const SwitchSpec& s = spec_.switches[id];
  for (const std::string& name : s.switches) {
    SwitchId c = t_->FindSwitch(name);
    if (c < 0) {
      return ErrorAt(Sub(s.loc, "switches"),
                     absl::StrCat("switch '", Printable(name), "' is not declared"));
    }
    if (listed_by[c] == id) {
      return ErrorAt(Sub(s.loc, "switches"), absl::StrCat("switch '", name, "' is listed twice"));
    }
    listed_by[c] = id;
    t_->switches_[id].children.push_back(c);
    t_->switches_[c].parents.push_back(id);
  }
  return absl::OkStatus();
}

// ---- the shape of the fabric --------------------------------------------------------------

absl::Status TopologyBuilder::CheckCycles() {
  std::vector<int> colour(t_->num_switches(), kNew);
  for (SwitchId root = 0; root < t_->num_switches(); ++root) {
    if (colour[root] == kNew) NVL_RETURN_IF_ERROR(SearchForCycle(root, colour));
  }
  return absl::OkStatus();
}

// Depth first from `root`, with a stack of its own (no recursion on the fabric's depth).
absl::Status TopologyBuilder::SearchForCycle(SwitchId root, std::vector<int>& colour) const {
  std::vector<SwitchId> path = {root};  // the switches being visited, coloured kOnPath
  std::vector<size_t> next = {0};       // per switch on the path: the next child to visit
  colour[root] = kOnPath;
  while (!path.empty()) {
    const std::vector<SwitchId>& children = t_->switches_[path.back()].children;
    if (next.back() == children.size()) {
      colour[path.back()] = kDone;
      path.pop_back();
      next.pop_back();
      continue;
    }
    SwitchId c = children[next.back()++];
    if (colour[c] == kOnPath) return CycleError(path, c);
    if (colour[c] == kNew) {
      colour[c] = kOnPath;
      path.push_back(c);
      next.push_back(0);
    }
  }
  return absl::OkStatus();
}

// The cycle closed by the last switch of `path` listing `child`, which is on the path.
absl::Status TopologyBuilder::CycleError(const std::vector<SwitchId>& path, SwitchId child) const {
  std::vector<std::string> cycle;
  for (auto it = std::find(path.begin(), path.end(), child); it != path.end(); ++it) {
    cycle.push_back(t_->switches_[*it].name);
  }
  cycle.push_back(t_->switches_[child].name);
  return ErrorAt(Sub(spec_.switches[path.back()].loc, "switches"),
                 absl::StrCat("switch cycle: ", absl::StrJoin(cycle, " -> ")));
}

absl::Status TopologyBuilder::CheckTierOrder() {
  for (SwitchId id = 0; id < t_->num_switches(); ++id) NVL_RETURN_IF_ERROR(CheckChildTiers(id));
  by_tier_.resize(t_->num_switches());
  std::iota(by_tier_.begin(), by_tier_.end(), 0);
  std::stable_sort(by_tier_.begin(), by_tier_.end(), [&](SwitchId a, SwitchId b) {
    return t_->switches_[a].tier < t_->switches_[b].tier;
  });
  return absl::OkStatus();
}

absl::Status TopologyBuilder::CheckChildTiers(SwitchId id) const {
  const Switch& sw = t_->switches_[id];
  for (SwitchId c : sw.children) {
    const Switch& child = t_->switches_[c];
    if (child.tier >= sw.tier) {
      return ErrorAt(Sub(spec_.switches[id].loc, "switches"),
                     absl::StrCat("switch '", child.name, "' (tier ", t_->tiers_[child.tier],
                                  ") is below '", sw.name, "' (tier ", t_->tiers_[sw.tier],
                                  "); a child's tier must be lower than its parent's"));
    }
  }
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AssignLeaves() {
  for (NodeId n = 0; n < t_->num_nodes(); ++n) NVL_RETURN_IF_ERROR(AssignNodeLeaves(n));
  return absl::OkStatus();
}

absl::Status TopologyBuilder::AssignNodeLeaves(NodeId n) {
  auto& a = attach_[n];
  Node& node = t_->nodes_[n];
  if (a.empty()) {
    return ErrorAt(GroupOf(n).loc, absl::StrCat("node '", node.name,
                                                "' is under no leaf switch; list it in the nodes "
                                                "of one leaf (or of one leaf per rail)"));
  }
  std::sort(a.begin(), a.end());
  if (a[0].first < 0 && a.size() > 1) {
    return ErrorAt(
        GroupOf(n).loc,
        absl::StrCat("node '", node.name, "' is under several leaf switches (",
                     t_->switches_[a[0].second].name, ", ", t_->switches_[a[1].second].name,
                     "); only rail leaves (rail: r) may share a node"));
  }
  if (a[0].first >= 0) {
    NVL_RETURN_IF_ERROR(CheckRails(n, a));
    // One NIC per rail leaf: the rail leaves are the node's NICs.
    node.nics = static_cast<int>(a.size());
  }
  for (const auto& [rail, leaf] : a) node.leaves.push_back(leaf);
  return absl::OkStatus();
}

// A node's rail leaves, sorted by rail: one for each rail 0..R-1.
absl::Status TopologyBuilder::CheckRails(NodeId n,
                                         absl::Span<const std::pair<int, SwitchId>> attach) const {
  for (size_t r = 0; r < attach.size(); ++r) {
    if (attach[r].first == static_cast<int>(r)) continue;
    return ErrorAt(GroupOf(n).loc,
                   absl::StrCat("node '", t_->nodes_[n].name, "' has rail leaves for rails ",
                                absl::StrJoin(attach, ",",
                                              [](std::string* out, const auto& p) {
                                                absl::StrAppend(out, p.first);
                                              }),
                                "; every rail 0..R-1 needs exactly one leaf"));
  }
  int nics = GroupOf(n).nics;
  if (nics != kDefaultNics && nics != static_cast<int>(attach.size())) {
    return ErrorAt(Sub(GroupOf(n).loc, "nics"),
                   absl::StrCat("node '", t_->nodes_[n].name, "' has ", attach.size(),
                                " rail leaves, so ", attach.size(), " NICs (one per rail), not ",
                                nics, "; leave nics out or make it the rail count"));
  }
  return absl::OkStatus();
}

// ---- lists over the fabric ----------------------------------------------------------------

absl::Status TopologyBuilder::ComputeNodesUnder() {
  int64_t pairs = 0;                                   // merged so far, with repeats
  std::vector<SwitchId> seen_by(t_->num_nodes(), -1);  // see CollectNodesUnder
  for (size_t at = 0; at < by_tier_.size(); ++at) {
    NVL_RETURN_IF_ERROR(CollectNodesUnder(at, pairs, seen_by));
  }
  shared_lists_.clear();
  under_ = {};
  return absl::OkStatus();
}

// Switch by_tier_[at]: its nodes and its children's nodes_under (computed before: they are lower),
// each node once (`seen_by[n]` is the last switch that took node n). The children's lists are
// sorted, and in a fabric as usually declared they follow one another in ascending ranges or
// repeat one another (a multi-rooted tree): the list is sorted only when they do not. A switch
// with no nodes of its own and the children of the switch before it (the cores of one rail)
// shares that switch's list without collecting it.
absl::Status TopologyBuilder::CollectNodesUnder(size_t at, int64_t& pairs,
                                                std::vector<SwitchId>& seen_by) {
  const SwitchId id = by_tier_[at];
  Switch& sw = t_->switches_[id];
  pairs += static_cast<int64_t>(sw.nodes.size());
  for (SwitchId c : sw.children) {
    pairs += static_cast<int64_t>(t_->switches_[c].nodes_under.size());
    if (pairs > bounds_.max_switch_node_pairs) {
      return TooDense(id, "nodes under", bounds_.max_switch_node_pairs);
    }
  }
  if (at > 0 && sw.nodes.empty() && !sw.children.empty()) {
    const Switch& before = t_->switches_[by_tier_[at - 1]];
    if (before.nodes.empty() && before.children == sw.children) {
      sw.nodes_under = before.nodes_under;
      return absl::OkStatus();
    }
  }
  std::vector<NodeId>& under = under_;
  under.clear();
  bool sorted = true;
  auto take = [&](const auto& nodes) {
    for (NodeId n : nodes) {
      if (seen_by[n] == id) continue;
      seen_by[n] = id;
      if (!under.empty() && n < under.back()) sorted = false;
      under.push_back(n);
    }
  };
  take(sw.nodes);
  const SharedNodes* last = nullptr;  // the last child's list
  for (SwitchId c : sw.children) {
    const SharedNodes& below = t_->switches_[c].nodes_under;
    // Spines of one pod, say, have the same nodes under them: taken once.
    if (last == nullptr || !below.SameList(*last)) take(below);
    last = &below;
  }
  if (!sorted) std::sort(under.begin(), under.end());
  sw.nodes_under = Share(under);
  return absl::OkStatus();
}

SharedNodes TopologyBuilder::Share(const std::vector<NodeId>& under) {
  SharedNodes& made = shared_lists_[absl::HashOf(absl::MakeConstSpan(under))];
  if (made.size() == under.size() && std::equal(under.begin(), under.end(), made.begin())) {
    return made;
  }
  made = SharedNodes(std::make_shared<const std::vector<NodeId>>(under));
  return made;
}

absl::Status TopologyBuilder::ComputeAncestors() {
  t_->ancestors_.resize(t_->num_switches());
  int64_t pairs = 0;                              // merged so far, with repeats
  std::vector<int> slot(t_->num_switches(), -1);  // see MergeParent
  for (auto it = by_tier_.rbegin(); it != by_tier_.rend(); ++it) {
    NVL_RETURN_IF_ERROR(MergeAncestors(*it, pairs, slot));
  }
  return absl::OkStatus();
}

// The switch itself and its parents' ancestors (computed before: they are higher), sorted by
// id; linear in the pairs merged. `slot` is all -1 before and after.
absl::Status TopologyBuilder::MergeAncestors(SwitchId id, int64_t& pairs, std::vector<int>& slot) {
  const Switch& sw = t_->switches_[id];
  std::vector<Ancestor> merged = {Ancestor{id, sw.tier, kInf}};
  slot[id] = 0;
  for (SwitchId p : sw.parents) {
    pairs += static_cast<int64_t>(t_->ancestors_[p].size());
    if (pairs > bounds_.max_switch_ancestor_pairs) {
      return TooDense(id, "switches above", bounds_.max_switch_ancestor_pairs);
    }
    MergeParent(t_->ancestors_[p], sw.link_gbps / sw.oversubscription, merged, slot);
  }
  for (const Ancestor& a : merged) slot[a.id] = -1;
  std::sort(merged.begin(), merged.end(),
            [](const Ancestor& a, const Ancestor& b) { return a.id < b.id; });
  t_->ancestors_[id] = std::move(merged);
  return absl::OkStatus();
}

absl::Status TopologyBuilder::TooDense(SwitchId id, absl::string_view listing,
                                       int64_t limit) const {
  return ErrorAt(spec_.switches[id].loc,
                 absl::StrCat("the fabric is too densely connected to model: listing the ", listing,
                              " each switch passes ", limit, " entries at switch '",
                              t_->switches_[id].name, "'; check the switches lists"));
}

// ---- leaf groups --------------------------------------------------------------------------

absl::Status TopologyBuilder::GroupLeaves() {
  absl::flat_hash_map<NodeLeaves, int> groups;  // leaves -> group
  t_->leaf_group_.resize(t_->num_nodes());
  for (NodeId n = 0; n < t_->num_nodes(); ++n) {
    const NodeLeaves& leaves = t_->nodes_[n].leaves;
    auto [it, inserted] = groups.emplace(leaves, static_cast<int>(t_->group_leaves_.size()));
    if (inserted) t_->group_leaves_.emplace_back(leaves.begin(), leaves.end());
    t_->leaf_group_[n] = it->second;
  }
  t_->num_leaf_groups_ = static_cast<int>(t_->group_leaves_.size());
  t_->group_closed_.assign(t_->group_leaves_.size(), 1);
  for (size_t g = 0; g < t_->group_leaves_.size(); ++g) {
    if (t_->group_leaves_[g].empty()) t_->group_closed_[g] = 0;
  }
  for (const Switch& sw : t_->switches_) {
    for (NodeId m : sw.nodes) {
      if (t_->leaf_group_[m] != t_->leaf_group_[sw.nodes[0]]) {
        for (NodeId k : sw.nodes) t_->group_closed_[t_->leaf_group_[k]] = 0;
        break;
      }
    }
  }
  return absl::OkStatus();
}

// ---- tier components ----------------------------------------------------------------------

absl::Status TopologyBuilder::ComputeTierComponents() {
  if (!bounds_.tier_components) return absl::OkStatus();
  const size_t tiers = t_->tiers_.size();
  std::vector<SwitchId> leaves;  // by leaf row
  t_->leaf_row_.assign(t_->num_switches(), -1);
  for (SwitchId s = 0; s < t_->num_switches(); ++s) {
    if (t_->switches_[s].nodes.empty()) continue;
    t_->leaf_row_[s] = static_cast<int>(leaves.size());
    leaves.push_back(s);
  }
  t_->leaf_component_.assign(leaves.size() * tiers, -1);
  t_->leaf_gbps_.assign(leaves.size() * tiers, 0.0);
  std::vector<SwitchId> parent(t_->num_switches());  // union-find over the switches
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<int> component_of(t_->num_switches(), -1);  // per union-find root
  size_t next = 0;                                        // in by_tier_
  for (size_t t = 0; t < tiers; ++t) {
    for (; next < by_tier_.size() && t_->switches_[by_tier_[next]].tier == static_cast<int>(t);
         ++next) {
      for (SwitchId c : t_->switches_[by_tier_[next]].children) Join(parent, by_tier_[next], c);
    }
    const int first = static_cast<int>(t_->component_flags_.size());
    for (size_t row = 0; row < leaves.size(); ++row) {
      if (t_->switches_[leaves[row]].tier > static_cast<int>(t)) continue;
      int& c = component_of[Root(parent, leaves[row])];
      if (c < first) {
        c = static_cast<int>(t_->component_flags_.size());
        t_->component_flags_.push_back(0);
      }
      t_->leaf_component_[row * tiers + t] = c;
    }
    CheckComponents(t, first, leaves);
  }
  NumberGroupComponents();
  return absl::OkStatus();
}

// Sets the flags of tier t's components (ids from `first`) and their leaves' bandwidths.
void TopologyBuilder::CheckComponents(size_t t, int first, const std::vector<SwitchId>& leaves) {
  const size_t tiers = t_->tiers_.size();
  const size_t count = t_->component_flags_.size() - first;
  // Each component's leaf rows, by a counting sort.
  std::vector<size_t> start(count + 1, 0);
  for (size_t row = 0; row < leaves.size(); ++row) {
    int c = t_->leaf_component_[row * tiers + t];
    if (c >= 0) ++start[c - first + 1];
  }
  for (size_t k = 0; k < count; ++k) start[k + 1] += start[k];
  std::vector<size_t> rows(start[count]);
  std::vector<size_t> fill(start.begin(), start.end() - 1);
  for (size_t row = 0; row < leaves.size(); ++row) {
    int c = t_->leaf_component_[row * tiers + t];
    if (c >= 0) rows[fill[c - first]++] = row;
  }
  std::vector<SwitchId> common;
  for (size_t k = 0; k < count; ++k) {
    auto begin = rows.begin() + start[k], end = rows.begin() + start[k + 1];
    uint8_t& flags = t_->component_flags_[first + k];
    // One component of the tier below with no new leaf: no two leaves meet here first, and
    // a switch above all its leaves is still one.
    if (t > 0) {
      int below = t_->leaf_component_[*begin * tiers + t - 1];
      if (below >= 0 && std::all_of(begin, end, [&](size_t row) {
            return t_->leaf_component_[row * tiers + t - 1] == below;
          })) {
        flags = t_->component_flags_[below];
        continue;
      }
    }
    // The switches of tier t or lower above every leaf.
    common.clear();
    for (const Ancestor& a : t_->ancestors_[leaves[*begin]]) {
      if (a.tier <= static_cast<int>(t)) common.push_back(a.id);
    }
    for (auto it = begin + 1; it != end && !common.empty(); ++it) {
      KeepCommon(t_->ancestors_[leaves[*it]], common);
    }
    if (common.empty()) {
      ++t_->num_inexact_components_;
      continue;
    }
    flags = Topology::kTierExact;
    if (SetComponentGbps(t, common, begin, end, leaves)) {
      flags |= Topology::kGbpsExact;
    } else {
      ++t_->num_inexact_components_;
    }
  }
}

// Whether each leaf of the component (rows begin..end) has exactly the switches of tier t
// among `common` above it, reaching them all at one speed; if so, sets the leaves' bandwidths
// through them: min(that speed, their fastest link), what SwitchPath finds among them.
bool TopologyBuilder::SetComponentGbps(size_t t, const std::vector<SwitchId>& common,
                                       std::vector<size_t>::const_iterator begin,
                                       std::vector<size_t>::const_iterator end,
                                       const std::vector<SwitchId>& leaves) {
  const int tier = static_cast<int>(t);
  size_t tops = 0;
  double fastest = 0;
  for (SwitchId s : common) {
    if (t_->switches_[s].tier != tier) continue;
    ++tops;
    fastest = std::max(fastest, t_->switches_[s].link_gbps);
  }
  if (tops == 0) return false;
  for (auto it = begin; it != end; ++it) {
    size_t above = 0;
    double up = 0;
    for (const Ancestor& a : t_->ancestors_[leaves[*it]]) {
      if (a.tier != tier) continue;
      if (above++ > 0 && a.up_gbps != up) return false;
      up = a.up_gbps;
    }
    if (above != tops) return false;
    t_->leaf_gbps_[*it * t_->tiers_.size() + t] = std::min(up, fastest);
  }
  return true;
}

void TopologyBuilder::KeepPathFacts() {
  t_->nic_per_gpu_ = std::all_of(t_->nodes_.begin(), t_->nodes_.end(), [](const Node& n) {
    return n.nics >= static_cast<int>(n.gpus.size());
  });
  t_->domains_say_links_ =
      std::all_of(t_->nodes_.begin(), t_->nodes_.end(),
                  [](const Node& n) { return n.domains.size() <= 1; }) &&
      std::all_of(t_->domains_.begin(), t_->domains_.end(), [&](const NvlDomain& d) {
        return std::all_of(d.nodes.begin(), d.nodes.end(), [&](NodeId n) {
          return t_->leaf_group_[n] == t_->leaf_group_[d.nodes.front()];
        });
      });
  t_->group_self_gbps_.resize(t_->num_leaf_groups_);
  for (int g = 0; g < t_->num_leaf_groups_; ++g) {
    t_->group_self_gbps_[g] = t_->GroupPath(g, g).second;
  }
}

// Per tier, one id for the components of each leaf group's leaves, equal for groups with the
// same components rail by rail.
void TopologyBuilder::NumberGroupComponents() {
  const size_t tiers = t_->tiers_.size();
  t_->group_component_.assign(static_cast<size_t>(t_->num_leaf_groups_) * tiers, -1);
  std::vector<int> key;
  for (size_t t = 0; t < tiers; ++t) {
    absl::flat_hash_map<std::vector<int>, int> ids;
    for (int g = 0; g < t_->num_leaf_groups_; ++g) {
      key.clear();
      for (SwitchId leaf : t_->group_leaves_[g]) {
        int c = t_->leaf_component_[t_->leaf_row_[leaf] * tiers + t];
        if (c < 0) break;
        key.push_back(c);
      }
      if (key.size() < t_->group_leaves_[g].size()) continue;  // a leaf above tier t
      auto [it, inserted] = ids.emplace(key, static_cast<int>(t_->group_component_exact_.size()));
      if (inserted) {
        bool exact = std::all_of(key.begin(), key.end(), [&](int c) {
          return (t_->component_flags_[c] & Topology::kTierExact) != 0;
        });
        t_->group_component_exact_.push_back(exact);
      }
      t_->group_component_[g * tiers + t] = it->second;
    }
  }
}

}  // namespace nvlplace
