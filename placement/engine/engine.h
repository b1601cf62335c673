// The placement engine: filter, generate candidates over the host tree, score them with a
// policy's weighted scorers, and explain the decision.
#ifndef NVLPLACE_PLACEMENT_ENGINE_ENGINE_H_
#define NVLPLACE_PLACEMENT_ENGINE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "placement/engine/cost_model.h"
#include "placement/engine/policy.h"
#include "placement/engine/search.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"
#include "placement/model/topology.h"

namespace nvlplace {

struct ScoreLine {
  std::string scorer;
  double weight = 0;
  double score = 0;  // normalized, 0..100
};

struct Alternative {
  std::string origin;
  std::vector<GpuId> ranks;
  double total = 0;
  std::vector<ScoreLine> scores;
  CommEstimate comm;
  std::string why;  // the scorers where it lost, largest weighted gap first
};

struct PlacementResult {
  bool placed = false;
  bool internal_error = false;  // !placed because of a bug or an allocation failure
  std::string reason;           // why not, in topology terms, when !placed
  // !placed only because the NVLink domains keep their spare nodes free: it would fit on them.
  bool spares_are_why = false;
  // !placed only because the policy's max_comm_ratio refused the best placement there was:
  // the job waits for a more local one.
  bool comm_ratio_is_why = false;
  std::string request;  // DescribeRequest
  std::string policy;
  std::vector<GpuId> ranks;              // ranks[r]: the GPU of rank r (Request::Rank)
  std::string origin;                    // the generator and subtree of the chosen candidate
  std::vector<std::string> relaxations;  // every constraint relaxed, never silently
  std::vector<ScoreLine> scores;
  double total = 0;  // weighted mean of the scores, 0..100
  CommEstimate comm;
  int job_tier = Topology::kSameNode;
  int dp_tier = Topology::kSameNode;
  int tp_groups_split = 0;
  int candidates = 0;  // candidates scored
  std::optional<Alternative> best_rejected;
  // Set when another candidate (within the tier limit) was more local than the chosen one
  // (inside one NVLink domain where the choice spans several, or under a lower switch) and
  // the policy preferred the choice for other reasons, e.g. less fragmentation: what was
  // traded and why, never silently. Empty when the choice is as local as any candidate.
  std::string locality_traded;
};

// The GPU models of `gpus` and how many of each, most first (a tie in model order).
std::vector<std::pair<int, int>> GpuModelCounts(const std::vector<GpuId>& gpus,
                                                const Topology& topo);
// The same as text: "A100 x8, H800 x8".
std::string GpuModelText(const std::vector<GpuId>& gpus, const Topology& topo);

// How far a set of GPUs spreads: the NVLink domains and nodes it uses, and the highest
// fabric tier its nodes cross (Topology::kSameNode on one node, Topology::kDisconnected when
// two of them share no switch).
struct Span {
  int domains = 0;
  int nodes = 0;
  int tier = Topology::kSameNode;
};
Span SpanOf(const std::vector<GpuId>& gpus, const Topology& topo);
// A span's tier for tools and logs: "node", a fabric tier's name, or "disconnected".
std::string SpanTierName(const Topology& topo, int tier);

// How local a placement is, in the engine's own order (Choose gives a tie in score to the
// more local candidate; LocalityTraded names a more local candidate that lost): inside one
// NVLink domain first, then the lower highest tier crossed, then the fewer NVLink domains
// (what stock cons_tres with topology.conf minimizes: the lowest switch, then the fewest
// nodes). One number, lower is more local, so that a tool compares two placements by the
// engine's order without restating it (`nvlplace check span` prints it as locality=). Equal
// numbers are equally local. It reads split x 10^12 + (tier + 1) x 10^10 + domains, with
// kDisconnected as limits::kMaxTiers and domains capped at 10^10 - 1.
uint64_t LocalityRank(int domains, int tier);

class Engine {
 public:
  Engine(std::shared_ptr<const Topology> topo, std::shared_ptr<const Policy> policy,
         ModelProfile model = {});

  // What a caller reads of a result. kFull: everything. kPlacement: whether the job fits
  // and, when it does, everything kFull gives; a result that does not place carries no text
  // (`reason` and `request` empty; its flags, spares_are_why and the others, are set). For
  // callers that ask many times and act only on a placement: a replay's scheduling passes
  // and the start-time search, where most questions on a busy cluster are "not yet", and
  // writing why was about a third of a replay of a congested GB200 cluster. kChoice: as
  // kPlacement, and a placement carries only what was chosen (ranks, total, comm, tiers,
  // TP groups split, candidates, relaxations), none of the text that explains it (`scores`,
  // `origin`, `request`, `locality_traded` and `best_rejected` empty): a replay's starts,
  // which read nothing else.
  enum class Detail { kFull, kPlacement, kChoice };

  // Chooses GPUs for the request on the free GPUs of `state` (whose topology must be this
  // engine's). "Cannot place now" is a normal result with a reason (kFull). Never throws.
  PlacementResult Place(const ClusterState& state, const Request& request,
                        Detail detail = Detail::kFull) const;

  const Topology& topology() const { return *topo_; }
  const std::shared_ptr<const Topology>& topology_ptr() const { return topo_; }
  const Policy& policy() const { return *policy_; }

 private:
  std::vector<int> ModelsOf(const Request& r) const;
  // Decide, or OneModelAtATime for a request without a model on nodes of several.
  void DecideAnyModel(const ClusterState& state, const Request& r, Detail detail,
                      PlacementResult* result) const;
  // The policy's max_comm_ratio on a placed result: unplaced, with the reason, when over it.
  void CheckCommRatio(const Request& r, Detail detail, PlacementResult* result) const;
  // The idle cluster CheckCommRatio measures against, made on first use and kept with the
  // search index built on it: a job waiting for max_comm_ratio is measured again at every
  // scheduling pass, the idle cluster is the same each time.
  const ClusterState& Idle() const;
  // The stages of one decision on the request's allowed nodes, into `result`.
  void Decide(const ClusterState& state, const Request& r, Detail detail,
              PlacementResult* result) const;
  // A request without a model on allowed nodes of several models (`models`, ascending).
  void OneModelAtATime(const ClusterState& state, const Request& r, const std::vector<int>& models,
                       Detail detail, PlacementResult* result) const;

  std::shared_ptr<const Topology> topo_;
  std::shared_ptr<const Policy> policy_;
  ModelProfile model_;
  Hierarchy hierarchy_;
  std::vector<int> models_of_every_node_;  // the GPU models of nodes with GPUs, ascending
  int spare_nodes_ = 0;                    // the spares of every multi-node domain
  std::vector<int> node_model_;            // per node: its GPU model, -1 without GPUs
  mutable std::once_flag idle_once_;
  mutable std::unique_ptr<const ClusterState> idle_;  // Idle()
};

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_ENGINE_H_
