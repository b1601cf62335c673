// Discrete-event replay: arrivals, a FIFO or EASY-backfill queue, the Engine, completions.
#include "contrib/replay/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>

#include "absl/strings/str_cat.h"

namespace nvlplace::replay {
namespace {

constexpr int kBackfillDepth = 100;  // pending jobs tried per cycle, like bf_max_job_test

struct Shape {
  absl::StatusOr<Request> request;
  std::string never;      // non-empty: not placeable even on the empty cluster
  double best_comm = 0;   // on the empty cluster
};

RequestSpec SpecOf(const TraceJob& j) {
  RequestSpec s;
  s.gpus = j.gpus;
  if (j.nodes > 0 && j.gpus % j.nodes == 0) {
    s.nodes = j.nodes;
    s.gpus_per_node = j.gpus / j.nodes;
  }
  s.tp = j.tp;
  s.pp = j.pp;
  s.dp = j.dp;
  s.nvl = j.nvl;
  return s;
}

std::string ShapeKey(const TraceJob& j) {
  return absl::StrCat(j.gpus, "/", j.nodes, "/", j.tp, "/", j.pp, "/", j.dp, "/",
                      static_cast<int>(j.nvl));
}

class Sim {
 public:
  Sim(const Engine& engine, const std::vector<TraceJob>& jobs, const SimOptions& options)
      : engine_(engine), topo_(engine.topology()), jobs_(jobs), options_(options),
        state_(engine.topology_ptr()), empty_(engine.topology_ptr()) {
    result_.policy = engine.policy().name;
    result_.jobs.resize(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) result_.jobs[i].job = &jobs[i];
  }

