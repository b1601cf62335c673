// Explains a placement decision: JSON ("nvlplace.placement/1") and text.
#ifndef NVLPLACE_PLACEMENT_ENGINE_EXPLAIN_H_
#define NVLPLACE_PLACEMENT_ENGINE_EXPLAIN_H_

#include <string>
#include <utility>
#include <vector>

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
// The same in the given order (rank order), runs of consecutive ascending indexes joined:
// {4, 5, 6, 7, 0, 1} -> "4-7,0-1", {0, 2, 1, 3} -> "0,2,1,3".
std::string RankIndexList(const std::vector<int>& idx);

std::vector<std::pair<std::string, std::vector<int>>> GpusByNode(const std::vector<GpuId>& ranks,
                                                                 const Topology& topo);

// GpusByNode's grouping (a job's nodes in the order its ranks first meet them, each node's
// GPU indices in rank order) into vectors kept between calls: a replay fills one for each of
// a million jobs.csv rows, where a map and a list per node each time were most of the file.
class NodeGroups {
 public:
  void Fill(const std::vector<GpuId>& ranks, const Topology& topo);
  const std::vector<NodeId>& nodes() const { return nodes_; }
  const std::vector<int>& gpus(size_t i) const { return gpus_[i]; }  // of nodes()[i]

 private:
  std::vector<NodeId> nodes_;
  std::vector<std::vector<int>> gpus_;  // [i]: of nodes_[i]; more may be kept, unused
  std::vector<int> slot_;  // per node of the topology: its place in nodes_, -1 when not there
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_EXPLAIN_H_
