// Writes a model as topology.conf (tree, block), topology.yaml and gres.conf, with annotations.
#include "placement/formats/slurm_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "placement/formats/slurm_lexer.h"
#include "placement/formats/slurm_topology.h"
#include "placement/model/hostlist.h"
#include "placement/model/status_macros.h"

namespace nvlplace {
namespace {

// The shortest decimal that reads back as the same double.
std::string Num(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    double back;
    if (absl::SimpleAtod(buf, &back) && back == v) break;
  }
  return buf;
}

std::string Field(absl::string_view key, absl::string_view value) {
  bool plain = !value.empty() && std::none_of(value.begin(), value.end(),
                                              [](char c) { return absl::ascii_isspace(c); });
  return plain ? absl::StrCat(key, "=", value) : absl::StrCat(key, "=\"", value, "\"");
}

// A value on a Slurm line: '#' starts a comment there, so a name holding one is written
// "\#" (Slurm's escape, read back by slurm_lexer), and one holding a space is quoted;
// annotations keep the name as it is.
std::string SlurmValue(absl::string_view value) {
  std::string escaped = absl::StrReplaceAll(value, {{"#", "\\#"}});
  bool spaced =
      std::any_of(value.begin(), value.end(), [](char c) { return absl::ascii_isspace(c); });
  return spaced ? absl::StrCat("\"", escaped, "\"") : escaped;
}

void Note(absl::string_view kind, const std::vector<std::string>& fields, std::string* out) {
  absl::StrAppend(out, "# ", slurm::kAnnotation, " ", kind, " ", absl::StrJoin(fields, " "), "\n");
}

std::vector<std::string> NodeNames(const Topology& topo, absl::Span<const NodeId> nodes) {
  std::vector<std::string> names;
  for (NodeId n : nodes) names.push_back(topo.nodes()[n].name);
  return names;
}

std::string IslandsText(const std::vector<std::vector<int>>& islands) {
  return absl::StrJoin(islands, "/", [](std::string* out, const std::vector<int>& island) {
    absl::StrAppend(out, absl::StrJoin(island, ","));
  });
}

// The cluster, its GPU models and its node shapes.
void WriteClusterNotes(const Topology& topo, const TopologySpec& spec, std::string* out) {
  Note("cluster",
       {Field("name", topo.name()), Field("tiers", absl::StrJoin(topo.tiers(), ",")),
        Field("link_gbps", Num(topo.link_gbps())),
        Field("nvlink_alpha_us", Num(topo.nvlink_alpha_us())),
        Field("net_alpha_us", Num(topo.net_alpha_us()))},
       out);
  for (const GpuModelSpec& m : topo.gpu_models()) {
    Note("gpu_model",
         {Field("name", m.name), Field("nvlink_gbps", Num(m.nvlink_gbps)),
          Field("pcie_gbps", Num(m.pcie_gbps))},
         out);
  }
  for (const NodeGroupSpec& g : spec.node_groups) {
    std::vector<std::string> fields = {Field("names", g.names.Hostlist()),
                                       Field("gpus", absl::StrCat(g.gpus))};
    if (!g.model.empty()) fields.push_back(Field("model", g.model));  // none: CPU-only nodes
    if (!g.islands.empty()) fields.push_back(Field("islands", IslandsText(g.islands)));
    if (!g.placed) fields.push_back(Field("placed", "false"));
    if (g.nics != kDefaultNics) fields.push_back(Field("nics", absl::StrCat(g.nics)));
    Note("nodes", fields, out);
  }
}

// Switches Slurm sees: leaves of no rail or rail 0, and switches above at least one of them.
std::vector<bool> VisibleSwitches(const Topology& topo) {
  std::vector<SwitchId> order(topo.num_switches());
  for (SwitchId s = 0; s < topo.num_switches(); ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](SwitchId a, SwitchId b) {
    return topo.switches()[a].tier < topo.switches()[b].tier;
  });
  std::vector<bool> visible(topo.num_switches(), false);
  for (SwitchId s : order) {
    const Switch& sw = topo.switches()[s];
    visible[s] = sw.nodes.empty() ? std::any_of(sw.children.begin(), sw.children.end(),
                                                [&](SwitchId c) { return visible[c]; })
                                  : sw.rail <= 0;
  }
  return visible;
}

