// Describes a model as JSON ("nvlplace.topology/1") and as a short text summary.
#include "placement/formats/topology_json.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "placement/model/hostlist.h"

namespace nvlplace {
namespace {

std::string NodeList(const Topology& topo, absl::Span<const NodeId> ids) {
  std::vector<std::string> names;
  names.reserve(ids.size());
  for (NodeId n : ids) names.push_back(topo.nodes()[n].name);
  return CompressHostlist(names);
}

std::vector<std::string> SwitchNames(const Topology& topo, absl::Span<const SwitchId> ids) {
  std::vector<std::string> names;
  for (SwitchId s : ids) names.push_back(topo.switches()[s].name);
  return names;
}

// GPUs per domain size -> number of domains, largest first.
std::map<int, int, std::greater<int>> DomainsBySize(const Topology& topo) {
  std::map<int, int, std::greater<int>> out;
  for (const NvlDomain& d : topo.domains()) ++out[static_cast<int>(d.gpus.size())];
  return out;
}

std::vector<int> SwitchesPerTier(const Topology& topo) {
  std::vector<int> out(topo.tiers().size(), 0);
  for (const Switch& s : topo.switches()) ++out[s.tier];
  return out;
}

int GpusUnder(const Topology& topo, const Switch& s) {
  int n = 0;
  for (NodeId id : s.nodes_under) n += static_cast<int>(topo.nodes()[id].gpus.size());
  return n;
}

// GPUs per model index (CPU-only nodes count nowhere).
std::vector<int> GpusPerModel(const Topology& topo) {
  std::vector<int> out(topo.gpu_models().size(), 0);
  for (const Node& n : topo.nodes()) {
    if (n.model >= 0) out[n.model] += static_cast<int>(n.gpus.size());
  }
  return out;
}

// Names of the nodes without GPUs, and of the nodes nvlplace does not place on.
std::pair<std::vector<std::string>, std::vector<std::string>> CpuOnlyAndUnplaced(
    const Topology& topo) {
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  for (const Node& n : topo.nodes()) {
    if (n.gpus.empty()) {
      out.first.push_back(n.name);
    } else if (!n.placed) {
      out.second.push_back(n.name);
    }
  }
  return out;
}

}  // namespace

nlohmann::json TopologyToJson(const Topology& topo) {
  using nlohmann::json;
  json out;
  out["schema"] = kTopologySchema;
  out["name"] = topo.name();
  out["tiers"] = topo.tiers();
  out["link_gbps"] = topo.link_gbps();
  out["latency"] = {{"nvlink_alpha_us", topo.nvlink_alpha_us()},
                    {"net_alpha_us", topo.net_alpha_us()}};

  std::vector<int> per_tier = SwitchesPerTier(topo);
  json tiers = json::object();
  for (size_t t = 0; t < per_tier.size(); ++t) tiers[topo.tiers()[t]] = per_tier[t];
  out["counts"] = {{"nodes", topo.num_nodes()},
                   {"gpus", topo.num_gpus()},
                   {"placed_gpus", topo.num_placed_gpus()},
                   {"nvlink_domains", topo.num_domains()},
                   {"switches", topo.num_switches()},
                   {"switches_per_tier", tiers}};

  std::vector<int> gpus_per_model = GpusPerModel(topo);
  json models = json::array();
  for (size_t m = 0; m < topo.gpu_models().size(); ++m) {
    models.push_back({{"name", topo.gpu_models()[m].name},
                      {"nvlink_gbps", topo.gpu_models()[m].nvlink_gbps},
                      {"pcie_gbps", topo.gpu_models()[m].pcie_gbps},
                      {"gpus", gpus_per_model[m]}});
  }
  out["gpu_models"] = models;

  json by_size = json::array();
  for (const auto& [size, count] : DomainsBySize(topo)) {
    by_size.push_back({{"gpus", size}, {"count", count}});
  }
  out["nvlink_domains_by_size"] = by_size;

  json domains = json::array();
  for (const NvlDomain& d : topo.domains()) {
    domains.push_back({{"name", d.name},
                       {"nodes", NodeList(topo, d.nodes)},
                       {"gpus", d.gpus.size()},
                       {"nvlink_gbps", d.nvlink_gbps},
                       {"multi_node", d.multi_node}});
    // Only multi-node domains keep spare nodes: the key is on them alone.
    if (d.multi_node) domains.back()["spares"] = d.spares;
  }
  out["nvlink_domains"] = domains;

  json nodes = json::array();
  for (const Node& n : topo.nodes()) {
    std::vector<std::string> domain_names;
    for (DomainId d : n.domains) domain_names.push_back(topo.domains()[d].name);
    // A CPU-only node's model is null.
    json model = n.model >= 0 ? json(topo.gpu_models()[n.model].name) : json(nullptr);
    nodes.push_back({{"name", n.name},
                     {"gpus", n.gpus.size()},
                     {"model", model},
                     {"placed", n.placed},
                     {"leaves", SwitchNames(topo, n.leaves)},
                     {"nvlink_domains", domain_names}});
    // Only where it is not one per GPU, as rail is only on rail leaves.
    if (n.nics != static_cast<int>(n.gpus.size())) nodes.back()["nics"] = n.nics;
  }
  out["nodes"] = nodes;

  json switches = json::array();
  for (const Switch& s : topo.switches()) {
    json js = {{"name", s.name},
               {"tier", topo.tiers()[s.tier]},
               {"parents", SwitchNames(topo, s.parents)},
               {"children", SwitchNames(topo, s.children)},
               {"nodes", NodeList(topo, s.nodes)},
               {"nodes_under", s.nodes_under.size()},
               {"gpus_under", GpusUnder(topo, s)},
               {"link_gbps", s.link_gbps},
               {"oversubscription", s.oversubscription}};
    if (s.rail >= 0) js["rail"] = s.rail;
    switches.push_back(js);
  }
  out["switches"] = switches;
  return out;
}

namespace {
// "1 switch", "2 switches".
std::string Count(int n, const char* one, const char* many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}
}  // namespace

std::string TopologyOverview(const Topology& topo) {
  std::string out =
      absl::StrCat("cluster ", topo.name(), ": ", Count(topo.num_nodes(), "node", "nodes"), ", ",
                   Count(topo.num_gpus(), "GPU", "GPUs"), ", ",
                   Count(topo.num_domains(), "NVLink domain", "NVLink domains"), ", ",
                   Count(topo.num_switches(), "switch", "switches"), "\n");
  std::vector<int> gpus_per_model = GpusPerModel(topo);
  for (size_t m = 0; m < topo.gpu_models().size(); ++m) {
    const GpuModelSpec& model = topo.gpu_models()[m];
    absl::StrAppendFormat(&out, "gpu model %s: %d GPUs, NVLink %g GB/s, PCIe %g GB/s per GPU\n",
                          model.name, gpus_per_model[m], model.nvlink_gbps, model.pcie_gbps);
  }
  auto [cpu_only, unplaced] = CpuOnlyAndUnplaced(topo);
  if (!cpu_only.empty()) {
    absl::StrAppend(&out, "nodes without GPUs: ", cpu_only.size(), " (", CompressHostlist(cpu_only),
                    ")\n");
  }
  if (!unplaced.empty()) {
    absl::StrAppend(&out, "not placed by nvlplace (placed: false): ",
                    Count(topo.num_gpus() - topo.num_placed_gpus(), "GPU", "GPUs"), " on ",
                    CompressHostlist(unplaced), "\n");
  }
  std::vector<std::string> sizes;
  for (const auto& [size, count] : DomainsBySize(topo)) {
    sizes.push_back(absl::StrCat(count, " x ", size, " GPUs"));
  }
  absl::StrAppend(&out, "NVLink domains: ", absl::StrJoin(sizes, ", "), "\n");
  std::vector<int> per_tier = SwitchesPerTier(topo);
  std::vector<std::string> tiers;
  for (size_t t = 0; t < per_tier.size(); ++t) {
    tiers.push_back(absl::StrCat(topo.tiers()[t], " ", per_tier[t]));
  }
  absl::StrAppend(&out, "switches per tier: ", absl::StrJoin(tiers, ", "), "\n");
  return out;
}

std::string TopologySummary(const Topology& topo) {
  std::string out = TopologyOverview(topo);
  // The switch tree from the top, each switch once.
  for (int t = static_cast<int>(topo.tiers().size()) - 1; t >= 0; --t) {
    for (const Switch& s : topo.switches()) {
      if (s.tier != t) continue;
      absl::StrAppendFormat(&out, "  %-6s %s: %d nodes, %d GPUs", topo.tiers()[t], s.name,
                            static_cast<int>(s.nodes_under.size()), GpusUnder(topo, s));
      if (s.rail >= 0) absl::StrAppend(&out, ", rail ", s.rail);
      if (!s.children.empty()) {
        absl::StrAppend(&out, "; switches ", CompressHostlist(SwitchNames(topo, s.children)));
      } else {
        absl::StrAppend(&out, "; nodes ", NodeList(topo, s.nodes));
      }
      absl::StrAppendFormat(&out, "; %g Gb/s", s.link_gbps);
      if (s.oversubscription > 1)
        absl::StrAppendFormat(&out, ", %g:1 oversubscribed", s.oversubscription);
      out += "\n";
    }
  }
  return out;
}

}  // namespace nvlplace
