// What the select plugin does with one job in one select_p_job_test call, decided here in
// tested C++ and driven by the thin C side (nvl_ctld.c) as a small state machine:
//
//   Decide        -> kConsTres (hand cons_tres the job as it is), kRefuse (return an error:
//                    the job waits, is held, or is refused at submit), or kTry (offer the
//                    engine's node sets one by one, GPUs masked to the engine's choice);
//   Took / Refused -> what cons_tres did with a node set; Took compares what Slurm will
//                    allocate with the decision and accepts or rejects it;
//   Exhausted     -> every node set refused: wait (a hard constraint) or cons_tres's own
//                    choice as a named relaxation.
//
// Each step leaves the line to log (once per job and text where a job may be tested every
// cycle) and the SystemComment to set: both the placement line (placement_line.h), the
// comment prefixed with "nvlplace: ". No Slurm header here.
#ifndef NVLPLACE_PLUGIN_DECISION_H_
#define NVLPLACE_PLUGIN_DECISION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "placement/engine/engine.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"
#include "plugin/placement_line.h"
#include "plugin/plugin_config.h"

namespace nvlplace::plugin {

enum class Mode { kRunNow, kTestOnly, kWillRun };

// A job as slurmctld holds it, flattened by the C side.
struct SlurmJob {
  uint32_t id = 0;  // 0: not yet a job (the submit-time check): every line is new
  Mode mode = Mode::kRunNow;
  // Sums over the job's GPU entries of gres_list_req.
  uint64_t gpus_per_job = 0, gpus_per_node = 0, gpus_per_task = 0, gpus_per_socket = 0;
  int gpu_requests = 0;  // GPU entries (a typed and an untyped one are two)
  std::string gpu_type;  // the GPU type asked for ("h100" of --gpus=h100:8); "": any
  uint32_t num_tasks = 0;
  uint32_t min_nodes = 0, max_nodes = 0;
  bool whole_node = false;
  int required_nodes = 0;        // nodes named with -w
  std::vector<std::string> env;  // the job's SPANK environment, "NAME=value"
  // Mode::kWillRun: now and the window backfill asks about (seconds since the epoch; 0:
  // from now, no end), and whether it asks about now only.
  int64_t now = 0, will_run_start = 0, will_run_end = 0;
  bool now_only = false;
  // The submit-time check's GPU counts came from tres_per_* strings that hold a count nvlplace
  // cannot read: slurmctld's own checks decide on the job.
  bool gpus_unreadable = false;
  // Slurm's --segment (24.05+; 0: none) and --spread-segments / --consolidate-segments
  // (25.11+).
  int segment = 0;
  bool spread_segments = false, consolidate_segments = false;
  // Times the job was requeued: a requeued job may take the spare nodes of NVLink domains
  // (the replacement of a failed tray), RequestSpec::may_use_spares.
  uint32_t restarts = 0;
  // A requeued job's SystemComment as the plugin left it (its last placement line): the job
  // goes back to the NVLink domains of its last placement when they have room.
  std::string previous_comment;
  // Mode::kRunNow: the free GPUs of the nodes given are all cons_tres could give the job now
  // (nvl_job_t.free_is_all).
  bool free_is_all = false;
  // Mode::kRunNow: a second look at a job that waits, where the GPUs of the running jobs it
  // may preempt count as free (nvl_job_t.preempting): only a node set cons_tres accepts is
  // said (Took, Preempts); waits stay the first look's, unsaid and uncounted.
  bool preempting = false;
};

// GPUs asked for in one tres_per_* string of a job description at submit: "gres:gpu:8",
// "gres/gpu:h100:8", "gres:gpu" (one), "gres/gpu:h100" (one of that type), entries separated
// by ',' or ';'; other GRES are skipped.
struct TresGpus {
  uint64_t count = 0;       // summed over the GPU entries (saturated past kMaxJobGpus)
  int entries = 0;          // GPU entries
  std::string type;         // the type of the first typed entry, or ""
  bool unreadable = false;  // an entry whose count is not a plain number ("gpu:h100:x")
};
TresGpus GpusInTres(absl::string_view tres);

// A node as slurmctld sees it now, viewed in the caller's arrays, not copied per node and
// call: its GPU lists for the Decide call, its name (slurmctld's node record) for as long as
// the decision lives.
struct LiveNode {
  absl::string_view name;
  bool usable = false;         // in the bitmap slurmctld offers for this job
  absl::Span<const int> free;  // free GPU indexes
  // Mode::kWillRun: busy GPUs whose job ends, and when ({index, end time}).
  absl::Span<const std::pair<int, int64_t>> busy_until;
};

// Nodes (indexes into the caller's node array, ascending) and the GPU indexes on each.
struct Layout {
  std::vector<int> nodes;
  std::vector<std::vector<int>> gpus;  // gpus[k]: ascending indexes on nodes[k]
  bool operator==(const Layout& o) const { return nodes == o.nodes && gpus == o.gpus; }
};

struct Candidate {
  Layout layout;
  LinePlacement facts;  // for the placement line
  // FormatPlacement(facts): "gpus=\"node03:4-7 node05:0-3\" ..." (formatted on each call).
  std::string Describe() const;
};

enum class Action { kConsTres, kTry, kRefuse };

// A line for slurmctld's log, without the "nvlplace: JobId=N " prefix: a placement line.
struct LogLine {
  LogLevel level = kLogInfo;
  std::string text;  // empty: nothing to log
};

// Counters since the configuration was loaded, for the admin's summary line.
struct Counters {
  uint64_t placed = 0;           // jobs started on an engine node set
  uint64_t as_decided = 0;       // ... whose allocation is exactly the decision
  uint64_t differed = 0;         // ... whose allocation differed (never for hard jobs)
  uint64_t strict_rejected = 0;  // node sets accepted by cons_tres but not as decided
  uint64_t relaxed = 0;          // jobs started on cons_tres's own choice after a refusal
  uint64_t waiting = 0;          // waits for a hard constraint (changes of reason)
  uint64_t preempting = 0;       // node sets where Slurm preempts running jobs first
  uint64_t refused = 0;          // bad requests refused or held
  uint64_t cons_tres = 0;        // jobs with GPUs left to cons_tres
  uint64_t not_started = 0;      // starts select_nodes dropped after job_test (changes of reason)
};

// NVLPLACE_RANKMAP's value (plugin/nvl_options.h): "v1 NODE:GPUS:DOMAINS ...", the nodes in
// rank order (`by_rank`: as the engine ordered them, TP groups consecutive), each with its GPU
// indexes and the NVLink domains they are in. Names the topology lacks keep domain "?".
std::string RankMapText(const Topology& topo, const std::vector<NodeGpus>& by_rank);
// Slurm's allocation in an order that keeps each NVLink domain's nodes together (the domain
// of each node's first GPU, in order of first appearance), for an allocation that is not the
// engine's own.
std::vector<NodeGpus> GroupedByDomain(const Topology& topo, std::vector<NodeGpus> got);

// "since load: 120 jobs placed on nvlplace node sets, 120 allocated as decided, ...".
std::string CountersText(const Counters& counters);

class Decider;
class StatePool;

// Gives a ClusterState lent by a StatePool back to it (or deletes it when it has none).
struct StateReturn {
  std::shared_ptr<StatePool> pool;
  bool all_free = false;  // the pool's state for "could it ever run" (every GPU free)
  void operator()(ClusterState* state) const;
};
// The engine's view of the live nodes for one decision, lent by the Decider's pool.
using LentState = std::unique_ptr<ClusterState, StateReturn>;

// One job in one job_test call.
class JobDecision {
 public:
  Action action() const { return action_; }
  bool hard() const { return hard_; }
  bool hold() const { return hold_; }  // kRefuse of a request that can never be used
  // Mode::kRunNow, kRefuse of a request that can be used: the job waits (for room, its spare
  // nodes or a more local placement).
  bool waits() const { return job_.mode == Mode::kRunNow && action_ == Action::kRefuse && !hold_; }
  const std::string& request() const { return request_; }
  // kRefuse: why, for the user ("never runnable on this cluster: 8 GPUs (...): needs ...").
  const std::string& reason() const { return reason_; }
  const LogLine& log() const { return log_; }
  // The SystemComment to set: nullopt leaves it; "" removes a comment of ours.
  const std::optional<std::string>& comment() const { return comment_; }
  // A Mode::kRunNow decision masks each node's GPUs to the candidate's before cons_tres.
  bool mask_gpus() const { return job_.mode == Mode::kRunNow; }
  // Mode::kWillRun, kTry: the earliest time the node sets hold the job by nvlplace's rules
  // (seconds since the epoch), when that is later than now; else 0.
  int64_t start_time() const { return start_time_; }

