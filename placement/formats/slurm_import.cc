// Imports topology.conf and gres.conf, with their "# nvlplace:" annotations, as a spec.
#include "placement/formats/slurm_import.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "placement/formats/nvidia_smi.h"
#include "placement/formats/slurm_lexer.h"
#include "placement/formats/slurm_topology.h"
#include "placement/model/gpu_models.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"

namespace nvlplace {
namespace {

using slurm::At;
using slurm::CountNames;
using slurm::Fields;
using slurm::GetBounded;
using slurm::GetHostlist;
using slurm::GetInt;
using slurm::GetIslands;
using slurm::GetName;
using slurm::IncludeFiles;
using slurm::LineError;
using slurm::LineRef;
using slurm::NameBudget;
using slurm::ParseFields;
using slurm::ReadConfLines;
using slurm::Require;
using slurm::SplitText;
using slurm::TextLine;
using slurm::Words;

// ---------------------------------------------------------------------------------------
// The rules that bounded numbers are checked against, as messages state them.

// The shortest text of a limit ("1000000", not "1e+06").
std::string LimitText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

std::string BandwidthRule() {
  return absl::StrCat("a positive number of Gb/s up to ", LimitText(limits::kMaxBandwidth));
}

std::string NvlinkBandwidthRule() {
  return absl::StrCat("a number of GB/s from 0 (no NVLink) up to ",
                      LimitText(limits::kMaxBandwidth));
}

std::string PcieBandwidthRule() {
  return absl::StrCat("a positive number of GB/s up to ", LimitText(limits::kMaxBandwidth));
}

std::string LatencyRule() {
  return absl::StrCat("a number of microseconds from 0 to ", LimitText(limits::kMaxLatencyUs));
}

std::string OversubscriptionRule() {
  return absl::StrCat("a downlink:uplink ratio from 1 to ",
                      LimitText(limits::kMaxOversubscription));
}

// Islands in canonical form: each sorted, sorted by first GPU, and none for a single island.
std::vector<std::vector<int>> Canonical(std::vector<std::vector<int>> islands) {
  if (islands.size() <= 1) return {};
  for (auto& island : islands) std::sort(island.begin(), island.end());
  std::sort(islands.begin(), islands.end());
  return islands;
}

// ---------------------------------------------------------------------------------------
// Import: what the files say, before it becomes a spec.

struct Child {
  std::string name;
  SourceLoc loc;  // where it is listed: Switches=, switches=, or a tree topology's children
};

struct SwitchDraft {
  SwitchSpec spec;      // nodes, link_gbps and annotated fields; children below
  SourceLoc nodes_loc;  // where its nodes are named (line 0: the line of spec.loc, key Nodes)
  std::vector<Child> children;
  bool has_line = false;   // a SwitchName line defines it (Slurm sees it)
  bool annotated = false;  // a "switch" annotation describes it
  bool tier_given = false;
  bool is_domain = false;  // the SwitchName line is an NVLink domain
};

struct NodeShape {
  int gpus = 0;
  std::string model;                      // empty: not said (or CPU-only)
  std::vector<std::vector<int>> islands;  // canonical
  bool islands_known = false;
  bool placed = true;
  int nics = kDefaultNics;  // only annotations say it
  bool absent = false;      // in topology.conf, not in a gres.conf that lists GPUs: CPU-only
  bool untyped = false;     // gres.conf gives no Type=: the model is options.gpu_model
  SourceLoc loc;
};

struct Draft {
  TopologySpec spec;  // cluster fields and GPU models from annotations
  std::string file;
  TopologyLimits limits;
  NameBudget budget;
  int64_t noted_gpus = 0;  // GPUs of the nodes annotations
  bool cluster_given = false;
  bool tiers_given = false;
  std::vector<SwitchDraft> switches;
  absl::flat_hash_map<std::string, size_t> switch_index;
  std::vector<std::string> noted_nodes;                      // in annotation order
  std::vector<NodeShape> shapes;                             // one per nodes annotation
  absl::flat_hash_map<std::string, size_t> node_notes;       // node -> its annotation's shape
  absl::flat_hash_map<std::string, SourceLoc> domain_lines;  // NVLink domain -> its annotation
  SourceLoc first_switch_note;  // the first switch annotation (line 0: none)
  std::vector<std::string> notes;
};

// The switch's draft, created (as a switch Slurm does not see) when no line defines it.
SwitchDraft& DraftFor(const std::string& name, const SourceLoc& loc, Draft* draft) {
  auto [it, inserted] = draft->switch_index.emplace(name, draft->switches.size());
  if (inserted) {
    draft->switches.emplace_back();
    draft->switches.back().spec.name = name;
    draft->switches.back().spec.loc = loc;
  }
  return draft->switches[it->second];
}

// A switch Slurm sees (a SwitchName= line, a tree topology's switch): its draft.
absl::Status AddTreeSwitch(const slurm::TreeSwitch& sw, Draft* draft) {
  SwitchDraft& d = DraftFor(sw.name, sw.loc, draft);
  if (d.has_line) {
    return absl::InvalidArgumentError(
        FormatAt(sw.loc, absl::StrCat("switch '", sw.name, "' is defined twice (first on ",
                                      LineRef(d.spec.loc, sw.loc.file), ")")));
  }
  d.has_line = true;
  d.spec.loc = sw.loc;
  d.nodes_loc = sw.nodes_loc;
  d.spec.nodes.Append(sw.nodes);
  for (const std::string& c : sw.children) d.children.push_back({c, sw.children_loc});
  if (d.spec.link_gbps == 0) d.spec.link_gbps = sw.link_gbps;  // an annotated link_gbps is exact
  return absl::OkStatus();
}

absl::Status NoteCluster(const Fields& f, Draft* draft) {
  if (draft->cluster_given) return f.Error("cluster", "the cluster annotation is given twice");
  draft->cluster_given = true;
  TopologySpec& spec = draft->spec;
  if (f.Find("name") != nullptr) {
    NVL_ASSIGN_OR_RETURN(spec.name, GetName(f, "name", "cluster name"));
  }
  if (const std::string* tiers = f.Find("tiers")) {
    std::vector<std::string> names = absl::StrSplit(*tiers, ',');
    if (names.size() > static_cast<size_t>(limits::kMaxTiers)) {
      return f.Error("tiers", absl::StrCat(names.size(), " tiers; at most ", limits::kMaxTiers,
                                           " are allowed"));
    }
    for (const std::string& tier : names) {
      absl::Status ok = CheckName(tier, "tier name");
      if (!ok.ok()) return f.Error("tiers", ok.message());
    }
    spec.tiers = std::move(names);
    draft->tiers_given = true;
  }
  NVL_RETURN_IF_ERROR(
      GetBounded(f, "link_gbps", 0, true, limits::kMaxBandwidth, BandwidthRule(), &spec.link_gbps));
  NVL_RETURN_IF_ERROR(GetBounded(f, "nvlink_alpha_us", 0, false, limits::kMaxLatencyUs,
                                 LatencyRule(), &spec.nvlink_alpha_us));
  return GetBounded(f, "net_alpha_us", 0, false, limits::kMaxLatencyUs, LatencyRule(),
                    &spec.net_alpha_us);
}

absl::Status NoteGpuModel(const Fields& f, Draft* draft) {
  NVL_RETURN_IF_ERROR(Require(f, "name"));
  GpuModelSpec model;
  NVL_ASSIGN_OR_RETURN(model.name, GetName(f, "name", "GPU model name"));
  model.loc = At(f.file, f.line, "gpu_model");
  NVL_RETURN_IF_ERROR(GetBounded(f, "nvlink_gbps", 0, false, limits::kMaxBandwidth,
                                 NvlinkBandwidthRule(), &model.nvlink_gbps));
  NVL_RETURN_IF_ERROR(GetBounded(f, "pcie_gbps", 0, true, limits::kMaxBandwidth,
                                 PcieBandwidthRule(), &model.pcie_gbps));
  draft->spec.gpu_models.push_back(std::move(model));
  return absl::OkStatus();
}

absl::Status NoteNodes(const Fields& f, Draft* draft) {
  for (absl::string_view key : {"names", "gpus"}) NVL_RETURN_IF_ERROR(Require(f, key));
  NodeShape shape;
  NVL_RETURN_IF_ERROR(GetInt(f, "gpus", 0, limits::kMaxGpusPerNode, &shape.gpus));
  // CPU-only nodes (gpus=0) name no model; nodes with GPUs name one.
  if (shape.gpus == 0 && f.Find("model") != nullptr) {
    return f.Error("model", "nodes with gpus=0 have no GPU model; remove model=");
  }
  if (shape.gpus > 0) NVL_RETURN_IF_ERROR(Require(f, "model"));
  if (const std::string* placed = f.Find("placed")) {
    if (*placed != "true" && *placed != "false") {
      return f.Error("placed", absl::StrCat("'", Printable(*placed), "' is not true or false"));
    }
    shape.placed = *placed == "true";
  }
  NVL_RETURN_IF_ERROR(GetInt(f, "nics", 0, limits::kMaxNicsPerNode, &shape.nics));  // if given
  // The GPUs these nodes add, known from the hostlist's size before it is expanded.
  NVL_ASSIGN_OR_RETURN(size_t count, CountNames(f, "names", &draft->budget));
  int64_t adds = static_cast<int64_t>(count) * shape.gpus;
  if (adds > draft->limits.max_gpus - draft->noted_gpus) {
    return f.Error("names", absl::StrCat("these ", count, " nodes of ", shape.gpus,
                                         " GPUs bring the cluster to ", draft->noted_gpus + adds,
                                         " GPUs, more than the limit of ", draft->limits.max_gpus,
                                         " GPUs; raise it (--max-gpus) if the cluster is "
                                         "really that large"));
  }
  draft->noted_gpus += adds;
  absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(*f.Find("names"));
  if (!names.ok()) return f.Error("names", names.status().message());
  if (shape.gpus > 0) {
    NVL_ASSIGN_OR_RETURN(shape.model, GetName(f, "model", "GPU model name"));
  }
  NVL_RETURN_IF_ERROR(GetIslands(f, "islands", &shape.islands));
  shape.islands = Canonical(std::move(shape.islands));
  shape.islands_known = true;
  shape.loc = At(f.file, f.line, "nodes");
  size_t index = draft->shapes.size();
  draft->shapes.push_back(std::move(shape));
  for (std::string& name : *names) {
    auto [it, inserted] = draft->node_notes.emplace(name, index);
    if (!inserted) {
      return f.Error("names",
                     absl::StrCat("node '", name, "' is in two nodes annotations (first on ",
                                  LineRef(draft->shapes[it->second].loc, f.file), ")"));
    }
    draft->noted_nodes.push_back(std::move(name));
  }
  return absl::OkStatus();
}

absl::Status NoteDomain(const Fields& f, Draft* draft) {
  NVL_RETURN_IF_ERROR(Require(f, "name"));
  DomainSpec domain;
  NVL_ASSIGN_OR_RETURN(domain.name, GetName(f, "name", "NVLink domain name"));
  domain.loc = At(f.file, f.line, "nvlink_domain");
  NVL_RETURN_IF_ERROR(GetInt(f, "gpus", 1, std::numeric_limits<int>::max(), &domain.expected_gpus));
  // Its upper bound, one less than the domain's nodes, is checked with the nodes (Create).
  NVL_RETURN_IF_ERROR(GetInt(f, "spares", 0, std::numeric_limits<int>::max(), &domain.spares));
  if (f.Find("spares") != nullptr) domain.spares_loc = At(f.file, f.line, "spares");
  NVL_RETURN_IF_ERROR(GetHostlist(f, "nodes", &draft->budget, &domain.nodes));
  auto [first, inserted] = draft->domain_lines.emplace(domain.name, domain.loc);
  if (!inserted) {
    return f.Error("name",
                   absl::StrCat("NVLink domain '", domain.name, "' is annotated twice (first on ",
                                LineRef(first->second, f.file), ")"));
  }
  draft->spec.domains.push_back(std::move(domain));
  return absl::OkStatus();
}

absl::Status NoteSwitch(const Fields& f, Draft* draft) {
  NVL_RETURN_IF_ERROR(Require(f, "name"));
  NVL_ASSIGN_OR_RETURN(std::string name, GetName(f, "name", "switch name"));
  SwitchDraft& d = DraftFor(name, At(f.file, f.line, "switch"), draft);
  if (draft->first_switch_note.line == 0) draft->first_switch_note = At(f.file, f.line, "switch");
  if (d.annotated)
    return f.Error("name", absl::StrCat("switch '", d.spec.name, "' is annotated twice"));
  d.annotated = true;
  if (f.Find("tier") != nullptr) {
    NVL_ASSIGN_OR_RETURN(d.spec.tier, GetName(f, "tier", "tier name"));
    d.tier_given = true;
  }
  NVL_RETURN_IF_ERROR(GetInt(f, "rail", 0, limits::kMaxGpusPerNode - 1, &d.spec.rail));
  NVL_RETURN_IF_ERROR(GetBounded(f, "link_gbps", 0, true, limits::kMaxBandwidth, BandwidthRule(),
                                 &d.spec.link_gbps));
  NVL_RETURN_IF_ERROR(GetBounded(f, "oversubscription", 1, false, limits::kMaxOversubscription,
                                 OversubscriptionRule(), &d.spec.oversubscription));
  NVL_RETURN_IF_ERROR(GetHostlist(f, "nodes", &draft->budget, &d.spec.nodes));
  std::vector<std::string> children;
  NVL_RETURN_IF_ERROR(GetHostlist(f, "switches", &draft->budget, &children));
  for (std::string& c : children) {
    d.children.push_back({std::move(c), At(f.file, f.line, "switches")});
  }
  return absl::OkStatus();
}

struct NoteKind {
  absl::string_view name;
  std::vector<absl::string_view> keys;
  absl::Status (*apply)(const Fields&, Draft*);
};

const std::vector<NoteKind>& NoteKinds() {
  static const auto* kinds = new std::vector<NoteKind>{
      {"cluster", {"name", "tiers", "link_gbps", "nvlink_alpha_us", "net_alpha_us"}, NoteCluster},
      {"gpu_model", {"name", "nvlink_gbps", "pcie_gbps"}, NoteGpuModel},
      {"nodes", {"names", "gpus", "model", "islands", "placed", "nics"}, NoteNodes},
      {"nvlink_domain", {"name", "gpus", "nodes", "spares"}, NoteDomain},
      {"switch",
       {"name", "tier", "rail", "link_gbps", "oversubscription", "nodes", "switches"},
       NoteSwitch},
  };
  return *kinds;
}

absl::Status ApplyAnnotation(const TextLine& note, const std::string& file, Draft* draft) {
  NVL_ASSIGN_OR_RETURN(std::vector<std::string> words, Words(note.text, file, note.line));
  std::string kind = words.empty() ? "" : words[0];
  for (const NoteKind& k : NoteKinds()) {
    if (k.name != kind) continue;
    words.erase(words.begin());
    NVL_ASSIGN_OR_RETURN(
        Fields f, ParseFields(words, file, note.line, k.keys, absl::StrCat("nvlplace ", kind)));
    return k.apply(f, draft);
  }
  return LineError(file, note.line, "nvlplace",
                   absl::StrCat("unknown annotation '", Printable(kind),
                                "'; expected cluster, gpu_model, "
                                "nodes, nvlink_domain or switch"));
}

// A SwitchName line named by an nvlink_domain annotation gives the domain its nodes, unless a
// block of that name does (ApplyBlocks): a block file's switches may share the blocks' names.
absl::Status ResolveDomains(const slurm::TopologyFile& file, Draft* draft) {
  absl::flat_hash_set<absl::string_view> blocks;
  for (const slurm::Block& b : file.blocks) blocks.insert(b.name);
  for (DomainSpec& domain : draft->spec.domains) {
    auto it = draft->switch_index.find(domain.name);
    if (!domain.nodes.empty() || it == draft->switch_index.end() || blocks.contains(domain.name)) {
      continue;
    }
    SwitchDraft& d = draft->switches[it->second];
    const SourceLoc& loc = d.spec.loc;
    if (d.annotated || !d.has_line) {
      return LineError(loc.file, loc.line, "switch",
                       absl::StrCat("'", domain.name,
                                    "' is annotated both as a switch and as an "
                                    "NVLink domain (",
                                    LineRef(domain.loc, loc.file), ")"));
    }
    if (!d.children.empty()) {
      return LineError(loc.file, loc.line, "Switches",
                       absl::StrCat("NVLink domain '", domain.name,
                                    "' lists Switches=; a "
                                    "domain lists the nodes it joins with Nodes="));
    }
    domain.nodes.Append(d.spec.nodes);
    d.is_domain = true;
  }
  return absl::OkStatus();
}

// A node named by a switch or an NVLink domain, and where (for "has no GPUs" errors). The
// name is a copy: the spec's lists hold runs, not strings to point at.
struct Mention {
  std::string node;
  const SourceLoc* loc;
};

// Switch specs with domain children replaced by the domains' nodes; every node named. The
// nodes a domain brings each time a switch lists it count against the names budget.
absl::Status BuildSwitches(Draft* draft, TopologySpec* spec, std::vector<Mention>* mentions,
                           std::vector<SourceLoc>* mention_locs) {
  absl::flat_hash_map<std::string, const DomainSpec*> domain_switch;
  for (const DomainSpec& domain : draft->spec.domains) {
    auto it = draft->switch_index.find(domain.name);
    if (it != draft->switch_index.end() && draft->switches[it->second].is_domain) {
      domain_switch[domain.name] = &domain;
    }
  }
  for (const SwitchDraft& d : draft->switches) {
    if (d.is_domain) continue;
    SwitchSpec s = d.spec;
    absl::flat_hash_set<absl::string_view> listed;
    for (const Child& c : d.children) {
      const SourceLoc& at = c.loc;
      if (!listed.insert(c.name).second) {
        return absl::InvalidArgumentError(
            FormatAt(at, absl::StrCat("switch '", c.name, "' is listed twice")));
      }
      auto domain = domain_switch.find(c.name);
      if (domain != domain_switch.end()) {
        const HostNames& nodes = domain->second->nodes;
        if (nodes.size() > draft->budget.max - draft->budget.names) {
          return absl::InvalidArgumentError(
              FormatAt(at, absl::StrCat("the hostlists of this file, with the nodes of the NVLink "
                                        "domains they list, name more than ",
                                        draft->budget.max, " nodes and switches")));
        }
        draft->budget.names += nodes.size();
        s.nodes.Append(nodes);
      } else if (draft->switch_index.contains(c.name)) {
        s.switches.push_back(c.name);
      } else {
        return absl::InvalidArgumentError(
            FormatAt(at, absl::StrCat("unknown switch '", c.name, "'")));
      }
    }
    spec->switches.push_back(std::move(s));
  }
  // Every node named, where it is named: the domains first, then the switches.
  mention_locs->reserve(spec->switches.size());
  for (const SwitchDraft& d : draft->switches) {
    if (d.is_domain) continue;
    const SourceLoc& s = d.spec.loc;
    mention_locs->push_back(d.nodes_loc.line > 0 ? d.nodes_loc : At(s.file, s.line, "Nodes"));
  }
  for (const DomainSpec& domain : draft->spec.domains) {
    for (const std::string& n : domain.nodes) mentions->push_back({n, &domain.loc});
  }
  for (size_t i = 0; i < spec->switches.size(); ++i) {
    for (const std::string& n : spec->switches[i].nodes) {
      mentions->push_back({n, &(*mention_locs)[i]});
    }
  }
  return absl::OkStatus();
}

std::string DefaultTierName(int height) {
  static const char* const kNames[] = {"leaf", "spine", "core"};
  return height < 3 ? kNames[height] : absl::StrCat("tier", height);
}

// The error for switch `s`, past limits::kMaxTiers levels, naming the chain from it down to a
// switch without children (one step a level: at most kMaxTiers + 1 names).
absl::Status TooHigh(const std::vector<SwitchSpec>& switches,
                     const absl::flat_hash_map<absl::string_view, int>& index,
                     const std::vector<int>& height, int s) {
  std::vector<std::string> chain = {switches[s].name};
  for (int at = s; height[at] > 0;) {
    for (const std::string& c : switches[at].switches) {
      auto it = index.find(c);
      if (it != index.end() && height[it->second] == height[at] - 1) {
        at = it->second;
        break;
      }
    }
    chain.push_back(switches[at].name);
  }
  return absl::InvalidArgumentError(
      FormatAt(At(switches[s].loc.file, switches[s].loc.line, "Switches"),
               absl::StrCat("switch '", switches[s].name, "' is ", height[s] + 1,
                            " levels of switches high (", absl::StrJoin(chain, " -> "),
                            "); nvlplace models at most ", limits::kMaxTiers,
                            " tiers: is a Switches= list wrong?")));
}

// Height of each switch: 0 for a switch without child switches, else 1 + the highest child's.
// Iterative (children before parents, Kahn's order), so a long chain cannot overflow the
// stack; a chain of more than limits::kMaxTiers switches is an error naming it. Switches on a
// cycle (and above one) keep height 0 here; Topology::Create reports the cycle.
absl::StatusOr<std::vector<int>> SwitchHeights(const std::vector<SwitchSpec>& switches) {
  size_t n = switches.size();
  absl::flat_hash_map<absl::string_view, int> index;
  for (size_t i = 0; i < n; ++i) index.emplace(switches[i].name, static_cast<int>(i));
  std::vector<std::vector<int>> parents(n);
  std::vector<size_t> waiting(n, 0);  // children not yet done
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& c : switches[i].switches) {
      auto it = index.find(c);
      if (it == index.end()) continue;  // BuildSwitches keeps only known children
      parents[it->second].push_back(static_cast<int>(i));
      ++waiting[i];
    }
  }
  std::vector<int> height(n, 0);
  std::vector<int> ready;
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push_back(static_cast<int>(i));
  }
  while (!ready.empty()) {
    int s = ready.back();
    ready.pop_back();
    if (height[s] >= limits::kMaxTiers) return TooHigh(switches, index, height, s);
    for (int p : parents[s]) {
      height[p] = std::max(height[p], height[s] + 1);
      if (--waiting[p] == 0) ready.push_back(p);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] > 0) height[i] = 0;  // on or above a cycle
  }
  return height;
}

