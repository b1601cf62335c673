// The cluster model: GPUs, nodes, NVLink domains and the switch fabric, with fast queries.
#ifndef NVLPLACE_PLACEMENT_MODEL_TOPOLOGY_H_
#define NVLPLACE_PLACEMENT_MODEL_TOPOLOGY_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "placement/model/host_names.h"
#include "placement/model/limits.h"
#include "placement/model/name_index.h"

namespace nvlplace {

using GpuId = int32_t;     // dense, 0..num_gpus()-1, in node order then GPU index order
using NodeId = int32_t;    // dense, 0..num_nodes()-1, in the order nodes were declared
using DomainId = int32_t;  // dense, 0..num_domains()-1
using SwitchId = int32_t;  // dense, 0..num_switches()-1, in the order switches were declared

// Where an element of a spec came from, so that validation errors can say
// "file:line:col: path: message" (1-based line and column; 0 when unknown).
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  std::string path;  // YAML path such as "#/fabric/switches/3/nodes", or a Slurm key
};

// Formats "file:line:col: path: message", leaving out the parts that are unknown.
std::string FormatAt(const SourceLoc& loc, absl::string_view message);

// What a caller lets one cluster file describe (the CLI's --max-gpus, nvlplace.yaml's
// max_gpus). A file past it is refused before anything is built for it.
struct TopologyLimits {
  int64_t max_gpus = limits::kDefaultMaxClusterGpus;  // GPUs in the whole cluster
  // Names the file's hostlists may expand to, all together. CPU-only nodes are bounded by
  // this alone (a few hundred bytes each in the model); the fuzz targets lower it.
  size_t max_names = limits::kMaxNamesPerFile;
};

// ---------------------------------------------------------------------------------------
// The spec: a plain description as read from YAML or imported from Slurm files. Node lists
// are HostNames (runs of numbered names, as hostlists write them). Topology::Create validates
// it and builds the model.

// A bandwidth the spec leaves out: Topology::Create takes it from the table of known models.
inline constexpr double kGbpsFromTable = -1.0;

struct GpuModelSpec {
  std::string name;                     // "H100"; matched against gpu_models.h without case
  double nvlink_gbps = kGbpsFromTable;  // NVLink per GPU, GB/s, bidirectional; 0: no NVLink
  double pcie_gbps = kGbpsFromTable;    // PCIe to the host per GPU, GB/s, bidirectional
  SourceLoc loc;
};

// NodeGroupSpec::nics left out: one NIC per GPU, or one per rail on rail-optimized nodes.
inline constexpr int kDefaultNics = -1;

struct NodeGroupSpec {
  HostNames names;    // node names
  int gpus = 0;       // GPUs per node; 0: CPU-only nodes
  std::string model;  // GPU model name, one of TopologySpec::gpu_models; empty
                      // (and only then) for CPU-only nodes
  // NVLink islands inside each node, as lists of GPU indexes. Empty means one island with
  // all GPUs (one island per GPU for a model without NVLink). Must cover every index
  // 0..gpus-1 exactly once.
  std::vector<std::vector<int>> islands;
  SourceLoc loc;
  // false: the site keeps nvlplace off these nodes: they stay in the model (fabric, domains)
  // but their GPUs are never offered (ClusterState holds them busy).
  bool placed = true;
  // Fabric NICs per node, which the GPUs' inter-node traffic shares (the cost model divides a
  // NIC among the flows leaving the node). kDefaultNics: one per GPU; on rail-optimized nodes
  // one per rail, and a number given must be the rail count. 0 only for CPU-only nodes.
  int nics = kDefaultNics;
};

// An NVLink domain spanning several whole nodes (GB200 NVL72: 18 nodes x 4 GPUs).
struct DomainSpec {
  std::string name;
  HostNames nodes;
  int expected_gpus = 0;  // 0: not checked; else the GPU count the nodes must add up to
  SourceLoc loc;
  // Nodes (trays) the site keeps free in this domain to replace a failed one: from 0 to one
  // less than the domain's nodes. Carried, not yet used for placement.
  int spares = 0;
  SourceLoc spares_loc;  // where `spares` was given (line 0: not given, or unknown)
};