  // kTry: the i-th node set, computing another (away from the nodes offered so far) when
  // every earlier one was refused. nullptr when there is none.
  const Candidate* CandidateAt(int i);
  // Node set i if already computed, else nullptr.
  const Candidate* Peek(int i) const {
    return i >= 0 && i < num_candidates() ? &candidates_[i] : nullptr;
  }
  int num_candidates() const { return static_cast<int>(candidates_.size()); }

  // cons_tres refused node set i.
  void Refused(int i);
  // cons_tres took node set i (i = -1: the job's own bitmap) and Slurm will allocate `got`
  // (RUN_NOW; ignored in the other modes). RET true: accept; false: reject (cons_tres's
  // choice broke a hard constraint; the caller releases what cons_tres set up and goes on).
  // An accepted RUN_NOW start is only what job_test returns: slurmctld's select_nodes can
  // still keep the job pending after it (an accounting limit, no IMEX channel left, a burst
  // buffer), so its line, comment and counters wait (starting()) until slurmctld starts the
  // job (Started) or the caller finds it did not (Dropped).
  bool Took(int i, const Layout& got);
  // Took accepted a RUN_NOW start whose log(), comment() and counters wait for Started or
  // Dropped: every such start has counts waiting (placed, relaxed or left to cons_tres), and
  // nothing else has.
  bool starting() const { return !start_counts_.empty(); }
  // slurmctld started the job Took accepted: its counters count; log() and comment() are
  // Took's, to report now.
  void Started();
  // slurmctld kept the job pending after job_test accepted its start (`slurm_reason`: the
  // job's Reason, "NvidiaImexChannels"): log() and comment() say the job waits and why
  // (once per job and text), and the start counts as not started, not placed. Quiet for a
  // job left to cons_tres without a line (no promise was made).
  void Dropped(const std::string& slurm_reason);
  // RUN_NOW: cons_tres accepted node set i (i = -1: the job's own bitmap) by preempting
  // `jobs` running jobs on `nodes` (ascending; the GPUs are chosen only once those jobs are
  // gone): Slurm preempts them and the job waits; the test that finds their GPUs free places
  // it. RET true: accept; false: reject (a hard job's node set, where cons_tres would
  // preempt on other nodes).
  bool Preempts(int i, const std::vector<int>& nodes, int jobs);
  // Every node set was refused: kRefuse (a hard constraint waits) or kConsTres (relaxed).
  Action Exhausted();
  // compare_cons_tres (RUN_NOW): where cons_tres alone would have put the job on the same
  // state; Took's placement line (not the comment) then ends with
  // cons_tres_alone="node03:0-3 node04:0" (none: it would not start the job).
  void ConsTresAlone(const Layout& alone);
  // After Took accepted a RUN_NOW allocation of GPUs: NVLPLACE_RANKMAP's value for the job
  // (RankMapText); "" otherwise.
  const std::string& rank_map() const { return rank_map_; }