// The multi-node domain of a node, or -1.
DomainId MultiNodeDomain(const Topology& topo, NodeId n) {
  const Node& node = topo.nodes()[n];
  if (node.domains.size() != 1 || !topo.domains()[node.domains[0]].multi_node) return -1;
  return node.domains[0];
}

// Per visible leaf, the NVLink domains written as Slurm switches below it: all of a leaf's
// nodes must be in multi-node domains that lie wholly under it (and whose names are free).
std::vector<std::vector<DomainId>> DomainSwitches(const Topology& topo,
                                                  const std::vector<bool>& visible) {
  std::vector<SwitchId> leaf_of(topo.num_nodes(), -1);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    for (SwitchId s : topo.nodes()[n].leaves) {
      if (visible[s]) leaf_of[n] = s;
    }
  }
  std::vector<std::vector<DomainId>> out(topo.num_switches());
  for (SwitchId s = 0; s < topo.num_switches(); ++s) {
    const Switch& sw = topo.switches()[s];
    if (!visible[s] || sw.nodes.empty()) continue;
    std::vector<DomainId> domains;
    absl::flat_hash_set<DomainId> listed;
    bool whole = true;
    for (NodeId n : sw.nodes) {
      DomainId d = MultiNodeDomain(topo, n);
      if (d < 0 || topo.FindSwitch(topo.domains()[d].name) >= 0) whole = false;
      if (!whole) break;
      if (listed.insert(d).second) domains.push_back(d);
    }
    for (DomainId d : domains) {
      for (NodeId n : topo.domains()[d].nodes) whole = whole && leaf_of[n] == s;
    }
    if (whole) out[s] = std::move(domains);
  }
  return out;
}

// An NVLink domain's annotation: its name, GPUs and spares (when it keeps any, or always: a
// block's spares would otherwise be read from the planning base size).
std::vector<std::string> DomainNoteFields(const NvlDomain& dom, bool always_spares = false) {
  std::vector<std::string> fields = {Field("name", dom.name),
                                     Field("gpus", absl::StrCat(dom.gpus.size()))};
  if (dom.spares > 0 || always_spares) {
    fields.push_back(Field("spares", absl::StrCat(dom.spares)));
  }
  return fields;
}

// Multi-node domains that are not written as switches: annotations with their nodes.
void WriteDomainNotes(const Topology& topo, const std::vector<std::vector<DomainId>>& as_switch,
                      std::string* out) {
  std::vector<bool> written(topo.num_domains(), false);
  for (const auto& domains : as_switch) {
    for (DomainId d : domains) written[d] = true;
  }
  for (DomainId d = 0; d < topo.num_domains(); ++d) {
    const NvlDomain& dom = topo.domains()[d];
    if (!dom.multi_node || written[d]) continue;
    std::vector<std::string> fields = DomainNoteFields(dom);
    fields.push_back(Field("nodes", CompressHostlist(NodeNames(topo, dom.nodes))));
    Note("nvlink_domain", fields, out);
  }
}

// The NVLink domains below a leaf as Slurm switches, each with its annotation; their names.
std::vector<std::string> WriteDomainSwitches(const Topology& topo,
                                             const std::vector<DomainId>& domains,
                                             std::string* out) {
  std::vector<std::string> names;
  for (DomainId d : domains) {
    const NvlDomain& dom = topo.domains()[d];
    names.push_back(dom.name);
    Note("nvlink_domain", DomainNoteFields(dom), out);
    absl::StrAppend(out, "SwitchName=", SlurmValue(dom.name),
                    " Nodes=", SlurmValue(CompressHostlist(NodeNames(topo, dom.nodes))), "\n");
  }
  return names;
}

bool IsWhole(double v) { return v == std::floor(v) && v < 4e9; }

