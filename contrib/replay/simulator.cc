// Discrete-event replay: arrivals, a FIFO or EASY-backfill queue, the Engine, completions.
#include "contrib/replay/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>

#include "absl/strings/str_cat.h"
#include "contrib/replay/metrics.h"
#include "placement/engine/earliest_start.h"
#include "placement/model/limits.h"

namespace nvlplace::replay {
namespace {

constexpr int kBackfillDepth = 100;  // pending jobs tried per cycle, like bf_max_job_test

struct Shape {
  absl::StatusOr<Request> request;
  std::string never;     // non-empty: not placeable even on the empty cluster
  double best_comm = 0;  // on the baseline placement (SimOptions::baseline)
};

// Everything RequestOf reads; the GPU model last, so that a '/' in it cannot make two
// shapes one key.
std::string ShapeKey(const TraceJob& j) {
  return absl::StrCat(j.gpus, "/", j.nodes, "/", j.tp, "/", j.pp, "/", j.dp, "/",
                      static_cast<int>(j.nvl), "/", j.gpu_model);
}

class Sim {
 public:
  // `options` passed CheckSimOptions.
  Sim(const Engine& engine, const std::vector<TraceJob>& jobs, const SimOptions& options)
      : engine_(engine),
        topo_(engine.topology()),
        units_(topo_),
        jobs_(jobs),
        options_(options),
        state_(engine.topology_ptr()),
        empty_(engine.topology_ptr()),
        ended_(jobs.size(), 0),
        shape_of_(jobs.size(), nullptr),
        job_model_(jobs.size(), -1),
        free_by_model_(topo_.gpu_models().size(), 0) {
    model_of_gpu_.reserve(static_cast<size_t>(topo_.num_gpus()));
    for (const Gpu& gpu : topo_.gpus()) model_of_gpu_.push_back(topo_.nodes()[gpu.node].model);
    result_.policy = engine.policy().name;
    result_.jobs.resize(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) result_.jobs[i].job = &jobs[i];
    // From the state, not the node list: a CPU-only node has no model (-1), and the GPUs of
    // a node kept from nvlplace (placed: false) start busy and never become free.
    for (GpuId g = 0; g < topo_.num_gpus(); ++g) {
      if (!state_.busy(g)) ++free_by_model_[ModelOfGpu(g)];
    }
  }

  SimResult Run(const std::function<void(size_t, size_t)>& progress) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    // Only valid jobs enter the event loop: their submit and end times are finite.
    std::vector<int> arrivals;
    size_t finished = 0;
    double horizon = 0;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      absl::Status valid = CheckTraceJob(jobs_[i]);
      if (!valid.ok()) {
        result_.jobs[i].rejected = true;
        result_.jobs[i].reason = absl::StrCat("not a valid trace job: ", valid.message());
        ++finished;
        continue;
      }
      arrivals.push_back(static_cast<int>(i));
      horizon = std::max(horizon, Submit(jobs_[i]) + jobs_[i].duration);
    }
    // The trace's job shapes, for fragmentation: each job's chunk (the GPUs it needs in one
    // NVLink domain) weighted by its share of the jobs.
    std::map<int, double> chunk_weights;
    for (int idx : arrivals) {
      chunk_weights[ChunkOf(jobs_[idx])] += 1.0 / static_cast<double>(arrivals.size());
    }
    int largest_domain = 0;
    for (const NvlDomain& d : topo_.domains()) {
      largest_domain = std::max(largest_domain, static_cast<int>(d.gpus.size()));
    }
    larger_chunk_share_ = LargerChunkShare(chunk_weights, largest_domain);
    double every = options_.sample_every > 0 ? options_.sample_every : std::max(1.0, horizon / 400);
    double next_sample = 0;
    size_t next_arrival = 0;
    while (true) {
      double t_arrival =
          next_arrival < arrivals.size() ? Submit(jobs_[arrivals[next_arrival]]) : kInf;
      double t_done = kInf;
      if (!running_.empty()) t_done = running_.top().first;
      double t = std::min(t_arrival, t_done);
      // Every event time is finite by construction; a NaN or inf here would never advance.
      if (!(t < kInf)) break;
      while (next_sample <= t) {
        Record(next_sample);
        next_sample += every;
        if (result_.samples.size() >= kMaxSamples) {
          // Keep samples 0, 2, 4, ...: the grid of twice the interval, and next_sample on it.
          size_t kept = 0;
          for (size_t i = 0; i < result_.samples.size(); i += 2) {
            result_.samples[kept++] = result_.samples[i];
          }
          result_.samples.resize(kept);
          every *= 2;
          next_sample = result_.samples.back().time + every;
        }
      }
      while (!running_.empty() && running_.top().first <= t) {
        int idx = running_.top().second;
        running_.pop();
        ended_[static_cast<size_t>(idx)] = 1;
        (void)state_.Release(result_.jobs[idx].ranks);
        CountFree(result_.jobs[idx].ranks, 1);
        ++finished;
      }
      while (next_arrival < arrivals.size() && Submit(jobs_[arrivals[next_arrival]]) <= t) {
        Arrive(arrivals[next_arrival++], &finished);
      }
      Schedule(t);
      if (progress && (next_arrival & 1023) == 0) progress(finished, jobs_.size());
    }
    Record(next_sample);
    for (int idx : pending_) {
      result_.jobs[idx].reason = "still pending when the trace ended";
    }
    for (const JobRecord& r : result_.jobs) result_.makespan = std::max(result_.makespan, r.end);
    if (progress) progress(jobs_.size(), jobs_.size());
    return std::move(result_);
  }