struct SwitchSpec {
  std::string name;
  std::string tier;                   // one of TopologySpec::tiers
  HostNames nodes;                    // nodes attached below (leaf switches only)
  std::vector<std::string> switches;  // child switches (non-leaf switches only)
  int rail = -1;                      // -1: all NICs of the nodes; r: only GPU r's NIC (rail r)
  double link_gbps = 0.0;             // port speed, Gb/s; 0 means TopologySpec::link_gbps
  double oversubscription = 1.0;      // downlink:uplink bandwidth ratio, >= 1
  SourceLoc loc;
};

struct TopologySpec {
  std::string name;
  std::vector<std::string> tiers = {"leaf", "spine", "core"};  // lowest first
  double link_gbps = 400.0;      // default fabric port speed, Gb/s (NDR)
  double nvlink_alpha_us = 0.6;  // per-step latency over NVLink (NCCL ring, LL)
  double net_alpha_us = 2.7;     // per-step latency over the network (NCCL ring, LL)
  std::vector<GpuModelSpec> gpu_models;
  std::vector<NodeGroupSpec> node_groups;
  std::vector<DomainSpec> domains;
  std::vector<SwitchSpec> switches;
  SourceLoc loc;  // the file itself
};

// ---------------------------------------------------------------------------------------
// The model.

struct Gpu {
  NodeId node;
  int index;  // index inside its node (CUDA/gres index)
  DomainId domain;
};

// A node's GPUs. GpuIds are given in node order, so a node's are the consecutive ids from
// its first: kept as (first, count), read as a container. A list of them (an inline vector
// of 8, 40 bytes) made the node record a quarter larger (152 bytes, not 120): more memory
// for every pass over the node records of a large model to read.
class NodeGpus {
 public:
  // Random access over consecutive ids (a value, not a reference, is read).
  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = GpuId;
    using difference_type = std::ptrdiff_t;
    using pointer = const GpuId*;
    using reference = GpuId;

    Iterator() = default;
    explicit Iterator(GpuId at) : at_(at) {}
    GpuId operator*() const { return at_; }
    GpuId operator[](difference_type i) const { return static_cast<GpuId>(at_ + i); }
    Iterator& operator++() { return *this += 1; }
    Iterator operator++(int) { return Iterator(at_++); }
    Iterator& operator--() { return *this -= 1; }
    Iterator operator--(int) { return Iterator(at_--); }
    Iterator& operator+=(difference_type d) {
      at_ = static_cast<GpuId>(at_ + d);
      return *this;
    }
    Iterator& operator-=(difference_type d) { return *this += -d; }
    friend Iterator operator+(Iterator it, difference_type d) { return it += d; }
    friend Iterator operator+(difference_type d, Iterator it) { return it += d; }
    friend Iterator operator-(Iterator it, difference_type d) { return it -= d; }
    friend difference_type operator-(Iterator a, Iterator b) { return a.at_ - b.at_; }
    friend bool operator==(Iterator a, Iterator b) { return a.at_ == b.at_; }
    friend bool operator!=(Iterator a, Iterator b) { return a.at_ != b.at_; }
    friend bool operator<(Iterator a, Iterator b) { return a.at_ < b.at_; }
    friend bool operator>(Iterator a, Iterator b) { return a.at_ > b.at_; }
    friend bool operator<=(Iterator a, Iterator b) { return a.at_ <= b.at_; }
    friend bool operator>=(Iterator a, Iterator b) { return a.at_ >= b.at_; }

   private:
    GpuId at_ = 0;
  };
  using value_type = GpuId;
  using const_iterator = Iterator;
  using iterator = Iterator;
  using size_type = size_t;

  NodeGpus() = default;
  NodeGpus(GpuId first, int count) : first_(first), count_(count) {}

  Iterator begin() const { return Iterator(first_); }
  Iterator end() const { return Iterator(first_ + count_); }
  size_t size() const { return static_cast<size_t>(count_); }
  bool empty() const { return count_ == 0; }
  GpuId operator[](size_t i) const { return static_cast<GpuId>(first_ + i); }
  GpuId front() const { return first_; }
  GpuId back() const { return first_ + count_ - 1; }
  friend bool operator==(const NodeGpus& a, const NodeGpus& b) {
    return a.first_ == b.first_ && a.count_ == b.count_;
  }

 private:
  GpuId first_ = 0;
  int32_t count_ = 0;
};

