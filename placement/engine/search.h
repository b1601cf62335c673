// Candidate placements: the cluster as a tree of hosts under fabric tiers, and the per-decision
// state that generators (generator.h, policies/*_generator.cc) take GPUs from.
#ifndef NVLPLACE_PLACEMENT_ENGINE_SEARCH_H_
#define NVLPLACE_PLACEMENT_ENGINE_SEARCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"
#include "placement/model/topology.h"

namespace nvlplace {

// Which generator made a candidate and from where: `what`, and when `under` is not empty,
// " under " and that part of the fabric ("best fit" under "leaf3": "best fit under leaf3").
// `under` views a label of the engine's hierarchy, which outlives the decision; the two are
// joined (Text) only for the choice and its best rejected alternative, not for each of a
// decision's tens of candidates.
struct CandidateOrigin {
  std::string what;
  absl::string_view under;
  std::string Text() const { return under.empty() ? what : absl::StrCat(what, " under ", under); }
};

// A possible placement: ranks[r] is the GPU of rank r.
struct Candidate {
  std::vector<GpuId> ranks;
  CandidateOrigin origin;
  // SetFingerprint(topology, ranks) where the generator computed it (the engine computes the rest).
  std::optional<uint64_t> fingerprint;
};

// The unit the search takes GPUs from, and how.
struct ChunkRule {
  int size = 1;           // GPUs per chunk; a chunk stays inside one pool
  bool per_node = false;  // nodes mode: one chunk per node, the node is the pool
  // Nodes mode only. group > 1: a node's chunk is whole TP groups of `group` GPUs, each inside
  // one NVLink island (a node without room for them gives nothing). compact: the chunk comes
  // from as few islands as the node allows (TP groups that must split span few of them).
  int group = 1;
  bool compact = false;
  // Nodes mode only: nodes taken together, all from one host (a multi-node NVLink domain): a
  // segment, TP groups larger than a node's share, or the whole job in one domain. `size`
  // stays one node's share; a host gives one such unit per `nodes` nodes with their share.
  int nodes = 1;
  // At most one chunk per host (Slurm's --spread-segments: no two segments in one domain).
  bool one_per_host = false;
  // A multi-node domain's spares (NvlDomain::spares) stay free: jobs hold at most its nodes
  // less its spares (a node with a busy GPU counts as held); wholly free nodes past that are
  // not offered, the last ones in node order first.
  bool keep_spares = false;
};

// A host's `nodes` that keep `spares` of them free (Hierarchy::host_spares): how many of its
// wholly free nodes a job may take under keep_spares, or -1 for no limit (no spares).
int SpareRoom(const ClusterState& state, absl::Span<const NodeId> nodes, int spares);

// An order-free 64-bit fingerprint of a set of GPUs (a sum of mixed ids and the count): the
// same for the same GPUs in any order. Two candidates with equal fingerprints are taken to
// hold the same GPUs; two different sets collide with odds of about 2^-64, and then one
// candidate fewer is scored (deterministically), nothing worse.
uint64_t SetFingerprint(const Topology& topo, const std::vector<GpuId>& gpus);

// Rank order for TP groups of `tp` that may split (GPUs taken one by one): the same GPUs
// regrouped so that as many groups as possible sit inside one NVLink domain, and a group that
// must split spans as few domains as it can (the largest leftover share first, then the
// smallest share that completes it). Groups keep the order of their first GPU in `gpus`, and
// GPUs inside a group their order in `gpus`, so a candidate already grouped so is unchanged.
std::vector<GpuId> GroupRanks(const Topology& topo, const std::vector<GpuId>& gpus, int tp);

// Leaf groups joined into clusters tier by tier, for Hierarchy's construction (search.cc).
class LeafGroupClusters;

// The tree the search walks. Leaves are hosts: a multi-node NVLink domain, or one node with
// its NVLink islands. Above them one level per fabric tier: the hosts whose nodes are
// connected at that tier or lower (clusters of leaf groups). A virtual root holds the top
// tier's clusters (several when fabrics are disconnected). Built once per topology.
class Hierarchy {
 public:
  struct HNode {
    int level;                  // 0 host, t + 1 for fabric tier t, num_tiers + 1 root
    std::vector<int> children;  // HNode ids; empty for hosts
    // Hosts only: the nodes, ascending; inline for a host of up to 4 nodes (most are one:
    // no allocation per node of the cluster).
    absl::InlinedVector<NodeId, 4> nodes;
    std::string label;  // host: node or domain name; tier: a switch above it
  };

