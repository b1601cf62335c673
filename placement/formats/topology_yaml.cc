// Reads and writes the cluster YAML format, with file:line:col errors for every mistake.
#include "placement/formats/topology_yaml.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/formats/yaml_reader.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace nvlplace {
namespace {

// The shortest decimal that reads back as exactly `v` ("0.6", not "0.59999999999999998"). Safe
// for any double: whole numbers below 1e15 print as integers, the rest (NaN and infinities
// included, which the model never holds) through %g.
std::string Num(double v) {
  char buf[32];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (!std::isfinite(v) || std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

using yaml::Budget;
using yaml::ForEach;
using yaml::LoadYaml;
using yaml::MapReader;
using yaml::ReadBool;
using yaml::ReadInt;
using yaml::ReadNumberIn;
using yaml::ReadString;
using yaml::ReadStringList;
using yaml::Where;

// What the reader keeps while it goes through one file: the caller's limits and the budgets.
struct Reading {
  TopologyLimits limits;
  Budget budget;
  int64_t gpus = 0;  // GPUs of the node groups read so far
};

std::string BandwidthRule() { return absl::StrCat("up to ", Num(limits::kMaxBandwidth)); }

// A name (cluster, GPU model, tier, switch, NVLink domain, or a reference to one).
absl::StatusOr<std::string> ReadName(const Where& w, absl::string_view what) {
  NVL_ASSIGN_OR_RETURN(std::string name, ReadString(w));
  absl::Status ok = CheckName(name, what);
  if (!ok.ok()) return w.Error(ok.message());
  return name;
}

// A hostlist, counted against the file's budget of names before it is read.
absl::StatusOr<HostNames> ReadHostlist(const Where& w, Reading& r) {
  NVL_ASSIGN_OR_RETURN(std::string expr, ReadString(w));
  absl::StatusOr<size_t> count = CountHostlist(expr);
  if (!count.ok()) return w.Error(count.status().message());
  if (*count > r.limits.max_names - r.budget.names) {
    return w.Error(absl::StrCat("the hostlists of this file expand to more than ",
                                r.limits.max_names, " names (this one to ", *count,
                                "); aliases (*name) count each time they are used"));
  }
  r.budget.names += *count;
  absl::StatusOr<HostNames> hosts = ParseHostlist(expr);
  if (!hosts.ok()) return w.Error(hosts.status().message());
  if (hosts->empty()) return w.Error("the hostlist is empty");
  return hosts;
}

absl::Status ReadGpuModel(const Where& w, TopologySpec& spec) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, {"name", "nvlink_gbps", "pcie_gbps"}));
  GpuModelSpec model;
  model.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(model.name, ReadName(*name, "GPU model name"));
  // Either left out: Topology::Create takes it from the table of known models.
  if (const Where* bw = m.Find("nvlink_gbps")) {
    NVL_ASSIGN_OR_RETURN(model.nvlink_gbps,
                         ReadNumberIn(*bw, 0, false, limits::kMaxBandwidth,
                                      absl::StrCat("nvlink_gbps must be a number of GB/s from 0 "
                                                   "(no NVLink) ",
                                                   BandwidthRule())));
  }
  if (const Where* bw = m.Find("pcie_gbps")) {
    NVL_ASSIGN_OR_RETURN(model.pcie_gbps,
                         ReadNumberIn(*bw, 0, true, limits::kMaxBandwidth,
                                      absl::StrCat("pcie_gbps must be a positive number of GB/s ",
                                                   BandwidthRule())));
  }
  spec.gpu_models.push_back(std::move(model));
  return absl::OkStatus();
}

