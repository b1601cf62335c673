// Candidate placements: the host tree and the per-decision state generators take GPUs from.
#include "placement/engine/search.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>

#include "absl/container/flat_hash_map.h"
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

Hierarchy::Hierarchy(const Topology& topo) {
  int num_tiers = static_cast<int>(topo.tiers().size());
  num_levels_ = num_tiers + 2;
  by_level_.resize(num_levels_);
  // Hosts: multi-node domains, then every other node, ordered by first node.
  std::vector<bool> in_multi(topo.num_nodes(), false);
  std::vector<std::pair<NodeId, HNode>> hosts;
  for (const NvlDomain& d : topo.domains()) {
    if (!d.multi_node) continue;
    for (NodeId n : d.nodes) in_multi[n] = true;
    hosts.push_back({d.nodes.front(), HNode{0, {}, d.nodes, d.name}});
  }
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (!in_multi[n]) hosts.push_back({n, HNode{0, {}, {n}, topo.nodes()[n].name}});
  }
  std::sort(hosts.begin(), hosts.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [first, h] : hosts) {
    hosts_.push_back(static_cast<int>(nodes_.size()));
    by_level_[0].push_back(hosts_.back());
    nodes_.push_back(std::move(h));
  }

  // Fabric levels: leaf groups joined when they are connected at tier t or lower
  // (cumulative, so the clusters nest), and the leaf groups of one host always together.
  // Linear in the fabric (no pair of leaf groups is compared): per tier, the switches of
  // that tier or lower with nodes below them are joined to their children into components;
  // leaf groups with as many leaves join when each leaf is in the same component as the
  // other's leaf of the same index (rail by rail, as Topology::CommonTier compares them),
  // and leaf groups with different numbers of leaves when any two of their leaves are (its
  // best pair). Every leaf of a component reaches the others through switches of tier t or
  // lower, each with nodes below it, so for one leaf per group (and rail-optimized groups
  // that agree rail by rail) these are the clusters of CommonTier(a, b) <= t.
  int groups = topo.num_leaf_groups();
  std::vector<NodeId> rep(groups, -1);
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (rep[topo.LeafGroup(n)] < 0) rep[topo.LeafGroup(n)] = n;
  }
  UnionFind uf(groups);
  for (int h : hosts_) {
    for (NodeId n : nodes_[h].nodes)
      uf.Union(topo.LeafGroup(n), topo.LeafGroup(nodes_[h].nodes[0]));
  }
  UnionFind switches(topo.num_switches());
  std::vector<int> below = hosts_;  // HNode per host at the level below
  for (int t = 0; t < num_tiers; ++t) {
    for (SwitchId s = 0; s < topo.num_switches(); ++s) {
      const Switch& sw = topo.switches()[s];
      if (sw.tier != t || sw.nodes_under.empty()) continue;
      for (SwitchId c : sw.children) {
        if (!topo.switches()[c].nodes_under.empty()) switches.Union(c, s);
      }
    }
    // Same number of leaves: the components rail by rail, as one key.
    absl::flat_hash_map<std::vector<int>, int> by_key;
    // Different numbers of leaves: per component, the leaf counts present and its groups.
    absl::flat_hash_map<int, std::pair<std::vector<size_t>, std::vector<int>>> by_component;
    std::vector<int> key;
    for (int g = 0; g < groups; ++g) {
      const std::vector<SwitchId>& leaves = topo.nodes()[rep[g]].leaves;
      if (leaves.empty()) continue;
      key.assign(1, static_cast<int>(leaves.size()));
      for (SwitchId l : leaves) key.push_back(switches.Find(l));
      auto [it, inserted] = by_key.emplace(key, g);
      if (!inserted) uf.Union(g, it->second);
      for (size_t i = 1; i < key.size(); ++i) {
        auto& [counts, members] = by_component[key[i]];
        if (std::find(counts.begin(), counts.end(), leaves.size()) == counts.end()) {
          counts.push_back(leaves.size());
        }
        if (members.empty() || members.back() != g) members.push_back(g);
      }
    }
    for (const auto& [component, entry] : by_component) {
      if (entry.first.size() < 2) continue;
      for (int g : entry.second) uf.Union(g, entry.second.front());
    }
    absl::flat_hash_map<int, int> cluster_node;
    std::vector<int> here(hosts_.size());
    for (size_t i = 0; i < hosts_.size(); ++i) {
      NodeId first = nodes_[hosts_[i]].nodes[0];
      int cluster = uf.Find(topo.LeafGroup(first));
      auto [it, inserted] = cluster_node.emplace(cluster, static_cast<int>(nodes_.size()));
      if (inserted) {
        nodes_.push_back(HNode{t + 1, {}, {}, SwitchLabel(topo, first, t)});
        by_level_[t + 1].push_back(it->second);
      }
      here[i] = it->second;
      std::vector<int>& kids = nodes_[it->second].children;
      if (std::find(kids.begin(), kids.end(), below[i]) == kids.end()) kids.push_back(below[i]);
    }
    below = here;
  }
  root_ = static_cast<int>(nodes_.size());
  nodes_.push_back(HNode{num_tiers + 1, {}, {}, "cluster"});
  by_level_[num_tiers + 1].push_back(root_);
  for (int id : by_level_[num_tiers]) nodes_[root_].children.push_back(id);
}