// A node's other lists, kept inside the node for the usual sizes (8 rails, 4 islands): no
// allocation per node, and a 1M-GPU model is built and freed without 2 of them a node.
using NodeLeaves = absl::InlinedVector<SwitchId, 8>;
using NodeDomains = absl::InlinedVector<DomainId, 4>;

struct Node {
  std::string name;
  int model;            // index into Topology::gpu_models(); -1: no GPUs
  NodeGpus gpus;        // gpus[i] is the GPU with index i
  NodeLeaves leaves;    // leaf switches the node's NICs reach; one per rail when
                        // rail-optimized (leaves[r] carries rail r), else one
  NodeDomains domains;  // NVLink domains holding this node's GPUs, ascending
  bool placed = true;   // false: never offered (NodeGroupSpec::placed)
  int nics = 0;         // fabric NICs (NodeGroupSpec::nics, default resolved)
};

struct NvlDomain {
  std::string name;  // node name for a whole-node domain, "node:nvlK" for an
                     // island, the spec's name for a multi-node domain
  // Ascending; views of lists the Topology keeps for all its domains (Topology::domain_nodes_
  // and domain_gpus_: no allocation per domain, one domain per H100 node).
  absl::Span<const NodeId> nodes;
  absl::Span<const GpuId> gpus;
  double nvlink_gbps;  // per GPU, GB/s
  bool multi_node;     // declared as a DomainSpec
  int spares = 0;      // DomainSpec::spares: nodes kept free to replace a failed one
};

// The nodes below a switch, ascending, shared by the switches that have the same ones (a
// scalable unit's rail leaves, the spines of a pod, the cores of a fabric): a list of its own
// per switch was a fifth of a 1M-GPU model. Read as a container; empty when default-made.
class SharedNodes {
 public:
  using value_type = NodeId;
  using const_iterator = const NodeId*;
  using iterator = const_iterator;
  using size_type = size_t;

  SharedNodes() = default;
  explicit SharedNodes(std::shared_ptr<const std::vector<NodeId>> nodes)
      : nodes_(std::move(nodes)) {}

  const NodeId* begin() const { return nodes_ ? nodes_->data() : nullptr; }
  const NodeId* end() const { return begin() + size(); }
  size_t size() const { return nodes_ ? nodes_->size() : 0; }
  bool empty() const { return size() == 0; }
  NodeId operator[](size_t i) const { return (*nodes_)[i]; }
  // The very same list (the builder gives switches with equal lists one list).
  bool SameList(const SharedNodes& o) const { return nodes_ == o.nodes_; }

 private:
  std::shared_ptr<const std::vector<NodeId>> nodes_;
};

struct Switch {
  std::string name;
  int tier;                        // index into Topology::tiers()
  std::vector<SwitchId> parents;   // several in a multi-rooted tree
  std::vector<SwitchId> children;  // in declaration order
  std::vector<NodeId> nodes;       // directly attached nodes (leaf switches)
  SharedNodes nodes_under;         // every node below, ascending
  int rail;                        // -1 or the rail this leaf carries
  double link_gbps;
  double oversubscription;
};

class Topology {
 public:
  // Common tier of two nodes that share no switch (separate fabrics).
  static constexpr int kDisconnected = 1 << 20;
  // Common "tier" of a node with itself.
  static constexpr int kSameNode = -1;