absl::Status ReadNodeGroup(const Where& w, TopologySpec& spec, Reading& r) {
  NVL_ASSIGN_OR_RETURN(MapReader m,
                       MapReader::Make(w, {"names", "gpus", "model", "islands", "placed", "nics"}));
  NodeGroupSpec g;
  g.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* names, m.Require("names"));
  NVL_ASSIGN_OR_RETURN(const Where* gpus, m.Require("gpus"));
  NVL_ASSIGN_OR_RETURN(g.gpus, ReadInt(*gpus));
  if (g.gpus < 0 || g.gpus > limits::kMaxGpusPerNode) {
    return gpus->Error(absl::StrCat("gpus must be between 0 (CPU-only nodes) and ",
                                    limits::kMaxGpusPerNode, ", not ", g.gpus));
  }
  // The GPUs this group adds, known from the size of its hostlist before any name is built.
  NVL_ASSIGN_OR_RETURN(std::string expr, ReadString(*names));
  absl::StatusOr<size_t> count = CountHostlist(expr);
  if (!count.ok()) return names->Error(count.status().message());
  int64_t adds = static_cast<int64_t>(*count) * g.gpus;  // <= 2^20 x 2^10: no overflow
  if (adds > r.limits.max_gpus - r.gpus) {
    return names->Error(absl::StrCat(
        "these ", *count, " nodes of ", g.gpus, " GPUs bring the cluster to ", r.gpus + adds,
        " GPUs, more than the limit of ", r.limits.max_gpus,
        " GPUs per cluster file; raise it (--max-gpus) if the cluster is really that large"));
  }
  r.gpus += adds;
  NVL_ASSIGN_OR_RETURN(g.names, ReadHostlist(*names, r));
  if (g.gpus == 0) {
    // CPU-only nodes: no model, no islands.
    for (const char* key : {"model", "islands"}) {
      if (const Where* given = m.Find(key)) {
        return given->Error(absl::StrCat("these nodes have gpus: 0, so no ", key,
                                         "; remove it, or give the nodes' GPU count"));
      }
    }
  } else {
    NVL_ASSIGN_OR_RETURN(const Where* model, m.Require("model"));
    NVL_ASSIGN_OR_RETURN(g.model, ReadName(*model, "GPU model name"));
  }
  if (const Where* placed = m.Find("placed")) {
    NVL_ASSIGN_OR_RETURN(g.placed, ReadBool(*placed));
  }
  if (const Where* nics = m.Find("nics")) {
    // Checked here as well as by Topology::Create, for the value's own line and column.
    NVL_ASSIGN_OR_RETURN(g.nics, ReadInt(*nics));
    if (g.nics < 0 || g.nics > limits::kMaxNicsPerNode) {
      return nics->Error(absl::StrCat("nics must be between 0 (CPU-only nodes) and ",
                                      limits::kMaxNicsPerNode, ", not ", g.nics));
    }
    if (g.nics == 0 && g.gpus > 0) {
      return nics->Error(
          "nodes with GPUs need at least one NIC; nics: 0 is for CPU-only nodes (gpus: 0)");
    }
  }
  if (const Where* islands = m.Find("islands")) {
    size_t indexes = 0;
    NVL_RETURN_IF_ERROR(ForEach(*islands, [&](const Where& island) -> absl::Status {
      g.islands.emplace_back();
      return ForEach(island, [&](const Where& idx) -> absl::Status {
        if (++indexes > static_cast<size_t>(limits::kMaxGpusPerNode)) {
          return idx.Error(absl::StrCat("the islands list more than ", limits::kMaxGpusPerNode,
                                        " GPU indexes; list every GPU index of the node once"));
        }
        NVL_ASSIGN_OR_RETURN(int i, ReadInt(idx));
        g.islands.back().push_back(i);
        return absl::OkStatus();
      });
    }));
    if (g.islands.empty()) return islands->Error("islands is empty; leave it out for one island");
  }
  spec.node_groups.push_back(std::move(g));
  return absl::OkStatus();
}

absl::Status ReadDomain(const Where& w, TopologySpec& spec, Reading& r) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, {"name", "nodes", "gpus", "spares"}));
  DomainSpec d;
  d.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(d.name, ReadName(*name, "NVLink domain name"));
  NVL_ASSIGN_OR_RETURN(const Where* nodes, m.Require("nodes"));
  NVL_ASSIGN_OR_RETURN(d.nodes, ReadHostlist(*nodes, r));
  if (const Where* gpus = m.Find("gpus")) {
    NVL_ASSIGN_OR_RETURN(d.expected_gpus, ReadInt(*gpus));
    if (d.expected_gpus < 1) return gpus->Error("gpus must be positive");
  }
  if (const Where* spares = m.Find("spares")) {
    // Checked here as well as by Topology::Create, for the value's own line and column.
    NVL_ASSIGN_OR_RETURN(d.spares, ReadInt(*spares));
    d.spares_loc = spares->Loc();
    if (d.spares < 0 || static_cast<size_t>(d.spares) >= d.nodes.size()) {
      return spares->Error(absl::StrCat("spares must be from 0 to one less than the domain's ",
                                        d.nodes.size(), " nodes, not ", d.spares,
                                        ": they are nodes kept free inside the domain"));
    }
  }
  spec.domains.push_back(std::move(d));
  return absl::OkStatus();
}

