// What the select plugin does with one job in one job_test call (see decision.h).
#include "plugin/decision.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "placement/engine/earliest_start.h"
#include "placement/engine/engine.h"
#include "placement/engine/explain.h"
#include "placement/model/limits.h"
#include "plugin/nvl_options.h"

namespace nvlplace::plugin {

struct Decider::Shared {
  std::mutex mu;
  // Per job and slot (job id | slot << 32): the last line logged once.
  std::unordered_map<uint64_t, std::string> last_text;
  Counters counters;
  Counters summarized;       // the counters at the last summary
  double last_summary = -1;  // seconds
};

// The engine's views of the live nodes, kept between calls: one state per kind (Slurm's
// GPUs as they are; every GPU free, for "could it ever run"), lent to one decision at a
// time and brought to the caller's nodes by difference (Prepare), so that a call costs
// what changed since the last one, and the capacity indexes kept with the state catch up
// through its journal instead of being built per call. A decision that finds its kind lent
// out (another thread deciding) gets a state of its own; one idle state per kind is kept.
class StatePool {
 public:
  explicit StatePool(std::shared_ptr<const Topology> topo) : topo_(std::move(topo)) {}

  static LentState Lend(const std::shared_ptr<StatePool>& pool, bool all_free) {
    std::unique_ptr<ClusterState> state;
    {
      std::lock_guard<std::mutex> lock(pool->mu_);
      state = std::move(pool->idle_[all_free]);
    }
    if (!state) state = std::make_unique<ClusterState>(pool->topo_);
    return LentState(state.release(), StateReturn{pool, all_free});
  }

  void Give(ClusterState* state, bool all_free) {
    std::unique_ptr<ClusterState> back(state);  // deleted after the lock, if not kept
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_[all_free]) idle_[all_free] = std::move(back);
  }

 private:
  std::shared_ptr<const Topology> topo_;
  std::mutex mu_;
  std::unique_ptr<ClusterState> idle_[2];
};

void StateReturn::operator()(ClusterState* state) const {
  if (state == nullptr) return;
  if (pool) {
    pool->Give(state, all_free);
  } else {
    delete state;
  }
}

namespace {

// A placement as the placement line states it: GPUs, NVLink domains, span, score, origin.
LinePlacement FactsOf(const PlacementResult& r, const Topology& topo) {
  LinePlacement p;
  for (auto& [node, gpus] : GpusByNode(r.ranks, topo)) p.gpus.push_back({node, std::move(gpus)});
  std::set<int> seen;
  for (GpuId g : r.ranks) {
    int d = topo.DomainOf(g);
    if (seen.insert(d).second) p.domains.push_back(topo.domains()[d].name);
  }
  Span span = SpanOf(r.ranks, topo);
  p.span_domains = span.domains;
  p.span_nodes = span.nodes;
  p.span_tier = SpanTierName(topo, span.tier);
  p.score = r.total;
  p.origin = r.origin;
  p.locality_traded = r.locality_traded;
  return p;
}

// The request as the placement line states it.
LineRequest AskedOf(const Request& r, const Topology& topo) {
  LineRequest a;
  a.gpus = r.gpus;
  a.nodes = r.nodes;
  a.tp = r.tp;
  a.pp = r.pp;
  a.dp = r.dp;
  a.nvl = NvlModeName(r.nvl);
  if (r.max_tier >= 0) a.max_tier = topo.tiers()[r.max_tier];
  a.max_tier_required = r.max_tier_required;
  if (r.gpu_model >= 0) a.model = topo.gpu_models()[r.gpu_model].name;
  a.exclusive = r.exclusive;
  return a;
}

// "a; b", or b alone when a is "none".
std::string AndRelaxation(const std::string& relaxations, const std::string& more) {
  return relaxations == "none" ? more : absl::StrCat(relaxations, "; ", more);
}

// A placement as the caller's node indexes (ascending) and each node's GPU indexes.
Layout CallerLayout(const std::vector<GpuId>& ranks, const Topology& topo,
                    const std::vector<int>& to_caller) {
  std::map<int, std::vector<int>> by_node;
  for (GpuId g : ranks) by_node[to_caller[topo.gpus()[g].node]].push_back(topo.gpus()[g].index);
  Layout layout;
  for (auto& [node, gpus] : by_node) {
    std::sort(gpus.begin(), gpus.end());
    layout.nodes.push_back(node);
    layout.gpus.push_back(std::move(gpus));
  }
  return layout;
}

// The candidate of a placement, on the caller's node indexes. An exclusive job (Slurm's
// --exclusive: the engine chose wholly free nodes) is given every GPU of its nodes by
// cons_tres, which refuses a whole-node job a node with a GPU marked allocated: its node set
// lists them all, the engine's ranks first, so that the mask leaves the nodes whole and the
// decision is what Slurm allocates.
Candidate CandidateOf(const PlacementResult& r, const Topology& topo,
                      const std::vector<int>& to_caller, bool whole_nodes) {
  if (whole_nodes) {
    PlacementResult whole = r;
    std::vector<bool> taken(topo.num_gpus(), false);
    for (GpuId g : r.ranks) taken[g] = true;
    for (GpuId g : r.ranks) {
      for (GpuId other : topo.nodes()[topo.gpus()[g].node].gpus) {
        if (!taken[other]) {
          taken[other] = true;
          whole.ranks.push_back(other);
        }
      }
    }
    return CandidateOf(whole, topo, to_caller, false);
  }
  return Candidate{CallerLayout(r.ranks, topo, to_caller), FactsOf(r, topo)};
}

// A constraint the job would wait for rather than run without (each is checked by the
// engine; a prefer job, or one without options, never waits for nvlplace).
bool MayBeHard(const RequestSpec& spec) {
  return (spec.nvl == NvlMode::kStrict && spec.tp > 1) || !spec.max_tier.empty() ||
         spec.one_domain || spec.segment > 0;
}

// GPUs free now on the nodes a job may use.
int64_t FreeGpus(const std::vector<LiveNode>& nodes) {
  int64_t free = 0;
  for (const LiveNode& n : nodes) {
    if (n.usable) free += static_cast<int64_t>(n.free.size());
  }
  return free;
}

// The fewest GPUs any allocation of the request holds (0: none known).
int64_t NeededGpus(const RequestSpec& spec) {
  return spec.gpus > 0 ? spec.gpus : int64_t{spec.nodes} * spec.gpus_per_node;
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kRunNow:
      return "run_now";
    case Mode::kTestOnly:
      return "test_only";
    case Mode::kWillRun:
      return "will_run";
  }
  return "?";
}

}  // namespace

