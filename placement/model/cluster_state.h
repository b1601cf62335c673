// Which GPUs are allocated: the engine's view of a cluster at one moment.
#ifndef NVLPLACE_PLACEMENT_MODEL_CLUSTER_STATE_H_
#define NVLPLACE_PLACEMENT_MODEL_CLUSTER_STATE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "placement/model/topology.h"

namespace nvlplace {

class ClusterState {
 public:
  explicit ClusterState(std::shared_ptr<const Topology> topo);
  // A copy has the same free and busy GPUs, an empty journal and no derived index.
  ClusterState(const ClusterState& other);
  ClusterState& operator=(const ClusterState& other);

  const Topology& topology() const { return *topo_; }
  bool busy(GpuId g) const { return busy_[g] != kFree; }
  int free_on_node(NodeId n) const { return node_free_[n]; }
  int free_in_domain(DomainId d) const { return domain_free_[d]; }
  // Free GPUs on the nodes of a leaf group (Topology::LeafGroup).
  int free_in_leaf_group(int g) const { return leaf_group_free_[g]; }
  int num_free() const { return num_free_; }
  // A fingerprint of which GPUs are busy: the XOR of a 64-bit mix of each busy GPU's id,
  // kept as GPUs change, so that a decision's key (engine.cc, DecisionKey) costs nothing per
  // GPU. Equal busy sets on one topology give equal fingerprints.
  uint64_t busy_fingerprint() const { return busy_fingerprint_; }
  bool node_all_free(NodeId n) const { return node_free_[n] == topo_->num_gpus_on(n); }

  // GPUs of nodes with placed: false (Node::placed) are busy from the start and stay busy:
  // Allocate and Release pass over them, so a caller may list them either way.

  // Marks GPUs allocated. No change on error: OutOfRange if an id is not a GPU of the
  // topology, FailedPrecondition if any is already busy (or listed twice).
  absl::Status Allocate(absl::Span<const GpuId> gpus);
  // Marks GPUs free. No change on error: OutOfRange as above, FailedPrecondition if any is
  // already free (or listed twice).
  absl::Status Release(absl::Span<const GpuId> gpus);
  // Node n's GPUs free exactly where `free` says (one byte per GPU of the node, in index
  // order, nonzero: free), busy elsewhere; GPUs held for good stay busy. A node that changes
  // is journaled as Allocate and Release journal theirs, so that a derived index catches up
  // (the plugin brings one kept state to Slurm's on every call, node by node, instead of
  // building a state per call). RET whether any GPU changed. Requires free.size() ==
  // topology().num_gpus_on(n).
  bool SetNodeFree(NodeId n, absl::Span<const uint8_t> free);

  // The journal: every node whose free GPUs changed, in order of the change, so that an index
  // derived from this state (the engine's capacity indexes, search.h) catches up by visiting
  // those nodes instead of the whole cluster. Positions count from the state's creation;
  // journal_begin() is the oldest position still held (older entries are dropped once the
  // journal outgrows the cluster: an index behind it rebuilds).
  uint64_t journal_end() const { return journal_begin_ + journal_.size(); }
  uint64_t journal_begin() const { return journal_begin_; }
  NodeId journal_at(uint64_t position) const { return journal_[position - journal_begin_]; }

  // One slot for an index derived from this state and kept up to date through the journal
  // by its owner (engine/search.h). Not copied. Access it under derived_mutex(): several
  // threads may place on one state.
  class Derived {
   public:
    virtual ~Derived() = default;
  };
  std::mutex& derived_mutex() const { return derived_mutex_; }
  Derived* derived() const { return derived_.get(); }
  void set_derived(std::unique_ptr<Derived> d) const { derived_ = std::move(d); }

 private:
  absl::Status CheckIds(absl::Span<const GpuId> gpus) const;
  bool Held(GpuId g) const;  // on a node that is not placed: busy for good
  void Set(GpuId g, bool busy);
  void Journal(absl::Span<const GpuId> gpus);  // the nodes of a change that took effect

  std::shared_ptr<const Topology> topo_;
  // Per GPU (bytes: read in every decision's inner loops): free, busy, or held busy for good
  // (Held: the GPU's node is not placed; kept here, not read from the node for each GPU).
  static constexpr uint8_t kFree = 0, kBusy = 1, kHeld = 3;
  std::vector<uint8_t> busy_;
  std::vector<int> node_free_;
  std::vector<int> domain_free_;
  std::vector<int> leaf_group_free_;
  int num_free_ = 0;
  uint64_t busy_fingerprint_ = 0;
  std::vector<NodeId> journal_;
  uint64_t journal_begin_ = 0;
  mutable std::mutex derived_mutex_;
  mutable std::unique_ptr<Derived> derived_;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_CLUSTER_STATE_H_
