// Candidate placements: the host tree and the per-decision state generators take GPUs from.
#include "placement/engine/search.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <typeinfo>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

namespace nvlplace {
namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int a, int b) { parent[Find(a)] = Find(b); }
};

// A switch of tier `tier` above node `n`, for labels.
std::string SwitchLabel(const Topology& topo, NodeId n, int tier) {
  const Node& node = topo.nodes()[n];
  if (node.leaves.empty()) return topo.tiers()[tier];
  SwitchId s = node.leaves[0];
  while (topo.switches()[s].tier < tier && !topo.switches()[s].parents.empty()) {
    s = topo.switches()[s].parents[0];
  }
  if (topo.switches()[s].tier == tier) return topo.switches()[s].name;
  return absl::StrCat(topo.tiers()[tier], " above ", node.name);
}

// An index as an iterator offset (sizes here are GPUs of one job: far below PTRDIFF_MAX).
std::ptrdiff_t Diff(size_t i) { return static_cast<std::ptrdiff_t>(i); }

}  // namespace

uint64_t SetFingerprint(const Topology& topo, const std::vector<GpuId>& gpus) {
  uint64_t sum = gpus.size();
  for (GpuId g : gpus) sum += topo.GpuMix(g);
  return sum;
}

std::vector<GpuId> GroupRanks(const Topology& topo, const std::vector<GpuId>& gpus, int tp) {
  size_t size = static_cast<size_t>(tp);
  if (tp <= 1 || gpus.size() % size != 0) return gpus;
  // Positions of the GPUs per domain, domains in order of first appearance.
  absl::flat_hash_map<DomainId, size_t> share_of;
  std::vector<std::vector<int>> shares;
  for (size_t i = 0; i < gpus.size(); ++i) {
    auto [it, inserted] = share_of.emplace(topo.gpus()[gpus[i]].domain, shares.size());
    if (inserted) shares.emplace_back();
    shares[it->second].push_back(static_cast<int>(i));
  }
  // Whole groups inside a domain first; what is left of each share is a piece.
  std::vector<std::vector<int>> groups;
  for (std::vector<int>& share : shares) {
    size_t whole = share.size() / size * size;
    for (size_t i = 0; i < whole; i += size) {
      groups.emplace_back(share.begin() + Diff(i), share.begin() + Diff(i + size));
    }
    share.erase(share.begin(), share.begin() + Diff(whole));
  }
  // Split groups: the largest piece, then the smallest that completes the group, else the
  // largest again (ties: the first).
  auto pick = [&](size_t need) {
    int fit = -1, largest = -1;
    for (size_t i = 0; i < shares.size(); ++i) {
      size_t n = shares[i].size();
      if (n == 0) continue;
      if (n >= need && (fit < 0 || n < shares[fit].size())) fit = static_cast<int>(i);
      if (largest < 0 || n > shares[largest].size()) largest = static_cast<int>(i);
    }
    return fit >= 0 && need < size ? fit : largest;
  };
  for (size_t left = gpus.size() - groups.size() * size; left > 0; left -= size) {
    std::vector<int> group;
    while (group.size() < size) {
      std::vector<int>& piece = shares[pick(size - group.size())];
      size_t n = std::min(size - group.size(), piece.size());
      group.insert(group.end(), piece.begin(), piece.begin() + Diff(n));
      piece.erase(piece.begin(), piece.begin() + Diff(n));
    }
    std::sort(group.begin(), group.end());
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end());  // by first position: the groups are disjoint
  std::vector<GpuId> out;
  out.reserve(gpus.size());
  for (const std::vector<int>& group : groups) {
    for (int i : group) out.push_back(gpus[i]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The host tree, built in named steps.

// The leaf groups joined into the clusters of each fabric level, tier by tier: connected at
// tier t or lower (cumulative, so the clusters nest), and the leaf groups of one host always
// together. Linear in the fabric (no pair of leaf groups is compared): per tier, the
// switches of that tier or lower with nodes below them are joined to their children into
// components; leaf groups with as many leaves join when each leaf is in the same component
// as the other's leaf of the same index (rail by rail, as Topology::CommonTier compares
// them), and leaf groups with different numbers of leaves when any two of their leaves are
// (its best pair). Every leaf of a component reaches the others through switches of tier t
// or lower, each with nodes below it, so for one leaf per group (and rail-optimized groups
// that agree rail by rail) these are the clusters of CommonTier(a, b) <= t.
class LeafGroupClusters {
 public:
  // The leaf groups of each host start joined.
  LeafGroupClusters(const Topology& topo, const std::vector<Hierarchy::HNode>& nodes,
                    const std::vector<int>& hosts);

  // Joins what tier t connects; call for t = 0, 1, ... in order.
  void JoinTier(int t) {
    JoinSwitches(t);
    JoinLeafGroups();
  }
  // The cluster of leaf group g at the last tier joined.
  int Find(int g) { return groups_.Find(g); }

 private:
  void JoinSwitches(int t);
  void JoinLeafGroups();

  const Topology& topo_;
  std::vector<NodeId> rep_;  // a node of each leaf group: its first
  UnionFind groups_;         // leaf groups
  UnionFind switches_;       // switches, joined up to the last tier
};

LeafGroupClusters::LeafGroupClusters(const Topology& topo,
                                     const std::vector<Hierarchy::HNode>& nodes,
                                     const std::vector<int>& hosts)
    : topo_(topo),
      rep_(topo.num_leaf_groups(), -1),
      groups_(topo.num_leaf_groups()),
      switches_(topo.num_switches()) {
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (rep_[topo.LeafGroup(n)] < 0) rep_[topo.LeafGroup(n)] = n;
  }
  for (int h : hosts) {
    for (NodeId n : nodes[h].nodes) {
      groups_.Union(topo.LeafGroup(n), topo.LeafGroup(nodes[h].nodes[0]));
    }
  }
}

// Each switch of tier t with nodes below it, to its children with nodes below them.
void LeafGroupClusters::JoinSwitches(int t) {
  for (SwitchId s = 0; s < topo_.num_switches(); ++s) {
    const Switch& sw = topo_.switches()[s];
    if (sw.tier != t || sw.nodes_under.empty()) continue;
    for (SwitchId c : sw.children) {
      if (!topo_.switches()[c].nodes_under.empty()) switches_.Union(c, s);
    }
  }
}

// Leaf groups whose leaves are in the same components: rail by rail for as many leaves, any
// two for different numbers of leaves.
void LeafGroupClusters::JoinLeafGroups() {
  // Same number of leaves: the components rail by rail, as one key (inline up to 8 rails: no
  // allocation per leaf group). Per component (its root switch): the first group with a leaf
  // in it, that group's number of leaves, and whether a group with another number has one too.
  absl::flat_hash_map<absl::InlinedVector<int, 9>, int> by_key;
  absl::InlinedVector<int, 9> key;
  std::vector<int> first_group(static_cast<size_t>(topo_.num_switches()), -1);
  std::vector<size_t> first_count(first_group.size(), 0);
  std::vector<char> mixed(first_group.size(), 0);
  bool any_mixed = false;
  for (int g = 0; g < static_cast<int>(rep_.size()); ++g) {
    const NodeLeaves& leaves = topo_.nodes()[rep_[g]].leaves;
    if (leaves.empty()) continue;
    key.assign(1, static_cast<int>(leaves.size()));
    for (SwitchId l : leaves) key.push_back(switches_.Find(l));
    auto [it, inserted] = by_key.emplace(key, g);
    if (!inserted) groups_.Union(g, it->second);
    for (size_t i = 1; i < key.size(); ++i) {
      int c = key[i];
      if (first_group[c] < 0) {
        first_group[c] = g;
        first_count[c] = leaves.size();
      } else if (first_count[c] != leaves.size()) {
        mixed[c] = 1;
        any_mixed = true;
      }
    }
  }
  if (!any_mixed) return;
  // Different numbers of leaves in one component: all its groups together.
  for (int g = 0; g < static_cast<int>(rep_.size()); ++g) {
    for (SwitchId l : topo_.nodes()[rep_[g]].leaves) {
      int c = switches_.Find(l);
      if (mixed[c]) groups_.Union(g, first_group[c]);
    }
  }
}

Hierarchy::Hierarchy(const Topology& topo) {
  num_levels_ = static_cast<int>(topo.tiers().size()) + 2;
  by_level_.resize(num_levels_);
  AddHosts(topo);
  AddFabricLevels(topo);
  AddRoot();
  LinkParents();
  MeasureHosts(topo);
  CheckHostOrder();
}

void Hierarchy::AddHosts(const Topology& topo) {
  // Multi-node domains and every other node, ordered by first node: the nodes walked in
  // order, a domain added where its first node is met (no list of hosts to sort).
  constexpr int kSingle = -1, kInsideDomain = -2;
  std::vector<int> starts(topo.num_nodes(), kSingle);  // the domain a node starts, if any
  size_t hosts = topo.num_nodes();
  for (DomainId d = 0; d < topo.num_domains(); ++d) {
    const NvlDomain& dom = topo.domains()[d];
    if (!dom.multi_node) continue;
    for (NodeId n : dom.nodes) starts[n] = kInsideDomain;
    starts[dom.nodes.front()] = d;
    hosts -= dom.nodes.size() - 1;
  }
  // The levels above hold at most one HNode per leaf group each, and the root.
  hosts_.reserve(hosts);
  by_level_[0].reserve(hosts);
  nodes_.reserve(hosts + static_cast<size_t>(num_levels_) * topo.num_leaf_groups() + 1);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (starts[n] == kInsideDomain) continue;
    hosts_.push_back(static_cast<int>(nodes_.size()));
    by_level_[0].push_back(hosts_.back());
    if (starts[n] == kSingle) {
      nodes_.push_back(HNode{0, {}, {n}, topo.nodes()[n].name});
    } else {
      const NvlDomain& dom = topo.domains()[starts[n]];
      nodes_.push_back(HNode{0, {}, {dom.nodes.begin(), dom.nodes.end()}, dom.name});
    }
  }
}

void Hierarchy::AddFabricLevels(const Topology& topo) {
  const int num_tiers = num_levels_ - 2;
  LeafGroupClusters clusters(topo, nodes_, hosts_);
  std::vector<int> below = hosts_;  // HNode per host at the level below
  for (int t = 0; t < num_tiers; ++t) {
    clusters.JoinTier(t);
    below = AddTierLevel(topo, t, clusters, below);
  }
}

std::vector<int> Hierarchy::AddTierLevel(const Topology& topo, int t, LeafGroupClusters& clusters,
                                         const std::vector<int>& below) {
  // Per cluster (a leaf group's root) its HNode here; per HNode below, the one here it was
  // last made a child of. Every host visits its below-HNode's parent: with those marks the
  // level costs one step per host, where a search of the children cost one per child (a
  // top tier of thousands of children under one HNode at 1M GPUs).
  std::vector<int> cluster_node(static_cast<size_t>(topo.num_leaf_groups()), -1);
  std::vector<int> child_of(nodes_.size(), -1);
  std::vector<int> here(hosts_.size());
  for (size_t i = 0; i < hosts_.size(); ++i) {
    NodeId first = nodes_[hosts_[i]].nodes[0];
    int& id = cluster_node[clusters.Find(topo.LeafGroup(first))];
    if (id < 0) {
      id = static_cast<int>(nodes_.size());
      nodes_.push_back(HNode{t + 1, {}, {}, SwitchLabel(topo, first, t)});
      by_level_[t + 1].push_back(id);
    }
    here[i] = id;
    int& mark = child_of[below[i]];
    if (mark == id) continue;
    // A below-HNode lies inside one cluster here (clusters only grow tier by tier): met
    // again under another, it is searched for as before.
    std::vector<int>& kids = nodes_[id].children;
    if (mark < 0 || std::find(kids.begin(), kids.end(), below[i]) == kids.end()) {
      kids.push_back(below[i]);
    }
    mark = id;
  }
  return here;
}

void Hierarchy::AddRoot() {
  const int top = num_levels_ - 1;
  root_ = static_cast<int>(nodes_.size());
  nodes_.push_back(HNode{top, {}, {}, "cluster"});
  by_level_[top].push_back(root_);
  for (int id : by_level_[top - 1]) nodes_[root_].children.push_back(id);
}

void Hierarchy::LinkParents() {
  parent_.assign(nodes_.size(), -1);
  for (size_t id = 0; id < nodes_.size(); ++id) {
    for (int c : nodes_[id].children) parent_[c] = static_cast<int>(id);
  }
}

void Hierarchy::MeasureHosts(const Topology& topo) {
  host_of_.assign(topo.num_nodes(), -1);
  single_node_.assign(hosts_.size(), -1);
  single_first_gpu_.assign(hosts_.size(), 0);
  one_island_nodes_.assign(hosts_.size(), 1);
  host_gpus_.assign(hosts_.size(), 0);
  host_spares_.assign(hosts_.size(), 0);
  for (int h : hosts_) {
    for (NodeId n : nodes_[h].nodes) {
      host_of_[n] = h;
      host_gpus_[h] += static_cast<int>(topo.nodes()[n].gpus.size());
      if (topo.nodes()[n].domains.size() != 1) one_island_nodes_[h] = 0;
    }
    max_host_gpus_ = std::max(max_host_gpus_, host_gpus_[h]);
    max_host_nodes_ = std::max(max_host_nodes_, static_cast<int>(nodes_[h].nodes.size()));
    NodeId first = nodes_[h].nodes[0];
    if (nodes_[h].nodes.size() == 1 && topo.nodes()[first].domains.size() == 1) {
      single_node_[h] = first;
      single_first_gpu_[h] = topo.nodes()[first].gpus.front();
    }
    if (nodes_[h].nodes.size() > 1) {
      // A multi-node domain's nodes have that one domain.
      const NvlDomain& domain = topo.domains()[topo.nodes()[first].domains[0]];
      if (domain.multi_node) host_spares_[h] = domain.spares;
    }
  }
}

void Hierarchy::CheckHostOrder() {
  // Depth-first from the root, children in order (an explicit stack, last child pushed first).
  hosts_in_tree_order_ = true;
  int next_host = 0;
  std::vector<int> stack = {root_};
  while (!stack.empty() && hosts_in_tree_order_) {
    int id = stack.back();
    stack.pop_back();
    if (nodes_[id].level == 0) {
      hosts_in_tree_order_ = id == hosts_[next_host++];
      continue;
    }
    const std::vector<int>& kids = nodes_[id].children;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }
}

// ---------------------------------------------------------------------------------------
// Capacity indexes.

struct CapacityIndex {
  // What it counts: the chunk rule, exclusive, and the set of allowed nodes
  // (Request::allowed_set), for one hierarchy.
  const Hierarchy* hierarchy = nullptr;
  ChunkRule rule;
  bool exclusive = false;
  int allowed_set = Request::kListed;
  uint64_t synced = 0;  // the state's journal position it reflects

  int max_cap = 0;             // no host can give more chunks (histogram bins 0..max_cap)
  std::vector<int> cap;        // per HNode: chunks it can give
  std::vector<int> free;       // per HNode: usable free GPUs
  std::vector<int> largest;    // per HNode: usable free GPUs of its largest free domain
  std::vector<int> max_host;   // per HNode: the largest capacity of a host under it
  std::vector<int> histogram;  // per internal HNode (id >= hosts): hosts under it per capacity

  bool Matches(const Hierarchy& h, const ChunkRule& r, const Request& request) const {
    return hierarchy == &h && rule.size == r.size && rule.per_node == r.per_node &&
           rule.group == r.group && rule.compact == r.compact && rule.nodes == r.nodes &&
           rule.one_per_host == r.one_per_host && rule.keep_spares == r.keep_spares &&
           exclusive == request.exclusive && allowed_set == request.allowed_set;
  }
  int* Bins(int id) {
    size_t hosts = hierarchy->hosts().size();
    return histogram.data() + (static_cast<size_t>(id) - hosts) * (max_cap + 1);
  }
  const int* Bins(int id) const { return const_cast<CapacityIndex*>(this)->Bins(id); }
};

namespace {

// One host's part of an index.
struct HostCount {
  int cap = 0;
  int free = 0;
  int largest = 0;
  bool operator==(const HostCount& o) const {
    return cap == o.cap && free == o.free && largest == o.largest;
  }
};

}  // namespace

namespace {

// One more whole free node of a domain that keeps spares: true while room is left. Room stays
// at 0 once used up (it never goes below: -1 means no spares are kept at all; a room that
// went to -1 let every node after the spares be used, a found bug).
bool TakeRoom(int* room) {
  if (*room <= 0) return false;
  --*room;
  return true;
}

}  // namespace

int SpareRoom(const ClusterState& state, absl::Span<const NodeId> nodes, int spares) {
  if (nodes.size() < 2 || spares <= 0) return -1;
  int held = 0;
  for (NodeId n : nodes) held += state.node_all_free(n) ? 0 : 1;
  return std::max(0, static_cast<int>(nodes.size()) - spares - held);
}

namespace {

// Counts only (ClusterState keeps free GPUs per node and per domain): one step per node and
// island, with no list of GPUs; a host's GPUs are listed when a generator takes from it.
inline HostCount CountHost(const Hierarchy& h, const ClusterState& state, const Request& request,
                           const ChunkRule& rule, int host, std::vector<int>* counts) {
  if (NodeId n = h.single_node(host); n >= 0) {
    // One node, one island (most hosts): what the general count below gives for it.
    HostCount out;
    if (!request.allowed_node[n] || (request.exclusive && !state.node_all_free(n))) return out;
    int free = state.free_on_node(n);
    out.free = free;
    out.largest = free;
    if (rule.per_node) {
      int size = rule.group > 1 ? (free / rule.group >= rule.size / rule.group
                                       ? rule.size / rule.group * rule.group
                                       : 0)
                                : free;
      out.cap = size >= rule.size && rule.nodes == 1 ? 1 : 0;
    } else {
      out.cap = free / rule.size;
    }
    return out;
  }
  const Topology& topo = state.topology();
  const auto& nodes = h.nodes()[host].nodes;
  HostCount out;
  int room = rule.keep_spares ? SpareRoom(state, nodes, h.host_spares(host)) : -1;
  auto usable = [&](NodeId n) {
    bool yes = request.allowed_node[n] && (!request.exclusive || state.node_all_free(n));
    if (yes && room >= 0 && state.node_all_free(n)) yes = TakeRoom(&room);  // else a spare
    return yes;
  };
  if (!rule.per_node && nodes.size() > 1) {
    // A multi-node domain (each of its nodes has that one domain) in GPUs mode: what the
    // general count below gives for it, from the nodes' free counts alone (the trays of a
    // rack: no node's record is read).
    if (room < 0 && !request.exclusive) {
      // No spares kept, not exclusive: every allowed node's free GPUs. The two tests are
      // out of the loop, and no node is asked whether it is wholly free (GCC read that
      // before testing the room): 0.16 M of a GB200 1,024-GPU decision's 0.92 M under
      // firstfit at 131,072 GPUs, even with node_all_free reading num_gpus_on.
      for (NodeId n : nodes) {
        if (request.allowed_node[n]) out.free += state.free_on_node(n);
      }
    } else {
      for (NodeId n : nodes) {
        if (usable(n)) out.free += state.free_on_node(n);
      }
    }
    out.largest = out.free;
    out.cap = out.free / rule.size;
    if (rule.one_per_host) out.cap = std::min(out.cap, 1);
    return out;
  }
  counts->clear();
  int sum = 0;
  for (NodeId n : nodes) {
    if (!usable(n)) {
      if (rule.per_node) counts->push_back(0);
      continue;
    }
    const Node& node = topo.nodes()[n];
    int on_node = 0, groups = 0;
    for (DomainId d : node.domains) {
      // A multi-node domain's node has that one domain: its share is the node's.
      int free = node.domains.size() == 1 ? state.free_on_node(n) : state.free_in_domain(d);
      on_node += free;
      if (rule.group > 1) groups += free / rule.group;
      if (!rule.per_node) counts->push_back(free);
      if (nodes.size() == 1) out.largest = std::max(out.largest, free);
    }
    out.free += on_node;
    if (rule.per_node) {
      // NodePool's size: whole groups inside islands (all or nothing), else every free GPU.
      int needed = rule.size / rule.group;
      counts->push_back(rule.group > 1 ? (groups >= needed ? needed * rule.group : 0) : on_node);
    }
  }
  // A multi-node domain: its usable free GPUs are those of its usable nodes.
  if (nodes.size() > 1) out.largest = out.free;
  for (int n : *counts) {
    sum += n;
    out.cap += rule.per_node ? (n >= rule.size ? 1 : 0) : n / rule.size;
  }
  // Inside a multi-node NVLink domain a chunk may span nodes; in nodes mode, a unit of
  // rule.nodes nodes (a segment) stays inside it.
  if (!rule.per_node && nodes.size() > 1) out.cap = sum / rule.size;
  if (rule.per_node) out.cap /= rule.nodes;
  if (rule.one_per_host) out.cap = std::min(out.cap, 1);
  return out;
}

// The index of a whole state, in one pass over the hosts.
std::shared_ptr<CapacityIndex> BuildIndex(const Hierarchy& h, const ClusterState& state,
                                          const Request& request, const ChunkRule& rule) {
  auto index = std::make_shared<CapacityIndex>();
  index->hierarchy = &h;
  index->rule = rule;
  index->exclusive = request.exclusive;
  index->allowed_set = request.allowed_set;
  index->synced = state.journal_end();
  size_t num = h.nodes().size();
  size_t hosts = h.hosts().size();
  // A host's capacity is at most its GPUs over the chunk size (one chunk per node in nodes
  // mode).
  index->max_cap = rule.per_node ? h.max_host_nodes() : h.max_host_gpus() / std::max(rule.size, 1);
  index->cap.assign(num, 0);
  index->free.assign(num, 0);
  index->largest.assign(num, 0);
  index->max_host.assign(num, 0);
  index->histogram.assign((num - hosts) * (index->max_cap + 1), 0);
  std::vector<int> counts;
  for (size_t host = 0; host < hosts; ++host) {
    HostCount c = CountHost(h, state, request, rule, static_cast<int>(host), &counts);
    index->cap[host] = c.cap;
    index->free[host] = c.free;
    index->largest[host] = c.largest;
    index->max_host[host] = c.cap;
  }
  // Bottom-up: HNodes are stored children first.
  for (size_t id = hosts; id < num; ++id) {
    int* bins = index->Bins(static_cast<int>(id));
    for (int c : h.nodes()[id].children) {
      index->cap[id] += index->cap[c];
      index->free[id] += index->free[c];
      index->largest[id] = std::max(index->largest[id], index->largest[c]);
      index->max_host[id] = std::max(index->max_host[id], index->max_host[c]);
      if (static_cast<size_t>(c) < hosts) {
        ++bins[index->cap[c]];
      } else {
        const int* below = index->Bins(c);
        for (int b = 0; b <= index->max_cap; ++b) bins[b] += below[b];
      }
    }
  }
  return index;
}

// Brings one host's counts up to date and carries the change to every HNode above it.
void UpdateHost(const Hierarchy& h, const ClusterState& state, const Request& request, int host,
                std::vector<int>* counts, CapacityIndex* index) {
  HostCount now = CountHost(h, state, request, index->rule, host, counts);
  HostCount was{index->cap[host], index->free[host], index->largest[host]};
  if (now == was) return;
  index->cap[host] = now.cap;
  index->free[host] = now.free;
  index->largest[host] = now.largest;
  index->max_host[host] = now.cap;
  // The changed child's largest free domain before and after, level by level.
  int child_was = was.largest, child_now = now.largest;
  for (int id = h.parent(host); id >= 0; id = h.parent(id)) {
    index->cap[id] += now.cap - was.cap;
    index->free[id] += now.free - was.free;
    int* bins = index->Bins(id);
    --bins[was.cap];
    ++bins[now.cap];
    int& top = index->max_host[id];
    top = std::max(top, now.cap);
    while (top > 0 && bins[top] == 0) --top;
    // Grows at once; shrinks only when the changed child held it.
    int& largest = index->largest[id];
    int before = largest;
    if (child_now > largest) {
      largest = child_now;
    } else if (child_now < child_was && child_was == largest) {
      // Nothing below holds more than it did: the first child that still holds as much as
      // the changed one held (most often one, among many free hosts) ends the search.
      largest = 0;
      for (int c : h.nodes()[id].children) {
        largest = std::max(largest, index->largest[c]);
        if (largest == child_was) break;
      }
    }
    child_was = before;
    child_now = largest;
  }
}

// The index for `request` under `rule`: built afresh, or for a request whose allowed nodes
// are a whole GPU model's (or every node) the one kept with the state, brought up to date.
class IndexCache final : public ClusterState::Derived {
 public:
  static constexpr size_t kMaxEntries = 16;
  std::vector<std::shared_ptr<CapacityIndex>> entries;  // most recently used last
};

std::shared_ptr<const CapacityIndex> AcquireIndex(const Hierarchy& h, const ClusterState& state,
                                                  const Request& request, const ChunkRule& rule) {
  if (request.allowed_set == Request::kListed) return BuildIndex(h, state, request, rule);
  std::lock_guard<std::mutex> lock(state.derived_mutex());
  // The slot holds an IndexCache or nothing; the type is checked by its id (a dynamic_cast
  // was 5% of a congested GB200 replay, two per decision).
  ClusterState::Derived* slot = state.derived();
  if (slot == nullptr || typeid(*slot) != typeid(IndexCache)) {
    state.set_derived(std::make_unique<IndexCache>());
    slot = state.derived();
  }
  auto& entries = static_cast<IndexCache*>(slot)->entries;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i]->Matches(h, rule, request)) continue;
    // Moved to the end (most recently used) by swaps: no reference count changes hands.
    std::rotate(entries.begin() + static_cast<std::ptrdiff_t>(i),
                entries.begin() + static_cast<std::ptrdiff_t>(i) + 1, entries.end());
    std::shared_ptr<CapacityIndex>& index = entries.back();
    if (index->synced < state.journal_begin()) {
      index = BuildIndex(h, state, request, rule);
    } else if (index->synced < state.journal_end()) {
      // Copy on write: a SearchState of another thread may still read it.
      if (index.use_count() > 1) index = std::make_shared<CapacityIndex>(*index);
      std::vector<int> touched;
      touched.reserve(static_cast<size_t>(state.journal_end() - index->synced));
      for (uint64_t p = index->synced; p < state.journal_end(); ++p) {
        touched.push_back(h.host_of(state.journal_at(p)));
      }
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      std::vector<int> counts;
      for (int host : touched) UpdateHost(h, state, request, host, &counts, index.get());
      index->synced = state.journal_end();
    }
    return index;
  }
  std::shared_ptr<CapacityIndex> index = BuildIndex(h, state, request, rule);
  if (entries.size() >= IndexCache::kMaxEntries) entries.erase(entries.begin());
  entries.push_back(index);
  return index;
}