std::string Candidate::Describe() const { return FormatPlacement(facts); }

// ---- the job's request ----------------------------------------------------------------

TresGpus GpusInTres(absl::string_view tres) {
  constexpr uint64_t kTooMany = static_cast<uint64_t>(limits::kMaxJobGpus) + 1;
  TresGpus out;
  for (absl::string_view entry : absl::StrSplit(tres, absl::ByAnyChar(",;"), absl::SkipEmpty())) {
    absl::string_view name = entry;
    if (absl::StartsWith(name, "gres:") || absl::StartsWith(name, "gres/")) name.remove_prefix(5);
    if (!absl::StartsWith(name, "gpu") || (name.size() > 3 && name[3] != ':')) continue;
    ++out.entries;
    if (name.size() == 3) {  // "gpu": one
      ++out.count;
      continue;
    }
    absl::string_view rest = name.substr(4);  // "type", "N" or "type:N"
    size_t last = rest.rfind(':');
    absl::string_view count = last == absl::string_view::npos ? rest : rest.substr(last + 1);
    uint64_t n = 0;
    bool number = !count.empty() && absl::ascii_isdigit(count[0]) && absl::SimpleAtoi(count, &n);
    if (number) {
      // Saturated past any job's size: RequestOf refuses it by its count.
      out.count = std::min(out.count + std::min(n, kTooMany), kTooMany);
    } else if (last == absl::string_view::npos) {  // "gpu:h100": one of that type
      ++out.count;
    } else {
      out.unreadable = true;
    }
    if (out.type.empty() && last != absl::string_view::npos) {
      out.type = std::string(rest.substr(0, last));
    } else if (out.type.empty() && !rest.empty() && !absl::ascii_isdigit(rest[0])) {
      out.type = std::string(rest);
    }
  }
  return out;
}

// A requeued job's NVLink domains to go back to: its last placement line's back_to (it waited
// since), else the domains of the placement it ran on; none for a job never placed.
std::vector<std::string> BackTo(const SlurmJob& job) {
  if (job.restarts == 0 || job.previous_comment.empty()) return {};
  std::optional<std::string> domains = LineField(job.previous_comment, "back_to");
  if (!domains) {
    std::optional<std::string> event = LineField(job.previous_comment, "event");
    if (event == "placed" || event == "differs") {
      domains = LineField(job.previous_comment, "domains");
    }
  }
  if (!domains) return {};
  return absl::StrSplit(*domains, ',', absl::SkipEmpty());
}