  explicit Hierarchy(const Topology& topo);

  const std::vector<HNode>& nodes() const { return nodes_; }
  int root() const { return root_; }
  int num_levels() const { return num_levels_; }            // host level .. root level
  const std::vector<int>& hosts() const { return hosts_; }  // HNode ids, in node order
  const std::vector<int>& at_level(int level) const { return by_level_[level]; }
  // The HNode above `id` (-1 for the root).
  int parent(int id) const { return parent_[id]; }
  // The host of each node of the topology.
  int host_of(NodeId n) const { return host_of_[n]; }
  // Whether walking the tree depth-first, children in order, meets the hosts in index order
  // (true when each part of the fabric holds consecutive nodes, as clusters are declared):
  // then "the first hosts in index order that ..." is found by walking down the tree.
  bool hosts_in_tree_order() const { return hosts_in_tree_order_; }
  // A host that is one node with one NVLink island: that node (its capacity is its free GPUs
  // over the chunk size); -1 for other hosts.
  NodeId single_node(int host) const { return single_node_[host]; }
  // That node's GPUs, read from the hierarchy's own lists (a take from a node picked at
  // random read the host's record and the node's: two cache misses, most of the take);
  // empty for other hosts.
  NodeGpus single_node_gpus(int host) const {
    return single_node_[host] < 0 ? NodeGpus()
                                  : NodeGpus(single_first_gpu_[host], host_gpus_[host]);
  }
  // Whether every node of a host is one NVLink island (the trays of a rack, most nodes).
  bool one_island_nodes(int host) const { return one_island_nodes_[host] != 0; }
  // The GPUs of a host.
  int host_gpus(int host) const { return host_gpus_[host]; }
  // The nodes a multi-node host keeps free as spares (its domain's NvlDomain::spares); 0 for
  // other hosts. Kept here so that counting a rack reads no node or domain record for it.
  int host_spares(int host) const { return host_spares_[host]; }
  // The most GPUs and nodes of one host.
  int max_host_gpus() const { return max_host_gpus_; }
  int max_host_nodes() const { return max_host_nodes_; }

 private:
  // The constructor's steps, in its order.
  // Level 0: the hosts, multi-node domains and other nodes, ordered by first node.
  void AddHosts(const Topology& topo);
  // Levels 1 .. num_tiers: per tier, one HNode per cluster of hosts it connects.
  void AddFabricLevels(const Topology& topo);
  // Tier t's level over `below` (the HNode of each host one level down); RET the HNode of
  // each host at this level.
  std::vector<int> AddTierLevel(const Topology& topo, int t, LeafGroupClusters& clusters,
                                const std::vector<int>& below);
  // The virtual root over the top tier's clusters.
  void AddRoot();
  void LinkParents();
  // host_of, single_node, one_island_nodes, host_gpus, host_spares and the largest host.
  void MeasureHosts(const Topology& topo);
  // hosts_in_tree_order.
  void CheckHostOrder();