 private:
  struct Reservation {
    int head = -1;  // the pending job it is for
    double time = 0;
    std::vector<NodeId> nodes;  // ascending
  };

  double Submit(const TraceJob& j) const { return j.submit / options_.load_scale; }
  // The GPUs a job needs inside one NVLink domain: its TP group unless it may split.
  static int ChunkOf(const TraceJob& j) { return (j.tp > 1 && j.nvl != NvlMode::kOff) ? j.tp : 1; }

  int ModelOfGpu(GpuId g) const { return model_of_gpu_[static_cast<size_t>(g)]; }
  // `gpus` counted free (delta 1) or taken (-1) for their GPU models: one add on a cluster
  // of one model, whose every GPU is of it (a load per GPU was most of the event loop's own
  // time in a million-job replay).
  void CountFree(const std::vector<GpuId>& gpus, int delta) {
    if (free_by_model_.size() == 1) {
      free_by_model_[0] += delta * static_cast<int>(gpus.size());
      return;
    }
    for (GpuId g : gpus) free_by_model_[ModelOfGpu(g)] += delta;
  }
  // Free GPUs pending job `idx` may use: those of its GPU model, or all when it names none.
  int FreeFor(int idx) const {
    int model = job_model_[idx];
    return model < 0 ? state_.num_free() : free_by_model_[model];
  }

  const Shape& ShapeOf(const TraceJob& j) {
    std::string key = ShapeKey(j);
    auto it = shapes_.find(key);
    if (it != shapes_.end()) return it->second;
    Shape s{ResolveRequest(RequestOf(j), topo_), "", 0};
    if (!s.request.ok()) {
      s.never = std::string(s.request.status().message());
    } else {
      PlacementResult r = engine_.Place(empty_, *s.request);
      ++result_.decisions;
      if (!r.placed) {
        s.never = absl::StrCat("not placeable even on the empty cluster: ", r.reason);
      } else if (options_.baseline == nullptr) {
        s.best_comm = r.comm.total();
      } else {
        PlacementResult b = options_.baseline->Place(empty_, *s.request);
        ++result_.decisions;
        // A shape the baseline cannot place (a policy that limits tiers, say) keeps its own.
        s.best_comm = (b.placed ? b : r).comm.total();
      }
    }
    return shapes_.emplace(key, std::move(s)).first->second;
  }

  void Arrive(int idx, size_t* finished) {
    const Shape& shape = ShapeOf(jobs_[idx]);
    shape_of_[idx] = &shape;
    if (!shape.never.empty()) {
      result_.jobs[idx].rejected = true;
      result_.jobs[idx].reason = shape.never;
      ++*finished;
      return;
    }
    job_model_[idx] = shape.request->gpu_model;
    pending_.push_back(idx);
  }