// Tiers by height where no annotation names them; the tier list too when not annotated.
absl::Status AssignTiers(const Draft& draft, TopologySpec* spec) {
  NVL_ASSIGN_OR_RETURN(std::vector<int> height, SwitchHeights(spec->switches));
  if (!draft.tiers_given) {
    int top = height.empty() ? 0 : *std::max_element(height.begin(), height.end());
    spec->tiers.clear();
    for (int h = 0; h <= top; ++h) spec->tiers.push_back(DefaultTierName(h));
  }
  size_t k = 0;
  for (const SwitchDraft& d : draft.switches) {
    if (d.is_domain) continue;
    SwitchSpec& s = spec->switches[k];
    int h = height[k++];
    if (d.tier_given) continue;
    s.tier = h < static_cast<int>(spec->tiers.size()) ? spec->tiers[h] : DefaultTierName(h);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Import: gres.conf.

// What one GPU line of gres.conf says, shared by every GPU and node it describes.
struct GresLine {
  std::string file;  // the file it is in: gres.conf, or one its Include lines brought in
  int line = 0;
  std::string type;
  bool has_links = false;
  std::vector<int> links;  // the Links= row
};

struct GresGpu {
  int index = -1;  // -1: counted by Count= without File=
  const GresLine* src = nullptr;
};

// Where a GPU line is, for LineRef.
SourceLoc GresAt(const GresLine& line) { return SourceLoc{line.file, line.line, 0, ""}; }

struct GresTable {
  std::string file;
  TopologyLimits limits;
  NameBudget budget;
  int64_t total_gpus = 0;
  std::vector<std::unique_ptr<GresLine>> lines;
  std::vector<std::string> order;
  absl::flat_hash_map<std::string, std::vector<GresGpu>> gpus;
  // AutoDetect= other than off/none: the line of the global one (line 0: none), and per node
  // the line of a NodeName= line's (the last one wins, as in Slurm), as 1 + its index in
  // autodetect_lines (0: off).
  SourceLoc autodetect_all;
  absl::flat_hash_map<std::string, size_t> autodetect;
  std::vector<SourceLoc> autodetect_lines;
  IncludeFiles includes;  // how its Include lines are read
};

absl::StatusOr<std::vector<int>> DeviceIndexes(const Fields& f, NameBudget* budget) {
  const std::string* value = f.Find("File");
  if (value == nullptr) return std::vector<int>();
  auto bad = [&] {
    return f.Error("File", absl::StrCat("'", Printable(*value),
                                        "' is not /dev/nvidiaN (N a GPU number, or a bracket "
                                        "range such as /dev/nvidia[0-7])"));
  };
  absl::StatusOr<size_t> count = CountHostlist(*value);
  if (!count.ok()) return f.Error("File", count.status().message());
  if (*count > static_cast<size_t>(limits::kMaxGpusPerNode)) {
    return f.Error("File", absl::StrCat("File= names ", *count, " devices; a node has at most ",
                                        limits::kMaxGpusPerNode, " GPUs"));
  }
  std::vector<std::string> files;
  NVL_RETURN_IF_ERROR(GetHostlist(f, "File", budget, &files));
  std::vector<int> indexes;
  for (absl::string_view path : files) {
    if (!absl::ConsumePrefix(&path, "/dev/nvidia") || path.empty() || path.size() > 4 ||
        !std::all_of(path.begin(), path.end(), [](char c) { return absl::ascii_isdigit(c); })) {
      return bad();
    }
    int index = 0;
    for (char c : path) index = index * 10 + (c - '0');
    if (index >= limits::kMaxGpusPerNode) {
      return f.Error("File", absl::StrCat("/dev/nvidia", index, ": a node has at most ",
                                          limits::kMaxGpusPerNode, " GPUs, numbered from 0"));
    }
    indexes.push_back(index);
  }
  return indexes;
}

absl::StatusOr<std::vector<int>> LinksRow(const Fields& f) {
  std::vector<int> row;
  for (absl::string_view item : absl::StrSplit(*f.Find("Links"), ',')) {
    if (row.size() == static_cast<size_t>(limits::kMaxGpusPerNode)) {
      return f.Error("Links", absl::StrCat("more than ", limits::kMaxGpusPerNode,
                                           " entries; a node has at most that many GPUs"));
    }
    int v;
    if (!absl::SimpleAtoi(item, &v) || v < -1) {
      return f.Error("Links",
                     absl::StrCat("'", Printable(item), "' is not a link count (-1, 0, 1, ...)"));
    }
    row.push_back(v);
  }
  return row;
}

// The GPUs one "NodeName=... Name=gpu ..." line gives each of its nodes.
absl::StatusOr<std::vector<GresGpu>> LineGpus(const Fields& f, GresTable* table) {
  if (f.Find("File") == nullptr && f.Find("Count") == nullptr) {
    return f.Error("File", "a GPU line needs File=/dev/nvidiaN or Count=");
  }
  NVL_ASSIGN_OR_RETURN(std::vector<int> indexes, DeviceIndexes(f, &table->budget));
  int count = static_cast<int>(indexes.size());
  NVL_RETURN_IF_ERROR(GetInt(f, "Count", 1, limits::kMaxGpusPerNode, &count));
  if (!indexes.empty() && count != static_cast<int>(indexes.size())) {
    return f.Error("Count",
                   absl::StrCat("Count=", count, " but File= names ", indexes.size(), " devices"));
  }
  auto src = std::make_unique<GresLine>();
  src->file = f.file;
  src->line = f.line;
  NVL_ASSIGN_OR_RETURN(src->type, GetName(f, "Type", "GPU type"));
  if (f.Find("Links") != nullptr) {
    if (indexes.size() != 1) return f.Error("Links", "Links= needs exactly one device in File=");
    NVL_ASSIGN_OR_RETURN(src->links, LinksRow(f));
    src->has_links = true;
  }
  std::vector<GresGpu> gpus(count);
  for (int i = 0; i < count; ++i) {
    gpus[i].index = indexes.empty() ? -1 : indexes[i];
    gpus[i].src = src.get();
  }
  table->lines.push_back(std::move(src));
  return gpus;
}

absl::Status ParseGresLine(const TextLine& line, const std::string& file, GresTable* table) {
  NVL_ASSIGN_OR_RETURN(std::vector<std::string> words, Words(line.text, file, line.line));
  NVL_ASSIGN_OR_RETURN(Fields f, ParseFields(words, file, line.line,
                                             {"NodeName", "Name", "Type", "File", "Links", "Count",
                                              "Cores", "CPUs", "Flags", "AutoDetect"},
                                             "gres.conf"));
  const std::string* name = f.Find("Name");
  if (const std::string* detect = f.Find("AutoDetect"); detect != nullptr) {
    // Slurm finds these nodes' GPUs at run time, which nvlplace cannot see: remembered, so
    // that a node left without Name=gpu lines is not silently taken as CPU-only.
    bool on = !absl::EqualsIgnoreCase(*detect, "off") && !absl::EqualsIgnoreCase(*detect, "none");
    if (f.Find("NodeName") == nullptr) {
      table->autodetect_all = on ? At(file, line.line, "AutoDetect") : SourceLoc{};
    } else {
      std::vector<std::string> nodes;
      NVL_RETURN_IF_ERROR(GetHostlist(f, "NodeName", &table->budget, &nodes));
      if (on) table->autodetect_lines.push_back(At(file, line.line, "AutoDetect"));
      const size_t at = on ? table->autodetect_lines.size() : 0;
      for (std::string& node : nodes) table->autodetect[std::move(node)] = at;
    }
  }
  // Lines of other GRES ("Name=nic") and AutoDetect lines say nothing more here.
  if (name == nullptr || !absl::EqualsIgnoreCase(*name, "gpu")) return absl::OkStatus();
  if (f.Find("NodeName") == nullptr) {
    return f.Error("NodeName",
                   "a GPU line needs NodeName=: nvlplace reads one gres.conf for "
                   "the whole cluster");
  }
  std::vector<std::string> nodes;
  NVL_RETURN_IF_ERROR(GetHostlist(f, "NodeName", &table->budget, &nodes));
  NVL_ASSIGN_OR_RETURN(std::vector<GresGpu> gpus, LineGpus(f, table));
  int64_t adds = static_cast<int64_t>(nodes.size()) * static_cast<int64_t>(gpus.size());
  if (adds > table->limits.max_gpus - table->total_gpus) {
    return f.Error("NodeName",
                   absl::StrCat("these ", nodes.size(), " nodes of ", gpus.size(),
                                " GPUs bring gres.conf to ", table->total_gpus + adds,
                                " GPUs, more than the limit of ", table->limits.max_gpus,
                                " GPUs; raise it (--max-gpus) if the cluster is really that "
                                "large"));
  }
  table->total_gpus += adds;
  for (std::string& node : nodes) {
    auto [it, inserted] = table->gpus.try_emplace(node);
    if (inserted) table->order.push_back(std::move(node));
    if (it->second.size() + gpus.size() > static_cast<size_t>(limits::kMaxGpusPerNode)) {
      return f.Error("NodeName", absl::StrCat("node '", it->first, "' has more than ",
                                              limits::kMaxGpusPerNode, " GPUs in gres.conf"));
    }
    it->second.insert(it->second.end(), gpus.begin(), gpus.end());
  }
  return absl::OkStatus();
}

absl::Status ParseGres(absl::string_view text, GresTable* table) {
  NVL_ASSIGN_OR_RETURN(SplitText split, ReadConfLines(text, table->file, table->includes));
  for (const TextLine& line : split.lines) {
    NVL_RETURN_IF_ERROR(ParseGresLine(line, split.files[line.file], table));
  }
  return absl::OkStatus();
}

// Sorts the node's GPUs by index and checks they are /dev/nvidia0..n-1, each once.
absl::Status CheckIndexes(const std::string& node, std::vector<GresGpu>* gpus) {
  int anonymous = static_cast<int>(
      std::count_if(gpus->begin(), gpus->end(), [](const GresGpu& g) { return g.index < 0; }));
  if (anonymous == static_cast<int>(gpus->size())) return absl::OkStatus();
  if (anonymous > 0) {
    return LineError(gpus->front().src->file, gpus->front().src->line, "File",
                     absl::StrCat("node '", node,
                                  "' mixes Count= lines without File= and File= "
                                  "lines"));
  }
  // Slurm numbers a node's GPUs in the order of its File= entries (only AutoDetect sorts
  // them), nvlplace by device number: the two agree only when the files ascend.
  for (size_t i = 1; i < gpus->size(); ++i) {
    const GresGpu& g = (*gpus)[i];
    const GresGpu& before = (*gpus)[i - 1];
    if (g.index >= before.index) continue;
    return LineError(
        g.src->file, g.src->line, "File",
        absl::StrCat("node '", node, "' lists /dev/nvidia", g.index, " after /dev/nvidia",
                     before.index, " (", LineRef(GresAt(*before.src), g.src->file),
                     "); Slurm numbers a node's GPUs in the order of its File= entries, "
                     "nvlplace by device number, and the two would disagree: list the files in "
                     "ascending order (File=/dev/nvidia[0-7])"));
  }
  std::stable_sort(gpus->begin(), gpus->end(),
                   [](const GresGpu& a, const GresGpu& b) { return a.index < b.index; });
  for (size_t i = 0; i < gpus->size(); ++i) {
    const GresGpu& g = (*gpus)[i];
    if (i > 0 && g.index == (*gpus)[i - 1].index) {
      return LineError(
          g.src->file, g.src->line, "File",
          absl::StrCat("/dev/nvidia", g.index, " of node '", node, "' is listed twice (also on ",
                       LineRef(GresAt(*(*gpus)[i - 1].src), g.src->file), ")"));
    }
    if (g.index != static_cast<int>(i)) {
      return LineError(g.src->file, g.src->line, "File",
                       absl::StrCat("node '", node, "' has no /dev/nvidia", i,
                                    "; GPUs must be "
                                    "numbered 0..",
                                    gpus->size() - 1));
    }
  }
  return absl::OkStatus();
}

// Islands from the node's Links= rows (indexes checked); false when no row is given.
absl::StatusOr<bool> LinkIslands(const std::string& node, const std::vector<GresGpu>& gpus,
                                 std::vector<std::vector<int>>* islands) {
  int n = static_cast<int>(gpus.size());
  std::vector<const std::vector<int>*> links;
  for (const GresGpu& g : gpus) {
    if (g.src->has_links != gpus.front().src->has_links) {
      const GresGpu& without = g.src->has_links ? gpus.front() : g;
      return LineError(without.src->file, without.src->line, "Links",
                       absl::StrCat("node '", node,
                                    "' gives Links= for some GPUs but not for "
                                    "/dev/nvidia",
                                    without.index));
    }
    if (!g.src->has_links) return false;
    const std::vector<int>& row = g.src->links;
    if (static_cast<int>(row.size()) != n) {
      return LineError(g.src->file, g.src->line, "Links",
                       absl::StrCat("the row has ", row.size(), " entries but node '", node,
                                    "' has ", n, " GPUs"));
    }
    for (int j = 0; j < n; ++j) {
      if ((row[j] == -1) != (j == g.index)) {
        return LineError(g.src->file, g.src->line, "Links",
                         absl::StrCat("entry ", j, " is ", row[j],
                                      "; -1 marks the GPU "
                                      "itself (entry ",
                                      g.index, ") and only it"));
      }
    }
    links.push_back(&row);
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (((*links[i])[j] >= 1) != ((*links[j])[i] >= 1)) {
        return LineError(gpus[i].src->file, gpus[i].src->line, "Links",
                         absl::StrCat("node '", node, "': GPU ", i, " and GPU ", j,
                                      " disagree on whether they share an NVLink"));
      }
    }
  }
  std::vector<std::vector<int>> matrix;
  matrix.reserve(n);
  for (const std::vector<int>* row : links) matrix.push_back(*row);
  *islands = Canonical(NvlinkIslands(matrix));
  return true;
}

absl::StatusOr<NodeShape> GresShape(const std::string& node, std::vector<GresGpu> gpus) {
  NVL_RETURN_IF_ERROR(CheckIndexes(node, &gpus));
  NodeShape shape;
  shape.gpus = static_cast<int>(gpus.size());
  shape.model = gpus.front().src->type;
  shape.loc = At(gpus.front().src->file, gpus.front().src->line, "NodeName");
  for (const GresGpu& g : gpus) {
    if (g.src->type != shape.model) {
      return LineError(g.src->file, g.src->line, "Type",
                       absl::StrCat("node '", node, "' mixes GPU types '", shape.model, "' and '",
                                    g.src->type, "'"));
    }
  }
  NVL_ASSIGN_OR_RETURN(shape.islands_known, LinkIslands(node, gpus, &shape.islands));
  return shape;
}

// Nodes that the same gres.conf lines describe have the same shape: it is worked out once
// (checking a node's Links= rows takes GPUs^2 steps).
using GresKey = std::vector<std::pair<int, const GresLine*>>;

absl::StatusOr<NodeShape> CachedGresShape(const std::string& node, const std::vector<GresGpu>& gpus,
                                          absl::flat_hash_map<GresKey, NodeShape>* cache) {
  GresKey key;
  key.reserve(gpus.size());
  for (const GresGpu& g : gpus) key.emplace_back(g.index, g.src);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  NVL_ASSIGN_OR_RETURN(NodeShape shape, GresShape(node, gpus));
  cache->emplace(std::move(key), shape);
  return shape;
}

// gres.conf wins where it speaks, the annotation fills the gaps; where both speak they agree.
absl::StatusOr<NodeShape> Merge(const std::string& node, NodeShape gres, const NodeShape& note) {
  auto differ = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        FormatAt(gres.loc, absl::StrCat("node '", node, "': ", what,
                                        " differs from the nvlplace "
                                        "annotation on ",
                                        note.loc.file, ":", note.loc.line)));
  };
  if (gres.gpus != note.gpus) return differ("the GPU count");
  if (!gres.model.empty() && gres.model != note.model) return differ("the GPU type");
  if (gres.islands_known && gres.islands != note.islands) return differ("the NVLink islands");
  if (gres.model.empty()) gres.model = note.model;
  gres.islands = note.islands;
  gres.placed = note.placed;
  gres.nics = note.nics;
  return gres;
}