  // Validates the spec and builds the model. Errors are InvalidArgument with the message
  // "file:line:col: path: message" of the offending element: unknown tier or GPU model, a
  // model that is neither in the table of known models (gpu_models.h) nor given its
  // nvlink_gbps, a model on CPU-only nodes (gpus 0) or none on GPU nodes, a node declared twice or
  // in two NVLink domains, a switch cycle, a node under no leaf, a GPU count that does not match,
  // spares of a multi-node NVLink domain outside 0..nodes-1, a name that is not found, a bad rail,
  // a NIC count out of range (limits::kMaxNicsPerNode), 0 on GPU nodes or not the rail count on
  // rail-optimized nodes, a name that is not printable UTF-8 (hostlist.h CheckName), a bandwidth,
  // latency or oversubscription that is not finite or out of range (limits.h), more than
  // limits::kMaxTiers tiers, more GPUs than a GpuId holds, a fabric so densely connected that its
  // lists of nodes under each switch or ancestors of each switch would pass
  // limits::kMaxSwitchNodePairs or limits::kMaxSwitchAncestorPairs. Work and memory are linear in
  // the spec and those lists.
  static absl::StatusOr<std::shared_ptr<const Topology>> Create(const TopologySpec& spec);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& tiers() const { return tiers_; }
  const std::vector<GpuModelSpec>& gpu_models() const { return gpu_models_; }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<NvlDomain>& domains() const { return domains_; }
  const std::vector<Switch>& switches() const { return switches_; }
  int num_gpus() const { return static_cast<int>(gpus_.size()); }
  // Mix64 of GPU g's id, from a table made with the GPUs: the order-free fingerprints of GPU
  // sets (SetFingerprint, ClusterState::busy_fingerprint) sum or XOR one per GPU, and a read
  // is a third of the instructions of a mix.
  uint64_t GpuMix(GpuId g) const { return gpu_mix_[g]; }
  // nodes()[n].gpus.size(), from a list of 2 bytes a node: whether a node is wholly free is
  // asked of every tray of every rack a decision counts, and its record is 120 bytes.
  int num_gpus_on(NodeId n) const { return node_gpu_count_[n]; }
  // GPUs of nodes that nvlplace places on (placed: true): the most a request can get.
  int num_placed_gpus() const { return num_placed_gpus_; }
  // The GPU model of a node, nullptr for a node without GPUs.
  const GpuModelSpec* ModelOf(NodeId n) const {
    int m = nodes_[n].model;
    return m < 0 ? nullptr : &gpu_models_[m];
  }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  int num_domains() const { return static_cast<int>(domains_.size()); }
  int num_switches() const { return static_cast<int>(switches_.size()); }
  double link_gbps() const { return link_gbps_; }
  double nvlink_alpha_us() const { return nvlink_alpha_us_; }
  double net_alpha_us() const { return net_alpha_us_; }

  // Name lookups; -1 when unknown.
  NodeId FindNode(absl::string_view name) const;
  // The same, trying `guess` first (one comparison; any value, in range or not). Lists of
  // node names mostly follow declaration order (a hostlist, a rack's trays, a leaf's nodes),
  // so a caller walking one guesses the node after the last it found, and walks the nodes in
  // memory order instead of hashing each name into a table that at 1M GPUs outgrows the cache.
  NodeId FindNode(absl::string_view name, NodeId guess) const;
  // The node a name read from a HostNames names. A numbered name is found by its number in
  // the runs the nodes were declared in (no name written or compared, no node record read:
  // a spec's lists of a million names resolve without touching the records); a name no
  // declared run holds (a single name, another zero padding) by its name.
  NodeId FindNode(const HostNames::Iterator& name) const;
  // The same for a caller walking one list, which keeps `hint` for the walk: while the names
  // stay in the run and the declared run that the last one was found in, no search at all.
  struct RunHint {
    const HostNames::Run* run = nullptr;  // the listed run last found in a declared one
    size_t declared = 0;                  // that declared run
  };
  NodeId FindNode(const HostNames::Iterator& name, RunHint* hint) const;
  SwitchId FindSwitch(absl::string_view name) const;
  DomainId FindDomain(absl::string_view name) const;
  int FindTier(absl::string_view name) const;

  DomainId DomainOf(GpuId gpu) const { return gpus_[gpu].domain; }

  // Lowest tier index holding a switch above both nodes: kSameNode for a == b, 0 when they
  // share a leaf, kDisconnected when no switch is common. Rail-optimized nodes are compared
  // rail by rail (NCCL keeps traffic on matching rails) and the highest tier needed wins.
  // O(tiers) from the components of the switch tree per tier (see tier components below),
  // O(tiers x rails) when the nodes' rails meet at different tiers; where a component cannot
  // answer exactly, from the two leaves' ancestor lists (a merge of two sorted lists).
  int CommonTier(NodeId a, NodeId b) const;

  // Switch hops on the path between two nodes: 0 for the same node, 2 through one leaf,
  // 2*(t+1) through tier t, -1 when disconnected.
  int Hops(NodeId a, NodeId b) const;