  // Tries to start pending job `idx` now. True when it started.
  bool TryStart(int idx, double t) {
    const TraceJob& j = jobs_[idx];
    if (j.gpus > FreeFor(idx)) return false;  // cheap: no engine call
    const Shape& shape = *shape_of_[idx];     // set when the job arrived
    // Only what was chosen is read here: no text, for a placement or for the many tries
    // that do not fit yet.
    PlacementResult r = engine_.Place(state_, *shape.request, Engine::Detail::kChoice);
    ++result_.decisions;
    if (!r.placed) return false;
    JobRecord& rec = result_.jobs[idx];
    (void)state_.Allocate(r.ranks);
    CountFree(r.ranks, -1);
    rec.start = t;
    rec.ranks = std::move(r.ranks);
    rec.job_tier = r.job_tier;
    // Without TP sizes the job is one group: inside one domain means all of it.
    rec.tp_in_domain = r.tp_groups_split == 0;
    if (j.tp == 0) {
      for (GpuId g : rec.ranks)
        rec.tp_in_domain &= topo_.DomainOf(g) == topo_.DomainOf(rec.ranks[0]);
    }
    rec.relaxations = static_cast<int>(r.relaxations.size());
    rec.comm_s = r.comm.total();
    rec.best_comm_s = shape.best_comm;
    const Request& q = *shape.request;
    rec.tp_spread = TpGroupSpread(units_, rec.ranks, q.tp, q.pp, q.dp);
    rec.dp_spread = DpGroupSpread(units_, rec.ranks, q.tp, q.pp, q.dp, &rec.dp_spread_max);
    if (options_.comm_share > 0 && shape.best_comm > 0) {
      double ratio = std::min(10.0, rec.comm_s / shape.best_comm);
      rec.stretch = (1 - options_.comm_share) + options_.comm_share * ratio;
    }
    rec.end = t + j.duration * rec.stretch;
    running_.push({rec.end, idx});
    started_.push_back({rec.end, idx});
    return true;
  }

  // The earliest time the head job could have enough free GPUs of its model (any model when
  // it names none), counting GPUs only: `t` when it has them now. A lower bound of its start.
  // `ends` are the running jobs in the order they end (RunningInOrder).
  double CountedStart(int head, double t, const std::vector<std::pair<double, int>>& ends) const {
    const int model = job_model_[head];
    int need = jobs_[head].gpus - FreeFor(head);
    if (need <= 0) return t;
    for (const auto& [end, idx] : ends) {
      const std::vector<GpuId>& ranks = result_.jobs[idx].ranks;
      if (model < 0) {
        need -= static_cast<int>(ranks.size());
      } else {
        for (GpuId g : ranks) need -= ModelOfGpu(g) == model;
      }
      if (need <= 0) return end;
    }
    return std::numeric_limits<double>::infinity();
  }

  // The running jobs as (end, job) in ends_, the earliest end first (ties by job): the last
  // call's order without the jobs that ended since, merged with those started since, sorted.
  // Sorting every running job for each reservation was 3% of a million-job replay.
  void RunningInOrder() {
    auto gone = [this](const std::pair<double, int>& e) {
      return ended_[static_cast<size_t>(e.second)] != 0;
    };
    ends_.erase(std::remove_if(ends_.begin(), ends_.end(), gone), ends_.end());
    started_.erase(std::remove_if(started_.begin(), started_.end(), gone), started_.end());
    std::sort(started_.begin(), started_.end());
    const auto middle = static_cast<std::ptrdiff_t>(ends_.size());
    ends_.insert(ends_.end(), started_.begin(), started_.end());
    std::inplace_merge(ends_.begin(), ends_.begin() + middle, ends_.end());
    started_.clear();
  }