// One switch: its domain "switches", its annotation and its SwitchName line, or only the
// annotation when Slurm does not see it.
// What Slurm does not see of a switch, as its annotation's fields: tier, rail, a speed that no
// LinkSpeed= carries (`link_speed`: the Slurm line does), oversubscription, the children Slurm
// does not see, and all of it (nodes too) for a switch Slurm does not see.
std::vector<std::string> SwitchNote(const Topology& topo, SwitchId id,
                                    const std::vector<bool>& visible, bool link_speed) {
  const Switch& sw = topo.switches()[id];
  std::vector<std::string> note = {Field("name", sw.name), Field("tier", topo.tiers()[sw.tier])};
  if (sw.rail >= 0) note.push_back(Field("rail", absl::StrCat(sw.rail)));
  if (sw.link_gbps != topo.link_gbps() && !link_speed) {
    note.push_back(Field("link_gbps", Num(sw.link_gbps)));
  }
  if (sw.oversubscription != 1.0) {
    note.push_back(Field("oversubscription", Num(sw.oversubscription)));
  }
  std::vector<std::string> hidden;  // child switches Slurm does not see
  for (SwitchId c : sw.children) {
    if (!visible[c]) hidden.push_back(topo.switches()[c].name);
  }
  if (!hidden.empty()) note.push_back(Field("switches", CompressHostlist(hidden)));
  std::string nodes = CompressHostlist(NodeNames(topo, sw.nodes));
  if (!visible[id] && !nodes.empty()) note.push_back(Field("nodes", nodes));
  return note;
}

// The child switches of `id` that Slurm sees.
std::vector<std::string> ShownChildren(const Topology& topo, SwitchId id,
                                       const std::vector<bool>& visible) {
  std::vector<std::string> shown;
  for (SwitchId c : topo.switches()[id].children) {
    if (visible[c]) shown.push_back(topo.switches()[c].name);
  }
  return shown;
}

void WriteSwitch(const Topology& topo, SwitchId id, const std::vector<bool>& visible,
                 const std::vector<DomainId>& domains, std::string* out) {
  const Switch& sw = topo.switches()[id];
  bool link_speed = sw.link_gbps != topo.link_gbps() && visible[id] && IsWhole(sw.link_gbps);
  std::vector<std::string> note = SwitchNote(topo, id, visible, link_speed);
  if (!visible[id]) {
    Note("switch", note, out);
    return;
  }
  std::vector<std::string> shown = ShownChildren(topo, id, visible);
  std::string nodes = CompressHostlist(NodeNames(topo, sw.nodes));
  std::vector<std::string> domain_names = WriteDomainSwitches(topo, domains, out);
  Note("switch", note, out);
  absl::StrAppend(out, "SwitchName=", SlurmValue(sw.name));
  if (!domains.empty()) {
    absl::StrAppend(out, " Switches=", SlurmValue(CompressHostlist(domain_names)));
  } else if (!nodes.empty()) {
    absl::StrAppend(out, " Nodes=", SlurmValue(nodes));
  } else {
    absl::StrAppend(out, " Switches=", SlurmValue(CompressHostlist(shown)));
  }
  if (link_speed) absl::StrAppend(out, " LinkSpeed=", Num(sw.link_gbps));
  absl::StrAppend(out, "\n");
}

std::string WriteTopologyConf(const Topology& topo) {
  std::string out = absl::StrCat(
      "# topology.conf of cluster ", topo.name(),
      ", written by nvlplace for Slurm's "
      "topology/tree.\n# Slurm reads the SwitchName lines and ignores comments; the "
      "\"# nvlplace:\" comments carry\n# what Slurm cannot express (GPU models, NVLink domains, "
      "tiers, rails) for nvlplace.\n");
  WriteClusterNotes(topo, topo.ToSpec(), &out);
  std::vector<bool> visible = VisibleSwitches(topo);
  std::vector<std::vector<DomainId>> domains = DomainSwitches(topo, visible);
  WriteDomainNotes(topo, domains, &out);
  for (SwitchId s = 0; s < topo.num_switches(); ++s) {
    WriteSwitch(topo, s, visible, domains[s], &out);
  }
  return out;
}

