// Describes a model as JSON ("nvlplace.topology/1") and as a short text summary.
#ifndef NVLPLACE_PLACEMENT_FORMATS_TOPOLOGY_JSON_H_
#define NVLPLACE_PLACEMENT_FORMATS_TOPOLOGY_JSON_H_

#include <string>

#include "nlohmann/json.hpp"
#include "placement/model/topology.h"

namespace nvlplace {

inline constexpr char kTopologySchema[] = "nvlplace.topology/1";

// The stable JSON description documented in README.md: counts per tier, NVLink domains
// grouped by size, and every node, domain and switch with hostlists compressed.
nlohmann::json TopologyToJson(const Topology& topo);

// Four lines for people: sizes, GPU models, NVLink domains by size, switches per tier.
std::string TopologyOverview(const Topology& topo);

// The overview, then the switch tree from the top.
std::string TopologySummary(const Topology& topo);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_TOPOLOGY_JSON_H_