SearchState::SearchState(const Hierarchy& h, const ClusterState& state, const Request& request,
                         ChunkRule rule)
    : hierarchy_(h), state_(state), request_(request), rule_(rule) {
  // Counts only (ClusterState keeps free GPUs per node and per domain): the work is one
  // step per node and island, with no list of GPUs; a host's GPUs are listed when a
  // generator takes from it (Pools).
  const Topology& topo = state.topology();
  num_hosts_ = static_cast<int>(h.hosts().size());
  cap_.assign(h.nodes().size(), 0);
  std::vector<int> counts;                         // one host's pool sizes
  for (int host = 0; host < num_hosts_; ++host) {  // hosts are HNodes 0..num_hosts-1
    const std::vector<NodeId>& nodes = h.nodes()[host].nodes;
    counts.clear();
    int sum = 0, host_free = 0;
    for (NodeId n : nodes) {
      if (!Usable(n)) {
        if (rule.per_node) counts.push_back(0);
        continue;
      }
      const Node& node = topo.nodes()[n];
      int on_node = 0, groups = 0;
      for (DomainId d : node.domains) {
        // A multi-node domain's node has that one domain: its share is the node's.
        int free = node.domains.size() == 1 ? state.free_on_node(n) : state.free_in_domain(d);
        on_node += free;
        if (rule.group > 1) groups += free / rule.group;
        if (!rule.per_node) counts.push_back(free);
        if (nodes.size() == 1) largest_free_domain_ = std::max(largest_free_domain_, free);
      }
      usable_free_ += on_node;
      host_free += on_node;
      if (rule.per_node) {
        // NodePool's size: whole groups inside islands (all or nothing), else every free GPU.
        int needed = rule.size / rule.group;
        counts.push_back(rule.group > 1 ? (groups >= needed ? needed * rule.group : 0) : on_node);
      }
    }
    // A multi-node domain: its usable free GPUs are those of its usable nodes.
    if (nodes.size() > 1) largest_free_domain_ = std::max(largest_free_domain_, host_free);
    int cap = 0;
    for (int n : counts) {
      sum += n;
      cap += rule.per_node ? (n >= rule.size ? 1 : 0) : n / rule.size;
    }
    // Inside a multi-node NVLink domain a chunk may span nodes.
    if (!rule.per_node && nodes.size() > 1) cap = sum / rule.size;
    cap_[host] = cap;
  }
  // Capacities bottom-up: HNodes are stored children first.
  for (size_t id = num_hosts_; id < h.nodes().size(); ++id) {
    for (int c : h.nodes()[id].children) cap_[id] += cap_[c];
  }
}

bool SearchState::Usable(NodeId n) const {
  return request_.allowed_node[n] && (!request_.exclusive || state_.node_all_free(n));
}

std::vector<std::vector<GpuId>> SearchState::Pools(int host) const {
  const Topology& topo = state_.topology();
  std::vector<std::vector<GpuId>> pools;
  for (NodeId n : hierarchy_.nodes()[host].nodes) {
    const Node& node = topo.nodes()[n];
    // The node's free usable GPUs per island, ascending.
    std::vector<std::vector<GpuId>> islands(node.domains.size());
    if (Usable(n)) {
      for (GpuId g : node.gpus) {
        if (state_.busy(g)) continue;
        DomainId d = topo.gpus()[g].domain;
        size_t i = std::find(node.domains.begin(), node.domains.end(), d) - node.domains.begin();
        islands[i].push_back(g);
      }
    }
    // Pools: the node's islands, or in nodes mode the node.
    if (rule_.per_node) {
      pools.push_back(NodePool(islands));
    } else {
      for (std::vector<GpuId>& island : islands) pools.push_back(std::move(island));
    }
  }
  return pools;
}