  std::vector<HNode> nodes_;
  std::vector<std::vector<int>> by_level_;
  std::vector<int> hosts_;
  std::vector<int> parent_;
  std::vector<int> host_of_;
  std::vector<NodeId> single_node_;
  std::vector<GpuId> single_first_gpu_;  // per single-node host: its node's first GPU
  std::vector<char> one_island_nodes_;
  std::vector<int> host_gpus_;
  std::vector<int> host_spares_;
  int max_host_gpus_ = 0;
  int max_host_nodes_ = 0;
  int root_ = -1;
  int num_levels_ = 0;
  bool hosts_in_tree_order_ = false;
};

// The capacities of one chunk rule over one cluster state, per HNode (search.cc). A
// SearchState builds one in a pass over the hosts; for a request whose allowed nodes are
// every node or every node of a GPU model (Request::allowed_set), the one kept with the
// cluster state is brought up to date through its journal instead, visiting only the hosts
// whose free GPUs changed.
struct CapacityIndex;

// A short list of HNodes (hosts, parts of the fabric): a decision's lists hold a few tens, kept
// inline so that a decision allocates only what its candidates keep.
using HNodeList = absl::InlinedVector<int, 16>;

// The chunks a take gave each host it took from: (host, chunks).
using HostChunks = absl::InlinedVector<std::pair<int, int>, 16>;

// Per-decision view: free GPUs usable by this request (allowed nodes, exclusive nodes),
// grouped into pools (NVLink islands, or nodes in nodes mode) under each host.
class SearchState {
 public:
  SearchState(const Hierarchy& h, const ClusterState& state, const Request& request,
              ChunkRule rule);
  // Moved, never copied: a copy would share its number, and so TakeFromHost's slots, with the
  // original (a moved-from state has no index and is not asked again).
  SearchState(SearchState&&) = default;
  SearchState(const SearchState&) = delete;
  SearchState& operator=(const SearchState&) = delete;

  // Chunks each HNode can still give. Inline: a random decision on a busy cluster asks it
  // for every host it draws (a call each was 5% of such a replay).
  int capacity(int hnode) const { return cap_[hnode]; }
  // The most chunks one host under `hnode` can give.
  int max_host_capacity(int hnode) const;
  int total_capacity() const { return capacity(hierarchy_.root()); }
  // Largest number of usable free GPUs in one NVLink domain; in one HNode of a level.
  int largest_free_domain() const;
  int usable_free() const;
  int best_capacity_at_level(int level) const;
  std::string label_of_best_at_level(int level) const;

  // The HNodes of `level` that hold k chunks, the tightest first (ties in level order), at
  // most `limit` of them.
  HNodeList TightestAtLevel(int level, int k, int limit) const;

  // Hierarchical best fit from `hnode`: the child that fits `k` chunks with the least to
  // spare, else the fullest children first. Appends chunks (size GPUs each) to `out`.
  // Requires capacity(hnode) >= k. The state is not changed: a generator visits each host
  // at most once per candidate. With `taken`, appends to it the chunks it took per host, in
  // the order taken.
  void TakeBestFit(int hnode, int k, std::vector<GpuId>* out, HostChunks* taken = nullptr) const;
  // Where TakeBestFit(hnode, k) starts to split: down the tightest child that holds k (the
  // first of equals) while one does; a host, or an HNode none of whose children holds k.
  // TakeBestFit from two HNodes with the same start takes the same GPUs.
  int BestFitStart(int hnode, int k) const;

  // Fewest hosts, evenly: the hosts under `hnode` with the most room, as few as hold `k`
  // chunks (what stock cons_tres does under its lowest switch: the fewest nodes), each given
  // as close to the same number of chunks as their room allows. Best fit fills partial
  // hosts first and may take more of them; this is its compact counterpart, so that the
  // engine sees, scores and names the trade. Requires capacity(hnode) >= k. RET the hosts
  // used. With `unless` (ascending by host): when this take would give just those chunks
  // per host, it takes nothing and RET 0, since TakeFromHost gives a host's same chunks for
  // the same count: the same GPUs (most often the best fit's, which it is asked beside).
  int TakeBalanced(int hnode, int k, std::vector<GpuId>* out,
                   const HostChunks* unless = nullptr) const;

  // Chunks from hosts in the given order, as many as each gives.
  void TakeInOrder(const std::vector<int>& host_order, int k, std::vector<GpuId>* out) const;
  // The same over every host in index order (first fit), without visiting full parts of the
  // fabric when the hierarchy allows it.
  void TakeFirstFit(int k, std::vector<GpuId>* out) const;