// A node's shape from gres.conf and its annotation, else from the import options.
absl::StatusOr<NodeShape> ShapeOf(const std::string& name, const SourceLoc* mention,
                                  const Draft& draft, const GresTable& gres,
                                  const SlurmImportOptions& options,
                                  absl::flat_hash_map<GresKey, NodeShape>* cache) {
  auto note = draft.node_notes.find(name);
  auto listed = gres.gpus.find(name);
  if (listed != gres.gpus.end()) {
    NVL_ASSIGN_OR_RETURN(NodeShape shape, CachedGresShape(name, listed->second, cache));
    if (note != draft.node_notes.end()) {
      return Merge(name, std::move(shape), draft.shapes[note->second]);
    }
    if (shape.model.empty()) {
      shape.model = options.gpu_model;
      shape.untyped = true;
    }
    return shape;
  }
  if (note != draft.node_notes.end()) return draft.shapes[note->second];
  if (!gres.order.empty()) {
    auto detect = gres.autodetect.find(name);
    if (detect != gres.autodetect.end() && detect->second > 0) {
      const SourceLoc& at = gres.autodetect_lines[detect->second - 1];
      return LineError(at.file, at.line, "AutoDetect",
                       absl::StrCat("node '", name,
                                    "' has AutoDetect and no Name=gpu line: Slurm finds its GPUs "
                                    "when slurmd starts, nvlplace cannot; give its Name=gpu "
                                    "Type= File= lines, or build its model with `nvlplace import "
                                    "nvidia-smi`"));
    }
    // gres.conf lists the cluster's GPUs and not this node's: it has none.
    NodeShape shape;
    shape.absent = true;
    shape.loc = *mention;
    return shape;
  }
  if (options.gpus_per_node < 1) {
    return absl::InvalidArgumentError(
        FormatAt(*mention, absl::StrCat("node '", name,
                                        "' has no GPU count: give gres.conf, or a default GPU "
                                        "count per node")));
  }
  NodeShape shape;
  shape.gpus = options.gpus_per_node;
  shape.model = options.gpu_model;
  shape.loc = *mention;
  return shape;
}