  // The highest tier that any two of the nodes must cross to talk (kSameNode for one node
  // or none; kDisconnected if any two share no switch). Exact for multi-rooted trees.
  // Linear in the nodes' distinct leaf groups (the lowest tier where all their components
  // are one) when they have as many leaves each and that component answers exactly; else
  // over every pair of leaf groups.
  int CommonTier(const std::vector<NodeId>& nodes) const;
  // CommonTier of nodes already distinct, in any order (no copy, no sort); ascending reads
  // fastest (a leaf group's nodes in one run).
  int CommonTierDistinct(absl::Span<const NodeId> nodes) const;
  // The same, and in `*by_groups` whether the nodes' set of leaf groups alone gave it (two
  // groups or more, whose components answer): then any nodes with the same set of leaf
  // groups, however many in each, have the same CommonTier.
  int CommonTierDistinct(absl::Span<const NodeId> nodes, bool* by_groups) const;

  // Every GPU under a switch, ascending.
  std::vector<GpuId> GpusUnder(SwitchId sw) const;

  // The slowest per-port bandwidth, Gb/s, divided by oversubscription, on the path between
  // two different nodes through their common tier (the bottleneck a ring crossing it sees).
  // 0 when disconnected. O(tiers x rails), as CommonTier(a, b).
  double PathGbps(NodeId a, NodeId b) const;

  // The nodes' leaf-group id: nodes with identical leaves share one.
  int LeafGroup(NodeId n) const { return leaf_group_[n]; }
  int num_leaf_groups() const { return num_leaf_groups_; }
  // Every node has at least as many NICs as GPUs: a node never sends more hops of one phase
  // to other nodes than it has NICs (each rank sends one), so no hop is slowed to a share.
  bool nic_per_gpu() const { return nic_per_gpu_; }
  // A GPU's NVLink domain says every link it has (LinkBetween): each node with GPUs is in
  // one domain (two GPUs of one node never talk over PCIe) and each domain's nodes share a
  // leaf group (a rack's trays their leaves; a one-node domain always), so the path between
  // two GPUs of different domains is the path between those domains' leaf groups.
  bool domains_say_links() const { return domains_say_links_; }
  // True when every leaf of the group holds only the group's nodes, so that the nodes under
  // its leaves are exactly its nodes (a rack under its own leaf, a rail-optimized unit under
  // its rail leaves); false for a group with no leaf.
  bool LeafGroupClosed(int g) const { return group_closed_[g] != 0; }

  // Tier components: per tier t, the switches of tier t or lower joined to their children
  // make components, and two leaves share a switch of tier t or lower only if they are in
  // one component at t. A component answers exactly when it is also enough: a switch of
  // tier t or lower is above all its leaves (so the first tier where two leaves' components
  // are one is their common tier; true of fat trees and rail-optimized fabrics), and, for
  // bandwidths, the same switches of tier t are above each of its leaves, each leaf reaching
  // all of them at one speed. Other answers merge ancestor lists.
  // Whether they were built (false only for a model built without them, to compare).
  bool has_tier_components() const { return !leaf_component_.empty(); }
  // Components that cannot answer bandwidths exactly (some answers merge ancestor lists).
  int num_inexact_components() const { return num_inexact_components_; }

  // The spec that reproduces this model (canonical: node groups merged by shape, names in
  // hostlist order). Create(ToSpec()) yields an equal model.
  TopologySpec ToSpec() const;

 private:
  // One switch's ancestors (itself included) with the best bottleneck bandwidth on the way up.
  struct Ancestor {
    SwitchId id;
    int tier;
    double up_gbps;  // max over upward paths of the min link_gbps/oversubscription crossed
  };

  // Create's work, in named steps (topology_builder.h) that fill the fields below.
  friend class TopologyBuilder;

  // Bits of component_flags_: what a component answers exactly.
  static constexpr uint8_t kTierExact = 1;
  static constexpr uint8_t kGbpsExact = 2;

