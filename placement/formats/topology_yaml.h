// Reads and writes the cluster YAML format (documented in configs/FORMAT.md).
#ifndef NVLPLACE_PLACEMENT_FORMATS_TOPOLOGY_YAML_H_
#define NVLPLACE_PLACEMENT_FORMATS_TOPOLOGY_YAML_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/formats/read_file.h"
#include "placement/model/limits.h"
#include "placement/model/topology.h"

namespace nvlplace {

// Parses YAML text into a spec. `file` is used in messages only. Never throws. Errors are
// InvalidArgument "file:line:col: #/yaml/path: message": bad YAML, unknown key, duplicate
// key, missing key (reported at its parent), wrong type, bad hostlist, a name that is not
// printable UTF-8, a number that is not finite or out of range, and every bound of limits.h
// that applies to a file: more YAML nodes than kMaxYamlNodes (counted as they are read, the
// rest left unread) or nesting past kMaxYamlDepth, more than topology_limits.max_names names
// (kMaxNamesPerFile by default) from hostlists (aliases count each time they are used), more GPUs
// than topology_limits.max_gpus (counted from the hostlists' sizes before any name is built). Out
// of memory is ResourceExhausted.
absl::StatusOr<TopologySpec> ParseTopologyYaml(absl::string_view text, const std::string& file,
                                               const TopologyLimits& topology_limits = {});

// Reads the file, parses it and builds the model (Topology::Create), so that every error,
// syntactic or semantic, names the file, line and column.
absl::StatusOr<std::shared_ptr<const Topology>> LoadTopologyFile(
    const std::string& path, const TopologyLimits& topology_limits = {});

// Writes the model in the YAML format, hostlists compressed; LoadTopology of the result
// yields an equal model.
std::string WriteTopologyYaml(const Topology& topo);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_TOPOLOGY_YAML_H_
