// A job's placement request: GPU count, TP/PP/DP sizes, NVLink mode, fabric tier limit.
#ifndef NVLPLACE_PLACEMENT_MODEL_REQUEST_H_
#define NVLPLACE_PLACEMENT_MODEL_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "placement/model/topology.h"

namespace nvlplace {

// strict: every TP group inside one NVLink domain, else the job waits.
// prefer: the same when possible; otherwise TP groups may span domains, and the result
//         reports the relaxation. off: NVLink domains are not a constraint.
enum class NvlMode { kStrict, kPrefer, kOff };

absl::StatusOr<NvlMode> ParseNvlMode(absl::string_view text);
const char* NvlModeName(NvlMode mode);

// The request as a user writes it (CLI flags, SPANK options, a trace line). Zero means
// "not given". Any int is allowed here (negative, INT_MAX): ResolveRequest checks them all.
struct RequestSpec {
  int gpus = 0;  // total GPUs; or nodes x gpus_per_node
  int nodes = 0;
  int gpus_per_node = 0;
  int tp = 0, pp = 0, dp = 0;
  NvlMode nvl = NvlMode::kStrict;
  std::string max_tier;           // "" (any), or a tier name of the topology
  bool max_tier_required = true;  // false: preferred, relaxed with a note when impossible
  bool exclusive = false;         // whole nodes only: every GPU of a chosen node is free
  std::string include;            // hostlist: only these nodes (empty: all)
  std::string exclude;            // hostlist: never these nodes
  // "" (any model), or a GPU model of the topology, in any case (Slurm's typed GRES:
  // --gpus=h100:8 asks for H100): only nodes of that model are used.
  std::string gpu_model;
  // Slurm's --segment: the job's nodes (nodes > 0) come in segments of this many, each inside
  // one NVLink domain (one block of Slurm's topology/block). 0: not given.
  int segment = 0;
  // The whole job inside one NVLink domain, or it waits (--nvl-domain=one).
  bool one_domain = false;
  // Slurm enforces topology/block on the multi-node NVLink domains (nvlplace.yaml
  // slurm_blocks, `place --slurm-blocks`): a job block would keep inside one block (no -N, or
  // no more nodes than a block plans for) stays inside one domain.
  bool slurm_blocks = false;
  // The job may take trays a domain keeps as spares (a replacement for a failed one).
  bool may_use_spares = false;
  // Slurm 25.11's --spread-segments (no two segments in one domain) and
  // --consolidate-segments (every segment inside one block of the level the job needs).
  bool spread_segments = false;
  bool consolidate_segments = false;
};

// The validated request, sizes resolved against one topology.
struct Request {
  int gpus = 0;
  int tp = 1, pp = 1, dp = 1;  // tp * pp * dp == gpus
  bool sizes_given = false;    // false: one group, kept as compact as possible
  int nodes = 0;               // 0: any number of nodes; else exactly this many
  NvlMode nvl = NvlMode::kStrict;
  int max_tier = -1;  // -1: any; else the highest tier index the job may span
  bool max_tier_required = true;
  // What ResolveRequest relaxed (a max tier above the cluster's highest limits nothing and is
  // dropped): the engine names each in every decision's relaxations, the same for the CLI,
  // the replay and the plugin.
  std::vector<std::string> relaxations;
  bool exclusive = false;
  int gpu_model = -1;  // -1: any; else an index into Topology::gpu_models()
  // Nodes mode: nodes per segment, each segment inside one NVLink domain (0: none; at most
  // `nodes`, which it divides).
  int segment = 0;
  // The whole job inside one NVLink domain; and why ("--nvl-domain=one", or Slurm's
  // topology/block keeping the job in one block).
  bool one_domain = false;
  bool one_domain_asked = false;  // by the job itself (not only Slurm's blocks)
  std::string one_domain_why;
  bool may_use_spares = false;
  // Slurm's --spread-segments: no two segments in one NVLink domain.
  bool spread_segments = false;
  // Per node of the topology, 1 when the job may use it (0 for other models); bytes, not
  // bits: the search reads it once per node of every host it counts or takes from.
  std::vector<uint8_t> allowed_node;
  // What allowed_node holds when it is no more than a GPU model's nodes, so that the engine
  // may reuse what it derived from a cluster state for requests of the same set of nodes:
  // kEveryNode (every node), a model index m >= 0 (every node of model m), or kListed (any
  // other set, e.g. include/exclude). Whoever edits allowed_node sets kListed.
  static constexpr int kEveryNode = -1;
  static constexpr int kListed = -2;
  int allowed_set = kListed;

  int num_groups() const { return pp * dp; }  // TP groups
  // The job's rank order, Megatron's default (tp-cp-ep-dp-pp, as DeepSpeed's and torchtitan's
  // meshes): TP innermost, then DP, PP outermost. Rank of TP rank t, stage p, replica d; so a
  // TP group is consecutive ranks, a stage is tp * dp consecutive ranks, and the ranks of one
  // DP group (t, p) are `tp` apart.
  size_t Rank(int t, int p, int d) const {
    return static_cast<size_t>(t) +
           static_cast<size_t>(tp) * (static_cast<size_t>(d) + static_cast<size_t>(dp) * p);
  }
  size_t DpStride() const { return static_cast<size_t>(tp); }
};

// Resolves defaults (PP=1, DP = gpus / (TP x PP), TP=1 when nothing is given) and checks
// the sizes, names and tier against the topology. A segment needs an exact node count that
// it divides (one larger than the job is the whole job); on a cluster without multi-node
// NVLink domains it is left to Slurm (a named relaxation). A max tier is one of the topology's
// tiers; one of the usual names (leaf, spine, core) above the topology's highest tier limits
// nothing: it is dropped and named in Request::relaxations; any other name is refused. Errors are
// InvalidArgument and say which value to change. Total: no RequestSpec (any ints) overflows or
// traps. Limits (placement/limits.h): tp, pp and dp given each at most kMaxGroupSize; gpus, and
// every product of sizes (computed in 64 bits), at most kMaxJobGpus; nodes at most kMaxJobNodes;
// gpus-per-node at most kMaxGpusPerNode. A GPU model is matched without regard to case, and
// a request for more GPUs than the cluster has of that model is refused. An accepted request has 1
// <= tp, pp, dp, tp x pp x dp == gpus <= the cluster's GPUs, and gpus divisible by nodes when nodes
// > 0.
absl::StatusOr<Request> ResolveRequest(const RequestSpec& spec, const Topology& topo);

// The topology-free part of ResolveRequest: the same size checks and the same messages,
// for readers of requests without a cluster at hand (a trace line). OK when every size is
// in range and the sizes agree with each other.
absl::Status CheckRequestSizes(const RequestSpec& spec);

// A user's text (an option, a trace field, a SPANK value) for a message: in single quotes,
// control bytes escaped (\n, \t, \x00, \x1b) and backslashes doubled, at most 64 bytes
// shown then "... (N bytes)". Nothing from a user reaches a terminal or a log raw.
std::string QuoteUserText(absl::string_view text);

// TEXT with backslashes doubled, `quote` (when not 0) as \", \n \t \r, and every other
// control byte as \xHH: the escaping of QuoteUserText and of the placement line's values.
std::string EscapeControls(absl::string_view text, char quote = 0);

// "16 GPUs (TP=8 PP=1 DP=2, nvl=strict, max-tier=spine)".
std::string DescribeRequest(const Request& request, const Topology& topo);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_REQUEST_H_
