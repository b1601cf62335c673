// Builds the cluster model from a TopologySpec in named steps, each checking one part of it.
#ifndef NVLPLACE_PLACEMENT_MODEL_TOPOLOGY_BUILDER_H_
#define NVLPLACE_PLACEMENT_MODEL_TOPOLOGY_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "placement/model/limits.h"
#include "placement/model/topology.h"

namespace nvlplace {

// Topology::Create's work. Build() runs the steps below in their order and stops at the first
// error; tests run them one at a time and look at model() in between. Each step expects the
// ones before it to have succeeded, and reports an InvalidArgument "file:line:col: path:
// message" at the spec element it refuses. No step recurses on the depth of the input; work
// and memory are linear in the spec and the lists the bounds cap. A std::bad_alloc passes
// through (Create turns it into ResourceExhausted). The builder reads `spec`, which must
// outlive it, and is used once.
class TopologyBuilder {
 public:
  // Bounds on the work of the build: limits.h and Topology's table sizes, or smaller ones for
  // tests.
  struct Bounds {
    int64_t max_switch_node_pairs = limits::kMaxSwitchNodePairs;
    int64_t max_switch_ancestor_pairs = limits::kMaxSwitchAncestorPairs;
    // Whether to compute the tier components (false: every CommonTier and PathGbps merges
    // ancestor lists; tests compare both).
    bool tier_components = true;
  };
  using Ancestor = Topology::Ancestor;

  explicit TopologyBuilder(const TopologySpec& spec) : TopologyBuilder(spec, Bounds()) {}
  TopologyBuilder(const TopologySpec& spec, const Bounds& bounds);

  // Runs every step, in order, then KeepPathFacts; the model, or the first step's error.
  absl::StatusOr<std::shared_ptr<const Topology>> Build();

  // The checked steps below, in Build's order (tests run them one at a time).
  using Step = absl::Status (TopologyBuilder::*)();
  static absl::Span<const Step> Steps();

  // The steps, in Build's order.
  // The cluster's name, default link speed and latencies.
  absl::Status SetCluster();
  // Tiers: at least one, at most limits::kMaxTiers, each named once.
  absl::Status AddTiers();
  // GPU models: at least one, each named once, with valid NVLink and PCIe bandwidths (those
  // left out are taken from the table of known models, gpu_models.h).
  absl::Status AddGpuModels();
  // Nodes, numbered in declaration order, after checking each group's GPU count (0 for
  // CPU-only nodes, which name no model), model and NVLink islands (each GPU index in exactly
  // one; one per GPU for a model without NVLink) and the cluster's total GPU count (1 or more).
  absl::Status AddNodes();
  // Multi-node NVLink domains: checks their names and claims their nodes (each node in one
  // domain at most, with one island); nothing is added to the model yet.
  absl::Status AddDomains();
  // GPUs, numbered node by node, and the NVLink domains holding them: the multi-node domains
  // first (declaration order), then one per island of every other node.
  absl::Status AssignGpus();
  // Switches, numbered in declaration order, with their tier, speeds and rail; a switch holds
  // either nodes (a leaf) or switches.
  absl::Status AddSwitches();
  // Each switch's nodes and child switches (and so each switch's parents), all declared and
  // each listed once; a rail leaf's rail exists on each of its nodes.
  absl::Status AttachNodesAndChildren();
  // No switch is its own descendant (reported before tier order, so the message says "cycle").
  absl::Status CheckCycles();
  // Every child's tier is lower than its parent's: ascending tier is a bottom-up order.
  absl::Status CheckTierOrder();
  // Each node's leaves: one leaf, or one leaf per rail 0..R-1 (Node::leaves[r] carries rail r).
  absl::Status AssignLeaves();
  // Each switch's nodes_under, bottom-up; fails past Bounds::max_switch_node_pairs.
  absl::Status ComputeNodesUnder();
  // Each switch's ancestors with the best upward bandwidth, top-down; fails past
  // Bounds::max_switch_ancestor_pairs.
  absl::Status ComputeAncestors();
  // Leaf groups: nodes with the same leaves share one, numbered by first node.
  absl::Status GroupLeaves();
  // Per tier, the components of the switch tree up to that tier, whether each answers
  // CommonTier and PathGbps exactly (Topology's tier components) and each leaf's bandwidth
  // to it. Linear in the switches, and in the ancestor lists of the leaves per tier.
  absl::Status ComputeTierComponents();
  // Last: what the cost model asks on every hop, kept (Topology::nic_per_gpu and the path
  // between two nodes of one leaf group). Before it the model answers the same, slower.
  void KeepPathFacts();