  const Hierarchy& hierarchy() const { return hierarchy_; }
  const Topology& topology() const { return state_.topology(); }
  // GPUs per chunk.
  int chunk_size() const { return rule_.size; }

 private:
  // Whether the request may use node n's free GPUs (its allowed nodes; exclusive: all free).
  bool Usable(NodeId n) const {
    return request_.allowed_node[n] && (!request_.exclusive || state_.node_all_free(n));
  }
  // A host's pools, flat: pool p is gpus[begin[p], begin[p + 1]).
  struct FlatPools {
    std::vector<GpuId> gpus;
    std::vector<int> begin;
    int size() const { return static_cast<int>(begin.size()) - 1; }
    int count(int p) const { return begin[p + 1] - begin[p]; }
  };
  // Host `host`'s pools, the GPUs chunks are taken from: the free usable GPUs of each island
  // of its nodes, ascending, or in nodes mode one per node (NodePool). Listed per call into
  // `out` (its vectors reused: no allocation once they are large enough).
  void Pools(int host, FlatPools* out) const;
  // Nodes mode: node n's pool, the GPUs its chunk is taken from in order (ChunkRule::group
  // and compact), given its free usable GPUs per island.
  std::vector<GpuId> NodePool(const std::vector<std::vector<GpuId>>& islands) const;
  // Appends k chunks of host `host`. A multi-node or multi-island host's chunks are listed
  // once per host for the most chunks asked so far (TakeFromHostUncached; fewer are a prefix
  // of them, except outside nodes mode on a node of several islands, where one island may
  // hold all k: there only the same count is copied) and copied after that: the candidates of one
  // decision take from the same hosts again (a part of the fabric's best fit and its
  // fewest-hosts take, the level above it, first fit), and the state does not change while a
  // SearchState lives.
  void TakeFromHost(int host, int k, std::vector<GpuId>* out) const;
  // TakeFromHost's listing, without the memo.
  void TakeFromHostUncached(int host, int k, std::vector<GpuId>* out) const;
  // Its listing for a host whose every node is one island (the trays of a rack), not in
  // nodes mode: each node a pool, read from ClusterState's counts, not listed.
  void TakeFromTrays(int host, int k, std::vector<GpuId>* out) const;
  // Its choice among a host's pools: k chunks, each by best fit from one pool while one
  // holds a chunk, else over pools the fullest first; each through take(pool, GPUs), which
  // lowers left_of[pool], what the pool has left (`most`: the most any has). `listed`: the
  // pools with GPUs, ascending (the others are never taken from).
  template <typename Take>
  void TakeChunks(int k, int most, int* left_of, const std::vector<int>& listed, Take&& take) const;
  // Appends to `out`, in index order, the hosts under `id` whose capacity is exactly `cap`,
  // until `out` holds `limit`.
  void HostsWithCapacity(int id, int cap, size_t limit, HNodeList* out) const;
  void FirstFitUnder(int id, int* k, std::vector<GpuId>* out) const;
  // Appends to `out`, in index order, the hosts under `id` with more than `threshold` chunks
  // and the first `*at_threshold` with exactly that many (counted down).
  void RoomiestUnder(int id, int threshold, int* at_threshold, HNodeList* out) const;

  const Hierarchy& hierarchy_;
  const ClusterState& state_;
  const Request& request_;
  ChunkRule rule_;
  int num_hosts_ = 0;
  uint64_t id_ = 0;  // this state's own number: TakeFromHost's slots stamped with it are its own
  std::shared_ptr<const CapacityIndex> index_;
  const int* cap_ = nullptr;  // index_'s capacities (an index is copied on write, never changed)
  // TakeFromHost's lists, per host: the GPUs of its first `chunks` chunks, taken_gpus_[start,
  // start + length).
  struct Taken {
    size_t start = 0;
    size_t length = 0;
    int chunks = 0;
  };
  mutable std::vector<Taken> taken_;
  mutable std::vector<GpuId> taken_gpus_;
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_SEARCH_H_