JobRequest RequestOf(const SlurmJob& job, NvlMode default_nvl) {
  JobRequest r;
  if (!job.gpus_per_job && !job.gpus_per_node && !job.gpus_per_task && !job.gpus_per_socket) {
    return r;
  }
  r.gpus = true;
  std::vector<char*> env;
  for (const std::string& e : job.env) env.push_back(const_cast<char*>(e.c_str()));
  nvl_job_opts_t opts;
  char msg[512] = "";
  int rc =
      nvl_opts_from_env(env.data(), static_cast<uint32_t>(env.size()), &opts, msg, sizeof(msg));
  r.has_options = rc != 0;
  if (rc < 0) {
    r.unusable = msg;
    return r;
  }
  RequestSpec& s = r.spec;
  s.tp = opts.tp;
  s.pp = opts.pp;
  s.dp = opts.dp;
  s.nvl = default_nvl;
  if (opts.nvl[0] != '\0') s.nvl = *ParseNvlMode(opts.nvl);  // nvl_options checked it
  s.max_tier = opts.max_tier;
  s.one_domain = std::string_view(opts.domain) == "one";
  s.segment = job.segment;
  s.spread_segments = job.spread_segments;
  s.consolidate_segments = job.consolidate_segments;
  s.may_use_spares = job.restarts > 0;  // requeued after a failure: spares are for it
  s.exclusive = job.whole_node;
  s.gpu_model = job.gpu_type;  // Slurm's GRES type: the topology's model of that name

  if (job.gpus_per_socket) {
    r.unusable =
        "GPUs per socket (--gpus-per-socket) are not placed by nvlplace; ask with "
        "--gpus, --gpus-per-node or --gpus-per-task";
    return r;
  }
  if (job.gpu_requests > 1) {
    r.unusable = absl::StrCat("the job asks for ", job.gpu_requests,
                              " kinds of GPU; nvlplace places one kind per job");
    return r;
  }
  // Sizes in 64 bits, bounded before they become ints.
  const uint64_t max_gpus = static_cast<uint64_t>(limits::kMaxJobGpus);
  uint32_t min_nodes = std::max<uint32_t>(job.min_nodes, 1);
  // -w: the job must hold every node named. The engine can promise that only when the
  // named nodes are all the job's nodes (then it chooses among exactly those).
  if (job.required_nodes > 0 && static_cast<uint32_t>(job.required_nodes) != min_nodes) {
    r.unusable = absl::StrCat("-w names ", job.required_nodes, " node(s) for a job of ", min_nodes,
                              " node(s): nvlplace chooses nodes itself and cannot promise to "
                              "use every node named");
    return r;
  }
  if (job.gpus_per_node) {
    if (job.gpus_per_node > max_gpus || min_nodes > static_cast<uint64_t>(limits::kMaxJobNodes) ||
        job.gpus_per_node * min_nodes > max_gpus) {
      r.unusable = absl::StrCat("the job asks for ", job.gpus_per_node, " GPUs on each of ",
                                min_nodes, " nodes, more than nvlplace places (", max_gpus, ")");
      return r;
    }
    s.nodes = static_cast<int>(min_nodes);
    s.gpus_per_node = static_cast<int>(job.gpus_per_node);
    return r;
  }
  uint64_t tasks = job.num_tasks ? job.num_tasks : 1;
  uint64_t gpus = job.gpus_per_job;
  if (!gpus) {
    gpus =
        job.gpus_per_task > max_gpus || tasks > max_gpus ? max_gpus + 1 : job.gpus_per_task * tasks;
  }
  if (gpus > max_gpus) {
    r.unusable = absl::StrCat("the job asks for more GPUs than nvlplace places (", max_gpus, ")");
    return r;
  }
  s.gpus = static_cast<int>(gpus);
  if (min_nodes > 1) {
    // The same share on an exact node count: nvlplace does not choose node counts in a range
    // (a job whose -w names all its nodes has exactly those).
    bool exact = job.max_nodes == job.min_nodes || job.required_nodes > 0;
    if (!exact) {
      r.unusable = absl::StrCat(gpus, " GPUs on ", job.min_nodes, " to ", job.max_nodes,
                                " nodes: nvlplace needs an exact node count (-N", job.min_nodes,
                                ", or --gpus-per-node)");
      return r;
    }
    if (gpus % min_nodes != 0) {
      r.unusable = absl::StrCat(gpus, " GPUs do not split evenly over ", min_nodes,
                                " nodes: nvlplace places the same share on each node (a multiple "
                                "of ",
                                min_nodes, " GPUs, or --gpus-per-node)");
      return r;
    }
    s.nodes = static_cast<int>(min_nodes);
    s.gpus_per_node = static_cast<int>(gpus / min_nodes);
    s.gpus = 0;
  }
  return r;
}

// ---- one job ----------------------------------------------------------------------------

bool JobDecision::Say(LogLevel level, std::string text, bool once, int slot) {
  log_ = LogLine{};
  if (once && job_.id != 0 && !decider_->FirstTime(job_.id, text, slot)) return false;
  if (level <= decider_->config().config.log_level) log_ = LogLine{level, std::move(text)};
  return true;
}

void JobDecision::Comment(std::string text) { comment_ = std::move(text); }

std::string JobDecision::NodeName(int n) const {
  return n >= 0 && n < static_cast<int>(node_names_.size()) ? std::string(node_names_[n])
                                                            : absl::StrCat("#", n);
}

std::vector<NodeGpus> JobDecision::Gpus(const Layout& layout) const {
  std::vector<NodeGpus> out;
  for (size_t k = 0; k < layout.nodes.size(); ++k) {
    out.push_back({NodeName(layout.nodes[k]), layout.gpus[k]});
  }
  return out;
}

PlacementLine JobDecision::Line(Event event, std::string why) const {
  PlacementLine line;
  line.event = event;
  if (job_.mode != Mode::kRunNow) line.mode = ModeName(job_.mode);
  line.request = asked_;
  line.why = std::move(why);
  line.back_to = back_to_;
  return line;
}

void JobDecision::WithCandidate(PlacementLine* line, int i) const {
  if (i < 0 || i >= num_candidates()) return;
  line->placement = candidates_[i].facts;
  line->candidate = i + 1;
  line->candidates = num_candidates();
}

bool JobDecision::Tell(LogLevel level, const PlacementLine& line, bool once, bool comment,
                       int slot) {
  // A second look with preemption says only what cons_tres accepts (Took, Preempts' slot):
  // its waits, refusals and holds would replace the first look's line in the job's memory,
  // comment and counters.
  if (job_.preempting && once && slot == 0) return false;
  std::string text = Format(line);
  if (comment && line.cons_tres_alone) {
    PlacementLine own = line;
    own.cons_tres_alone.reset();  // the admin's measurement, not the job's
    Comment(absl::StrCat("nvlplace: ", Format(own)));
  } else if (comment) {
    Comment(absl::StrCat("nvlplace: ", text));  // the same line (formatted once: it can be long)
  }
  return Say(level, std::move(text), once, slot);
}

void JobDecision::SayFitsLater() {
  PlacementLine line = Line(Event::kWillRun);
  line.start_in = start_time_ - job_.now;
  WithCandidate(&line, 0);
  line.relaxations = relaxations_;
  Tell(kLogDebug, line, false);
}