  // The model as built so far.
  const Topology& model() const { return *t_; }
  // A switch's ancestors (itself included), by ascending id, after ComputeAncestors.
  const std::vector<Ancestor>& ancestors(SwitchId sw) const { return t_->ancestors_[sw]; }

 private:
  using Islands = std::vector<std::vector<int>>;  // GPU indexes, each list sorted

  const NodeGroupSpec& GroupOf(NodeId n) const { return spec_.node_groups[node_group_[n]]; }
  const Islands& IslandsOf(NodeId n) const { return group_islands_[node_group_[n]]; }
  std::string ModelNames() const;
  absl::Status AddTier(const std::string& tier);
  absl::Status AddGpuModel(const GpuModelSpec& m);
  absl::Status CountGpus();
  absl::Status AddNodeGroup(size_t gi);
  absl::StatusOr<int> GroupModel(const NodeGroupSpec& g) const;
  absl::Status CheckNics(const NodeGroupSpec& g) const;
  absl::Status AddNode(const std::string& name, size_t gi, int model);
  absl::Status AddDomain(size_t d, absl::flat_hash_map<absl::string_view, size_t>& names);
  absl::Status CheckDomainName(size_t d,
                               absl::flat_hash_map<absl::string_view, size_t>& names) const;
  absl::Status CheckSpares(size_t d) const;
  absl::StatusOr<int64_t> ClaimDomainNodes(size_t d);
  absl::StatusOr<NodeId> ClaimDomainNode(size_t d, const HostNames::Iterator& name_at,
                                         Topology::RunHint* hint);
  class DomainLists;
  void AddGpus();
  absl::Status AddMultiNodeDomains();
  absl::Status AddIslandDomains(NodeId n);
  absl::Status AddDomainToModel(NvlDomain dom, const SourceLoc& loc);
  absl::Status AddSwitch(const SwitchSpec& s);
  absl::Status CheckSwitchName(const SwitchSpec& s);
  absl::Status AttachNodes(SwitchId id, std::vector<SwitchId>& listed_by);
  absl::Status AttachChildren(SwitchId id, std::vector<SwitchId>& listed_by);
  absl::Status SearchForCycle(SwitchId root, std::vector<int>& colour) const;
  absl::Status CycleError(const std::vector<SwitchId>& path, SwitchId child) const;
  absl::Status CheckChildTiers(SwitchId id) const;
  absl::Status AssignNodeLeaves(NodeId n);
  absl::Status CheckRails(NodeId n, absl::Span<const std::pair<int, SwitchId>> attach) const;
  absl::Status CollectNodesUnder(size_t at, int64_t& pairs, std::vector<SwitchId>& seen_by);
  // `under` as a shared list: the one already made with the same nodes, else a new one.
  SharedNodes Share(const std::vector<NodeId>& under);
  absl::Status MergeAncestors(SwitchId id, int64_t& pairs, std::vector<int>& slot);
  absl::Status TooDense(SwitchId id, absl::string_view listing, int64_t limit) const;
  void CheckComponents(size_t t, int first, const std::vector<SwitchId>& leaves);
  bool SetComponentGbps(size_t t, const std::vector<SwitchId>& common,
                        std::vector<size_t>::const_iterator begin,
                        std::vector<size_t>::const_iterator end,
                        const std::vector<SwitchId>& leaves);
  void NumberGroupComponents();

  const TopologySpec& spec_;
  const Bounds bounds_;
  std::shared_ptr<Topology> t_;
  absl::flat_hash_map<std::string, int> model_index_;  // GPU model name -> index
  std::vector<int> node_group_;                        // per node: its index in spec_.node_groups
  std::vector<Islands> group_islands_;                 // per node group: its islands, sorted
  int64_t total_gpus_ = 0;
  std::vector<int> node_domain_spec_;  // per node: its index in spec_.domains, or -1
  // Per node: (rail, leaf); inline for up to 8 rails (no allocation per node).
  std::vector<absl::InlinedVector<std::pair<int, SwitchId>, 8>> attach_;
  std::vector<SwitchId> by_tier_;  // switches by ascending tier (stable): bottom-up
  // ComputeNodesUnder's lists made so far, by a hash of their nodes (on a collision the
  // newer); and the list being collected, its memory kept from switch to switch.
  absl::flat_hash_map<uint64_t, SharedNodes> shared_lists_;
  std::vector<NodeId> under_;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_TOPOLOGY_BUILDER_H_
