// Reads the NVLink health file (configs/FORMAT.md, "NVLink health"): which multi-node NVLink
// domains an NVSwitch failure split into partitions, and which nodes have their NVLink down.
#ifndef NVLPLACE_PLACEMENT_FORMATS_NVLINK_HEALTH_YAML_H_
#define NVLPLACE_PLACEMENT_FORMATS_NVLINK_HEALTH_YAML_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/limits.h"
#include "placement/model/nvlink_health.h"
#include "placement/model/topology.h"

namespace nvlplace {

// Parses the text. `file` is for messages. An empty file is a healthy fabric. Never throws.
// Errors are InvalidArgument "file:line:col: #/path: message": bad YAML, an unknown or
// duplicate key, a bad hostlist, more names than limits::kMaxNamesPerFile, a split with fewer
// than one partition.
absl::StatusOr<NvlinkHealth> ParseNvlinkHealthYaml(absl::string_view text, const std::string& file);

// The cluster file with the health file applied (ApplyNvlinkHealth), built; `health_path`
// empty: the cluster as it is. Every error names its file and line.
absl::StatusOr<std::shared_ptr<const Topology>> LoadTopologyWithHealth(
    const std::string& topology_path, const std::string& health_path,
    const TopologyLimits& topology_limits = {});

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_NVLINK_HEALTH_YAML_H_