  SimResult Run(const std::function<void(size_t, size_t)>& progress) {
    double horizon = 0;
    for (const TraceJob& j : jobs_) horizon = std::max(horizon, Submit(j) + j.duration);
    double every = options_.sample_every > 0 ? options_.sample_every : std::max(1.0, horizon / 400);
    double next_sample = 0;
    size_t next_arrival = 0, finished = 0;
    while (true) {
      double t_arrival = next_arrival < jobs_.size() ? Submit(jobs_[next_arrival])
                                                     : std::numeric_limits<double>::infinity();
      double t_done = running_.empty() ? std::numeric_limits<double>::infinity()
                                       : running_.top().first;
      double t = std::min(t_arrival, t_done);
      if (std::isinf(t)) break;
      while (next_sample <= t) {
        Record(next_sample);
        next_sample += every;
      }
      while (!running_.empty() && running_.top().first <= t) {
        int idx = running_.top().second;
        running_.pop();
        (void)state_.Release(result_.jobs[idx].ranks);
        ++finished;
      }
      while (next_arrival < jobs_.size() && Submit(jobs_[next_arrival]) <= t) {
        Arrive(static_cast<int>(next_arrival++), &finished);
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
  double Submit(const TraceJob& j) const { return j.submit / options_.load_scale; }

  const Shape& ShapeOf(const TraceJob& j) {
    std::string key = ShapeKey(j);
    auto it = shapes_.find(key);
    if (it != shapes_.end()) return it->second;
    Shape s{ResolveRequest(SpecOf(j), topo_), "", 0};
    if (!s.request.ok()) {
      s.never = std::string(s.request.status().message());
    } else {
      PlacementResult r = engine_.Place(empty_, *s.request);
      ++result_.decisions;
      if (!r.placed) {
        s.never = absl::StrCat("not placeable even on the empty cluster: ", r.reason);
      } else {
        s.best_comm = r.comm.total();
      }
    }
    return shapes_.emplace(key, std::move(s)).first->second;
  }

  void Arrive(int idx, size_t* finished) {
    const Shape& shape = ShapeOf(jobs_[idx]);
    if (!shape.never.empty()) {
      result_.jobs[idx].rejected = true;
      result_.jobs[idx].reason = shape.never;
      ++*finished;
      return;
    }
    pending_.push_back(idx);
  }

  // Tries to start pending job `idx` now. True when it started.
  bool TryStart(int idx, double t) {
    const TraceJob& j = jobs_[idx];
    if (j.gpus > state_.num_free()) return false;  // cheap: no engine call
    const Shape& shape = ShapeOf(j);
    PlacementResult r = engine_.Place(state_, *shape.request);
    ++result_.decisions;
    if (!r.placed) return false;
    JobRecord& rec = result_.jobs[idx];
    (void)state_.Allocate(r.ranks);
    rec.start = t;
    rec.ranks = std::move(r.ranks);
    rec.job_tier = r.job_tier;
    // Without TP sizes the job is one group: inside one domain means all of it.
    rec.tp_in_domain = r.tp_groups_split == 0;
    if (j.tp == 0) {
      for (GpuId g : rec.ranks) rec.tp_in_domain &= topo_.DomainOf(g) == topo_.DomainOf(rec.ranks[0]);
    }
    rec.relaxations = static_cast<int>(r.relaxations.size());
    rec.comm_s = r.comm.total();
    if (options_.comm_share > 0 && shape.best_comm > 0) {
      double ratio = std::min(10.0, rec.comm_s / shape.best_comm);
      rec.stretch = (1 - options_.comm_share) + options_.comm_share * ratio;
    }
    rec.end = t + j.duration * rec.stretch;
    running_.push({rec.end, idx});
    return true;
  }

  // The earliest time the head job could have enough free GPUs, counting GPUs only.
  double Shadow(int head) const {
    int need = jobs_[head].gpus - state_.num_free();
    if (need <= 0) return std::numeric_limits<double>::infinity();  // topology blocks it
    auto copy = running_;
    while (!copy.empty()) {
      need -= static_cast<int>(result_.jobs[copy.top().second].ranks.size());
      if (need <= 0) return copy.top().first;
      copy.pop();
    }
    return std::numeric_limits<double>::infinity();
  }

  void Schedule(double t) {
    while (!pending_.empty() && TryStart(pending_.front(), t)) pending_.pop_front();
    if (options_.scheduler != Scheduler::kBackfill || pending_.size() < 2) return;
    // EASY backfill: a later job may start now if it ends before the head's reservation.
    double shadow = Shadow(pending_.front());
    int tried = 0;
    for (auto it = std::next(pending_.begin()); it != pending_.end() && tried < kBackfillDepth;) {
      const TraceJob& j = jobs_[*it];
      if (j.gpus > state_.num_free()) {
        ++it;
        continue;
      }
      ++tried;
      if (t + j.duration <= shadow && TryStart(*it, t)) {
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
      if (j.gpus > state_.num_free()) continue;
      int chunk = (j.tp > 1 && j.nvl != NvlMode::kOff) ? j.tp : 1;
      min_chunk = std::min(min_chunk, chunk);
    }
    for (DomainId d = 0; d < topo_.num_domains(); ++d) {
      int f = state_.free_in_domain(d);
      s.largest_free_domain = std::max(s.largest_free_domain, f);
      if (!pending_.empty() && f < min_chunk) s.unusable_free += f;
    }
    result_.samples.push_back(s);
  }

  const Engine& engine_;
  const Topology& topo_;
  const std::vector<TraceJob>& jobs_;
  SimOptions options_;
  ClusterState state_;
  ClusterState empty_;
  SimResult result_;
  std::deque<int> pending_;
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>,
                      std::greater<std::pair<double, int>>>
      running_;
  std::map<std::string, Shape> shapes_;
};

}  // namespace

SimResult Simulate(const Engine& engine, const std::vector<TraceJob>& jobs,
                   const SimOptions& options,
                   const std::function<void(size_t, size_t)>& progress) {
  Sim sim(engine, jobs, options);
  return sim.Run(progress);
}

}  // namespace nvlplace::replay