// The pool of `listed` with the fewest GPUs left that still holds `need` (best fit; the first
// of equals), or -1 when none does.
int TightestPool(const std::vector<int>& listed, const int* left, int need) {
  int best = -1;
  for (int p : listed) {
    if (left[p] >= need && (best < 0 || left[p] < left[best])) best = p;
  }
  return best;
}

// A number per SearchState, never reused: whose a slot of TakeFromHost's table is.
uint64_t NextStateId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

SearchState::SearchState(const Hierarchy& h, const ClusterState& state, const Request& request,
                         ChunkRule rule)
    : hierarchy_(h),
      state_(state),
      request_(request),
      rule_(rule),
      num_hosts_(static_cast<int>(h.hosts().size())),
      id_(NextStateId()),
      index_(AcquireIndex(h, state, request, rule)),
      cap_(index_->cap.data()) {}

int SearchState::max_host_capacity(int hnode) const { return index_->max_host[hnode]; }
int SearchState::largest_free_domain() const { return index_->largest[hierarchy_.root()]; }
int SearchState::usable_free() const { return index_->free[hierarchy_.root()]; }

void SearchState::Pools(int host, FlatPools* out) const {
  const Topology& topo = state_.topology();
  out->gpus.clear();
  out->begin.assign(1, 0);
  const auto& nodes = hierarchy_.nodes()[host].nodes;
  int room = rule_.keep_spares ? SpareRoom(state_, nodes, hierarchy_.host_spares(host)) : -1;
  // Nodes mode: a node's islands, reused from node to node (its inner lists keep their room).
  thread_local std::vector<std::vector<GpuId>> islands;
  for (NodeId n : nodes) {
    const Node& node = topo.nodes()[n];
    // The node's free usable GPUs per island, ascending (none on a node kept as a spare).
    bool usable = Usable(n);
    if (usable && room >= 0 && state_.node_all_free(n)) usable = TakeRoom(&room);
    if (!rule_.per_node) {
      // Its islands as pools, one after another: node.gpus is ascending, so each island's
      // GPUs are in a pass over them.
      for (DomainId d : node.domains) {
        if (usable) {
          for (GpuId g : node.gpus) {
            if (!state_.busy(g) && topo.gpus()[g].domain == d) out->gpus.push_back(g);
          }
        }
        out->begin.push_back(static_cast<int>(out->gpus.size()));
      }
      continue;
    }
    islands.resize(node.domains.size());
    for (std::vector<GpuId>& island : islands) island.clear();
    if (usable) {
      for (GpuId g : node.gpus) {
        if (state_.busy(g)) continue;
        DomainId d = topo.gpus()[g].domain;
        size_t i = std::find(node.domains.begin(), node.domains.end(), d) - node.domains.begin();
        islands[i].push_back(g);
      }
    }
    std::vector<GpuId> pool = NodePool(islands);
    out->gpus.insert(out->gpus.end(), pool.begin(), pool.end());
    out->begin.push_back(static_cast<int>(out->gpus.size()));
  }
}

