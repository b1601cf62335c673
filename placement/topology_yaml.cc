// Reads and writes the cluster YAML format, with file:line:col errors for every mistake.
#include "placement/topology_yaml.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/hostlist.h"
#include "placement/status_macros.h"
#include "placement/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace nvlplace {
namespace {

// The shortest decimal that reads back as exactly `v` ("0.6", not "0.59999999999999998").
std::string Num(double v) {
  char buf[32];
  if (v == static_cast<double>(static_cast<long long>(v)) && v < 1e15 && v > -1e15) {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

using yaml::ForEach;
using yaml::MapReader;
using yaml::ReadInt;
using yaml::ReadNumber;
using yaml::ReadString;
using yaml::ReadStringList;
using yaml::Where;
using yaml::LoadYaml;

absl::StatusOr<std::vector<std::string>> ReadHostlist(const Where& w) noexcept {
  NVL_ASSIGN_OR_RETURN(std::string expr, ReadString(w));
  auto hosts = ExpandHostlist(expr);
  if (!hosts.ok()) return w.Error(hosts.status().message());
  if (hosts->empty()) return w.Error("the hostlist is empty");
  return hosts;
}

absl::Status ReadGpuModel(const Where& w, TopologySpec& spec) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, {"name", "nvlink_gbps"}));
  GpuModelSpec model;
  model.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(model.name, ReadString(*name));
  if (const Where* bw = m.Find("nvlink_gbps")) {
    NVL_ASSIGN_OR_RETURN(model.nvlink_gbps, ReadNumber(*bw));
  }
  spec.gpu_models.push_back(std::move(model));
  return absl::OkStatus();
}

