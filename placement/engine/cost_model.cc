// Alpha-beta communication cost of a placement: seconds per training step per group kind.
#include "placement/engine/cost_model.h"

#include <algorithm>
#include <cstdint>

#include "placement/engine/stamps.h"

namespace nvlplace {
namespace {

struct Volumes {
  double tp_bytes;  // one TP all-reduce
  double tp_count;  // TP all-reduces per step
  double pp_bytes;  // one stage-boundary send (per TP rank)
  double pp_count;  // sends per boundary per step
  double dp_bytes;  // the gradient all-reduce per DP group
};

Volumes VolumesFor(const Request& r, const ModelProfile& m) {
  Volumes v;
  double activation = static_cast<double>(m.micro_batch) * m.seq_len * m.hidden * m.bytes_per_value;
  v.tp_bytes = activation;
  v.tp_count = 4.0 * m.layers / r.pp * m.micro_batches;
  v.pp_bytes = activation / r.tp;      // scatter-gather: each TP rank sends its share
  v.pp_count = 2.0 * m.micro_batches;  // forward activations, backward gradients
  v.dp_bytes = m.params * m.bytes_per_value / (r.tp * r.pp);
  return v;
}

double RingSeconds(int n, double bytes, double bytes_per_s, double alpha_s) {
  if (n <= 1) return 0;
  return 2.0 * (n - 1) / n * bytes / bytes_per_s + 2.0 * (n - 1) * alpha_s;
}

// Per thread, kept between calls so that pricing a candidate allocates nothing for it (the
// vectors grow to the largest cluster seen, once).
struct NicScratch {
  // Per node: hops of the phase being priced that leave it for another node. All zero
  // between calls (ClearFlows).
  std::vector<int> flows;
  // The NVLink domains of the TP group being priced.
  Stamps seen;
  // The ranks of the ring being priced; per rank its node, its NVLink domain, and its NVLink
  // domain and leaf group packed in one word; each of this ring and of the ring priced before.
  std::vector<GpuId> group;
  std::vector<NodeId> nodes, last_nodes;
  std::vector<DomainId> domains, last_domains;
  std::vector<uint64_t> places, last_places;
  // EstimateComm without the caller's RankPlaces: each rank's node and domain.
  std::vector<NodeId> rank_node;
  std::vector<DomainId> rank_domain;
};

NicScratch& ScratchFor(const Topology& topo) {
  thread_local NicScratch s;
  if (s.flows.size() < static_cast<size_t>(topo.num_nodes())) s.flows.resize(topo.num_nodes(), 0);
  return s;
}

// Counts a hop from GPU a to GPU b; true when it leaves a node that now has more such hops
// than NICs.
bool CountHop(const Topology& topo, GpuId a, GpuId b, std::vector<int>& flows) {
  NodeId from = topo.gpus()[a].node;
  if (from == topo.gpus()[b].node) return false;
  return ++flows[from] > topo.nodes()[from].nics;
}

// Every node a hop can leave is a node of the job.
void ClearFlows(const Topology& topo, const std::vector<GpuId>& ranks, std::vector<int>& flows) {
  for (GpuId g : ranks) flows[topo.gpus()[g].node] = 0;
}

// The link between two GPUs with a hop between nodes slowed to its share of the NICs at both
// ends: `flows[n]` hops of the phase leave node n, and as many enter it (each ring enters a
// node as often as it leaves it), over Node::nics NICs. Without `flows`, LinkBetween.
Link SharedLink(const Topology& topo, GpuId a, GpuId b, const std::vector<int>* flows) {
  Link l = LinkBetween(topo, a, b);
  NodeId na = topo.gpus()[a].node, nb = topo.gpus()[b].node;
  if (flows == nullptr || na == nb) return l;
  double share = 1;  // the smaller end's
  for (NodeId n : {na, nb}) {
    int nics = topo.nodes()[n].nics, f = (*flows)[n];
    if (f > nics) share = std::min(share, static_cast<double>(nics) / f);
  }
  l.bytes_per_s *= share;
  return l;
}

// RingAllReduceSeconds with the hops' NIC shares (SharedLink).
double SharedRingSeconds(const Topology& topo, const std::vector<GpuId>& gpus, double bytes,
                         const std::vector<int>* flows) {
  int n = static_cast<int>(gpus.size());
  if (n <= 1) return 0;
  DomainId first = topo.gpus()[gpus[0]].domain;
  if (std::all_of(gpus.begin(), gpus.end(),
                  [&](GpuId g) { return topo.gpus()[g].domain == first; })) {
    // One NVLink domain: every hop is what LinkBetween gives inside it.
    Link l = LinkBetween(topo, gpus[0], gpus[1]);
    return RingSeconds(n, bytes, l.bytes_per_s, l.alpha_s);
  }
  double bw = 0, alpha = 0;
  for (int i = 0; i < n; ++i) {
    Link l = SharedLink(topo, gpus[i], gpus[(i + 1) % n], flows);
    bw = i == 0 ? l.bytes_per_s : std::min(bw, l.bytes_per_s);
    alpha = std::max(alpha, l.alpha_s);
  }
  return RingSeconds(n, bytes, bw, alpha);
}

// TpAllReduceSeconds with the NIC shares of the ring among the domains (SharedLink).
double SharedTpSeconds(const Topology& topo, const std::vector<GpuId>& gpus, double bytes,
                       const std::vector<int>* flows) {
  bool one_domain = std::all_of(gpus.begin(), gpus.end(), [&](GpuId g) {
    return topo.gpus()[g].domain == topo.gpus()[gpus.front()].domain;
  });
  if (one_domain) return SharedRingSeconds(topo, gpus, bytes, nullptr);
  // Each domain's share, domains in order of first rank.
  std::vector<DomainId> order;
  std::vector<std::vector<GpuId>> shares;
  for (GpuId g : gpus) {
    DomainId d = topo.gpus()[g].domain;
    size_t i = std::find(order.begin(), order.end(), d) - order.begin();
    if (i == order.size()) {
      order.push_back(d);
      shares.emplace_back();
    }
    shares[i].push_back(g);
  }
  double inside = 0;
  std::vector<GpuId> leaders;
  for (const std::vector<GpuId>& share : shares) {
    inside = std::max(inside, SharedRingSeconds(topo, share, bytes, nullptr));
    leaders.push_back(share.front());
  }
  return inside + SharedRingSeconds(topo, leaders, bytes, flows);
}

// Counts the hops between nodes of the ring among the domains of TP group `g` (its leaders:
// the first rank in each domain, in rank order, as SharedTpSeconds takes them); true when a
// node now sends more of them than it has NICs.
bool CountTpLeaderHops(const Topology& topo, const std::vector<GpuId>& ranks, int tp, int g,
                       NicScratch& s) {
  s.seen.Begin(static_cast<size_t>(topo.num_domains()));
  bool over = false;
  GpuId first = -1, prev = -1;
  for (int t = 0; t < tp; ++t) {
    GpuId gpu = ranks[size_t{1} * g * tp + t];
    DomainId d = topo.gpus()[gpu].domain;
    if (!s.seen.Mark(d)) continue;
    if (prev < 0) {
      first = gpu;
    } else {
      over |= CountHop(topo, prev, gpu, s.flows);
    }
    prev = gpu;
  }
  if (prev != first) over |= CountHop(topo, prev, first, s.flows);
  return over;
}

}  // namespace

Link LinkBetween(const Topology& topo, GpuId a, GpuId b) {
  const Gpu& ga = topo.gpus()[a];
  const Gpu& gb = topo.gpus()[b];
  if (ga.domain == gb.domain) {
    return {topo.domains()[ga.domain].nvlink_gbps * 1e9, topo.nvlink_alpha_us() * 1e-6};
  }
  if (ga.node == gb.node) {
    // Through the host: the node's model's PCIe link (a node with GPUs has a model).
    return {topo.ModelOf(ga.node)->pcie_gbps * 1e9, topo.net_alpha_us() * 1e-6};
  }
  double gbps = topo.PathGbps(ga.node, gb.node);
  if (gbps <= 0) return {1.0, 1.0};  // disconnected: absurdly slow, never chosen
  return {gbps / 8 * 1e9, topo.net_alpha_us() * 1e-6};
}

double RingAllReduceSeconds(const Topology& topo, const std::vector<GpuId>& gpus, double bytes) {
  return SharedRingSeconds(topo, gpus, bytes, nullptr);
}

double TpAllReduceSeconds(const Topology& topo, const std::vector<GpuId>& gpus, double bytes) {
  return SharedTpSeconds(topo, gpus, bytes, nullptr);
}

CommEstimate EstimateComm(const Topology& topo, const std::vector<GpuId>& ranks, const Request& r,
                          const ModelProfile& m) {
  NicScratch& scratch = ScratchFor(topo);
  scratch.rank_node.resize(ranks.size());
  scratch.rank_domain.resize(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    const Gpu& gpu = topo.gpus()[ranks[i]];
    scratch.rank_node[i] = gpu.node;
    scratch.rank_domain[i] = gpu.domain;
  }
  return EstimateComm(topo, ranks, {scratch.rank_node, scratch.rank_domain}, r, m);
}

CommEstimate EstimateComm(const Topology& topo, const std::vector<GpuId>& ranks,
                          const RankPlaces& places, const Request& r, const ModelProfile& m) {
  CommEstimate e;
  if (static_cast<int>(ranks.size()) != r.gpus || places.node.size() != ranks.size() ||
      places.domain.size() != ranks.size()) {
    return e;
  }
  Volumes v = VolumesFor(r, m);
  auto rank = [&](int t, int p, int d) { return ranks[r.Rank(t, p, d)]; };
  NicScratch& scratch = ScratchFor(topo);
  // Rings between nodes share their nodes' NICs (Node::nics) in each phase. Only where some
  // node sends more hops than it has NICs are the hops priced at their share (nullptr: at the
  // whole link, as with one NIC per GPU, where a node never sends more than one hop per GPU:
  // then nothing is counted).
  const bool shares = !topo.nic_per_gpu();
  std::vector<GpuId>& group = scratch.group;
  // A TP group inside one NVLink domain is a ring at that domain's bandwidth (LinkBetween
  // inside a domain); tp_count all-reduces run one after another. Priced once per bandwidth.
  double priced_gbps = -1;
  auto price_inside = [&](DomainId d) {
    double gbps = topo.domains()[d].nvlink_gbps;
    if (gbps == priced_gbps) return;
    priced_gbps = gbps;
    e.tp_s = std::max(e.tp_s, v.tp_count * RingSeconds(r.tp, v.tp_bytes, gbps * 1e9,
                                                       topo.nvlink_alpha_us() * 1e-6));
  };
  if (r.tp > 1 && places.tp_groups_whole) {
    // Every group a ring inside one domain, every domain with a group: no hop between nodes,
    // and the domains give the time.
    for (DomainId d : places.domains) price_inside(d);
  } else if (r.tp > 1) {
    const std::vector<int>* tp_flows = nullptr;
    if (shares) {
      bool over = false;
      for (int g = 0; g < r.num_groups(); ++g) {
        over |= CountTpLeaderHops(topo, ranks, r.tp, g, scratch);
      }
      if (over) tp_flows = &scratch.flows;
    }
    // TP groups: one ring per (p, d). With TP 1 there is no ring: nothing to price.
    for (int d = 0; d < r.dp; ++d) {
      for (int p = 0; p < r.pp; ++p) {
        const DomainId* domain = places.domain.data() + r.Rank(0, p, d);  // the group's r.tp ranks
        DomainId first = domain[0];
        bool one_domain = true;
        for (int t = 1; t < r.tp && one_domain; ++t) one_domain = domain[t] == first;
        if (one_domain) {
          price_inside(first);
          continue;
        }
        group.clear();
        for (int t = 0; t < r.tp; ++t) group.push_back(rank(t, p, d));
        e.tp_s = std::max(e.tp_s, v.tp_count * SharedTpSeconds(topo, group, v.tp_bytes, tp_flows));
      }
    }
    if (shares) ClearFlows(topo, ranks, scratch.flows);
  }
  // PP: each pipeline (t, d) sends across its pp-1 boundaries, one after another.
  if (r.pp > 1) {
    for (int d = 0; d < r.dp; ++d) {
      for (int t = 0; t < r.tp; ++t) {
        double s = 0;
        for (int p = 0; p + 1 < r.pp; ++p) {
          Link l = LinkBetween(topo, rank(t, p, d), rank(t, p + 1, d));
          s += v.pp_count * (v.pp_bytes / l.bytes_per_s + l.alpha_s);
        }
        e.pp_s = std::max(e.pp_s, s);
      }
    }
  }
  // DP groups: one ring per (t, p), all at once; the slowest decides. A ring costs what its
  // sequence of (node, NVLink domain) costs: each hop is NVLink inside its domain, else the
  // node's PCIe inside a node, else the path between the two nodes at their NIC shares. So a
  // ring with the same sequence as the ring priced before is not priced again. Without NIC
  // shares a ring whose every hop crosses nodes depends on less: inside one NVLink domain on
  // the domain, else on the two nodes' leaf groups (Topology::PathGbps). So the same sequence
  // of (domain, leaf group) is not priced again either: rank t of every TP group on a rack's
  // other tray, say.
  if (r.dp > 1) {
    bool over = false;
    for (int p = 0; p < r.pp && shares; ++p) {
      for (int t = 0; t < r.tp; ++t) {
        for (int d = 0; d < r.dp; ++d) {
          over |= CountHop(topo, rank(t, p, d), rank(t, p, (d + 1) % r.dp), scratch.flows);
        }
      }
    }
    const std::vector<int>* dp_flows = over ? &scratch.flows : nullptr;
    std::vector<NodeId>& nodes = scratch.nodes;
    std::vector<NodeId>& last_nodes = scratch.last_nodes;
    std::vector<DomainId>& domains = scratch.domains;
    std::vector<DomainId>& last_domains = scratch.last_domains;
    std::vector<uint64_t>& ring_places = scratch.places;
    std::vector<uint64_t>& last_places = scratch.last_places;
    last_nodes.clear();
    last_domains.clear();
    last_places.clear();
    bool last_crosses = false;
    // Where a GPU's NVLink domain says every link it has (Topology::domains_say_links), a
    // ring without NIC shares costs what its sequence of domains costs, and with every TP
    // group inside one domain rank t of each group sits in its group's domain: a stage's
    // rings are then one sequence, and its ring of rank 0 is priced alone.
    const bool by_domains = dp_flows == nullptr && topo.domains_say_links();
    for (int p = 0; p < r.pp; ++p) {
      for (int t = 0; t < r.tp; ++t) {
        const size_t n = static_cast<size_t>(r.dp);
        group.resize(n);
        nodes.resize(n);
        domains.resize(n);
        // Rank t of stage p in each DP replica: Request::DpStride() ranks apart.
        const size_t stride = r.DpStride();
        const NodeId* node = places.node.data() + r.Rank(t, p, 0);
        const DomainId* domain = places.domain.data() + r.Rank(t, p, 0);
        if (by_domains) {
          if (t > 0 && places.tp_groups_whole) break;
          for (size_t d = 0; d < n; ++d) domains[d] = domain[d * stride];
          if (domains == last_domains) continue;
          for (size_t d = 0; d < n; ++d) group[d] = rank(t, p, static_cast<int>(d));
          e.dp_s = std::max(e.dp_s, SharedRingSeconds(topo, group, v.dp_bytes, nullptr));
          std::swap(domains, last_domains);
          continue;
        }
        for (size_t d = 0; d < n; ++d) {
          nodes[d] = node[d * stride];
          domains[d] = domain[d * stride];
        }
        // last_nodes is empty until a ring is priced (the first ring has two ranks or more).
        if (nodes == last_nodes && domains == last_domains) continue;
        // Without NIC shares: (domain, leaf group) per rank, and whether every hop crosses
        // nodes, in one pass (with shares neither is read).
        bool crosses = false;
        if (dp_flows == nullptr) {
          crosses = nodes[n - 1] != nodes[0];
          ring_places.resize(n);
          for (size_t d = 0; d < n; ++d) {
            ring_places[d] = static_cast<uint64_t>(static_cast<uint32_t>(domains[d])) << 32 |
                             static_cast<uint32_t>(topo.LeafGroup(nodes[d]));
            if (d > 0) crosses &= nodes[d] != nodes[d - 1];
          }
          if (crosses && last_crosses && ring_places == last_places) continue;
        }
        for (size_t d = 0; d < n; ++d) group[d] = rank(t, p, static_cast<int>(d));
        e.dp_s = std::max(e.dp_s, SharedRingSeconds(topo, group, v.dp_bytes, dp_flows));
        std::swap(nodes, last_nodes);
        std::swap(domains, last_domains);
        std::swap(ring_places, last_places);
        last_crosses = crosses;
      }
    }
    if (shares) ClearFlows(topo, ranks, scratch.flows);
  }
  return e;
}

CommEstimate IdealComm(const Topology& topo, const Request& r, const ModelProfile& m) {
  // The fastest link of any model: NVLink, or PCIe for models without it.
  double fastest = 0;
  for (const GpuModelSpec& model : topo.gpu_models()) {
    fastest = std::max({fastest, model.nvlink_gbps, model.pcie_gbps});
  }
  double bw = fastest * 1e9, alpha = topo.nvlink_alpha_us() * 1e-6;
  Volumes v = VolumesFor(r, m);
  CommEstimate e;
  e.tp_s = v.tp_count * RingSeconds(r.tp, v.tp_bytes, bw, alpha);
  e.pp_s = r.pp > 1 ? (r.pp - 1) * v.pp_count * (v.pp_bytes / bw + alpha) : 0;
  e.dp_s = RingSeconds(r.dp, v.dp_bytes, bw, alpha);
  return e;
}

}  // namespace nvlplace
