// The busy-list format: which GPUs are taken, as hostlists and index ranges.
#ifndef NVLPLACE_PLACEMENT_FORMATS_BUSY_LIST_H_
#define NVLPLACE_PLACEMENT_FORMATS_BUSY_LIST_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/cluster_state.h"

namespace nvlplace {

// Reads a busy list: one entry per line, "NODES" (every GPU of the nodes) or
// "NODES:INDEXES" (those GPU indexes on each node), NODES a hostlist and INDEXES numbers
// and ranges ("node[01-04]:0-3,6"); '#' starts a comment. Marks them busy in `state`.
// Errors are InvalidArgument "file:line: message" and leave `state` unchanged.
absl::Status LoadBusyList(absl::string_view text, const std::string& file, ClusterState* state);

// The GPUs of a text in the same format in the order it gives them (a job's GPUs in rank
// order: Slurm's node order, or a rank map's): line by line, each line's nodes in hostlist
// order, each node's GPUs by index. A GPU given twice is an error, as are the errors of
// LoadBusyList.
absl::StatusOr<std::vector<GpuId>> ReadGpusInOrder(absl::string_view text, const std::string& file,
                                                   const Topology& topo);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_BUSY_LIST_H_
