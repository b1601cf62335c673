// Which GPUs are allocated: the engine's view of a cluster at one moment.
#ifndef NVLPLACE_PLACEMENT_MODEL_CLUSTER_STATE_H_
#define NVLPLACE_PLACEMENT_MODEL_CLUSTER_STATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "placement/model/topology.h"

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

  // GPUs of nodes with placed: false (Node::placed) are busy from the start and stay busy:
  // Allocate and Release pass over them, so a caller may list them either way.

  // Marks GPUs allocated. No change on error: OutOfRange if an id is not a GPU of the
  // topology, FailedPrecondition if any is already busy (or listed twice).
  absl::Status Allocate(const std::vector<GpuId>& gpus);
  // Marks GPUs free. No change on error: OutOfRange as above, FailedPrecondition if any is
  // already free (or listed twice).
  absl::Status Release(const std::vector<GpuId>& gpus);

 private:
  absl::Status CheckIds(const std::vector<GpuId>& gpus) const;
  bool Held(GpuId g) const;  // on a node that is not placed: busy for good
  void Set(GpuId g, bool busy);

  std::shared_ptr<const Topology> topo_;
  std::vector<bool> busy_;
  std::vector<int> node_free_;
  std::vector<int> domain_free_;
  int num_free_ = 0;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_CLUSTER_STATE_H_