// Nodes in order: annotations, gres.conf, topology.conf; consecutive equal shapes share a group.
absl::Status BuildNodes(const Draft& draft, const GresTable& gres,
                        const std::vector<Mention>& mentions, const SlurmImportOptions& options,
                        TopologySpec* spec, std::vector<std::string>* absent,
                        std::vector<std::string>* untyped) {
  std::vector<std::pair<const std::string*, const SourceLoc*>> order;
  absl::flat_hash_set<absl::string_view> seen;
  for (const std::string& n : draft.noted_nodes) {
    if (seen.insert(n).second) order.emplace_back(&n, nullptr);
  }
  for (const std::string& n : gres.order) {
    if (seen.insert(n).second) order.emplace_back(&n, nullptr);
  }
  for (const Mention& m : mentions) {
    if (seen.insert(m.node).second) order.emplace_back(&m.node, m.loc);
  }
  absl::flat_hash_map<GresKey, NodeShape> cache;
  int64_t gpus = 0;
  for (const auto& [name, mention] : order) {
    NVL_ASSIGN_OR_RETURN(NodeShape shape, ShapeOf(*name, mention, draft, gres, options, &cache));
    if (shape.absent) absent->push_back(*name);
    if (shape.untyped) untyped->push_back(*name);
    gpus += shape.gpus;
    if (gpus > draft.limits.max_gpus) {
      return absl::InvalidArgumentError(FormatAt(
          shape.loc,
          absl::StrCat("node '", *name, "' brings the cluster past ", draft.limits.max_gpus,
                       " GPUs, the limit; raise it (--max-gpus) if the cluster is "
                       "really that large")));
    }
    if (!spec->node_groups.empty()) {
      NodeGroupSpec& last = spec->node_groups.back();
      if (last.gpus == shape.gpus && last.model == shape.model && last.islands == shape.islands &&
          last.placed == shape.placed && last.nics == shape.nics) {
        last.names.push_back(*name);
        continue;
      }
    }
    NodeGroupSpec group;
    group.names = {*name};
    group.gpus = shape.gpus;
    group.model = shape.model;
    group.islands = shape.islands;
    group.placed = shape.placed;
    group.nics = shape.nics;
    group.loc = shape.loc;
    spec->node_groups.push_back(std::move(group));
  }
  return absl::OkStatus();
}