std::vector<GpuId> SearchState::NodePool(const std::vector<std::vector<GpuId>>& islands) const {
  std::vector<GpuId> out;
  // An island that holds the whole share: the one with the least room that does (best fit,
  // so that larger islands stay whole), its GPUs first. The share's traffic (its DP
  // all-reduce, between its TP groups or a TP group the share is part of) then stays on
  // NVLink.
  size_t fit = islands.size();
  for (size_t i = 0; i < islands.size(); ++i) {
    if (islands[i].size() >= static_cast<size_t>(rule_.size) &&
        (fit == islands.size() || islands[i].size() < islands[fit].size())) {
      fit = i;
    }
  }
  if (fit < islands.size()) {
    out = islands[fit];
    for (size_t i = 0; i < islands.size(); ++i) {
      if (i != fit) out.insert(out.end(), islands[i].begin(), islands[i].end());
    }
    return out;
  }
  if (rule_.group > 1) {
    // Whole groups, each from the island with the least room that still holds one (best fit,
    // so that larger islands stay whole); nothing when the node cannot give them all.
    std::vector<size_t> used(islands.size(), 0);
    auto left = [&](size_t i) { return islands[i].size() - used[i]; };
    for (int taken = 0; taken + rule_.group <= rule_.size; taken += rule_.group) {
      size_t best = islands.size();
      for (size_t i = 0; i < islands.size(); ++i) {
        if (left(i) >= static_cast<size_t>(rule_.group) &&
            (best == islands.size() || left(i) < left(best))) {
          best = i;
        }
      }
      if (best == islands.size()) return {};
      out.insert(out.end(), islands[best].begin() + Diff(used[best]),
                 islands[best].begin() + Diff(used[best] + rule_.group));
      used[best] += rule_.group;
    }
    return out;
  }
  std::vector<size_t> order(islands.size());
  std::iota(order.begin(), order.end(), 0);
  if (rule_.compact) {
    // The roomiest islands first: the chunk spans as few of them as it can.
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return islands[a].size() > islands[b].size(); });
  }
  for (size_t i : order) out.insert(out.end(), islands[i].begin(), islands[i].end());
  if (!rule_.compact) std::sort(out.begin(), out.end());
  return out;
}