absl::Status ReadSwitch(const Where& w, TopologySpec& spec, Reading& r) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, {"name", "tier", "nodes", "switches", "rail",
                                                        "link_gbps", "oversubscription"}));
  SwitchSpec s;
  s.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(s.name, ReadName(*name, "switch name"));
  NVL_ASSIGN_OR_RETURN(const Where* tier, m.Require("tier"));
  NVL_ASSIGN_OR_RETURN(s.tier, ReadName(*tier, "tier name"));
  if (const Where* nodes = m.Find("nodes")) {
    NVL_ASSIGN_OR_RETURN(s.nodes, ReadHostlist(*nodes, r));
  }
  if (const Where* sw = m.Find("switches")) {
    NVL_ASSIGN_OR_RETURN(HostNames children, ReadHostlist(*sw, r));
    s.switches = children.Expand();
  }
  if (const Where* rail = m.Find("rail")) {
    NVL_ASSIGN_OR_RETURN(s.rail, ReadInt(*rail));
    if (s.rail < 0) return rail->Error("rail must be 0 or more");
  }
  if (const Where* bw = m.Find("link_gbps")) {
    NVL_ASSIGN_OR_RETURN(s.link_gbps,
                         ReadNumberIn(*bw, 0, true, limits::kMaxBandwidth,
                                      absl::StrCat("link_gbps must be a positive number of Gb/s ",
                                                   BandwidthRule())));
  }
  if (const Where* ov = m.Find("oversubscription")) {
    NVL_ASSIGN_OR_RETURN(
        s.oversubscription,
        ReadNumberIn(*ov, 1, false, limits::kMaxOversubscription,
                     absl::StrCat("oversubscription is a downlink:uplink ratio and must be from 1 "
                                  "to ",
                                  Num(limits::kMaxOversubscription))));
  }
  spec.switches.push_back(std::move(s));
  return absl::OkStatus();
}

absl::StatusOr<TopologySpec> Parse(absl::string_view text, const std::string& file, Reading& r) {
  NVL_ASSIGN_OR_RETURN(yaml::Document doc, LoadYaml(text, file));
  Where top{&file, doc.root(), "#", &r.budget};
  if (top.node.IsNull()) {
    return absl::InvalidArgumentError(
        FormatAt(SourceLoc{file, 1, 1, "#"},
                 "the file is empty; a cluster needs name, gpu_models, nodes and switches"));
  }
  NVL_ASSIGN_OR_RETURN(MapReader m,
                       MapReader::Make(top, {"name", "tiers", "link_gbps", "latency", "gpu_models",
                                             "nodes", "nvlink_domains", "switches"}));
  TopologySpec spec;
  spec.loc = top.Loc();
  spec.loc.line = 0;  // errors about the file as a whole carry no position
  spec.loc.col = 0;
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(spec.name, ReadName(*name, "cluster name"));
  if (const Where* tiers = m.Find("tiers")) {
    NVL_ASSIGN_OR_RETURN(spec.tiers, ReadStringList(*tiers));
    if (spec.tiers.empty()) return tiers->Error("at least one tier is needed");
    if (spec.tiers.size() > static_cast<size_t>(limits::kMaxTiers)) {
      return tiers->Error(
          absl::StrCat(spec.tiers.size(), " tiers; at most ", limits::kMaxTiers, " are allowed"));
    }
    for (size_t i = 0; i < spec.tiers.size(); ++i) {
      absl::Status ok = CheckName(spec.tiers[i], "tier name");
      if (!ok.ok()) return tiers->Error(ok.message());
    }
  }
  if (const Where* bw = m.Find("link_gbps")) {
    NVL_ASSIGN_OR_RETURN(spec.link_gbps,
                         ReadNumberIn(*bw, 0, true, limits::kMaxBandwidth,
                                      absl::StrCat("link_gbps must be a positive number of Gb/s ",
                                                   BandwidthRule())));
  }
  if (const Where* lat = m.Find("latency")) {
    NVL_ASSIGN_OR_RETURN(MapReader l, MapReader::Make(*lat, {"nvlink_alpha_us", "net_alpha_us"}));
    std::string rule = absl::StrCat("a latency must be a number of microseconds from 0 to ",
                                    Num(limits::kMaxLatencyUs));
    if (const Where* a = l.Find("nvlink_alpha_us")) {
      NVL_ASSIGN_OR_RETURN(spec.nvlink_alpha_us,
                           ReadNumberIn(*a, 0, false, limits::kMaxLatencyUs, rule));
    }
    if (const Where* a = l.Find("net_alpha_us")) {
      NVL_ASSIGN_OR_RETURN(spec.net_alpha_us,
                           ReadNumberIn(*a, 0, false, limits::kMaxLatencyUs, rule));
    }
  }
  NVL_ASSIGN_OR_RETURN(const Where* models, m.Require("gpu_models"));
  NVL_RETURN_IF_ERROR(ForEach(*models, [&](const Where& w) { return ReadGpuModel(w, spec); }));
  NVL_ASSIGN_OR_RETURN(const Where* nodes, m.Require("nodes"));
  NVL_RETURN_IF_ERROR(ForEach(*nodes, [&](const Where& w) { return ReadNodeGroup(w, spec, r); }));
  if (const Where* domains = m.Find("nvlink_domains")) {
    NVL_RETURN_IF_ERROR(ForEach(*domains, [&](const Where& w) { return ReadDomain(w, spec, r); }));
  }
  NVL_ASSIGN_OR_RETURN(const Where* switches, m.Require("switches"));
  NVL_RETURN_IF_ERROR(ForEach(*switches, [&](const Where& w) { return ReadSwitch(w, spec, r); }));
  // Where lists were given but empty, say so at the list.
  if (spec.gpu_models.empty()) return models->Error("at least one GPU model is needed");
  if (spec.node_groups.empty()) return nodes->Error("no nodes are declared");
  if (spec.switches.empty()) return switches->Error("no switches are declared");
  return spec;
}

}  // namespace