// The figures of a model that nodes use and no annotation describes: a --model option, then
// --nvlink-gbps for the --gpu-model model, then the table of known models (gpu_models.h).
// `loc` is where the nodes got the model (a gres.conf Type= line).
absl::StatusOr<GpuModelSpec> ModelFigures(const std::string& name, const SourceLoc& loc,
                                          const SlurmImportOptions& options) {
  GpuModelSpec model;
  model.name = name;
  for (const GpuModelSpec& m : options.models) {
    if (absl::EqualsIgnoreCase(m.name, name)) {
      model.nvlink_gbps = m.nvlink_gbps;
      model.pcie_gbps = m.pcie_gbps;
      return model;
    }
  }
  const KnownGpuModel* known = FindKnownGpuModel(name);
  if (name == options.gpu_model && options.nvlink_gbps != kGbpsFromTable) {
    model.nvlink_gbps = options.nvlink_gbps;
    model.pcie_gbps = known != nullptr ? known->pcie_gbps : kDefaultPcieGbps;
    return model;
  }
  if (known == nullptr) {
    SourceLoc at = loc;
    if (at.path == "NodeName") at.path = "Type";  // a gres.conf line
    return absl::InvalidArgumentError(FormatAt(
        at, absl::StrCat("GPU type '", Printable(name),
                         "' is not in nvlplace's table of known models; declare it with --model ",
                         Printable(name),
                         "=NVLINK_GBPS,PCIE_GBPS (GB/s per GPU, both directions; NVLINK_GBPS "
                         "0 without NVLink), or use a known name: ",
                         KnownGpuModelNames())));
  }
  model.nvlink_gbps = known->nvlink_gbps;
  model.pcie_gbps = known->pcie_gbps;
  return model;
}