void SearchState::TakeFromHost(int host, int k, std::vector<GpuId>* out) const {
  if (k <= 0) return;
  if (NodeId single = hierarchy_.single_node(host); !rule_.per_node && single >= 0) {
    // One node, one island: its one pool gives its free GPUs in index order. This is the
    // one-node case of the count path below (same GPUs; a single node keeps no spare, its
    // SpareRoom is -1), kept apart because most hosts are one node and it allocates nothing.
    // Its GPUs from the hierarchy's lists: no host or node record is read.
    if (!Usable(single)) return;
    size_t want = out->size() + static_cast<size_t>(k) * rule_.size;
    for (GpuId g : hierarchy_.single_node_gpus(host)) {
      if (out->size() >= want) break;
      if (!state_.busy(g)) out->push_back(g);
    }
    return;
  }
  // A host's chunks are taken one after another, each from what the ones before left: the
  // first k of a longer listing are the listing of k. So one listing per host, the longest
  // asked for so far, serves every smaller k (a candidate of fewer chunks from the same rack).
  // Its entry in taken_ is found through a table per thread, one slot per host stamped with
  // the state that wrote it: hashing the host was 1.4% of a GB200 1,024-GPU decision, and a
  // table per state would be cleared per decision (58 KB at 1M GPUs). A slot another state
  // wrote since (two states alive in one thread) only makes the listing be taken again.
  struct Slot {
    uint64_t owner = 0;
    int entry = -1;
  };
  thread_local std::vector<Slot> slots;
  if (slots.size() < static_cast<size_t>(num_hosts_)) slots.resize(static_cast<size_t>(num_hosts_));
  Slot& slot = slots[static_cast<size_t>(host)];
  bool fresh = slot.owner != id_;
  if (fresh) {
    slot = {id_, static_cast<int>(taken_.size())};
    taken_.emplace_back();
  }
  Taken& memo = taken_[static_cast<size_t>(slot.entry)];
  // A node of several islands gives k chunks from one island when one holds them all, so its
  // listing of fewer chunks is not a prefix of a longer one: listed again unless the count is
  // the same. (Such hosts are one node of a few islands: cheap to list.)
  bool prefixes = rule_.per_node || hierarchy_.one_island_nodes(host);
  if (fresh || memo.chunks < k || (!prefixes && memo.chunks != k)) {
    size_t start = out->size();
    TakeFromHostUncached(host, k, out);
    memo = {taken_gpus_.size(), out->size() - start, k};
    taken_gpus_.insert(taken_gpus_.end(), out->begin() + Diff(start), out->end());
    return;
  }
  size_t per_chunk = static_cast<size_t>(rule_.size) * (rule_.per_node ? rule_.nodes : 1);
  size_t length = std::min(memo.length, per_chunk * static_cast<size_t>(k));
  auto first = taken_gpus_.begin() + Diff(memo.start);
  out->insert(out->end(), first, first + Diff(length));
}