std::vector<GpuId> SearchState::NodePool(const std::vector<std::vector<GpuId>>& islands) const {
  std::vector<GpuId> out;
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
  std::vector<std::vector<GpuId>> pools = Pools(host);
  int n_pools = static_cast<int>(pools.size());
  std::vector<int> used(n_pools, 0);
  auto left = [&](int p) { return static_cast<int>(pools[p].size()) - used[p]; };
  auto take = [&](int p, int n) {
    const GpuId* g = pools[p].data() + used[p];
    out->insert(out->end(), g, g + n);
    used[p] += n;
  };
  for (int chunk = 0; chunk < k; ++chunk) {
    // Best fit: the pool with the fewest free GPUs that still holds a whole chunk.
    int best = -1;
    for (int p = 0; p < n_pools; ++p) {
      if (left(p) >= rule_.size && (best < 0 || left(p) < left(best))) best = p;
    }
    if (best >= 0) {
      take(best, rule_.size);
      if (rule_.per_node) used[best] += left(best);  // one chunk per node
      continue;
    }
    // Only a multi-node domain gets here: span its nodes, fullest first.
    int need = rule_.size;
    while (need > 0) {
      int most = 0;
      for (int p = 1; p < n_pools; ++p) {
        if (left(p) > left(most)) most = p;
      }
      if (n_pools == 0 || left(most) == 0) return;  // capacity said otherwise; never happens
      int n = std::min(need, left(most));
      take(most, n);
      need -= n;
    }
  }
}

void SearchState::TakeBestFit(int hnode, int k, std::vector<GpuId>* out) const {
  if (k <= 0) return;
  const Hierarchy::HNode& node = hierarchy_.nodes()[hnode];
  if (hnode < num_hosts_) {
    TakeFromHost(hnode, k, out);
    return;
  }
  std::vector<bool> done(node.children.size(), false);
  int remaining = k;
  while (remaining > 0) {
    int fit = -1, fullest = -1;
    for (size_t i = 0; i < node.children.size(); ++i) {
      if (done[i]) continue;
      int c = cap_[node.children[i]];
      if (c >= remaining && (fit < 0 || c < cap_[node.children[fit]])) fit = static_cast<int>(i);
      if (c > 0 && (fullest < 0 || c > cap_[node.children[fullest]])) fullest = static_cast<int>(i);
    }
    if (fit >= 0) {
      TakeBestFit(node.children[fit], remaining, out);
      return;
    }
    if (fullest < 0) return;  // capacity said otherwise; never happens
    done[fullest] = true;
    int c = cap_[node.children[fullest]];
    TakeBestFit(node.children[fullest], c, out);
    remaining -= c;
  }
}

int SearchState::TakeBalanced(int hnode, int k, std::vector<GpuId>* out) const {
  if (k <= 0) return 0;
  // The hosts under hnode with room (children are visited by an explicit stack).
  std::vector<int> hosts, stack = {hnode};
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (cap_[id] <= 0) continue;
    if (id < num_hosts_) {
      hosts.push_back(id);
    } else {
      for (int c : hierarchy_.nodes()[id].children) stack.push_back(c);
    }
  }
  // The fewest hosts that hold k: the roomiest first (ties by index).
  std::sort(hosts.begin(), hosts.end(),
            [&](int a, int b) { return cap_[a] != cap_[b] ? cap_[a] > cap_[b] : a < b; });
  size_t m = 0;
  for (int held = 0; m < hosts.size() && held < k; ++m) held += cap_[hosts[m]];
  hosts.resize(m);
  // Water-fill, smallest room first: a host gives all it has while that is no more than an
  // even share of what is left; the rest share evenly (the first ones one more).
  std::vector<int> by_room = hosts;
  std::reverse(by_room.begin(), by_room.end());
  absl::flat_hash_map<int, int> count;
  int left = k;
  for (size_t i = 0; i < by_room.size(); ++i) {
    int hosts_left = static_cast<int>(by_room.size() - i);
    int room = cap_[by_room[i]];
    if (static_cast<int64_t>(room) * hosts_left <= left) {
      count[by_room[i]] = room;
      left -= room;
      continue;
    }
    for (size_t j = i; j < by_room.size(); ++j) {
      count[by_room[j]] = left / hosts_left + (static_cast<int>(j - i) < left % hosts_left ? 1 : 0);
    }
    break;  // the rest of the job is spread over the remaining hosts
  }
  std::sort(hosts.begin(), hosts.end());
  for (int host : hosts) TakeFromHost(host, count[host], out);
  return static_cast<int>(hosts.size());
}

void SearchState::TakeInOrder(const std::vector<int>& host_order, int k,
                              std::vector<GpuId>* out) const {
  for (int host : host_order) {
    if (k <= 0) break;
    int take = std::min(k, cap_[host]);
    TakeFromHost(host, take, out);
    k -= take;
  }
}

int SearchState::best_capacity_at_level(int level) const {
  int best = 0;
  for (int id : hierarchy_.at_level(level)) best = std::max(best, cap_[id]);
  return best;
}

std::string SearchState::label_of_best_at_level(int level) const {
  int best = -1;
  for (int id : hierarchy_.at_level(level)) {
    if (best < 0 || cap_[id] > cap_[best]) best = id;
  }
  return best < 0 ? "" : hierarchy_.nodes()[best].label;
}

}  // namespace nvlplace