// Adds the models that nodes use but no annotation describes, with their figures.
absl::Status AddMissingModels(const SlurmImportOptions& options, TopologySpec* spec) {
  absl::flat_hash_set<std::string> known;
  for (const GpuModelSpec& m : spec->gpu_models) known.insert(m.name);
  for (const NodeGroupSpec& g : spec->node_groups) {
    if (g.model.empty() || !known.insert(g.model).second) continue;
    NVL_ASSIGN_OR_RETURN(GpuModelSpec model, ModelFigures(g.model, g.loc, options));
    spec->gpu_models.push_back(std::move(model));
  }
  return absl::OkStatus();
}

// A --model declaration: a name and both bandwidths in range.
absl::Status CheckModelOption(const GpuModelSpec& m) {
  if (m.name.empty()) return absl::InvalidArgumentError("--model needs a model name");
  NVL_RETURN_IF_ERROR(CheckName(m.name, "--model name"));
  if (!(m.nvlink_gbps >= 0 && m.nvlink_gbps <= limits::kMaxBandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--model ", m.name, ": the NVLink bandwidth must be ", NvlinkBandwidthRule()));
  }
  if (!(m.pcie_gbps > 0 && m.pcie_gbps <= limits::kMaxBandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--model ", m.name, ": the PCIe bandwidth must be ", PcieBandwidthRule()));
  }
  return absl::OkStatus();
}

// The import options come from a command line or a caller: checked like file values.
absl::Status CheckOptions(const SlurmImportOptions& options) {
  if (options.gpus_per_node < 0 || options.gpus_per_node > limits::kMaxGpusPerNode) {
    return absl::InvalidArgumentError(
        absl::StrCat("the default GPU count per node must be from "
                     "1 to ",
                     limits::kMaxGpusPerNode, ", not ", options.gpus_per_node));
  }
  if (options.nvlink_gbps != kGbpsFromTable &&
      !(options.nvlink_gbps >= 0 && options.nvlink_gbps <= limits::kMaxBandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the default NVLink bandwidth must be ", NvlinkBandwidthRule()));
  }
  for (const GpuModelSpec& m : options.models) NVL_RETURN_IF_ERROR(CheckModelOption(m));
  NVL_RETURN_IF_ERROR(CheckName(options.gpu_model, "the default GPU model name"));
  return CheckName(options.name, "the cluster name");
}

// The switches and annotations of the topology file, in file order, so that switches keep the
// order in which the file first names them.
absl::Status ApplyFile(const slurm::TopologyFile& file, Draft* draft) {
  size_t next_note = 0;
  auto notes_before = [&](int64_t seq) -> absl::Status {
    for (; next_note < file.annotations.size() && file.annotations[next_note].seq < seq;
         ++next_note) {
      const TextLine& note = file.annotations[next_note];
      NVL_RETURN_IF_ERROR(ApplyAnnotation(note, file.FileOf(note), draft));
    }
    return absl::OkStatus();
  };
  for (const slurm::TreeSwitch& sw : file.switches) {
    NVL_RETURN_IF_ERROR(notes_before(sw.seq));
    NVL_RETURN_IF_ERROR(AddTreeSwitch(sw, draft));
  }
  return notes_before(std::numeric_limits<int64_t>::max());
}

// ---------------------------------------------------------------------------------------
// Import: topology/block blocks.

// What describes the fabric besides the blocks, for messages ("" when nothing does).
std::string FabricSource(const slurm::TopologyFile& file, const Draft& draft) {
  if (!file.tree_topology.empty()) {
    return absl::StrCat("tree topology '", file.tree_topology, "'");
  }
  if (draft.first_switch_note.line > 0) {
    return absl::StrCat("the nvlplace switch annotations (from ",
                        LineRef(draft.first_switch_note, file.file), ")");
  }
  for (const SwitchDraft& d : draft.switches) {
    if (!d.is_domain) return "the SwitchName lines";
  }
  return "";
}

// A node of a block read as an NVLink domain must be somewhere in the fabric the file
// describes (when it describes one), and must have GPUs (when gres.conf lists the GPUs).
absl::Status CheckDomainNode(const slurm::Block& block, const std::string& node,
                             const std::string& fabric,
                             const absl::flat_hash_set<std::string>& fabric_nodes,
                             const Draft& draft, const GresTable& gres) {
  if (!fabric.empty() && !fabric_nodes.contains(node)) {
    return absl::InvalidArgumentError(
        FormatAt(block.nodes_loc,
                 absl::StrCat("block '", block.name, "' lists node '", node,
                              "', which no switch of ", fabric,
                              " lists; add the node under a leaf switch there, or remove it from "
                              "the block")));
  }
  if (!gres.order.empty() && !gres.gpus.contains(node) && !draft.node_notes.contains(node)) {
    return absl::InvalidArgumentError(FormatAt(
        block.nodes_loc,
        absl::StrCat("block '", block.name, "' lists node '", node, "', which ",
                     gres.file.empty() ? "gres.conf" : gres.file,
                     " does not list: the nodes of an NVLink domain need GPUs; add its GPUs to "
                     "gres.conf, remove it from the block, or give --blocks fabric if the blocks "
                     "are not NVLink domains")));
  }
  return absl::OkStatus();
}

// Each block with nodes becomes a multi-node NVLink domain, in block order, after the domains
// annotated elsewhere. An nvlink_domain annotation of the block's name (without nodes=) gives
// its gpus= check and spares=; without spares=, a block larger than the planning base size
// keeps the difference as spares.
absl::Status BlockDomains(const slurm::TopologyFile& file, const slurm::BlockLevels& levels,
                          const GresTable& gres, Draft* draft) {
  std::string fabric = FabricSource(file, *draft);
  absl::flat_hash_set<std::string> fabric_nodes;
  for (const SwitchDraft& d : draft->switches) {
    if (!d.is_domain) fabric_nodes.insert(d.spec.nodes.begin(), d.spec.nodes.end());
  }
  absl::flat_hash_map<absl::string_view, const slurm::Block*> blocks;
  for (const slurm::Block& b : file.blocks) blocks.emplace(b.name, &b);
  std::vector<DomainSpec>& domains = draft->spec.domains;
  absl::flat_hash_map<std::string, size_t> annotated;  // annotated without nodes, by name
  for (size_t i = 0; i < domains.size(); ++i) {
    auto block = blocks.find(domains[i].name);
    if (block == blocks.end()) continue;
    if (!domains[i].nodes.empty()) {
      return absl::InvalidArgumentError(FormatAt(
          domains[i].loc,
          absl::StrCat("NVLink domain '", domains[i].name,
                       "' has its own nodes and is also a block (",
                       LineRef(block->second->loc, domains[i].loc.file),
                       "); a block's annotation gives no nodes=: remove them, or rename one")));
    }
    annotated.emplace(domains[i].name, i);
  }
  std::vector<bool> taken(domains.size(), false);
  std::vector<DomainSpec> from_blocks;
  for (const slurm::Block& b : file.blocks) {
    if (b.nodes.empty()) {
      draft->notes.push_back(absl::StrCat("note: ", FormatAt(b.loc, ""), "block '", b.name,
                                          "' has no nodes: no NVLink domain"));
      continue;
    }
    for (const std::string& node : b.nodes) {
      NVL_RETURN_IF_ERROR(CheckDomainNode(b, node, fabric, fabric_nodes, *draft, gres));
    }
    DomainSpec d;
    auto it = annotated.find(b.name);
    if (it != annotated.end()) {
      d = std::move(domains[it->second]);
      taken[it->second] = true;
    } else {
      d.name = b.name;
    }
    d.loc = b.loc;
    d.nodes = b.nodes;
    int64_t nodes = static_cast<int64_t>(b.nodes.size());
    if (d.spares_loc.line == 0 && levels.base >= 1 && nodes > levels.base) {
      d.spares = static_cast<int>(nodes - levels.base);
    }
    if (levels.base > nodes) {
      draft->notes.push_back(absl::StrCat("note: ", FormatAt(b.loc, ""), "block '", b.name,
                                          "' has ", nodes,
                                          " nodes, fewer than the planning base size ", levels.base,
                                          ": Slurm before 25.05 refuses such a block"));
    }
    from_blocks.push_back(std::move(d));
  }
  std::vector<DomainSpec> kept;
  for (size_t i = 0; i < domains.size(); ++i) {
    if (!taken[i]) kept.push_back(std::move(domains[i]));
  }
  for (DomainSpec& d : from_blocks) kept.push_back(std::move(d));
  domains = std::move(kept);
  return absl::OkStatus();
}

// The blocks as the fabric: a switch per block (tier "block") with its nodes, and per level of
// BlockSizes above the base an aggregated switch per aligned run of 2^L blocks (tier
// "block<2^L>", named "<tier>-<index>") over the switches of the level below.
absl::Status BlockSwitches(const slurm::TopologyFile& file, const slurm::BlockLevels& levels,
                           Draft* draft) {
  absl::flat_hash_map<absl::string_view, const slurm::Block*> names;
  for (const slurm::Block& b : file.blocks) names.emplace(b.name, &b);
  auto add = [&](const std::string& name, const SourceLoc& loc,
                 int level) -> absl::StatusOr<SwitchDraft*> {
    SwitchDraft& d = DraftFor(name, loc, draft);
    if (d.has_line || d.annotated) {
      return absl::InvalidArgumentError(
          FormatAt(loc, absl::StrCat("switch '", name, "' is defined twice (first on ",
                                     LineRef(d.spec.loc, loc.file), ")")));
    }
    d.has_line = true;
    d.tier_given = true;
    d.spec.tier = slurm::BlockLevelTier(level);
    return &d;
  };
  std::vector<std::string> lower;  // the switch of each group of the level below ("": none)
  for (const slurm::Block& b : file.blocks) {
    if (b.nodes.empty()) {
      lower.emplace_back();
      continue;
    }
    NVL_ASSIGN_OR_RETURN(SwitchDraft * d, add(b.name, b.loc, 0));
    d->spec.nodes = b.nodes;
    d->nodes_loc = b.nodes_loc;
    lower.push_back(b.name);
  }
  const SourceLoc& at = levels.given ? levels.loc : file.blocks.front().loc;
  std::vector<int> above = slurm::LevelsAbove(levels, file.blocks.size());
  int below = 0;
  for (int level : above) {
    size_t step = size_t{1} << (level - below);  // groups of the level below in one of this one
    std::vector<std::string> groups((lower.size() + step - 1) / step);
    for (size_t g = 0; g < groups.size(); ++g) {
      std::vector<std::string> children;
      for (size_t i = g * step; i < std::min(lower.size(), (g + 1) * step); ++i) {
        if (!lower[i].empty()) children.push_back(lower[i]);
      }
      if (children.empty()) continue;
      std::string name = slurm::AggregatedBlockName(level, g);
      auto taken = names.find(name);
      if (taken != names.end()) {
        return absl::InvalidArgumentError(FormatAt(
            taken->second->loc,
            absl::StrCat("block name '", name, "' is the name nvlplace gives aggregated block ", g,
                         " of level ", level, " when blocks are the fabric; rename the block")));
      }
      NVL_ASSIGN_OR_RETURN(SwitchDraft * d, add(name, at, level));
      for (std::string& c : children) d->children.push_back({std::move(c), at});
      groups[g] = name;
    }
    lower = std::move(groups);
    below = level;
  }
  if (!draft->tiers_given) {
    draft->spec.tiers = {slurm::BlockLevelTier(0)};
    for (int level : above) draft->spec.tiers.push_back(slurm::BlockLevelTier(level));
    draft->tiers_given = true;
  }
  return absl::OkStatus();
}

// Blocks are NVLink domains (options.blocks kNvlink) or fabric levels (kFabric). They are the
// fabric too when nothing else describes it (no SwitchName line, tree topology or switch
// annotation); as fabric levels they must be the whole fabric.
absl::Status ApplyBlocks(const slurm::TopologyFile& file, const SlurmImportOptions& options,
                         const GresTable& gres, Draft* draft) {
  if (file.blocks.empty()) return absl::OkStatus();
  std::string fabric = FabricSource(file, *draft);
  bool as_domains = options.blocks == SlurmImportOptions::Blocks::kNvlink;
  if (!as_domains && !fabric.empty()) {
    return absl::InvalidArgumentError(FormatAt(
        file.blocks.front().loc,
        absl::StrCat("--blocks fabric makes the blocks the fabric, but ", fabric,
                     " describes it already; read the blocks as NVLink domains in that fabric "
                     "(--blocks nvlink, the default)")));
  }
  // Without BlockSizes, Slurm's base is the node count of the first block that has nodes
  // (block_record.c): a leading block without nodes does not make it 0.
  auto first = std::find_if(file.blocks.begin(), file.blocks.end(),
                            [](const slurm::Block& b) { return !b.nodes.empty(); });
  slurm::BlockLevels levels =
      file.block_levels.given
          ? file.block_levels
          : slurm::DefaultBlockLevels(
                first == file.blocks.end() ? 0 : static_cast<int64_t>(first->nodes.size()));
  if (as_domains) NVL_RETURN_IF_ERROR(BlockDomains(file, levels, gres, draft));
  if (fabric.empty()) NVL_RETURN_IF_ERROR(BlockSwitches(file, levels, draft));
  return absl::OkStatus();
}

// The topology file: topology.conf, or topology.yaml (`yaml`).
struct TopologyText {
  absl::string_view text;
  const std::string& file;
  bool yaml;
};

absl::StatusOr<SlurmImport> Import(const TopologyText& topology, absl::string_view gres_conf,
                                   const std::string& gres_file, const SlurmImportOptions& options,
                                   const TopologyLimits& topology_limits) {
  NVL_RETURN_IF_ERROR(CheckOptions(options));
  Draft draft;
  draft.file = topology.file;
  draft.limits = topology_limits;
  draft.budget.max = topology_limits.max_names;
  slurm::TopologyFile file;
  if (topology.yaml) {
    NVL_ASSIGN_OR_RETURN(file, slurm::ReadTopologyYaml(topology.text, topology.file,
                                                       options.topology_names, &draft.budget));
  } else {
    if (!options.topology_names.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(topology.file,
                       ": --topology-name picks a topology of a topology.yaml; a "
                       "topology.conf holds one: leave it out"));
    }
    NVL_ASSIGN_OR_RETURN(file, slurm::ReadTopologyConf(topology.text, topology.file, &draft.budget,
                                                       options.includes));
  }
  NVL_RETURN_IF_ERROR(ApplyFile(file, &draft));
  GresTable gres;
  gres.file = gres_file;
  gres.limits = topology_limits;
  gres.budget.max = topology_limits.max_names;
  gres.includes = options.includes;
  NVL_RETURN_IF_ERROR(ParseGres(gres_conf, &gres));
  NVL_RETURN_IF_ERROR(ResolveDomains(file, &draft));
  NVL_RETURN_IF_ERROR(ApplyBlocks(file, options, gres, &draft));
  TopologySpec spec = draft.spec;
  spec.loc = SourceLoc{topology.file, 0, 0, ""};
  if (spec.name.empty()) spec.name = options.name;
  std::vector<Mention> mentions;
  std::vector<SourceLoc> mention_locs;
  NVL_RETURN_IF_ERROR(BuildSwitches(&draft, &spec, &mentions, &mention_locs));
  NVL_RETURN_IF_ERROR(AssignTiers(draft, &spec));
  std::vector<std::string> absent, untyped;
  NVL_RETURN_IF_ERROR(BuildNodes(draft, gres, mentions, options, &spec, &absent, &untyped));
  NVL_RETURN_IF_ERROR(AddMissingModels(options, &spec));
  SlurmImport out{std::move(spec), std::move(file.notes)};
  out.notes.insert(out.notes.end(), draft.notes.begin(), draft.notes.end());
  const std::string gres_name = gres_file.empty() ? "gres.conf" : std::string(gres_file);
  if (!absent.empty()) {
    out.notes.push_back(absl::StrCat(
        "note: ", absent.size(), absent.size() == 1 ? " node" : " nodes", " of ",
        topology.yaml ? "topology.yaml" : "topology.conf", " not in ", gres_name,
        " imported without GPUs (gpus: 0): ", CompressHostlist(absent),
        gres.autodetect_all.line == 0
            ? ""
            : absl::StrCat("; ",
                           gres.autodetect_all.file.empty() ? gres_name : gres.autodetect_all.file,
                           ":", gres.autodetect_all.line,
                           " has AutoDetect: if they have GPUs, Slurm finds them "
                           "and nvlplace does not: give their Name=gpu File= "
                           "lines")));
  }
  if (!untyped.empty()) {
    out.notes.push_back(
        absl::StrCat("note: ", gres_name, " gives no Type= for ", untyped.size(),
                     untyped.size() == 1 ? " node" : " nodes", " (", CompressHostlist(untyped),
                     "): modelled as ", options.gpu_model,
                     " (--gpu-model); give Type= in gres.conf, or --gpu-model with their model"));
  }
  return out;
}

// Import, with every exception (std::bad_alloc) turned into a Status.
absl::StatusOr<SlurmImport> ImportCatching(const TopologyText& topology,
                                           absl::string_view gres_conf,
                                           const std::string& gres_file,
                                           const SlurmImportOptions& options,
                                           const TopologyLimits& topology_limits) {
  try {
    return Import(topology, gres_conf, gres_file, options, topology_limits);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(topology.file, ": out of memory while importing"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(topology.file, ": cannot import: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<TopologySpec> ImportSlurm(absl::string_view topology_conf,
                                         const std::string& topology_file,
                                         absl::string_view gres_conf, const std::string& gres_file,
                                         const SlurmImportOptions& options,
                                         const TopologyLimits& topology_limits) {
  NVL_ASSIGN_OR_RETURN(SlurmImport imported,
                       ImportSlurmWithNotes(topology_conf, topology_file, gres_conf, gres_file,
                                            options, topology_limits));
  return std::move(imported.spec);
}

absl::StatusOr<SlurmImport> ImportSlurmWithNotes(absl::string_view topology_conf,
                                                 const std::string& topology_file,
                                                 absl::string_view gres_conf,
                                                 const std::string& gres_file,
                                                 const SlurmImportOptions& options,
                                                 const TopologyLimits& topology_limits) {
  return ImportCatching(TopologyText{topology_conf, topology_file, /*yaml=*/false}, gres_conf,
                        gres_file, options, topology_limits);
}

absl::StatusOr<SlurmImport> ImportSlurmTopologyYaml(absl::string_view topology_yaml,
                                                    const std::string& topology_file,
                                                    absl::string_view gres_conf,
                                                    const std::string& gres_file,
                                                    const SlurmImportOptions& options,
                                                    const TopologyLimits& topology_limits) {
  return ImportCatching(TopologyText{topology_yaml, topology_file, /*yaml=*/true}, gres_conf,
                        gres_file, options, topology_limits);
}

absl::StatusOr<GpuModelSpec> ParseModelOption(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--model ", Printable(text), ": ", why,
                     "; write NAME=NVLINK_GBPS,PCIE_GBPS (GB/s per GPU, both directions), e.g. "
                     "--model X100=900,128"));
  };
  size_t eq = text.find('=');
  if (eq == absl::string_view::npos) return bad("no '='");
  GpuModelSpec m;
  m.name = std::string(text.substr(0, eq));
  std::vector<absl::string_view> figures = absl::StrSplit(text.substr(eq + 1), ',');
  if (figures.size() != 2) return bad("give two bandwidths after '='");
  if (!absl::SimpleAtod(figures[0], &m.nvlink_gbps) ||
      !absl::SimpleAtod(figures[1], &m.pcie_gbps)) {
    return bad("the bandwidths must be numbers");
  }
  absl::Status ok = CheckModelOption(m);
  if (!ok.ok()) return bad(ok.message());
  return m;
}

}  // namespace nvlplace