  // The head's reservation, as Slurm's backfill makes it from the plugin's answer: the
  // earliest time the engine places the head as running jobs end (FindEarliestStart, the
  // estimate the plugin gives backfill) and the nodes of that placement. Computed when the
  // head changes, kept while it waits: a job started meanwhile ends before it or keeps off
  // its nodes, so it stays true.
  const Reservation& Reserve(int head, double t) {
    if (reservation_.head == head && t < reservation_.time &&
        reservation_.time < std::numeric_limits<double>::infinity()) {
      return reservation_;
    }
    reservation_.head = head;
    reservation_.time = std::numeric_limits<double>::infinity();
    reservation_.nodes.clear();
    RunningInOrder();
    double from = CountedStart(head, t, ends_);
    if (!(from < std::numeric_limits<double>::infinity())) return reservation_;
    // Views of the running jobs' GPUs: they stay put while the estimate is made.
    releases_.clear();
    for (const auto& [end, idx] : ends_) {
      releases_.push_back(ReleaseView{end, result_.jobs[idx].ranks});
    }
    EarliestStart at = FindEarliestStartOfViews(engine_, &state_, *shape_of_[head]->request,
                                                &releases_, from, /*until=*/0);
    ++result_.decisions;
    if (!at.found) return reservation_;
    reservation_.time = at.time;
    for (GpuId g : at.placement.ranks) reservation_.nodes.push_back(topo_.gpus()[g].node);
    std::sort(reservation_.nodes.begin(), reservation_.nodes.end());
    reservation_.nodes.erase(std::unique(reservation_.nodes.begin(), reservation_.nodes.end()),
                             reservation_.nodes.end());
    return reservation_;
  }

  // The free GPUs on the nodes reserved for the head, held (allocated) while jobs that must
  // keep off them are tried: taken once for a run of such jobs and let go before any other
  // try, so that every try sees the free GPUs it would if they were held for it alone (a job
  // started while they are held takes none of them, so they stay the same). Holding them for
  // each try was a quarter of a firstfit replay at 131k GPUs: ClusterState's checks per GPU.
  class KeptOff {
   public:
    KeptOff(ClusterState* state, const Topology& topo) : state_(state), topo_(topo) {}
    ~KeptOff() { LetGo(); }
    KeptOff(const KeptOff&) = delete;
    KeptOff& operator=(const KeptOff&) = delete;
    // Holds the free GPUs of `nodes` unless they are held already; false when they cannot be.
    bool Hold(const std::vector<NodeId>& nodes) {
      if (holding_) return true;
      held_.clear();
      for (NodeId n : nodes) {
        for (GpuId g : topo_.nodes()[n].gpus) {
          if (!state_->busy(g)) held_.push_back(g);
        }
      }
      if (!held_.empty() && !state_->Allocate(held_).ok()) return false;
      holding_ = true;
      return true;
    }
    // Lets the held GPUs go, if any are held.
    void LetGo() {
      if (holding_ && !held_.empty()) (void)state_->Release(held_);
      holding_ = false;
    }
    // The GPUs held now: free for every count but the engine's.
    int held() const { return holding_ ? static_cast<int>(held_.size()) : 0; }

   private:
    ClusterState* state_;
    const Topology& topo_;
    std::vector<GpuId> held_;
    bool holding_ = false;
  };

