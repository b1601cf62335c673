// Discrete-event replay of a trace on a cluster, placing every job with the same Engine the
// Slurm plugin uses.
#ifndef NVLPLACE_CONTRIB_REPLAY_SIMULATOR_H_
#define NVLPLACE_CONTRIB_REPLAY_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contrib/replay/trace.h"
#include "placement/engine.h"

namespace nvlplace::replay {

enum class Scheduler { kFifo, kBackfill };

struct SimOptions {
  Scheduler scheduler = Scheduler::kBackfill;
  double load_scale = 1.0;  // submit times are divided by this (2: twice the arrival rate)
  // Slowdown model: the recorded run time is taken as achieved on the best placement the
  // empty cluster allows; a job whose placement's estimated communication time is C against
  // that best B runs duration x ((1 - share) + share x C / B), C / B capped at 10. share = 0
  // turns the model off.
  double comm_share = 0.0;
  double sample_every = 0;  // seconds between time-series samples; 0: about 400 samples
};

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
  double stretch = 1.0;
};

struct Sample {
  double time;
  int busy_gpus;
  int pending_jobs;
  int unusable_free;        // free GPUs no pending job can use
  int largest_free_domain;  // free GPUs of the emptiest NVLink domain
};

struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;  // in trace order
  std::vector<Sample> samples;
  double makespan = 0;
  int decisions = 0;  // engine calls
};

// Replays the jobs (sorted by submit) through `engine`. `progress(done, total)` is called
// now and then when set. Deterministic for a given input.
SimResult Simulate(const Engine& engine, const std::vector<TraceJob>& jobs,
                   const SimOptions& options,
                   const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_SIMULATOR_H_