absl::Status ReadNodeGroup(const Where& w, TopologySpec& spec) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, {"names", "gpus", "model", "islands"}));
  NodeGroupSpec g;
  g.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* names, m.Require("names"));
  NVL_ASSIGN_OR_RETURN(g.names, ReadHostlist(*names));
  NVL_ASSIGN_OR_RETURN(const Where* gpus, m.Require("gpus"));
  NVL_ASSIGN_OR_RETURN(g.gpus, ReadInt(*gpus));
  NVL_ASSIGN_OR_RETURN(const Where* model, m.Require("model"));
  NVL_ASSIGN_OR_RETURN(g.model, ReadString(*model));
  if (const Where* islands = m.Find("islands")) {
    NVL_RETURN_IF_ERROR(ForEach(*islands, [&](const Where& island) -> absl::Status {
      g.islands.emplace_back();
      return ForEach(island, [&](const Where& idx) -> absl::Status {
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

absl::Status ReadDomain(const Where& w, TopologySpec& spec) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, {"name", "nodes", "gpus"}));
  DomainSpec d;
  d.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(d.name, ReadString(*name));
  NVL_ASSIGN_OR_RETURN(const Where* nodes, m.Require("nodes"));
  NVL_ASSIGN_OR_RETURN(d.nodes, ReadHostlist(*nodes));
  if (const Where* gpus = m.Find("gpus")) {
    NVL_ASSIGN_OR_RETURN(d.expected_gpus, ReadInt(*gpus));
    if (d.expected_gpus < 1) return gpus->Error("gpus must be positive");
  }
  spec.domains.push_back(std::move(d));
  return absl::OkStatus();
}

absl::Status ReadSwitch(const Where& w, TopologySpec& spec) {
  NVL_ASSIGN_OR_RETURN(MapReader m,
                       MapReader::Make(w, {"name", "tier", "nodes", "switches", "rail",
                                           "link_gbps", "oversubscription"}));
  SwitchSpec s;
  s.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(s.name, ReadString(*name));
  NVL_ASSIGN_OR_RETURN(const Where* tier, m.Require("tier"));
  NVL_ASSIGN_OR_RETURN(s.tier, ReadString(*tier));
  if (const Where* nodes = m.Find("nodes")) {
    NVL_ASSIGN_OR_RETURN(s.nodes, ReadHostlist(*nodes));
  }
  if (const Where* sw = m.Find("switches")) {
    NVL_ASSIGN_OR_RETURN(s.switches, ReadHostlist(*sw));
  }
  if (const Where* rail = m.Find("rail")) {
    NVL_ASSIGN_OR_RETURN(s.rail, ReadInt(*rail));
    if (s.rail < 0) return rail->Error("rail must be 0 or more");
  }
  if (const Where* bw = m.Find("link_gbps")) {
    NVL_ASSIGN_OR_RETURN(s.link_gbps, ReadNumber(*bw));
    if (!(s.link_gbps > 0)) return bw->Error("link_gbps must be a positive number of Gb/s");
  }
  if (const Where* ov = m.Find("oversubscription")) {
    NVL_ASSIGN_OR_RETURN(s.oversubscription, ReadNumber(*ov));
  }
  spec.switches.push_back(std::move(s));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TopologySpec> ParseTopologyYaml(absl::string_view text,
                                               const std::string& file) {
  NVL_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(text, file));
  Where top{&file, root, "#"};
  if (root.IsNull()) {
    return absl::InvalidArgumentError(
        FormatAt(SourceLoc{file, 1, 1, "#"},
                 "the file is empty; a cluster needs name, gpu_models, nodes and switches"));
  }
  NVL_ASSIGN_OR_RETURN(MapReader m,
                       MapReader::Make(top, {"name", "tiers", "link_gbps", "latency",
                                             "gpu_models", "nodes", "nvlink_domains",
                                             "switches"}));
  TopologySpec spec;
  spec.loc = top.Loc();
  spec.loc.line = 0;  // errors about the file as a whole carry no position
  spec.loc.col = 0;
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("name"));
  NVL_ASSIGN_OR_RETURN(spec.name, ReadString(*name));
  if (const Where* tiers = m.Find("tiers")) {
    NVL_ASSIGN_OR_RETURN(spec.tiers, ReadStringList(*tiers));
    if (spec.tiers.empty()) return tiers->Error("at least one tier is needed");
  }
  if (const Where* bw = m.Find("link_gbps")) {
    NVL_ASSIGN_OR_RETURN(spec.link_gbps, ReadNumber(*bw));
    if (!(spec.link_gbps > 0)) return bw->Error("link_gbps must be a positive number of Gb/s");
  }
  if (const Where* lat = m.Find("latency")) {
    NVL_ASSIGN_OR_RETURN(MapReader l, MapReader::Make(*lat, {"nvlink_alpha_us", "net_alpha_us"}));
    if (const Where* a = l.Find("nvlink_alpha_us")) {
      NVL_ASSIGN_OR_RETURN(spec.nvlink_alpha_us, ReadNumber(*a));
      if (spec.nvlink_alpha_us < 0) return a->Error("a latency cannot be negative");
    }
    if (const Where* a = l.Find("net_alpha_us")) {
      NVL_ASSIGN_OR_RETURN(spec.net_alpha_us, ReadNumber(*a));
      if (spec.net_alpha_us < 0) return a->Error("a latency cannot be negative");
    }
  }
  NVL_ASSIGN_OR_RETURN(const Where* models, m.Require("gpu_models"));
  NVL_RETURN_IF_ERROR(ForEach(*models, [&](const Where& w) { return ReadGpuModel(w, spec); }));
  NVL_ASSIGN_OR_RETURN(const Where* nodes, m.Require("nodes"));
  NVL_RETURN_IF_ERROR(ForEach(*nodes, [&](const Where& w) { return ReadNodeGroup(w, spec); }));
  if (const Where* domains = m.Find("nvlink_domains")) {
    NVL_RETURN_IF_ERROR(ForEach(*domains, [&](const Where& w) { return ReadDomain(w, spec); }));
  }
  NVL_ASSIGN_OR_RETURN(const Where* switches, m.Require("switches"));
  NVL_RETURN_IF_ERROR(ForEach(*switches, [&](const Where& w) { return ReadSwitch(w, spec); }));
  // Where lists were given but empty, say so at the list.
  if (spec.gpu_models.empty()) return models->Error("at least one GPU model is needed");
  if (spec.node_groups.empty()) return nodes->Error("no nodes are declared");
  if (spec.switches.empty()) return switches->Error("no switches are declared");
  return spec;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open the file (",
                                            std::strerror(errno), ")"));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return buf.str();
}

absl::StatusOr<std::shared_ptr<const Topology>> LoadTopologyFile(const std::string& path) {
  NVL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  NVL_ASSIGN_OR_RETURN(TopologySpec spec, ParseTopologyYaml(text, path));
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
    out << YAML::Key << "nvlink_gbps" << YAML::Value << Num(m.nvlink_gbps) << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const auto& g : spec.node_groups) {
    out << YAML::BeginMap;
    out << YAML::Key << "names" << YAML::Value << CompressHostlist(g.names);
    out << YAML::Key << "gpus" << YAML::Value << g.gpus;
    out << YAML::Key << "model" << YAML::Value << g.model;
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
      out << YAML::Key << "nodes" << YAML::Value << CompressHostlist(d.nodes);
      out << YAML::Key << "gpus" << YAML::Value << d.expected_gpus << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : spec.switches) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.name;
    out << YAML::Key << "tier" << YAML::Value << s.tier;
    if (!s.nodes.empty()) {
      out << YAML::Key << "nodes" << YAML::Value << CompressHostlist(s.nodes);
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
