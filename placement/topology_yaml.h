// Reads and writes the cluster YAML format (documented in configs/FORMAT.md).
#ifndef NVLPLACE_PLACEMENT_TOPOLOGY_YAML_H_
#define NVLPLACE_PLACEMENT_TOPOLOGY_YAML_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "placement/topology.h"

namespace nvlplace {

// Parses YAML text into a spec. `file` is used in messages only. Never throws. Errors are
// InvalidArgument "file:line:col: #/yaml/path: message": bad YAML, unknown key, duplicate
// key, missing key (reported at its parent), wrong type, bad hostlist.
absl::StatusOr<TopologySpec> ParseTopologyYaml(absl::string_view text, const std::string& file);

// Reads the file, parses it and builds the model (Topology::Create), so that every error,
// syntactic or semantic, names the file, line and column.
absl::StatusOr<std::shared_ptr<const Topology>> LoadTopologyFile(const std::string& path);

// Writes the model in the YAML format, hostlists compressed; LoadTopology of the result
// yields an equal model.
std::string WriteTopologyYaml(const Topology& topo);

// Reads a whole file; NotFound / PermissionDenied name the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_TOPOLOGY_YAML_H_