// ---- topology/block ----------------------------------------------------------------------

// The multi-node NVLink domains, in the model's order: the blocks.
std::vector<DomainId> Blocks(const Topology& topo) {
  std::vector<DomainId> out;
  for (DomainId d = 0; d < topo.num_domains(); ++d) {
    if (topo.domains()[d].multi_node) out.push_back(d);
  }
  return out;
}

// The planning base size: the smallest block's nodes less its spares.
int64_t BlockBase(const Topology& topo, const std::vector<DomainId>& blocks) {
  int64_t base = 0;
  for (DomainId d : blocks) {
    const NvlDomain& dom = topo.domains()[d];
    int64_t usable = static_cast<int64_t>(dom.nodes.size()) - dom.spares;
    if (base == 0 || usable < base) base = usable;
  }
  return base;
}

// What BlockSizes says, as comment lines: the base size and why, and the runs of blocks.
std::string BlockSizesText(const Topology& topo, const std::vector<DomainId>& blocks, int64_t base,
                           const std::vector<int64_t>& sizes) {
  const NvlDomain* smallest = nullptr;
  for (DomainId d : blocks) {
    const NvlDomain& dom = topo.domains()[d];
    if (static_cast<int64_t>(dom.nodes.size()) - dom.spares == base) {
      smallest = &dom;
      break;
    }
  }
  std::vector<std::string> lines = {absl::StrCat(
      "#   ", base, ": the planning base size, the smallest NVLink domain's (", smallest->name,
      ": ", smallest->nodes.size(), " nodes",
      smallest->spares > 0 ? absl::StrCat(" less ", smallest->spares, " spares") : "", ")")};
  for (size_t level = 1; level < sizes.size(); ++level) {
    size_t run = size_t{1} << level;
    lines.push_back(absl::StrCat("#   ", sizes[level], ": runs of ", run,
                                 " blocks in the order below (1-", run, ", ", run + 1, "-", 2 * run,
                                 ", ...)"));
  }
  return absl::StrCat(absl::StrJoin(lines, ";\n"), ".\n");
}

// Slurm 23.11's BlockLevels= for `levels` levels (0 to levels - 1), and what it says.
std::string BlockLevelsText(const Topology& topo, const std::vector<DomainId>& blocks,
                            size_t levels) {
  std::vector<std::string> lines = {
      absl::StrCat("#   0: one block (Slurm 23.11 plans every block at the first one's ",
                   topo.domains()[blocks.front()].nodes.size(),
                   " nodes, spares included; nvlplace keeps the spares free itself)")};
  for (size_t level = 1; level < levels; ++level) {
    size_t run = size_t{1} << level;
    lines.push_back(absl::StrCat("#   ", level, ": runs of ", run, " blocks in the order below (1-",
                                 run, ", ", run + 1, "-", 2 * run, ", ...)"));
  }
  return absl::StrCat(absl::StrJoin(lines, ";\n"), ".\n");
}