 private:
  friend class Decider;
  JobDecision() = default;
  // Sets the line to log (if its level is enabled). RET false when `once` and this job
  // logged the same text last time (then nothing is logged).
  // `slot`: the once-per-text memory of the job to use (Decider::FirstTime).
  bool Say(LogLevel level, std::string text, bool once, int slot = 0);
  void Comment(std::string text);
  void Refuse(const std::string& why, bool bad_request);
  // A placement line of this job's (its mode and request filled in), with node set i.
  PlacementLine Line(Event event, std::string why = "") const;
  void WithCandidate(PlacementLine* line, int i) const;
  // Logs the line (Say); `comment`: also the SystemComment, without cons_tres_alone.
  bool Tell(LogLevel level, const PlacementLine& line, bool once, bool comment = false,
            int slot = 0);
  // Mode::kWillRun: the job fits on node set 0 once running jobs end (start_time_).
  void SayFitsLater();
  // The caller's name of node n ("#n" for an index it did not give).
  std::string NodeName(int n) const;
  std::vector<NodeGpus> Gpus(const Layout& layout) const;
  // Took's verdict and its line and comment.
  bool TookAndSaid(int i, const Layout& got);

  const Decider* decider_ = nullptr;
  SlurmJob job_;
  Action action_ = Action::kConsTres;
  bool hard_ = false;
  bool hold_ = false;
  bool gpus_ = false;     // the job asks for GPUs
  bool relaxed_ = false;  // every node set refused; cons_tres's own choice
  bool has_options_ = false;
  std::string request_;
  std::vector<std::string> back_to_;  // a requeued job's last NVLink domains (names)
  std::optional<LineRequest> asked_;  // request_ as the placement line's fields
  std::string reason_;
  std::string relaxations_ = "none";
  LogLine log_;
  std::optional<std::string> comment_;
  std::vector<absl::string_view> node_names_;  // the caller's node names, by index
  std::vector<Candidate> candidates_;
  // For more candidates on demand.
  std::optional<Request> rest_;
  LentState state_;
  std::vector<int> to_caller_;                 // topology node -> caller index, -1
  std::vector<std::vector<int>> passed_over_;  // node sets not offered (the job's node count)
  int rounds_ = 0;
  bool exhausted_ = false;
  int64_t start_time_ = 0;
  std::string rank_map_;                            // rank_map()
  int took_ = -1;                                   // the node set Took accepted
  std::vector<uint64_t Counters::*> start_counts_;  // what Started counts; starting()
  std::optional<std::vector<NodeGpus>> alone_;      // compare_cons_tres; empty: none
};

// The decisions of one loaded configuration. Thread-safe: the log de-duplication and the
// counters are locked.
class Decider {
 public:
  explicit Decider(std::unique_ptr<LoadedConfig> config);
  ~Decider();