void JobDecision::Refuse(const std::string& why, bool bad_request) {
  action_ = Action::kRefuse;
  std::string what = request_.empty() ? why : absl::StrCat(request_, ": ", why);
  reason_ = bad_request ? what : absl::StrCat("never runnable on this cluster: ", what);
  switch (job_.mode) {
    case Mode::kTestOnly:
      if (Tell(kLogInfo,
               Line(Event::kRefused,
                    bad_request ? why : absl::StrCat("never runnable on this cluster: ", why)),
               true)) {
        decider_->Count(&Counters::refused);
      }
      break;
    case Mode::kRunNow:
      hold_ = bad_request;
      if (bad_request) {
        PlacementLine line =
            Line(Event::kHeld, absl::StrCat(why, "; resubmit with other --nvl-* options or GPUs"));
        if (Tell(kLogInfo, line, true, /*comment=*/true)) decider_->Count(&Counters::refused);
      } else {
        if (Tell(kLogInfo, Line(Event::kWaiting, why), true, /*comment=*/true)) {
          decider_->Count(&Counters::waiting);
        }
      }
      break;
    case Mode::kWillRun:
      // Backfill alone tries a job that the main scheduler passes over (Reason=Priority
      // behind a job that waits for resources): without the comment such a strict job
      // waited with nothing of nvlplace's to say why (tests/slurm/block.sh). Logged at
      // debug only: backfill asks again every cycle.
      Tell(kLogDebug, Line(Event::kWaiting, why), false, /*comment=*/true);
      break;
  }
}

const Candidate* JobDecision::CandidateAt(int i) {
  if (i < 0) return nullptr;
  while (i >= num_candidates() && i > 0 && decider_->More(this)) {
  }
  return i < num_candidates() ? &candidates_[i] : nullptr;
}

void JobDecision::Refused(int i) {
  log_ = LogLine{};
  comment_.reset();
  if (i < 0 || i >= num_candidates()) return;
  PlacementLine line = Line(Event::kCandidateRefused);
  WithCandidate(&line, i);
  Tell(kLogDebug, line, false);
}

bool JobDecision::Took(int i, const Layout& got) {
  log_ = LogLine{};
  comment_.reset();
  rank_map_.clear();
  start_counts_.clear();
  took_ = i;
  const bool accepted = TookAndSaid(i, got);
  if (accepted && job_.mode == Mode::kRunNow && gpus_) {
    const Topology& topo = *decider_->config().topology;
    const Candidate* c = Peek(i);
    // The engine's own rank order when Slurm allocates what it decided; else Slurm's
    // allocation with each NVLink domain's nodes together.
    rank_map_ = c != nullptr && got == c->layout
                    ? RankMapText(topo, c->facts.gpus)
                    : RankMapText(topo, GroupedByDomain(topo, Gpus(got)));
  }
  return accepted;
}

bool JobDecision::TookAndSaid(int i, const Layout& got) {
  if (job_.mode != Mode::kRunNow) {
    if (i >= 0 && i < num_candidates()) {
      PlacementLine line = Line(Event::kCandidateTaken);
      WithCandidate(&line, i);
      Tell(kLogDebug, line, false);
    }
    return true;
  }
  if (i < 0 || i >= num_candidates()) {
    if (!gpus_) return true;
    if (!relaxed_) {
      // Left to cons_tres from the start: no promise was made; a comment of ours left from
      // an earlier wait goes, and a job with options says who placed it.
      start_counts_.push_back(&Counters::cons_tres);
      if (has_options_ && !request_.empty()) {
        PlacementLine line = Line(Event::kConsTres);
        line.slurm_gpus = Gpus(got);
        Comment(absl::StrCat("nvlplace: ", Format(line)));
      } else {
        Comment("");
      }
      return true;
    }
    start_counts_.push_back(&Counters::relaxed);
    PlacementLine line = Line(Event::kPlacedByConsTres);
    line.slurm_gpus = Gpus(got);
    line.candidates = num_candidates();
    line.relaxations = AndRelaxation(
        relaxations_,
        candidates_.empty()
            ? absl::StrCat("no node set of nvlplace has the job's node count (", job_.min_nodes,
                           " to ", job_.max_nodes, " nodes)")
            : absl::StrCat("cons_tres refused the ", num_candidates(),
                           " node sets of nvlplace, first ", GpusText(candidates_[0].facts.gpus)));
    Tell(kLogInfo, line, false, /*comment=*/true);
    return true;
  }
  const Candidate& c = candidates_[i];
  PlacementLine line = Line(Event::kPlaced);
  WithCandidate(&line, i);
  line.slurm_gpus = Gpus(got);
  line.cons_tres_alone = alone_;
  if (got == c.layout) {
    start_counts_.push_back(&Counters::placed);
    start_counts_.push_back(&Counters::as_decided);
    line.relaxations = relaxations_;
    Tell(kLogInfo, line, false, /*comment=*/true);
    return true;
  }
  if (hard_) {
    decider_->Count(&Counters::strict_rejected);
    line.event = Event::kRejected;
    line.cons_tres_alone.reset();
    Tell(kLogInfo, line, false);
    return false;
  }
  start_counts_.push_back(&Counters::placed);
  start_counts_.push_back(&Counters::differed);
  line.event = Event::kDiffers;
  line.relaxations =
      AndRelaxation(relaxations_, absl::StrCat("cons_tres allocated ", GpusText(Gpus(got)),
                                               " instead of ", GpusText(c.facts.gpus)));
  Tell(kLogInfo, line, false, /*comment=*/true);
  return true;
}

void JobDecision::Started() {
  for (uint64_t Counters::*field : start_counts_) decider_->Count(field);
  start_counts_.clear();
}

