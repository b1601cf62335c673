// The earliest start of a job that cannot start now (see earliest_start.h).
#include "placement/engine/earliest_start.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace nvlplace {
namespace {

// Releases in time order applied to a state as a prefix that moves forward and back.
class Timeline {
 public:
  Timeline(ClusterState* state, std::vector<ReleaseView>* releases, double from)
      : state_(state), releases_(*releases), applied_(releases_.size(), false) {
    for (ReleaseView& r : releases_) r.time = std::max(r.time, from);
    std::stable_sort(releases_.begin(), releases_.end(),
                     [](const ReleaseView& a, const ReleaseView& b) { return a.time < b.time; });
  }
  ~Timeline() { MoveTo(-1); }  // the state as it was

  // The distinct times, ascending.
  std::vector<double> Times(double until) const {
    std::vector<double> times;
    for (const ReleaseView& r : releases_) {
      if ((until <= 0 || r.time <= until) && (times.empty() || times.back() < r.time)) {
        times.push_back(r.time);
      }
    }
    return times;
  }

  // The GPUs free in the state that no applied release freed: those free before any.
  std::vector<GpuId> FreeBefore() const {
    std::vector<bool> released(static_cast<size_t>(state_->topology().num_gpus()), false);
    for (size_t i = 0; i < prefix_; ++i) {
      if (!applied_[i]) continue;
      for (GpuId g : releases_[i].gpus) released[static_cast<size_t>(g)] = true;
    }
    std::vector<GpuId> out;
    for (GpuId g = 0; g < state_->topology().num_gpus(); ++g) {
      if (!state_->busy(g) && !released[static_cast<size_t>(g)]) out.push_back(g);
    }
    return out;
  }

  // The state with every release at or before t applied (t < every time: none).
  void MoveTo(double t) {
    while (prefix_ < releases_.size() && releases_[prefix_].time <= t) {
      applied_[prefix_] = state_->Release(releases_[prefix_].gpus).ok();
      ++prefix_;
    }
    while (prefix_ > 0 && releases_[prefix_ - 1].time > t) {
      --prefix_;
      if (applied_[prefix_]) (void)state_->Allocate(releases_[prefix_].gpus);
      applied_[prefix_] = false;
    }
  }

 private:
  ClusterState* state_;
  std::vector<ReleaseView>& releases_;
  std::vector<bool> applied_;
  size_t prefix_ = 0;
};

// `alt` is at least as local as `fit`: no more NVLink domains or nodes, no higher job or DP
// tier, no more TP groups split, no more constraints relaxed, and at most 5% more estimated
// communication.
bool AsLocal(const PlacementResult& alt, const PlacementResult& fit, const Topology& topo) {
  Span a = SpanOf(alt.ranks, topo), b = SpanOf(fit.ranks, topo);
  return a.domains <= b.domains && a.nodes <= b.nodes && alt.job_tier <= fit.job_tier &&
         alt.dp_tier <= fit.dp_tier && alt.tp_groups_split <= fit.tp_groups_split &&
         alt.relaxations.size() <= fit.relaxations.size() &&
         alt.comm.total() <= fit.comm.total() * 1.05;
}

}  // namespace

void AdvanceTo(ClusterState* state, const std::vector<Release>& releases, double from, double t) {
  for (const Release& r : releases) {
    if (std::max(r.time, from) <= t) (void)state->Release(r.gpus);
  }
}

EarliestStart FindEarliestStart(const Engine& engine, ClusterState* state, const Request& request,
                                const std::vector<Release>& releases, double from, double until) {
  std::vector<ReleaseView> views;
  views.reserve(releases.size());
  for (const Release& r : releases) views.push_back(ReleaseView{r.time, r.gpus});
  return FindEarliestStartOfViews(engine, state, request, &views, from, until);
}

EarliestStart FindEarliestStartOfViews(const Engine& engine, ClusterState* state,
                                       const Request& request, std::vector<ReleaseView>* releases,
                                       double from, double until) {
  EarliestStart out;
  Timeline timeline(state, releases, from);
  const std::vector<double> times = timeline.Times(until);
  if (times.empty()) return out;
  // Only placements are read: no text for the times that do not fit (most of the tries).
  auto place_at = [&](size_t k) {
    timeline.MoveTo(times[k]);
    return engine.Place(*state, request, Engine::Detail::kPlacement);
  };
  // Gallop: 0, 1, 3, 7, ... until a time fits (or the last one does not).
  size_t lo = 0, hi = 0, step = 1;
  PlacementResult fit = place_at(0);
  while (!fit.placed) {
    if (hi == times.size() - 1) return out;
    lo = hi + 1;
    hi = std::min(times.size() - 1, hi + step);
    step *= 2;
    fit = place_at(hi);
  }
  // Then halve: times[hi] fits, every time before lo does not.
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    PlacementResult r = place_at(mid);
    if (r.placed) {
      hi = mid;
      fit = std::move(r);
    } else {
      lo = mid + 1;
    }
  }
  // A job that waits takes, when it can, what the running jobs free by then rather than what
  // is free now, as local as the first choice: backfill may then start shorter jobs on the
  // GPUs free now without delaying it (a reservation over idle GPUs blocks them all).
  if (times[hi] > from) {
    timeline.MoveTo(times[hi]);
    std::vector<GpuId> idle_now = timeline.FreeBefore();
    if (!idle_now.empty() && state->Allocate(idle_now).ok()) {
      PlacementResult alt = engine.Place(*state, request, Engine::Detail::kPlacement);
      (void)state->Release(idle_now);
      if (alt.placed && AsLocal(alt, fit, state->topology())) fit = std::move(alt);
    }
  }
  out.found = true;
  out.time = times[hi];
  out.placement = std::move(fit);
  return out;
}

}  // namespace nvlplace