  const LoadedConfig& config() const { return *config_; }

  // The first step for a job; never throws (an exception becomes an internal error).
  std::unique_ptr<JobDecision> Decide(const SlurmJob& job, const std::vector<LiveNode>& nodes);
  // A job nvlplace cannot decide on (the caller's state is broken): cons_tres, with `why`
  // logged as an error once per job.
  std::unique_ptr<JobDecision> Unusable(const SlurmJob& job, const std::string& why);

  // "nvlplace: since load: 120 jobs placed, 120 as decided, ..." when the counters changed
  // and at least `interval_s` passed since the last summary; else "".
  std::string SummaryDue(double now_s, double interval_s) const;
  // The counters as SummaryDue writes them, now.
  std::string CountersLine() const;
  Counters counters() const;

  // True when `text` differs from the last text given for this job (a pending job's reason
  // is logged once per change, not every scheduling cycle).
  // Slot 1 is a memory of its own, for what Slurm preempts for the job (JobDecision::
  // Preempts): said in the same cycles as the job's wait line, it must not make that line
  // new again, nor the other way round. Slot 2 likewise for a start slurmctld kept pending
  // (JobDecision::Dropped).
  bool FirstTime(uint32_t job_id, const std::string& text, int slot = 0) const;

 private:
  friend class JobDecision;
  struct Shared;
  // What a request came to on the live state.
  struct Placement {
    enum Status { kPlaced, kNoRoom, kBadRequest, kInternal } status = kInternal;
    bool hard = false;
    bool spares_are_why = false;     // kNoRoom only because the domains keep their spares
    bool comm_ratio_is_why = false;  // kNoRoom only because of the policy's max_comm_ratio
    std::string request, reason, relaxations = "none";
  };
  // The engine's view of the live nodes for one request: every GPU busy but those listed as
  // free (all of them with `ignore_busy`), the request narrowed to the nodes Slurm offers, and
  // each topology node's index in the caller's array (-1: not given).
  struct Live {
    std::optional<Request> request;
    LentState state;
    std::vector<int> to_caller;
  };
  Placement Prepare(const RequestSpec& spec, const std::vector<LiveNode>& nodes, bool ignore_busy,
                    Live* live) const;
  // The engine's placement on `live` as d's first node sets (the best, its runner-up).
  Placement Offer(Live live, PlacementResult first, Placement p, JobDecision* d) const;
  Placement Place(const RequestSpec& spec, const std::vector<LiveNode>& nodes, bool ignore_busy,
                  JobDecision* d) const;
  bool More(JobDecision* d) const;
  // Adds a node set to d unless it repeats one, breaks the job's node count or d has enough.
  // RET true when added.
  bool Add(JobDecision* d, Candidate c) const;
  // Mode::kWillRun, a hard request with no room now: the earliest end time of running jobs
  // after which it fits (FindEarliestStart, the estimate the replay reserves with), placed
  // into `d` with start_time_ set. RET false when it fits at none of them.
  bool Later(const RequestSpec& spec, const std::vector<LiveNode>& nodes, JobDecision* d) const;
  void Count(uint64_t Counters::*field) const;

  std::unique_ptr<LoadedConfig> config_;
  std::unique_ptr<Shared> shared_;
  std::shared_ptr<StatePool> pool_;
};

// RequestSpec from the job's GPU request and options, or why the plugin cannot use it.
// `options` holds the parsed nvlplace options (tp, pp, dp, nvl, max_tier).
struct JobRequest {
  bool gpus = false;  // the job asks for GPUs at all
  bool has_options = false;
  std::string unusable;  // non-empty: the plugin cannot place this job shape (why)
  RequestSpec spec;
};
JobRequest RequestOf(const SlurmJob& job, NvlMode default_nvl);

}  // namespace nvlplace::plugin

#endif  // NVLPLACE_PLUGIN_DECISION_H_
