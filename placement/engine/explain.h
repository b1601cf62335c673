// Explains a placement decision: JSON ("nvlplace.placement/1") and text.
#ifndef NVLPLACE_PLACEMENT_ENGINE_EXPLAIN_H_
#define NVLPLACE_PLACEMENT_ENGINE_EXPLAIN_H_

#include <string>

#include "nlohmann/json.hpp"
#include "placement/engine/engine.h"

namespace nvlplace {

inline constexpr char kPlacementSchema[] = "nvlplace.placement/1";

// The stable JSON documented in README.md.
nlohmann::json PlacementToJson(const PlacementResult& result, const Topology& topo);

// The same for people: nodes and GPU indexes, rank order, scores, estimated communication
// time, relaxations, and the best rejected alternative.
std::string PlacementText(const PlacementResult& result, const Topology& topo);

// Per node, in rank order of first appearance: "node3:0-7".
// GPU indexes as Slurm prints them: {4, 0, 1, 2, 7} -> "0-2,4,7".
std::string IndexList(const std::vector<int>& idx);

std::vector<std::pair<std::string, std::vector<int>>> GpusByNode(const std::vector<GpuId>& ranks,
                                                                 const Topology& topo);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_EXPLAIN_H_
