// Discrete-event replay of a trace on a cluster, placing every job with the same Engine the
// Slurm plugin uses.
#ifndef NVLPLACE_CONTRIB_REPLAY_SIMULATOR_H_
#define NVLPLACE_CONTRIB_REPLAY_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "contrib/replay/trace.h"
#include "placement/engine/engine.h"

namespace nvlplace::replay {

enum class Scheduler { kFifo, kBackfill };

// CheckSimOptions bounds each field.
struct SimOptions {
  Scheduler scheduler = Scheduler::kBackfill;
  // Submit times are divided by this (2: twice the arrival rate); finite, from
  // 1 / limits::kMaxLoadScale to limits::kMaxLoadScale.
  double load_scale = 1.0;
  // Slowdown model: the recorded run time is taken as achieved on the baseline placement,
  // the one `baseline` (below) gives the job on the empty cluster; a job whose placement's
  // estimated communication time is C against that placement's B runs duration x
  // ((1 - share) + share x C / B), C / B capped at 10. share = 0 turns the model off.
  double comm_share = 0.0;  // finite, in [0, 1]
  // The engine whose empty-cluster placement of each job is the slowdown model's baseline,
  // on the replayed engine's topology: give every policy replayed the same one, so that their
  // step times and throughputs compare against one placement per job (`nvlplace replay` uses
  // the topo policy). Null: each policy's own empty-cluster placement, which flatters a
  // policy that places badly even on an empty cluster (random). Not owned.
  const Engine* baseline = nullptr;
  // Seconds between time-series samples: 0 (about 400 over the trace), or 1 to
  // limits::kMaxSeconds. Past kMaxSamples samples the interval doubles and every other
  // sample is dropped, so a long replay keeps between kMaxSamples / 2 and kMaxSamples.
  double sample_every = 0;
};

inline constexpr size_t kMaxSamples = 8192;

// InvalidArgument naming the field out of range (NaN, inf, negative, too small or large).
absl::Status CheckSimOptions(const SimOptions& options);

struct JobRecord {
  const TraceJob* job = nullptr;
  bool rejected = false;  // never placeable on this cluster; reason says why
  std::string reason;
  double start = -1, end = -1;
  std::vector<GpuId> ranks;
  int job_tier = Topology::kSameNode;
  bool tp_in_domain = true;  // every TP group inside one NVLink domain
  int relaxations = 0;
  double comm_s = 0;
  double best_comm_s = 0;  // the same job's estimate on the baseline placement (SimOptions)
  double stretch = 1.0;
  // Mean units each TP group and each DP group spans, per level of SpreadLevels (metrics.h):
  // empty when the job has no such group of two GPUs or more, or did not start.
  std::vector<double> tp_spread, dp_spread;
  std::vector<double> dp_spread_max;  // the job's widest DP group, per level
};

struct Sample {
  double time;
  int busy_gpus;
  int pending_jobs;
  int unusable_free;        // free GPUs no pending job can use
  int largest_free_domain;  // free GPUs of the emptiest NVLink domain
  int free_gpus = 0;        // unallocated GPUs (of nodes nvlplace places on)
  // Free GPUs a job drawn from the trace's shapes cannot use, in expectation (FGD's
  // fragmentation, metrics.h FragmentedGpus).
  double fragmented_gpus = 0;
};

struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;  // in trace order
  std::vector<Sample> samples;
  double makespan = 0;
  int decisions = 0;  // engine calls
};

// Replays the jobs (sorted by submit) through `engine`. `progress(done, total)` is called
// now and then when set. Deterministic for a given input. Total: a job that CheckTraceJob
// refuses (a non-finite time, say) is rejected with the reason and never enters the event
// loop, so every event time is finite and the replay ends; with options that
// CheckSimOptions refuses (check them first) nothing is replayed and every job is rejected
// with that reason.
SimResult Simulate(const Engine& engine, const std::vector<TraceJob>& jobs,
                   const SimOptions& options,
                   const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_SIMULATOR_H_
