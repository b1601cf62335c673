// What is broken in the NVLink fabric now (an NVSwitch that split a rack into partitions, a
// tray whose NVLink is down), and the cluster spec as the engine must see it meanwhile.
#ifndef NVLPLACE_PLACEMENT_MODEL_NVLINK_HEALTH_H_
#define NVLPLACE_PLACEMENT_MODEL_NVLINK_HEALTH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "placement/model/topology.h"

namespace nvlplace {

struct NvlinkHealth {
  // A multi-node NVLink domain split into partitions that still have NVLink among their own
  // nodes (an NVSwitch tray down); its nodes in no partition have none.
  struct Split {
    std::string domain;
    std::vector<std::vector<std::string>> partitions;  // node names, expanded
    SourceLoc loc;
  };
  // Nodes whose NVLink is down: no NVLink to any other GPU, not even inside the node.
  struct Down {
    std::vector<std::string> nodes;
    SourceLoc loc;
  };
  std::vector<Split> splits;
  std::vector<Down> down;
  std::string file;
};

// The spec with the health applied: a split domain becomes one multi-node domain per
// partition (named DOMAIN/p1, DOMAIN/p2, ... in the order given, without spares: a broken
// rack plans none); its nodes in no partition, and every node whose NVLink is down, leave
// their multi-node domain and get one NVLink island per GPU, so that no TP group larger than
// one GPU is placed on them strictly. Errors name the health file's line: an unknown domain,
// a domain that is not multi-node, a node not in the domain, a node in two partitions, an
// unknown node.
absl::StatusOr<TopologySpec> ApplyNvlinkHealth(TopologySpec spec, const NvlinkHealth& health);

// "nvl72-rack03 split into 2 NVLink partitions (9 + 9 nodes); NVLink down on 2 nodes", or
// "all NVLink healthy".
std::string DescribeNvlinkHealth(const NvlinkHealth& health);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_NVLINK_HEALTH_H_