  void Schedule(double t) {
    while (!pending_.empty() && TryStart(pending_.front(), t)) pending_.pop_front();
    if (options_.scheduler != Scheduler::kBackfill || pending_.size() < 2) return;
    // EASY backfill: a later job may start now if it ends before the head's reservation, if
    // it keeps off the nodes reserved for the head, or if it runs on another GPU model than
    // the head's (it cannot take the head's GPUs).
    const int head = pending_.front();
    const int head_model = job_model_[head];
    const Reservation* reserved = nullptr;
    KeptOff kept_off(&state_, topo_);
    int tried = 0;
    for (auto it = std::next(pending_.begin()); it != pending_.end() && tried < kBackfillDepth;) {
      const TraceJob& j = jobs_[*it];
      const int model = job_model_[*it];
      if (j.gpus > FreeFor(*it) + (model < 0 ? kept_off.held() : 0)) {
        ++it;
        continue;
      }
      ++tried;
      const bool disjoint = head_model >= 0 && model >= 0 && model != head_model;
      if (!disjoint && reserved == nullptr) reserved = &Reserve(head, t);
      const bool anywhere = disjoint || t + j.duration <= reserved->time;
      if (anywhere) kept_off.LetGo();
      const bool started = (anywhere || kept_off.Hold(reserved->nodes)) && TryStart(*it, t);
      if (started) {
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void Record(double t) {
    Sample s{t, topo_.num_gpus() - state_.num_free(), static_cast<int>(pending_.size()), 0, 0};
    int min_chunk = std::numeric_limits<int>::max();
    int depth = 0;
    for (int idx : pending_) {
      if (++depth > kBackfillDepth) break;
      const TraceJob& j = jobs_[idx];
      if (j.gpus > FreeFor(idx)) continue;
      min_chunk = std::min(min_chunk, ChunkOf(j));
    }
    const int max_free = static_cast<int>(larger_chunk_share_.size()) - 1;
    for (DomainId d = 0; d < topo_.num_domains(); ++d) {
      int f = state_.free_in_domain(d);
      s.largest_free_domain = std::max(s.largest_free_domain, f);
      if (!pending_.empty() && f < min_chunk) s.unusable_free += f;
      if (f > 0 && max_free >= 0)
        s.fragmented_gpus += f * larger_chunk_share_[std::min(f, max_free)];
    }
    s.free_gpus = state_.num_free();
    result_.samples.push_back(s);
  }

  const Engine& engine_;
  const Topology& topo_;
  const SpreadUnits units_;  // the group spreads' units of topo_
  const std::vector<TraceJob>& jobs_;
  SimOptions options_;
  ClusterState state_;
  ClusterState empty_;
  SimResult result_;
  std::deque<int> pending_;
  // (end, job) of the running jobs, the earliest end on top.
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>,
                      std::greater<std::pair<double, int>>>
      running_;
  Reservation reservation_;
  // The running jobs in the order they end as of the last RunningInOrder, and what has
  // started since (those ended since are marked in ended_, per job).
  std::vector<std::pair<double, int>> ends_;
  std::vector<std::pair<double, int>> started_;
  std::vector<char> ended_;
  std::vector<ReleaseView> releases_;       // Reserve's scratch: views into result_.jobs
  std::map<std::string, Shape> shapes_;     // node-based: the addresses below stay valid
  std::vector<const Shape*> shape_of_;      // per job, once it arrived
  std::vector<int> job_model_;              // per job: its request's GPU model, -1 for any
  std::vector<int> free_by_model_;          // free GPUs of each GPU model
  std::vector<double> larger_chunk_share_;  // [f]: share of the trace's jobs whose chunk > f
  // Per GPU: its node's GPU model (-1: a CPU-only node), read for every GPU a job takes or
  // frees: one load instead of the topology's two dependent ones.
  std::vector<int> model_of_gpu_;
};

}  // namespace

absl::Status CheckSimOptions(const SimOptions& o) {
  if (!(o.load_scale >= 1 / limits::kMaxLoadScale && o.load_scale <= limits::kMaxLoadScale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("load scale ", o.load_scale, " is not a number from ",
                     1 / limits::kMaxLoadScale, " to ", limits::kMaxLoadScale));
  }
  if (!(o.comm_share >= 0 && o.comm_share <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("communication share ", o.comm_share, " is not a number from 0 to 1"));
  }
  if (o.sample_every != 0 && !(o.sample_every >= 1 && o.sample_every <= limits::kMaxSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat("sample interval ", o.sample_every,
                                                   " is not 0 (automatic) or seconds from 1 to ",
                                                   static_cast<int64_t>(limits::kMaxSeconds)));
  }
  return absl::OkStatus();
}

SimResult Simulate(const Engine& engine, const std::vector<TraceJob>& jobs,
                   const SimOptions& options, const std::function<void(size_t, size_t)>& progress) {
  absl::Status valid = CheckSimOptions(options);
  if (valid.ok() && options.baseline != nullptr &&
      &options.baseline->topology() != &engine.topology()) {
    valid = absl::InvalidArgumentError("the baseline engine places on another topology");
  }
  if (!valid.ok()) {
    SimResult refused;
    refused.policy = engine.policy().name;
    refused.jobs.resize(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      refused.jobs[i].job = &jobs[i];
      refused.jobs[i].rejected = true;
      refused.jobs[i].reason = absl::StrCat("not replayed: ", valid.message());
    }
    return refused;
  }
  Sim sim(engine, jobs, options);
  return sim.Run(progress);
}

}  // namespace nvlplace::replay