void JobDecision::Dropped(const std::string& slurm_reason) {
  if (!starting()) return;
  // A job nvlplace left to cons_tres without a line of its own made no promise to take back.
  const bool promised = comment_.has_value() && !comment_->empty();
  start_counts_.clear();
  rank_map_.clear();
  log_ = LogLine{};
  comment_.reset();
  if (!promised) return;
  PlacementLine line =
      Line(Event::kWaiting,
           absl::StrCat("Slurm kept the job pending after accepting this placement (Reason=",
                        slurm_reason.empty() ? "unknown" : slurm_reason,
                        "); it is placed again when Slurm next tries to start it"));
  WithCandidate(&line, took_);
  if (Tell(kLogInfo, line, true, /*comment=*/true, /*slot=*/2)) {
    decider_->Count(&Counters::not_started);
  }
}

bool JobDecision::Preempts(int i, const std::vector<int>& nodes, int jobs) {
  log_ = LogLine{};
  comment_.reset();
  rank_map_.clear();
  const bool ours = i >= 0 && i < num_candidates();
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (int n : nodes) names.push_back(NodeName(n));
  if (ours && hard_ && nodes != candidates_[i].layout.nodes) {
    decider_->Count(&Counters::strict_rejected);
    PlacementLine line = Line(Event::kRejected,
                              absl::StrCat("cons_tres would preempt on ", absl::StrJoin(names, ","),
                                           ", not the node set's nodes"));
    WithCandidate(&line, i);
    Tell(kLogInfo, line, false);
    return false;
  }
  PlacementLine line =
      Line(Event::kWaiting,
           absl::StrFormat("Slurm preempts %d running job%s on %s first; the job starts once "
                           "their GPUs are free",
                           jobs, jobs == 1 ? "" : "s", absl::StrJoin(names, ",")));
  if (ours) WithCandidate(&line, i);
  if (Tell(kLogInfo, line, true, /*comment=*/true, /*slot=*/1)) {
    decider_->Count(&Counters::preempting);
  }
  return true;
}

void JobDecision::ConsTresAlone(const Layout& alone) { alone_ = Gpus(alone); }

Action JobDecision::Exhausted() {
  log_ = LogLine{};
  comment_.reset();
  if (!hard_) {
    action_ = Action::kConsTres;
    relaxed_ = true;
    return action_;
  }
  action_ = Action::kRefuse;
  if (job_.mode == Mode::kRunNow) {
    PlacementLine line = Line(
        Event::kWaiting,
        candidates_.empty()
            ? absl::StrFormat("no node set of nvlplace has the job's node count (%u to %u nodes)",
                              job_.min_nodes, job_.max_nodes)
            : absl::StrFormat("cons_tres refused the %d node sets that keep it (CPUs, "
                              "memory or other limits)",
                              num_candidates()));
    if (!candidates_.empty()) WithCandidate(&line, 0);
    if (Tell(kLogInfo, line, true, /*comment=*/true)) decider_->Count(&Counters::waiting);
  }
  return action_;
}

// ---- the decider ---------------------------------------------------------------------------

Decider::Decider(std::unique_ptr<LoadedConfig> config)
    : config_(std::move(config)),
      shared_(std::make_unique<Shared>()),
      pool_(std::make_shared<StatePool>(config_->topology)) {}

Decider::~Decider() = default;

bool Decider::FirstTime(uint32_t job_id, const std::string& text, int slot) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  if (shared_->last_text.size() > 100000) shared_->last_text.clear();
  std::string& last = shared_->last_text[job_id | static_cast<uint64_t>(slot) << 32];
  if (last == text) return false;
  last = text;
  return true;
}

void Decider::Count(uint64_t Counters::*field) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  ++(shared_->counters.*field);
}

Counters Decider::counters() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->counters;
}

std::string Decider::SummaryDue(double now_s, double interval_s) const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  const Counters& c = shared_->counters;
  const Counters& s = shared_->summarized;
  bool changed = std::memcmp(&c, &s, sizeof(Counters)) != 0;
  if (!changed || (shared_->last_summary >= 0 && now_s - shared_->last_summary < interval_s)) {
    return "";
  }
  shared_->last_summary = now_s;
  shared_->summarized = c;
  return CountersText(c);
}

std::string Decider::CountersLine() const { return CountersText(counters()); }

std::string RankMapText(const Topology& topo, const std::vector<NodeGpus>& by_rank) {
  std::string out = "v1";
  for (const NodeGpus& n : by_rank) {
    std::vector<std::string> domains;
    NodeId id = topo.FindNode(n.node);
    for (int g : n.gpus) {
      std::string d = "?";
      if (id >= 0 && g >= 0 && g < static_cast<int>(topo.nodes()[id].gpus.size())) {
        d = topo.domains()[topo.gpus()[topo.nodes()[id].gpus[g]].domain].name;
        // The map is space-separated; a domain name never holds a space in it.
        std::replace(d.begin(), d.end(), ' ', '_');
      }
      if (std::find(domains.begin(), domains.end(), d) == domains.end()) domains.push_back(d);
    }
    if (n.gpus.empty()) continue;
    // In rank order: the node's local rank i belongs on its i-th GPU (NVLPLACE_NODE_GPUS).
    absl::StrAppend(&out, " ", n.node, ":", RankIndexList(n.gpus), ":",
                    absl::StrJoin(domains, ","));
  }
  return out;
}