absl::StatusOr<TopologySpec> ParseTopologyYaml(absl::string_view text, const std::string& file,
                                               const TopologyLimits& topology_limits) {
  Reading r;
  r.limits = topology_limits;
  try {
    return Parse(text, file, r);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(file, ": out of memory while reading"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": cannot read: ", e.what()));
  }
}

absl::StatusOr<std::shared_ptr<const Topology>> LoadTopologyFile(
    const std::string& path, const TopologyLimits& topology_limits) {
  NVL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  NVL_ASSIGN_OR_RETURN(TopologySpec spec, ParseTopologyYaml(text, path, topology_limits));
  return Topology::Create(spec);
}

std::string WriteTopologyYaml(const Topology& topo) {
  TopologySpec spec = topo.ToSpec();
  YAML::Emitter out;
  out << YAML::Comment("Written by nvlplace from the model of cluster " + spec.name);
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << spec.name;
  out << YAML::Key << "tiers" << YAML::Value << YAML::Flow << spec.tiers;
  out << YAML::Key << "link_gbps" << YAML::Value << Num(spec.link_gbps);
  out << YAML::Key << "latency" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nvlink_alpha_us" << YAML::Value << Num(spec.nvlink_alpha_us);
  out << YAML::Key << "net_alpha_us" << YAML::Value << Num(spec.net_alpha_us);
  out << YAML::EndMap;
  out << YAML::Key << "gpu_models" << YAML::Value << YAML::BeginSeq;
  for (const auto& m : spec.gpu_models) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.name;
    out << YAML::Key << "nvlink_gbps" << YAML::Value << Num(m.nvlink_gbps);
    out << YAML::Key << "pcie_gbps" << YAML::Value << Num(m.pcie_gbps) << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const auto& g : spec.node_groups) {
    out << YAML::BeginMap;
    out << YAML::Key << "names" << YAML::Value << g.names.Hostlist();
    out << YAML::Key << "gpus" << YAML::Value << g.gpus;
    if (!g.model.empty()) out << YAML::Key << "model" << YAML::Value << g.model;
    if (!g.placed) out << YAML::Key << "placed" << YAML::Value << false;
    if (g.nics != kDefaultNics) out << YAML::Key << "nics" << YAML::Value << g.nics;
    if (!g.islands.empty()) {
      out << YAML::Key << "islands" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const auto& island : g.islands) out << YAML::Flow << island;
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!spec.domains.empty()) {
    out << YAML::Key << "nvlink_domains" << YAML::Value << YAML::BeginSeq;
    for (const auto& d : spec.domains) {
      out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name;
      out << YAML::Key << "nodes" << YAML::Value << d.nodes.Hostlist();
      out << YAML::Key << "gpus" << YAML::Value << d.expected_gpus;
      if (d.spares > 0) out << YAML::Key << "spares" << YAML::Value << d.spares;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : spec.switches) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.name;
    out << YAML::Key << "tier" << YAML::Value << s.tier;
    if (!s.nodes.empty()) {
      out << YAML::Key << "nodes" << YAML::Value << s.nodes.Hostlist();
    }
    if (!s.switches.empty()) {
      out << YAML::Key << "switches" << YAML::Value << CompressHostlist(s.switches);
    }
    if (s.rail >= 0) out << YAML::Key << "rail" << YAML::Value << s.rail;
    if (s.link_gbps != spec.link_gbps) {
      out << YAML::Key << "link_gbps" << YAML::Value << Num(s.link_gbps);
    }
    if (s.oversubscription != 1.0) {
      out << YAML::Key << "oversubscription" << YAML::Value << Num(s.oversubscription);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace nvlplace
