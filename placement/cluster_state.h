// Which GPUs are allocated: the engine's view of a cluster at one moment.
#ifndef NVLPLACE_PLACEMENT_CLUSTER_STATE_H_
#define NVLPLACE_PLACEMENT_CLUSTER_STATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "placement/topology.h"

namespace nvlplace {

class ClusterState {
 public:
  explicit ClusterState(std::shared_ptr<const Topology> topo);

  const Topology& topology() const { return *topo_; }
  bool busy(GpuId g) const { return busy_[g]; }
  int free_on_node(NodeId n) const { return node_free_[n]; }
  int free_in_domain(DomainId d) const { return domain_free_[d]; }
  int num_free() const { return num_free_; }
  bool node_all_free(NodeId n) const {
    return node_free_[n] == static_cast<int>(topo_->nodes()[n].gpus.size());
  }

  // Marks GPUs allocated. FailedPrecondition (and no change) if any is already busy.
  absl::Status Allocate(const std::vector<GpuId>& gpus);
  // Marks GPUs free. FailedPrecondition (and no change) if any is already free.
  absl::Status Release(const std::vector<GpuId>& gpus);

 private:
  void Set(GpuId g, bool busy);

  std::shared_ptr<const Topology> topo_;
  std::vector<bool> busy_;
  std::vector<int> node_free_;
  std::vector<int> domain_free_;
  int num_free_ = 0;
};

// Reads a busy list: one entry per line, "NODES" (every GPU of the nodes) or
// "NODES:INDEXES" (those GPU indexes on each node), NODES a hostlist and INDEXES numbers
// and ranges ("node[01-04]:0-3,6"); '#' starts a comment. Marks them busy in `state`.
// Errors are InvalidArgument "file:line: message" and leave `state` unchanged.
absl::Status LoadBusyList(absl::string_view text, const std::string& file, ClusterState* state);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_CLUSTER_STATE_H_