std::vector<NodeGpus> GroupedByDomain(const Topology& topo, std::vector<NodeGpus> got) {
  std::map<std::string, int> first_seen;  // domain -> order of first appearance
  std::vector<int> key(got.size());
  for (size_t k = 0; k < got.size(); ++k) {
    NodeId id = topo.FindNode(got[k].node);
    std::string d = "?";
    if (id >= 0 && !got[k].gpus.empty() && got[k].gpus[0] >= 0 &&
        got[k].gpus[0] < static_cast<int>(topo.nodes()[id].gpus.size())) {
      d = topo.domains()[topo.gpus()[topo.nodes()[id].gpus[got[k].gpus[0]]].domain].name;
    }
    key[k] = first_seen.emplace(d, static_cast<int>(first_seen.size())).first->second;
  }
  std::vector<size_t> order(got.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
  std::vector<NodeGpus> out;
  out.reserve(got.size());
  for (size_t k : order) out.push_back(std::move(got[k]));
  return out;
}

std::string CountersText(const Counters& c) {
  return absl::StrFormat(
      "since load: %d jobs placed on nvlplace node sets, %d allocated as decided, %d "
      "differently (never a hard constraint); %d node sets refused because cons_tres would "
      "allocate other GPUs; %d placed by cons_tres after refusing every node set; %d waits "
      "for a hard constraint; %d node sets where Slurm preempts running jobs first; %d requests "
      "refused or held; %d GPU jobs left to cons_tres; %d placements Slurm kept pending",
      c.placed, c.as_decided, c.differed, c.strict_rejected, c.relaxed, c.waiting, c.preempting,
      c.refused, c.cons_tres, c.not_started);
}

Decider::Placement Decider::Prepare(const RequestSpec& spec, const std::vector<LiveNode>& nodes,
                                    bool ignore_busy, Live* live) const {
  Placement p;
  const Topology& topo = *config_->topology;
  absl::StatusOr<Request> request = ResolveRequest(spec, topo);
  if (!request.ok()) {
    p.status = Placement::kBadRequest;
    p.reason = std::string(request.status().message());
    return p;
  }
  // What the job waits for rather than run without: strict TP groups, a required tier, one
  // NVLink domain it asked for, its segments.
  p.hard = (request->nvl == NvlMode::kStrict && request->tp > 1) ||
           (request->max_tier >= 0 && request->max_tier_required) || request->one_domain_asked ||
           request->segment > 0;
  p.request = DescribeRequest(*request, topo);

  // The live state: every GPU busy except those the caller lists as free, on the pool's
  // state brought to the caller's node by node (most nodes are as they were at the last call).
  live->state = StatePool::Lend(pool_, ignore_busy);
  ClusterState& state = *live->state;
  live->to_caller.assign(topo.num_nodes(), -1);
  // A node is allowed when the request allows it (its GPU model) and Slurm offers it.
  std::vector<uint8_t> of_request = std::move(request->allowed_node);
  request->allowed_node.assign(topo.num_nodes(), false);
  thread_local std::vector<uint8_t> mine;  // one node's GPUs: free or not
  // Whether node n of the state already has free exactly the GPUs `free` lists: only for a
  // list in ascending order (as Slurm's bitmaps give it; anything else is compared in full).
  auto as_listed = [&state, &topo](NodeId n, absl::Span<const int> free) {
    if (static_cast<size_t>(state.free_on_node(n)) != free.size()) return false;
    const nvlplace::NodeGpus& gpus = topo.nodes()[n].gpus;
    int before = -1;
    for (int idx : free) {
      if (idx <= before || static_cast<size_t>(idx) >= gpus.size() || state.busy(gpus[idx])) {
        return false;
      }
      before = idx;
    }
    return true;
  };
  // Slurm's nodes mostly come in the model's order: each is looked for first after the one
  // before (FindNode's guess), before the name index.
  NodeId guess = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeId n = topo.FindNode(nodes[i].name, guess);
    if (n >= 0) guess = n + 1;
    if (n < 0 || live->to_caller[n] >= 0) continue;  // unknown, or named twice: the first counts
    live->to_caller[n] = static_cast<int>(i);
    request->allowed_node[n] = nodes[i].usable && of_request[n];
    const Node& node = topo.nodes()[n];
    if (!node.placed) continue;  // its GPUs are busy for good
    const size_t num_gpus = node.gpus.size();
    if (ignore_busy ? static_cast<size_t>(state.free_on_node(n)) == num_gpus
                    : as_listed(n, nodes[i].free)) {
      continue;
    }
    mine.assign(num_gpus, ignore_busy ? 1 : 0);
    if (!ignore_busy) {
      for (int idx : nodes[i].free) {
        if (idx >= 0 && static_cast<size_t>(idx) < num_gpus) mine[static_cast<size_t>(idx)] = 1;
      }
    }
    state.SetNodeFree(n, mine);
  }
  // Nodes the caller did not give: every GPU busy. When Slurm offers every node the request
  // allows, the request keeps its set (every node, or one model's): the capacity indexes kept
  // with the state serve it; any narrower offer is a listed set, indexed per decision.
  bool narrowed = false;
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    if (live->to_caller[n] < 0 && state.free_on_node(n) > 0) {
      mine.assign(topo.nodes()[n].gpus.size(), 0);
      state.SetNodeFree(n, mine);
    }
    narrowed |= request->allowed_node[n] != of_request[n];
  }
  if (narrowed) request->allowed_set = Request::kListed;
  live->request = std::move(*request);
  p.status = Placement::kPlaced;
  return p;
}