void SearchState::TakeFromHostUncached(int host, int k, std::vector<GpuId>* out) const {
  if (!rule_.per_node && hierarchy_.one_island_nodes(host)) {
    TakeFromTrays(host, k, out);
    return;
  }
  // The pools and what each has left.
  thread_local FlatPools pools;
  thread_local std::vector<int> left_v, listed;
  Pools(host, &pools);
  left_v.resize(pools.size());
  listed.clear();
  int most = 0;  // the most any pool has: no best fit is looked for when no pool holds a chunk
  for (int p = 0; p < pools.size(); ++p) {
    left_v[p] = pools.count(p);
    most = std::max(most, left_v[p]);
    if (left_v[p] > 0) listed.push_back(p);
  }
  // Every chunk's GPUs are written in place: `out` grows once by all this call writes (k
  // chunks, each of rule_.nodes shares in nodes mode) and is cut back to what was written
  // when capacity said otherwise (never happens). A resize per chunk was a call each.
  size_t written = out->size();
  const int shares = rule_.per_node && rule_.nodes > 1 ? rule_.nodes : 1;
  out->resize(written + static_cast<size_t>(k) * shares * rule_.size);
  GpuId* to = out->data();
  auto take = [&](int p, int n) {
    const GpuId* g = pools.gpus.data() + pools.begin[p] + (pools.count(p) - left_v[p]);
    std::copy(g, g + n, to + written);
    written += static_cast<size_t>(n);
    left_v[p] -= n;
  };
  if (!rule_.per_node && k > 1) {
    // One island that holds every chunk gives them all, the one with the least room that
    // does (best fit): the job's traffic between its chunks (its DP all-reduce, or its TP
    // groups' DP) then stays on NVLink, where chunk by chunk would fill the fullest island
    // first and spill over PCIe to another (a plain --gpus=4 on islands with 3 and 4 free).
    if (int fit = TightestPool(listed, left_v.data(), k * rule_.size); fit >= 0) {
      take(fit, k * rule_.size);
      out->resize(written);
      return;
    }
  }
  TakeChunks(k, most, left_v.data(), listed, take);
  out->resize(written);
}