std::string WriteBlockConf(const Topology& topo, const SlurmExportOptions& options) {
  std::vector<DomainId> blocks = Blocks(topo);
  if (blocks.empty()) return "";
  int64_t base = BlockBase(topo, blocks);
  std::vector<int64_t> sizes = slurm::BlockSizesFor(base, blocks.size());
  std::string out = absl::StrCat(
      options.block_levels ? "# topology.conf for Slurm 23.11's topology/block (BlockLevels=), "
                             "written by nvlplace for\n"
                           : "# topology.conf for Slurm's topology/block (24.05 and later), "
                             "written by nvlplace for\n",
      "# cluster ", topo.name(),
      ": one block per NVLink domain, in the cluster's order. To use it, set\n"
      "# TopologyPlugin=topology/block in slurm.conf and install this file as topology.conf in\n"
      "# place of the topology/tree one (Slurm reads one kind of topology per file).\n",
      options.block_levels ? "# BlockLevels:\n" : "# BlockSizes:\n",
      options.block_levels ? BlockLevelsText(topo, blocks, sizes.size())
                           : BlockSizesText(topo, blocks, base, sizes),
      "# The \"# nvlplace:\" comments carry the rest of the model (GPU models, the fabric's\n"
      "# switches, spares) for nvlplace.\n");
  TopologySpec spec = topo.ToSpec();
  WriteClusterNotes(topo, spec, &out);
  std::vector<bool> none(topo.num_switches(), false);  // topology/block sees no switch
  for (SwitchId s = 0; s < topo.num_switches(); ++s) {
    Note("switch", SwitchNote(topo, s, none, /*link_speed=*/false), &out);
  }
  for (DomainId d : blocks) {
    const NvlDomain& dom = topo.domains()[d];
    Note("nvlink_domain", DomainNoteFields(dom, /*always_spares=*/true), &out);
    absl::StrAppend(&out, "BlockName=", SlurmValue(dom.name),
                    " Nodes=", SlurmValue(CompressHostlist(NodeNames(topo, dom.nodes))), "\n");
  }
  if (options.block_levels) {
    // Slurm 23.11 reads the levels themselves: base x 2^L is level L.
    absl::StrAppend(
        &out, "BlockLevels=", sizes.size() == 1 ? "0" : absl::StrCat("0-", sizes.size() - 1), "\n");
  } else {
    absl::StrAppend(&out, "BlockSizes=", absl::StrJoin(sizes, ","), "\n");
  }
  return out;
}

// A YAML double-quoted scalar (names are printable UTF-8: only '"' and '\' need escaping).
std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

std::string WriteSlurmTopologyYaml(const Topology& topo) {
  std::vector<DomainId> blocks = Blocks(topo);
  if (blocks.empty()) return "";
  int64_t base = BlockBase(topo, blocks);
  std::vector<int64_t> sizes = slurm::BlockSizesFor(base, blocks.size());
  std::string out = absl::StrCat(
      "# topology.yaml for Slurm 25.05 and later, written by nvlplace for cluster ", topo.name(),
      ".\n# Beside slurm.conf, Slurm reads it instead of topology.conf (and ignores "
      "TopologyPlugin=).\n# Two topologies:\n"
      "#   nvlink (topology/block, the cluster default): one block per NVLink domain, in the\n"
      "#     cluster's order;\n"
      "#   fabric (topology/tree): the switches.\n"
      "# Bind each partition to one in slurm.conf, e.g.\n"
      "#   PartitionName=gpu Nodes=ALL Topology=nvlink\n"
      "#   PartitionName=wide Nodes=ALL Topology=fabric\n"
      "# block_sizes:\n",
      BlockSizesText(topo, blocks, base, sizes),
      "# The \"# nvlplace:\" comments carry the rest of the model (GPU models, tiers, rails,\n"
      "# spares) for nvlplace.\n");
  TopologySpec spec = topo.ToSpec();
  WriteClusterNotes(topo, spec, &out);
  std::vector<bool> visible = VisibleSwitches(topo);
  for (SwitchId s = 0; s < topo.num_switches(); ++s) {
    Note("switch", SwitchNote(topo, s, visible, /*link_speed=*/false), &out);
  }
  for (DomainId d : blocks) {
    Note("nvlink_domain", DomainNoteFields(topo.domains()[d], /*always_spares=*/true), &out);
  }
  absl::StrAppend(&out, "---\n- topology: nvlink\n  cluster_default: true\n  block:\n",
                  "    block_sizes: [", absl::StrJoin(sizes, ", "), "]\n    blocks:\n");
  for (DomainId d : blocks) {
    const NvlDomain& dom = topo.domains()[d];
    absl::StrAppend(&out, "      - block: ", Quoted(dom.name),
                    "\n        nodes: ", Quoted(CompressHostlist(NodeNames(topo, dom.nodes))),
                    "\n");
  }
  absl::StrAppend(&out, "- topology: fabric\n  cluster_default: false\n  tree:\n    switches:\n");
  for (SwitchId s = 0; s < topo.num_switches(); ++s) {
    if (!visible[s]) continue;
    const Switch& sw = topo.switches()[s];
    absl::StrAppend(&out, "      - switch: ", Quoted(sw.name), "\n");
    if (!sw.nodes.empty()) {
      absl::StrAppend(&out, "        nodes: ", Quoted(CompressHostlist(NodeNames(topo, sw.nodes))),
                      "\n");
    } else {
      absl::StrAppend(&out, "        children: ",
                      Quoted(CompressHostlist(ShownChildren(topo, s, visible))), "\n");
    }
  }
  return out;
}

