// When a job that cannot start now could start: the one topology-aware estimate behind the
// select plugin's answer to backfill (WILL_RUN) and the replay's backfill reservation.
#ifndef NVLPLACE_PLACEMENT_ENGINE_EARLIEST_START_H_
#define NVLPLACE_PLACEMENT_ENGINE_EARLIEST_START_H_

#include <vector>

#include "absl/types/span.h"
#include "placement/engine/engine.h"
#include "placement/model/cluster_state.h"
#include "placement/model/request.h"

namespace nvlplace {

// GPUs a running job frees, and when (seconds; any epoch, the same for every release).
struct Release {
  double time = 0;
  std::vector<GpuId> gpus;
};

// A Release whose GPUs its caller owns, alive for the call: no copy of every running job's GPUs
// for each estimate (a replay at 131k GPUs makes one whenever its head job changes).
struct ReleaseView {
  double time = 0;
  absl::Span<const GpuId> gpus;
};

struct EarliestStart {
  bool found = false;         // false: no release time in the window makes room for the job
  double time = 0;            // the earliest such time (no earlier than `from`)
  PlacementResult placement;  // the engine's placement on the state at `time`
};

// `state` as it will be at time `t`: the GPUs of every release at or before t freed (a
// release before `from` counts as at `from`). A release that cannot be applied (a GPU of it
// already free) is left out whole.
void AdvanceTo(ClusterState* state, const std::vector<Release>& releases, double from, double t);

// The earliest release time t, from `from` on and no later than `until` (<= 0: no bound),
// after which `engine` places `request` on `state` advanced to t (AdvanceTo). The request as
// the engine takes it: a strict TP job waits for the release that completes an NVLink domain,
// not for the first time enough GPUs are free. A galloping search over the distinct release
// times (1, 2, 4, ... then halving), so about 2 log2(k) placements for the k-th time and one
// when the first fits: more free GPUs never make a request fit less. When that time is
// later than `from`, the placement is made on the GPUs released by then alone if one there is
// as local (no more NVLink domains or nodes, no higher tier, no more TP groups split or
// constraints relaxed, at most 5% more communication): the GPUs free now stay for backfill. `state`
// is changed while searching (releases applied and taken back, so that an index kept with it
// catches up instead of being rebuilt) and is as it was when this returns.
EarliestStart FindEarliestStart(const Engine& engine, ClusterState* state, const Request& request,
                                const std::vector<Release>& releases, double from, double until);
// The same on views (a distinct name: `{}` for no releases would pick a null pointer);
// `releases` is reordered (by time, stably).
EarliestStart FindEarliestStartOfViews(const Engine& engine, ClusterState* state,
                                       const Request& request, std::vector<ReleaseView>* releases,
                                       double from, double until);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_ENGINE_EARLIEST_START_H_