void SearchState::TakeFromTrays(int host, int k, std::vector<GpuId>* out) const {
  // Each node one island (the trays of a rack): the pools are the nodes, counted without
  // listing their GPUs, and a chunk's GPUs are read from the node as they are taken (`next`:
  // where the node's next free GPU may be). The host's node list is read through one
  // pointer: an inline vector's every access asks where it keeps its elements.
  const auto& list = hierarchy_.nodes()[host].nodes;
  const NodeId* nodes = list.data();
  const int n_nodes = static_cast<int>(list.size());
  const Topology& topo = state_.topology();
  thread_local std::vector<int> left_v, next, listed;
  left_v.resize(static_cast<size_t>(n_nodes));
  next.resize(static_cast<size_t>(n_nodes));
  listed.clear();
  int* left = left_v.data();
  int* from = next.data();
  int room = rule_.keep_spares ? SpareRoom(state_, list, hierarchy_.host_spares(host)) : -1;
  int most = 0;  // the most any node has: no best fit is looked for when none holds a chunk
  for (int i = 0; i < n_nodes; ++i) {
    // As Pools lists them: nothing on a node kept as a spare. A node without free GPUs is
    // not listed, and asks nothing more: it is not wholly free, so it takes no spare's room.
    NodeId n = nodes[i];
    int free = state_.free_on_node(n);
    left[i] = 0;
    if (free == 0) continue;
    bool usable = Usable(n);
    if (usable && room >= 0 && state_.node_all_free(n)) usable = TakeRoom(&room);
    if (!usable) continue;
    left[i] = free;
    most = std::max(most, free);
    from[i] = 0;
    listed.push_back(i);
  }
  // Written in place, as above: k chunks of rule_.size GPUs (not nodes mode).
  const size_t written = out->size();
  out->resize(written + static_cast<size_t>(k) * rule_.size);
  GpuId* const begin = out->data() + written;
  GpuId* to = begin;
  auto take = [&](int p, int n) {
    // The node's next n free GPUs: its GPUs are the consecutive ids from its first.
    const GpuId first = topo.nodes()[nodes[p]].gpus.front();
    GpuId g = first + from[p];
    for (int taken = 0; taken < n; ++g) {
      if (!state_.busy(g)) {
        *to++ = g;
        ++taken;
      }
    }
    from[p] = g - first;
    left[p] -= n;
  };
  TakeChunks(k, most, left, listed, take);
  out->resize(written + static_cast<size_t>(to - begin));
}