bool Decider::Add(JobDecision* d, Candidate c) const {
  if (d->num_candidates() >= config_->config.candidates) return false;
  for (const Candidate& have : d->candidates_) {
    if (have.layout.nodes == c.layout.nodes) return false;
  }
  // Slurm's node count for the job (-N, or -N1 for --gpus=16 on 8-GPU nodes): a node set of
  // another size is never offered; its nodes are kept out of the next ones.
  const int64_t count = static_cast<int64_t>(c.layout.nodes.size());
  const SlurmJob& job = d->job_;
  if ((job.min_nodes > 0 && count < job.min_nodes) ||
      (job.max_nodes > 0 && count > job.max_nodes)) {
    PlacementLine line = d->Line(
        Event::kCandidateRefused,
        absl::StrFormat("%d nodes; the job takes %u to %u", count, job.min_nodes, job.max_nodes));
    line.placement = c.facts;
    d->Tell(kLogDebug, line, false);
    d->passed_over_.push_back(std::move(c.layout.nodes));
    return false;
  }
  d->candidates_.push_back(std::move(c));
  return true;
}

Decider::Placement Decider::Offer(Live live, PlacementResult first, Placement p,
                                  JobDecision* d) const {
  const Topology& topo = *config_->topology;
  d->asked_ = AskedOf(*live.request, topo);
  if (!first.placed) {
    p.status = first.internal_error ? Placement::kInternal : Placement::kNoRoom;
    p.reason = first.reason;
    p.spares_are_why = first.spares_are_why;
    p.comm_ratio_is_why = first.comm_ratio_is_why;
    return p;
  }
  if (!first.relaxations.empty()) p.relaxations = absl::StrJoin(first.relaxations, "; ");
  // Candidates: the best placement and the runner-up on other nodes now; more, each away
  // from the nodes already offered, only when asked.
  Add(d, CandidateOf(first, topo, live.to_caller, live.request->exclusive));
  if (first.best_rejected) {
    PlacementResult alt;
    alt.ranks = first.best_rejected->ranks;
    alt.total = first.best_rejected->total;
    alt.origin = first.best_rejected->origin;
    Add(d, CandidateOf(alt, topo, live.to_caller, live.request->exclusive));
  }
  d->rest_ = std::move(live.request);
  d->state_ = std::move(live.state);
  d->to_caller_ = std::move(live.to_caller);
  p.status = Placement::kPlaced;
  return p;
}

Decider::Placement Decider::Place(const RequestSpec& spec, const std::vector<LiveNode>& nodes,
                                  bool ignore_busy, JobDecision* d) const {
  Live live;
  Placement p = Prepare(spec, nodes, ignore_busy, &live);
  if (p.status != Placement::kPlaced) return p;
  PlacementResult first;
  if (!d->back_to_.empty() && !ignore_busy) {
    // A requeued job first tries the NVLink domains it ran in (a failed tray replaced inside
    // its rack: its spares are open to it); the other node sets cons_tres may be offered
    // after it, and the whole cluster when they have no room.
    const Topology& topo = *config_->topology;
    std::vector<uint8_t> all = live.request->allowed_node;
    const int all_set = live.request->allowed_set;
    live.request->allowed_set = Request::kListed;
    for (NodeId n = 0; n < topo.num_nodes(); ++n) {
      bool inside = false;
      for (DomainId dom : topo.nodes()[n].domains) {
        inside |= absl::c_linear_search(d->back_to_, topo.domains()[dom].name);
      }
      live.request->allowed_node[n] = all[n] && inside;
    }
    // Its refusal is never told (the whole cluster is tried next): no text built for it.
    first = config_->engine->Place(*live.state, *live.request, Engine::Detail::kPlacement);
    live.request->allowed_node = std::move(all);
    live.request->allowed_set = all_set;
  }
  if (!first.placed) first = config_->engine->Place(*live.state, *live.request);
  return Offer(std::move(live), std::move(first), std::move(p), d);
}

bool Decider::More(JobDecision* d) const {
  const Topology& topo = *config_->topology;
  auto keep_out = [&](const std::vector<int>& caller_nodes) {
    for (int caller_index : caller_nodes) {
      for (NodeId n = 0; n < topo.num_nodes(); ++n) {
        if (d->to_caller_[n] == caller_index) d->rest_->allowed_node[n] = false;
      }
    }
  };
  while (!d->exhausted_ && d->num_candidates() < config_->config.candidates) {
    if (++d->rounds_ > 4 || !d->rest_ || !d->state_) break;
    d->rest_->allowed_set = Request::kListed;
    for (const Candidate& c : d->candidates_) keep_out(c.layout.nodes);
    for (const std::vector<int>& nodes : d->passed_over_) keep_out(nodes);
    // Only another placement is read: no text for the refusal that ends the list.
    PlacementResult next =
        config_->engine->Place(*d->state_, *d->rest_, Engine::Detail::kPlacement);
    if (!next.placed) break;
    if (Add(d, CandidateOf(next, topo, d->to_caller_, d->rest_->exclusive))) return true;
  }
  d->exhausted_ = true;
  return false;
}

