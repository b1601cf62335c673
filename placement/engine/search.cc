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

  // Fabric levels: leaf groups joined when their common tier is at most t (cumulative, so
  // the clusters nest), and the leaf groups of one host always together.
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
  std::vector<int> below = hosts_;  // HNode per host at the level below
  for (int t = 0; t < num_tiers; ++t) {
    for (int a = 0; a < groups; ++a) {
      for (int b = a + 1; b < groups; ++b) {
        int tier = topo.CommonTier(rep[a], rep[b]);
        if (tier >= 0 && tier <= t) uf.Union(a, b);
      }
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
    : hierarchy_(h), rule_(rule) {
  const Topology& topo = state.topology();
  num_hosts_ = static_cast<int>(h.hosts().size());
  std::vector<int> domain_usable(topo.num_domains(), 0);
  gpus_.reserve(state.num_free());
  host_pool_.reserve(num_hosts_ + 1);
  spans_nodes_.reserve(num_hosts_);
  for (int host = 0; host < num_hosts_; ++host) {  // hosts are HNodes 0..num_hosts-1
    host_pool_.push_back(static_cast<int>(pool_begin_.size()));
    const std::vector<NodeId>& nodes = h.nodes()[host].nodes;
    spans_nodes_.push_back(nodes.size() > 1);
    for (NodeId n : nodes) {
      bool usable = request.allowed_node[n] && (!request.exclusive || state.node_all_free(n));
      const Node& node = topo.nodes()[n];
      // The node's free usable GPUs per island, ascending.
      std::vector<std::vector<GpuId>> islands(node.domains.size());
      for (GpuId g : node.gpus) {
        if (!usable || state.busy(g)) continue;
        DomainId d = topo.gpus()[g].domain;
        size_t i = std::find(node.domains.begin(), node.domains.end(), d) - node.domains.begin();
        islands[i].push_back(g);
        ++domain_usable[d];
        ++usable_free_;
      }
      // Pools: the node's islands, or in nodes mode the node.
      if (rule.per_node) islands = {NodePool(islands)};
      for (const std::vector<GpuId>& pool : islands) {
        pool_begin_.push_back(static_cast<int>(gpus_.size()));
        gpus_.insert(gpus_.end(), pool.begin(), pool.end());
      }
    }
  }
  host_pool_.push_back(static_cast<int>(pool_begin_.size()));
  pool_begin_.push_back(static_cast<int>(gpus_.size()));
  largest_free_domain_ = *std::max_element(domain_usable.begin(), domain_usable.end());
  // Capacities bottom-up: HNodes are stored children first.
  cap_.assign(h.nodes().size(), 0);
  for (size_t id = 0; id < h.nodes().size(); ++id) {
    if (static_cast<int>(id) < num_hosts_) {
      cap_[id] = HostCapacity(static_cast<int>(id));
    } else {
      for (int c : h.nodes()[id].children) cap_[id] += cap_[c];
    }
  }
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

int SearchState::HostCapacity(int host) const {
  int cap = 0, sum = 0;
  for (int p = host_pool_[host]; p < host_pool_[host + 1]; ++p) {
    int n = pool_begin_[p + 1] - pool_begin_[p];
    sum += n;
    if (rule_.per_node) {
      cap += n >= rule_.size ? 1 : 0;
    } else {
      cap += n / rule_.size;
    }
  }
  // Inside a multi-node NVLink domain a chunk may span nodes.
  if (!rule_.per_node && spans_nodes_[host]) cap = sum / rule_.size;
  return cap;
}

void SearchState::TakeFromHost(int host, int k, std::vector<GpuId>* out) const {
  int first = host_pool_[host];
  int pools = host_pool_[host + 1] - first;
  std::vector<int> used(pools, 0);
  auto left = [&](int p) { return pool_begin_[first + p + 1] - pool_begin_[first + p] - used[p]; };
  auto take = [&](int p, int n) {
    const GpuId* g = gpus_.data() + pool_begin_[first + p] + used[p];
    out->insert(out->end(), g, g + n);
    used[p] += n;
  };
  for (int chunk = 0; chunk < k; ++chunk) {
    // Best fit: the pool with the fewest free GPUs that still holds a whole chunk.
    int best = -1;
    for (int p = 0; p < pools; ++p) {
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
      for (int p = 1; p < pools; ++p) {
        if (left(p) > left(most)) most = p;
      }
      if (left(most) == 0) return;  // capacity said otherwise; never happens
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
