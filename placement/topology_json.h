// Describes a model as JSON ("nvlplace.topology/1") and as a short text summary.
#ifndef NVLPLACE_PLACEMENT_TOPOLOGY_JSON_H_
#define NVLPLACE_PLACEMENT_TOPOLOGY_JSON_H_

#include <string>

#include "nlohmann/json.hpp"
#include "placement/topology.h"

namespace nvlplace {

inline constexpr char kTopologySchema[] = "nvlplace.topology/1";

// The stable JSON description documented in README.md: counts per tier, NVLink domains
// grouped by size, and every node, domain and switch with hostlists compressed.
nlohmann::json TopologyToJson(const Topology& topo);

// A few lines for people: sizes, tiers, NVLink domains by size, then the switch tree.
std::string TopologySummary(const Topology& topo);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_TOPOLOGY_JSON_H_