bool Decider::Later(const RequestSpec& spec, const std::vector<LiveNode>& nodes,
                    JobDecision* d) const {
  const SlurmJob& job = d->job_;
  Live live;
  Placement p = Prepare(spec, nodes, /*ignore_busy=*/false, &live);
  if (p.status != Placement::kPlaced) return false;
  // Each busy GPU of a usable node, free from its job's end time (one release per GPU: a
  // GPU listed both free and busy must not keep the others of its job busy).
  const Topology& topo = *config_->topology;
  std::vector<Release> releases;
  NodeId guess = 0;  // as in Prepare
  for (const LiveNode& n : nodes) {
    NodeId id = n.usable ? topo.FindNode(n.name, guess) : -1;
    if (id < 0) continue;
    guess = id + 1;
    const auto& gpus = topo.nodes()[id].gpus;
    for (const auto& [gpu, until] : n.busy_until) {
      if (gpu >= 0 && gpu < static_cast<int>(gpus.size())) {
        releases.push_back(Release{static_cast<double>(until), {gpus[gpu]}});
      }
    }
  }
  const int64_t from = std::max(job.now, job.will_run_start);
  EarliestStart at =
      FindEarliestStart(*config_->engine, live.state.get(), *live.request, releases,
                        static_cast<double>(from), static_cast<double>(job.will_run_end));
  if (!at.found) return false;
  AdvanceTo(live.state.get(), releases, static_cast<double>(from), at.time);
  p = Offer(std::move(live), std::move(at.placement), std::move(p), d);
  if (p.status != Placement::kPlaced || d->candidates_.empty()) return false;
  d->relaxations_ = p.relaxations;
  d->start_time_ = std::max(static_cast<int64_t>(at.time), job.now);
  d->SayFitsLater();
  return true;
}

std::unique_ptr<JobDecision> Decider::Unusable(const SlurmJob& job, const std::string& why) {
  std::unique_ptr<JobDecision> d(new JobDecision());
  d->decider_ = this;
  d->job_ = job;
  d->Tell(kLogError, d->Line(Event::kConsTres, why), true);
  return d;
}

std::unique_ptr<JobDecision> Decider::Decide(const SlurmJob& job,
                                             const std::vector<LiveNode>& nodes) {
  std::unique_ptr<JobDecision> d(new JobDecision());
  d->decider_ = this;
  d->job_ = job;
  try {
    JobRequest jr;
    if (!job.gpus_unreadable) {
      jr = RequestOf(job, config_->config.default_nvl);
      jr.spec.slurm_blocks = config_->config.slurm_blocks;
    }
    // Fewer GPUs free than the job needs, and none slurmctld could add: cons_tres would search
    // every node to say no. The job waits with Slurm's own reason, as it would after that
    // search (the main scheduler tests its first blocked job in every cycle); only a hard
    // constraint's refusal names its own. Before anything is copied for the answers.
    if (job.mode == Mode::kRunNow && job.free_is_all && jr.gpus && jr.unusable.empty() &&
        !MayBeHard(jr.spec) && FreeGpus(nodes) < NeededGpus(jr.spec)) {
      d->action_ = Action::kRefuse;
      return d;
    }
    d->node_names_.reserve(nodes.size());
    for (const LiveNode& n : nodes) d->node_names_.push_back(n.name);
    if (job.gpus_unreadable) return d;  // slurmctld's own checks decide on the GPU counts
    if (!jr.gpus) return d;             // nothing for nvlplace: cons_tres, silently
    d->gpus_ = true;
    d->has_options_ = jr.has_options;
    if (!jr.unusable.empty()) {
      if (jr.has_options) {
        d->Refuse(jr.unusable, /*bad_request=*/true);
      } else {
        d->Tell(kLogDebug, d->Line(Event::kConsTres, jr.unusable), true);
      }
      return d;
    }
    d->back_to_ = BackTo(job);
    const RequestSpec& spec = jr.spec;
    const bool may_be_hard = MayBeHard(spec);
    // "Could it ever run" matters only for a constraint the job would wait for.
    if (job.mode == Mode::kTestOnly && !may_be_hard && !jr.has_options) return d;
    Placement p = Place(spec, nodes, /*ignore_busy=*/job.mode == Mode::kTestOnly, d.get());
    d->request_ = p.request;
    d->hard_ = p.hard;
    d->relaxations_ = p.relaxations;
    switch (p.status) {
      case Placement::kBadRequest:
        if (jr.has_options) {
          d->Refuse(p.reason, /*bad_request=*/true);
        } else {
          d->Tell(kLogInfo, d->Line(Event::kConsTres, "request not usable: " + p.reason), true);
        }
        return d;
      case Placement::kInternal:
        d->Tell(kLogError, d->Line(d->hard_ ? Event::kWaiting : Event::kConsTres, p.reason), true,
                /*comment=*/d->hard_);
        if (d->hard_) d->action_ = Action::kRefuse;
        return d;
      case Placement::kNoRoom: {
        // A job without a hard constraint that finds room only on the spare nodes waits too:
        // left to cons_tres it would take them (seen in contrib/bench/gb200.sh: plain jobs
        // ran on the trays racks keep for a failed one); so does one whose placements now
        // the policy's max_comm_ratio refuses (cons_tres would run it spread out).
        const bool waits = d->hard_ || p.spares_are_why || p.comm_ratio_is_why;
        if (waits && job.mode == Mode::kWillRun && !job.now_only && Later(spec, nodes, d.get())) {
          d->action_ = Action::kTry;
          return d;
        }
        if (waits) {
          d->Refuse(p.reason, /*bad_request=*/false);
        } else {
          d->Tell(kLogDebug, d->Line(Event::kConsTres, "no placement now: " + p.reason), false);
        }
        return d;
      }
      case Placement::kPlaced:
        if (job.mode != Mode::kTestOnly) d->action_ = Action::kTry;
        return d;
    }
  } catch (const std::exception& e) {
    d->action_ = Action::kConsTres;
    d->candidates_.clear();
    d->Tell(kLogError, d->Line(Event::kConsTres, absl::StrCat("internal error: ", e.what())), true);
  }
  return d;
}

}  // namespace nvlplace::plugin