// Per GPU index, the index of its NVLink island among the node's domains.
std::vector<int> IslandOfGpus(const Topology& topo, const Node& node) {
  std::vector<int> island(node.gpus.size(), 0);
  if (node.domains.size() == 1) return island;  // one island, or a multi-node domain
  for (size_t k = 0; k < node.domains.size(); ++k) {
    for (GpuId g : topo.domains()[node.domains[k]].gpus) {
      island[topo.gpus()[g].index] = static_cast<int>(k);  // single-node domains: its own GPUs
    }
  }
  return island;
}

// The nodes of one gres.conf shape: a GPU model and the island of each GPU index.
struct GresGroup {
  int model;
  std::vector<int> island;
  std::string hostlist;  // the nodes, compressed
};

std::vector<GresGroup> GresGroups(const Topology& topo) {
  using Shape = std::pair<int, std::vector<int>>;  // GPU model, island of each GPU
  std::map<Shape, size_t> index;
  std::vector<GresGroup> groups;
  std::vector<std::vector<std::string>> names;
  for (const Node& node : topo.nodes()) {
    if (node.gpus.empty()) continue;  // CPU-only: no gres.conf line
    Shape shape{node.model, IslandOfGpus(topo, node)};
    auto [it, inserted] = index.emplace(shape, groups.size());
    if (inserted) {
      groups.push_back(GresGroup{shape.first, shape.second, ""});
      names.emplace_back();
    }
    names[it->second].push_back(node.name);
  }
  for (size_t i = 0; i < groups.size(); ++i) groups[i].hostlist = CompressHostlist(names[i]);
  return groups;
}

std::string GresHeader(const Topology& topo, const SlurmExportOptions& options) {
  return absl::StrCat(
      "# gres.conf of cluster ", topo.name(),
      ", written by nvlplace: one line per GPU index and node shape.\n",
      options.links
          ? "# Links=: -1 the GPU itself, 1 a GPU of the same NVLink island, 0 a GPU reached "
            "over PCIe.\n"
          : "# Without Links rows: from Slurm 24.05 cons_tres takes the least-linked GPU first, "
            "which splits\n# NVLink islands; select/cons_tres_nvlplace places by island "
            "itself.\n");
}

// "NodeName=<hostlist> Name=gpu Type=<model> File=/dev/nvidia" before the index.
std::string GresLinePrefix(const Topology& topo, const GresGroup& g) {
  return absl::StrCat("NodeName=", SlurmValue(g.hostlist),
                      " Name=gpu Type=", SlurmValue(topo.gpu_models()[g.model].name),
                      " File=/dev/nvidia");
}

std::string WriteGresConf(const Topology& topo, const SlurmExportOptions& options) {
  std::string out = GresHeader(topo, options);
  for (const GresGroup& g : GresGroups(topo)) {
    std::string prefix = GresLinePrefix(topo, g);
    const std::vector<int>& island = g.island;
    for (size_t i = 0; i < island.size(); ++i) {
      if (!options.links) {
        absl::StrAppend(&out, prefix, i, "\n");
        continue;
      }
      std::vector<int> row;
      for (size_t j = 0; j < island.size(); ++j) {
        row.push_back(i == j ? -1 : island[i] == island[j] ? 1 : 0);
      }
      absl::StrAppend(&out, prefix, i, " Links=", absl::StrJoin(row, ","), "\n");
    }
  }
  return out;
}

}  // namespace

