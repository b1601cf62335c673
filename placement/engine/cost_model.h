// Alpha-beta communication cost of a placement: seconds per training step per group kind.
#ifndef NVLPLACE_PLACEMENT_ENGINE_COST_MODEL_H_
#define NVLPLACE_PLACEMENT_ENGINE_COST_MODEL_H_

#include <vector>

#include "absl/types/span.h"
#include "placement/model/request.h"
#include "placement/model/topology.h"

namespace nvlplace {

// The training step whose communication is estimated. Defaults follow a Llama-2-70B-like
// model trained in bf16 with Megatron (hidden 8192, 80 layers, 4,096-token sequences).
struct ModelProfile {
  double params = 70e9;
  int hidden = 8192;
  int layers = 80;
  int seq_len = 4096;
  int micro_batch = 1;
  int micro_batches = 8;  // per step, per pipeline
  int bytes_per_value = 2;
};

struct CommEstimate {
  double tp_s = 0;  // max over TP groups: 4 all-reduces per layer per micro-batch
  double pp_s = 0;  // max over pipelines: activations and gradients across stage boundaries
  double dp_s = 0;  // max over DP groups: one gradient all-reduce per step
  double total() const { return tp_s + pp_s + dp_s; }
};

// Bytes per second and per-message latency (seconds) between two GPUs: NVLink inside a
// domain, PCIe between islands of one node (the node's GPU model's pcie_gbps), else the fabric path
// (Topology::PathGbps, which already holds the slowest link and oversubscription).
struct Link {
  double bytes_per_s;
  double alpha_s;
};
Link LinkBetween(const Topology& topo, GpuId a, GpuId b);

// Ring all-reduce of `bytes` over `gpus` in ring order: 2(n-1)/n * S/B + 2(n-1) * alpha,
// B and alpha the worst of the ring's hops.
double RingAllReduceSeconds(const Topology& topo, const std::vector<GpuId>& gpus, double bytes);

// One TP all-reduce of `bytes` over `gpus` (rank order). Inside one NVLink domain: the ring
// above. A group split over m > 1 domains runs in two levels, as hierarchical all-reduce
// does: a reduce-scatter and an all-gather inside each domain's share (together one ring
// all-reduce; the slowest share decides), and between them an all-reduce of the whole buffer
// among the m domains, one GPU each, in order of first rank, over the slowest link joining
// them: 2(m-1)/m * S/B + 2(m-1) * alpha. The slow part grows with m, so a group that must
// split costs least over the fewest domains (7 + 1 GPUs beats 2 + 2 + 2 + 2, which a flat ring
// at its slowest hop prices the same).
double TpAllReduceSeconds(const Topology& topo, const std::vector<GpuId>& gpus, double bytes);

// Communication per step of a job whose rank r runs on ranks[r] (Megatron's default order,
// Request::Rank: TP innermost, then DP, PP outermost). The DP rings, and the rings among the
// domains of split TP groups, of one phase run at once: where a node sends more of their hops to
// other nodes than it has NICs (Node::nics), each such hop gets the link times nics / hops at
// either end. With one NIC per GPU that never happens. Allocates nothing per call for it
// (per-thread scratch sized to the cluster).
CommEstimate EstimateComm(const Topology& topo, const std::vector<GpuId>& ranks,
                          const Request& request, const ModelProfile& model);

// Each rank's node and NVLink domain: rank r's GPU ranks[r] is on node[r], in domain[r].
struct RankPlaces {
  absl::Span<const NodeId> node;
  absl::Span<const DomainId> domain;
  // Where the caller counted them: every TP group inside one domain, and the ranks' distinct
  // domains. Then each group is a ring at its domain's bandwidth and every domain holds a
  // group: the TP time is priced per domain, not per group.
  bool tp_groups_whole = false;
  absl::Span<const DomainId> domains;
};
// The same estimate from the places the caller read already (the engine reads them once per
// candidate for all its facts); `places` must be those of `ranks`.
CommEstimate EstimateComm(const Topology& topo, const std::vector<GpuId>& ranks,
                          const RankPlaces& places, const Request& request,
                          const ModelProfile& model);

// The same job with every GPU in one NVLink domain of the fastest model: a lower bound.
CommEstimate IdealComm(const Topology& topo, const Request& request, const ModelProfile& model);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_COST_MODEL_H_