template <typename Take>
void SearchState::TakeChunks(int k, int most, int* left_of, const std::vector<int>& listed,
                             Take&& take) const {
  auto left = [&](int p) { return left_of[p]; };
  if (rule_.per_node && rule_.nodes > 1) {
    // Units of rule_.nodes nodes: each node's share from the node with the fewest free GPUs
    // that still holds it (capacity counted them), the unit's nodes one after another.
    for (int node = 0; node < k * rule_.nodes; ++node) {
      int best = TightestPool(listed, left_of, rule_.size);
      if (best < 0) return;  // capacity said otherwise; never happens
      take(best, rule_.size);
      left_of[best] = 0;  // one share per node
    }
    return;
  }
  int chunk = 0;
  for (; chunk < k && most >= rule_.size; ++chunk) {
    // Best fit: the pool with the fewest free GPUs that still holds a whole chunk.
    int best = TightestPool(listed, left_of, rule_.size);
    if (best < 0) break;
    take(best, rule_.size);
    if (rule_.per_node) left_of[best] = 0;  // one chunk per node
  }
  if (chunk == k) return;
  // Only a multi-node domain gets here, and stays: pools only lose GPUs, so none holds a
  // whole chunk again. Each chunk spans pools, the fullest first (the first of equals): the
  // pools with GPUs left kept in that order, a pool moved back after it gave some. The
  // order is built by insertion in one pass in index order (a pool goes before those with
  // fewer GPUs left): a host has a few tens of pools.
  thread_local std::vector<int> order;
  order.resize(listed.size());
  size_t in_order = 0;
  for (int p : listed) {
    if (left(p) <= 0) continue;
    size_t i = in_order++;
    for (; i > 0 && left(order[i - 1]) < left(p); --i) order[i] = order[i - 1];
    order[i] = p;
  }
  order.resize(in_order);
  auto before = [&](int a, int b) { return left(a) != left(b) ? left(a) > left(b) : a < b; };
  size_t head = 0;  // order[head..] have GPUs left
  for (; chunk < k; ++chunk) {
    int need = rule_.size;
    while (need > 0) {
      if (head == order.size()) return;  // capacity said otherwise; never happens
      int fullest = order[head];
      int n = std::min(need, left(fullest));
      take(fullest, n);
      need -= n;
      if (left(fullest) == 0) {
        ++head;
        continue;
      }
      for (size_t i = head; i + 1 < order.size() && before(order[i + 1], fullest); ++i) {
        std::swap(order[i], order[i + 1]);
      }
    }
  }
}

int SearchState::BestFitStart(int hnode, int k) const {
  while (hnode >= num_hosts_) {
    int tightest = -1;
    for (int kid : hierarchy_.nodes()[hnode].children) {
      int c = index_->cap[kid];
      if (c >= k && (tightest < 0 || c < index_->cap[tightest])) tightest = kid;
    }
    if (tightest < 0) break;
    hnode = tightest;
  }
  return hnode;
}

void SearchState::TakeBestFit(int hnode, int k, std::vector<GpuId>* out, HostChunks* taken) const {
  if (k <= 0) return;
  // The child that holds what is left with the least to spare (the first of equals), down
  // to where none does (the usual case: one child holds the job, no order needed); there
  // the fullest (the first of equals) gives all it has. With the children in order of room,
  // most first (ties by position), the fullest are taken from the front and the best fit is
  // the first of the smallest room that still holds the rest.
  hnode = BestFitStart(hnode, k);
  if (hnode < num_hosts_) {
    TakeFromHost(hnode, k, out);
    if (taken != nullptr) taken->push_back({hnode, k});
    return;
  }
  const std::vector<int>& kids = hierarchy_.nodes()[hnode].children;
  auto room = [&](int i) { return index_->cap[kids[i]]; };
  int remaining = k;
  // Most room first, ties by position (a stable order), without the buffer stable_sort
  // allocates; on the stack for the usual tens of children. Each child is one key, less room
  // above its position, so that the sort compares plain integers (room is never negative).
  absl::InlinedVector<uint64_t, 64> keys(kids.size());
  for (size_t i = 0; i < kids.size(); ++i) {
    uint32_t less_room = static_cast<uint32_t>(INT32_MAX - std::max(room(static_cast<int>(i)), 0));
    keys[i] = uint64_t{less_room} << 32 | static_cast<uint32_t>(i);
  }
  std::sort(keys.begin(), keys.end());
  absl::InlinedVector<int, 64> order(kids.size());
  for (size_t i = 0; i < keys.size(); ++i) order[i] = static_cast<int>(keys[i] & 0xffffffffu);
  for (size_t p = 0; p < order.size() && remaining > 0; ++p) {
    int fullest = room(order[p]);
    if (fullest <= 0) return;  // capacity said otherwise; never happens
    if (fullest >= remaining) {
      // The tightest fit: the first child whose room is the smallest still >= remaining.
      size_t q = p;
      while (q + 1 < order.size() && room(order[q + 1]) >= remaining) ++q;
      int smallest = room(order[q]);
      while (q > p && room(order[q - 1]) == smallest) --q;
      TakeBestFit(kids[order[q]], remaining, out, taken);
      return;
    }
    TakeBestFit(kids[order[p]], fullest, out, taken);
    remaining -= fullest;
  }
}

void SearchState::RoomiestUnder(int id, int threshold, int* at_threshold, HNodeList* out) const {
  int top = index_->max_host[id];
  if (top < threshold || (top == threshold && *at_threshold == 0)) return;
  if (id < num_hosts_) {
    if (index_->cap[id] > threshold) {
      out->push_back(id);
    } else {  // == threshold, and some still wanted
      out->push_back(id);
      --*at_threshold;
    }
    return;
  }
  for (int c : hierarchy_.nodes()[id].children) RoomiestUnder(c, threshold, at_threshold, out);
}

