// The NVLink health file (see nvlink_health_yaml.h):
//   splits:                     # an NVSwitch failure: NVLink only inside each partition
//     - domain: nvl72-rack03
//       partitions: ["gb[037-045]", "gb[046-054]"]
//   down: ["gb[081-082]"]       # NVLink down on these nodes
#include "placement/formats/nvlink_health_yaml.h"

#include <exception>
#include <new>

#include "absl/strings/str_cat.h"
#include "placement/formats/read_file.h"
#include "placement/formats/topology_yaml.h"
#include "placement/formats/yaml_reader.h"
#include "placement/model/hostlist.h"
#include "placement/model/status_macros.h"

namespace nvlplace {
namespace {

using yaml::ForEach;
using yaml::MapReader;
using yaml::ReadString;
using yaml::Where;

// A hostlist, counted against the file's budget of names before it is expanded.
absl::StatusOr<std::vector<std::string>> ReadNodes(const Where& w, yaml::Budget& budget) {
  NVL_ASSIGN_OR_RETURN(std::string expr, ReadString(w));
  absl::StatusOr<size_t> count = CountHostlist(expr);
  if (!count.ok()) return w.Error(count.status().message());
  if (*count > limits::kMaxNamesPerFile - budget.names) {
    return w.Error(absl::StrCat("the hostlists of this file expand to more than ",
                                limits::kMaxNamesPerFile, " names"));
  }
  budget.names += *count;
  absl::StatusOr<std::vector<std::string>> nodes = ExpandHostlist(expr);
  if (!nodes.ok()) return w.Error(nodes.status().message());
  if (nodes->empty()) return w.Error("the hostlist is empty");
  return nodes;
}

absl::Status ReadSplit(const Where& w, yaml::Budget& budget, NvlinkHealth* health) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, {"domain", "partitions"}));
  NvlinkHealth::Split split;
  split.loc = w.Loc();
  NVL_ASSIGN_OR_RETURN(const Where* domain, m.Require("domain"));
  NVL_ASSIGN_OR_RETURN(split.domain, ReadString(*domain));
  NVL_ASSIGN_OR_RETURN(const Where* parts, m.Require("partitions"));
  if (!parts->node.IsSequence() || parts->node.size() == 0) {
    return parts->Error(
        "expected a list of hostlists, one per NVLink partition, e.g. [\"gb[01-09]\", "
        "\"gb[10-18]\"]");
  }
  NVL_RETURN_IF_ERROR(ForEach(*parts, [&](const Where& p) -> absl::Status {
    NVL_ASSIGN_OR_RETURN(std::vector<std::string> nodes, ReadNodes(p, budget));
    split.partitions.push_back(std::move(nodes));
    return absl::OkStatus();
  }));
  health->splits.push_back(std::move(split));
  return absl::OkStatus();
}

absl::StatusOr<NvlinkHealth> Parse(absl::string_view text, const std::string& file) {
  NvlinkHealth health;
  health.file = file;
  NVL_ASSIGN_OR_RETURN(yaml::Document doc, yaml::LoadYaml(text, file));
  yaml::Budget budget;
  Where top{&file, doc.root(), "#", &budget};
  if (top.node.IsNull()) return health;  // nothing broken
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(top, {"splits", "down"}));
  if (const Where* splits = m.Find("splits")) {
    NVL_RETURN_IF_ERROR(
        ForEach(*splits, [&](const Where& w) { return ReadSplit(w, budget, &health); }));
  }
  if (const Where* down = m.Find("down")) {
    NVL_RETURN_IF_ERROR(ForEach(*down, [&](const Where& w) -> absl::Status {
      NvlinkHealth::Down d;
      d.loc = w.Loc();
      NVL_ASSIGN_OR_RETURN(d.nodes, ReadNodes(w, budget));
      health.down.push_back(std::move(d));
      return absl::OkStatus();
    }));
  }
  return health;
}

}  // namespace

absl::StatusOr<NvlinkHealth> ParseNvlinkHealthYaml(absl::string_view text,
                                                   const std::string& file) {
  try {
    return Parse(text, file);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(file, ": out of memory while reading"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": cannot read: ", e.what()));
  }
}

absl::StatusOr<std::shared_ptr<const Topology>> LoadTopologyWithHealth(
    const std::string& topology_path, const std::string& health_path,
    const TopologyLimits& topology_limits) {
  if (health_path.empty()) return LoadTopologyFile(topology_path, topology_limits);
  NVL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(topology_path));
  NVL_ASSIGN_OR_RETURN(TopologySpec spec, ParseTopologyYaml(text, topology_path, topology_limits));
  NVL_ASSIGN_OR_RETURN(std::string health_text, ReadFileToString(health_path));
  NVL_ASSIGN_OR_RETURN(NvlinkHealth health, ParseNvlinkHealthYaml(health_text, health_path));
  NVL_ASSIGN_OR_RETURN(TopologySpec healthy, ApplyNvlinkHealth(std::move(spec), health));
  return Topology::Create(healthy);
}

}  // namespace nvlplace