size_t ExportedGresBytes(const Topology& topo, const SlurmExportOptions& options) {
  size_t bytes = GresHeader(topo, options).size();
  for (const GresGroup& g : GresGroups(topo)) {
    size_t n = g.island.size();
    size_t prefix = GresLinePrefix(topo, g).size();
    for (size_t i = 0; i < n; ++i) {
      // The index, " Links=", a row of n entries ("-1" once, "1" or "0" else) and commas.
      bytes += prefix + std::to_string(i).size() + (options.links ? 7 + 2 * n : 0) + 1;
    }
  }
  return bytes;
}

bool SlurmLinksHelp(int major, int minor) { return major < 24 || (major == 24 && minor < 5); }

bool SlurmReadsTopologyYaml(int major, int minor) {
  return major > 25 || (major == 25 && minor >= 5);
}

namespace {

// `name` as CheckSlurmExportable asks; `listed`: Slurm's hostlists hold it.
absl::Status Exportable(absl::string_view name, absl::string_view what, bool listed) {
  // CheckSlurmName refuses control characters (a tab among them), so a space is the one
  // blank left to find.
  NVL_RETURN_IF_ERROR(slurm::CheckSlurmName(name, what));
  size_t at = name.find_first_of(listed ? ",\"[] " : ",\"");
  if (at == absl::string_view::npos) return absl::OkStatus();
  absl::string_view why;
  switch (name[at]) {
    case ',':
      why = "a comma, which Slurm's lists read as a separator";
      break;
    case '"':
      why = "a quote, which Slurm's lines read as the start of a quoted value";
      break;
    case '[':
    case ']':
      why = "a bracket, which Slurm's hostlists read as a range";
      break;
    default:
      why = "a space, which ends a name in Slurm's hostlists";
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, " '", Printable(name), "' has ", why, "; rename it"));
}

}  // namespace

absl::Status CheckSlurmExportable(const Topology& topo) {
  NVL_RETURN_IF_ERROR(Exportable(topo.name(), "cluster name", false));
  for (const std::string& tier : topo.tiers()) NVL_RETURN_IF_ERROR(Exportable(tier, "tier", false));
  for (const GpuModelSpec& m : topo.gpu_models()) {
    NVL_RETURN_IF_ERROR(Exportable(m.name, "GPU model", false));
  }
  for (const Node& n : topo.nodes()) NVL_RETURN_IF_ERROR(Exportable(n.name, "node", true));
  for (const Switch& sw : topo.switches()) NVL_RETURN_IF_ERROR(Exportable(sw.name, "switch", true));
  for (const NvlDomain& d : topo.domains()) {
    if (d.multi_node) NVL_RETURN_IF_ERROR(Exportable(d.name, "NVLink domain", true));
  }
  return absl::OkStatus();
}

absl::Status CheckSlurmBlockExport(const Topology& topo, const SlurmExportOptions& options) {
  if (options.blocks != SlurmExportOptions::Blocks::kConf || !options.block_levels) {
    return absl::OkStatus();
  }
  std::vector<DomainId> blocks = Blocks(topo);
  if (blocks.empty()) return absl::OkStatus();
  const NvlDomain& first = topo.domains()[blocks.front()];
  for (DomainId d : blocks) {
    const NvlDomain& dom = topo.domains()[d];
    if (dom.nodes.size() == first.nodes.size()) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "NVLink domain '", dom.name, "' has ", dom.nodes.size(), " nodes and '", first.name, "' ",
        first.nodes.size(),
        ": Slurm 23.11's topology/block needs every block to have the first block's node count "
        "(24.05 replaced BlockLevels= with BlockSizes=, which allows this); export for 24.05 or "
        "later (--slurm-release 24.05), or give the domains equal node counts"));
  }
  return absl::OkStatus();
}

SlurmFiles ExportSlurm(const Topology& topo, const SlurmExportOptions& options) {
  SlurmFiles files{WriteTopologyConf(topo), WriteGresConf(topo, options), "", ""};
  if (options.blocks == SlurmExportOptions::Blocks::kConf) {
    files.block_conf = WriteBlockConf(topo, options);
  }
  if (options.blocks == SlurmExportOptions::Blocks::kYaml) {
    files.topology_yaml = WriteSlurmTopologyYaml(topo);
  }
  return files;
}

}  // namespace nvlplace