int SearchState::TakeBalanced(int hnode, int k, std::vector<GpuId>* out,
                              const HostChunks* unless) const {
  if (k <= 0) return 0;
  // The fewest hosts that hold k: the roomiest first (ties by index).
  HNodeList hosts;
  if (hnode >= num_hosts_ && hierarchy_.hosts_in_tree_order()) {
    // From the histogram: every host with more room than a threshold, and the first ones
    // (in index order) with just that room, as many as complete k.
    const int* bins = index_->Bins(hnode);
    int threshold = std::max(index_->max_cap, 1);
    int64_t held = 0;
    for (; threshold > 1; --threshold) {
      if (held + int64_t{bins[threshold]} * threshold >= k) break;
      held += int64_t{bins[threshold]} * threshold;
    }
    int at_threshold = static_cast<int>((k - held + threshold - 1) / threshold);
    int64_t listed = at_threshold;  // the hosts RoomiestUnder lists, for one allocation
    for (int c = threshold + 1; c <= index_->max_cap; ++c) listed += bins[c];
    hosts.reserve(static_cast<size_t>(listed));
    RoomiestUnder(hnode, threshold, &at_threshold, &hosts);
    std::sort(hosts.begin(), hosts.end(), [&](int a, int b) {
      return index_->cap[a] != index_->cap[b] ? index_->cap[a] > index_->cap[b] : a < b;
    });
  } else {
    // The hosts under hnode with room (children are visited by an explicit stack).
    HNodeList stack = {hnode};
    while (!stack.empty()) {
      int id = stack.back();
      stack.pop_back();
      if (index_->cap[id] <= 0) continue;
      if (id < num_hosts_) {
        hosts.push_back(id);
      } else {
        for (int c : hierarchy_.nodes()[id].children) stack.push_back(c);
      }
    }
    std::sort(hosts.begin(), hosts.end(), [&](int a, int b) {
      return index_->cap[a] != index_->cap[b] ? index_->cap[a] > index_->cap[b] : a < b;
    });
    size_t m = 0;
    for (int held = 0; m < hosts.size() && held < k; ++m) held += index_->cap[hosts[m]];
    hosts.resize(m);
  }
  // Water-fill, smallest room first: a host gives all it has while that is no more than an
  // even share of what is left; the rest share evenly (the first ones one more).
  HostChunks count;  // (host, chunks), none of 0
  int left = k;
  for (size_t i = hosts.size(); i-- > 0;) {
    int hosts_left = static_cast<int>(i + 1);
    int room = index_->cap[hosts[i]];
    if (static_cast<int64_t>(room) * hosts_left <= left) {
      if (room > 0) count.push_back({hosts[i], room});
      left -= room;
      continue;
    }
    for (size_t j = i + 1; j-- > 0;) {
      int nth = static_cast<int>(i - j);  // position among the hosts left, smallest room first
      int n = left / hosts_left + (nth < left % hosts_left ? 1 : 0);
      if (n > 0) count.push_back({hosts[j], n});
    }
    break;  // the rest of the job is spread over the remaining hosts
  }
  std::sort(count.begin(), count.end());
  if (unless != nullptr && count == *unless) return 0;
  out->reserve(out->size() + static_cast<size_t>(k) * rule_.size);
  for (const auto& [host, n] : count) TakeFromHost(host, n, out);
  return static_cast<int>(hosts.size());
}

void SearchState::TakeInOrder(const std::vector<int>& host_order, int k,
                              std::vector<GpuId>* out) const {
  for (int host : host_order) {
    if (k <= 0) break;
    int take = std::min(k, index_->cap[host]);
    TakeFromHost(host, take, out);
    k -= take;
  }
}

int SearchState::best_capacity_at_level(int level) const {
  if (level == 0) return index_->max_host[hierarchy_.root()];
  int best = 0;
  for (int id : hierarchy_.at_level(level)) best = std::max(best, index_->cap[id]);
  return best;
}

std::string SearchState::label_of_best_at_level(int level) const {
  const std::vector<int>& all = hierarchy_.at_level(level);
  if (all.empty()) return "";
  if (level == 0 && hierarchy_.hosts_in_tree_order()) {
    // The first host with the largest capacity: down the first child that holds one.
    HNodeList found;
    HostsWithCapacity(hierarchy_.root(), best_capacity_at_level(0), 1, &found);
    if (!found.empty()) return hierarchy_.nodes()[found[0]].label;
  }
  int best = -1;
  for (int id : all) {
    if (best < 0 || index_->cap[id] > index_->cap[best]) best = id;
  }
  return hierarchy_.nodes()[best].label;
}

void SearchState::HostsWithCapacity(int id, int cap, size_t limit, HNodeList* out) const {
  if (out->size() >= limit) return;
  if (id < num_hosts_) {
    if (index_->cap[id] == cap) out->push_back(id);
    return;
  }
  if (index_->Bins(id)[cap] == 0) return;
  for (int c : hierarchy_.nodes()[id].children) {
    HostsWithCapacity(c, cap, limit, out);
    if (out->size() >= limit) return;
  }
}

HNodeList SearchState::TightestAtLevel(int level, int k, int limit) const {
  HNodeList fits;
  if (limit <= 0) return fits;
  if (level == 0 && hierarchy_.hosts_in_tree_order()) {
    // Capacity by capacity from k up, each in index order: the histograms skip the parts
    // of the fabric without such a host.
    const int* root_bins = index_->Bins(hierarchy_.root());
    for (int cap = std::max(k, 0); cap <= index_->max_cap; ++cap) {
      if (root_bins[cap] > 0) HostsWithCapacity(hierarchy_.root(), cap, limit, &fits);
      if (fits.size() >= static_cast<size_t>(limit)) break;
    }
    return fits;
  }
  // The least room first, ties in level order: one key per part, room above its position,
  // so that only the `limit` tightest are put in order (stable_sort sorted them all, in a
  // buffer it allocated, for a handful kept). Room is never negative; a key holds it unsigned.
  const std::vector<int>& all = hierarchy_.at_level(level);
  absl::InlinedVector<uint64_t, 64> keys;
  for (size_t i = 0; i < all.size(); ++i) {
    int room = index_->cap[all[i]];
    if (room >= std::max(k, 0)) keys.push_back(uint64_t{static_cast<uint32_t>(room)} << 32 | i);
  }
  auto kept = keys.begin() + std::min(keys.size(), static_cast<size_t>(limit));
  if (kept != keys.end()) std::nth_element(keys.begin(), kept, keys.end());
  std::sort(keys.begin(), kept);
  for (auto it = keys.begin(); it != kept; ++it) fits.push_back(all[*it & 0xffffffffu]);
  return fits;
}

void SearchState::FirstFitUnder(int id, int* k, std::vector<GpuId>* out) const {
  if (*k <= 0 || index_->cap[id] <= 0) return;
  if (id < num_hosts_) {
    int take = std::min(*k, index_->cap[id]);
    TakeFromHost(id, take, out);
    *k -= take;
    return;
  }
  for (int c : hierarchy_.nodes()[id].children) {
    FirstFitUnder(c, k, out);
    if (*k <= 0) return;
  }
}

void SearchState::TakeFirstFit(int k, std::vector<GpuId>* out) const {
  out->reserve(out->size() + static_cast<size_t>(std::max(k, 0)) * rule_.size);
  if (hierarchy_.hosts_in_tree_order()) {
    FirstFitUnder(hierarchy_.root(), &k, out);
  } else {
    TakeInOrder(hierarchy_.hosts(), k, out);
  }
}

}  // namespace nvlplace