  Topology() = default;
  // Not copied (nor moved): node_index_ and domain_index_ read the names of nodes_ and
  // domains_ through pointers to them.
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  // Lowest common ancestor tier of two switches and the bottleneck Gb/s through it, from
  // their ancestor lists.
  std::pair<int, double> SwitchPath(SwitchId x, SwitchId y) const;
  // The lowest tier at which two leaves are in one tier component, and that component;
  // {-1, -1} when they are apart at every tier. Needs the components.
  std::pair<int, int> FirstCommonComponent(SwitchId x, SwitchId y) const;
  // The same for two leaves, from their tier components where they answer exactly.
  std::pair<int, double> LeafPath(SwitchId x, SwitchId y) const;
  int LeafTier(SwitchId x, SwitchId y) const;
  // The same for two leaf groups: rail by rail when they have as many leaves (the worst rail
  // decides), else their best pair of leaves.
  std::pair<int, double> GroupPath(int a, int b) const;
  int GroupTier(int a, int b) const;
  // The common tier of distinct leaf groups from their components, or -2 when they cannot
  // tell.
  int GroupsTier(absl::Span<const int> groups) const;

  std::string name_;
  std::vector<std::string> tiers_;
  double link_gbps_ = 400.0;
  double nvlink_alpha_us_ = 0.6;
  double net_alpha_us_ = 2.7;
  int num_placed_gpus_ = 0;
  std::vector<GpuModelSpec> gpu_models_;
  std::vector<Gpu> gpus_;
  std::vector<uint64_t> gpu_mix_;         // per GPU: Mix64 of its id
  std::vector<uint16_t> node_gpu_count_;  // per node: its GPUs (limits::kMaxGpusPerNode)
  std::vector<Node> nodes_;
  std::vector<NvlDomain> domains_;
  // The domains' nodes and GPUs, domain after domain (NvlDomain views them): reserved once
  // for them all, so the views stay where they are.
  std::vector<NodeId> domain_nodes_;
  std::vector<GpuId> domain_gpus_;
  std::vector<Switch> switches_;
  // Ids found by the names in their records: the names are stored once, a slot is an id.
  NameIndex<Node> node_index_{&nodes_};
  NameIndex<Switch> switch_index_{&switches_};
  NameIndex<NvlDomain> domain_index_{&domains_};
  // The node groups' runs of numbered names, each naming consecutive node ids from first_id;
  // sorted by (head, tail, width, first). Filled by the builder.
  struct DeclaredRun {
    std::string head;
    std::string tail;
    int width = 0;
    uint64_t first = 0;
    uint64_t count = 0;
    NodeId first_id = 0;
  };
  std::vector<DeclaredRun> declared_runs_;

  std::vector<int> leaf_group_;  // per node
  int num_leaf_groups_ = 0;
  // Per leaf group: GroupPath(g, g)'s bandwidth, between two of its nodes (the paths a job's
  // rings cross most often), kept by the build's last step (empty before it).
  std::vector<double> group_self_gbps_;
  bool nic_per_gpu_ = false;        // until KeepPathFacts: count as if some node might share
  bool domains_say_links_ = false;  // until KeepPathFacts: as if they did not
  std::vector<std::vector<SwitchId>> group_leaves_;  // per leaf group: its nodes' leaves
  std::vector<uint8_t> group_closed_;                // per leaf group: LeafGroupClosed
  std::vector<std::vector<Ancestor>> ancestors_;     // per switch, sorted by id

  // Tier components (TopologyBuilder::ComputeTierComponents); row r = leaf row x tiers + t.
  std::vector<int> leaf_row_;        // per switch: its leaf row, or -1 for a switch of switches
  std::vector<int> leaf_component_;  // per row: the leaf's component at t, -1 below its own tier
  std::vector<double> leaf_gbps_;    // per row: the bottleneck to the component's switches of
                                     // tier t and through them (kGbpsExact components)
  std::vector<uint8_t> component_flags_;  // per component (ids unique over all tiers)
  std::vector<int> group_component_;      // [group x tiers + t]: its leaves' components at t as
                                          // one id (equal for groups equal rail by rail), or -1
  std::vector<uint8_t> group_component_exact_;  // per such id: each component is kTierExact
  int num_inexact_components_ = 0;
};

// Structural equality of two models (same names, tiers, nodes, GPUs, domains, switches,
// bandwidths); on mismatch returns a description of the first difference.
absl::Status CompareTopologies(const Topology& a, const Topology& b);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_TOPOLOGY_H_
