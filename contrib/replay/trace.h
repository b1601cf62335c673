// Job traces for replay: readers for the native CSV, sacct, Alibaba openb, SWF, Helios/Acme
// and Philly layouts, each mapping its columns onto one TraceJob.
#ifndef NVLPLACE_CONTRIB_REPLAY_TRACE_H_
#define NVLPLACE_CONTRIB_REPLAY_TRACE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/limits.h"
#include "placement/model/request.h"

namespace nvlplace::replay {

// One job of a trace. ReadTrace returns only jobs that pass CheckTraceJob.
struct TraceJob {
  std::string id;              // control bytes escaped (\n, \x00)
  double submit = 0;           // seconds from the trace start, in [0, limits::kMaxSeconds]
  double duration = 0;         // recorded run time, seconds, in [0, limits::kMaxSeconds]
  int gpus = 0;                // 1 .. limits::kMaxJobGpus
  int nodes = 0;               // 0: any; else exactly this many, the GPUs split evenly
  int tp = 0, pp = 0, dp = 0;  // 0: not given
  NvlMode nvl = NvlMode::kStrict;
  // "" (any model), or the GPU model (Slurm's GRES type, openb's gpu_spec) as the trace
  // writes it, at most limits::kMaxNameBytes; ResolveRequest matches it in any case.
  std::string gpu_model;
  int line = 0;  // where it came from (Philly: the line of the job's '{')
};

// The job's placement request as the trace gives it (GPUs, nodes, sizes, NVLink mode, GPU
// model);
// ResolveRequest checks it against a cluster, CheckRequestSizes without one.
RequestSpec RequestOf(const TraceJob& job);

// What a job must be for Simulate: submit and duration finite and in [0, kMaxSeconds], GPUs
// in 1 .. kMaxJobGpus, sizes that CheckRequestSizes accepts, a GPU model of at most
// kMaxNameBytes. InvalidArgument otherwise.
absl::Status CheckTraceJob(const TraceJob& job);

enum class TraceFormat { kAuto, kNative, kSacct, kOpenb, kSwf, kHelios, kPhilly };

absl::StatusOr<TraceFormat> ParseTraceFormat(absl::string_view name);
const char* TraceFormatName(TraceFormat f);

struct TraceOptions {
  bool strict = false;       // a malformed line is fatal
  bool skip_shared = false;  // openb: skip pods with gpu_milli < 1000 instead of 1 GPU
  size_t max_jobs = limits::kMaxTraceJobs;  // more jobs is bad input (lower it in tests)
};

struct Trace {
  TraceFormat format = TraceFormat::kNative;
  std::vector<TraceJob> jobs;          // sorted by submit time, then line
  int malformed = 0;                   // lines that could not be read
  std::vector<std::string> problems;   // "file:line: message", first 20
  std::map<std::string, int> skipped;  // reason -> jobs skipped on purpose
  // reason -> jobs read with part of what the trace says left out (sacct NNodes that do not
  // divide the GPUs, openb gpu_spec naming several models): replayed, and counted here.
  std::map<std::string, int> relaxed;
};

// Detects the format from the first lines: a header naming the columns, ';' SWF comments,
// a '|' separated sacct header, or a JSON array (Philly). A leading UTF-8 byte order mark
// is skipped.
TraceFormat DetectTraceFormat(absl::string_view text);

// Reads a whole trace; a leading UTF-8 byte order mark (Excel and Windows editors write one)
// is skipped before the format is detected and read. Malformed lines are counted and
// reported with file:line (fatal with options.strict); lines skipped on purpose (no GPU, a
// failed job with no run time, a sacct job step, a job on GPUs of several types) are counted
// by reason, and so are jobs read with part of their request left out (Trace::relaxed).
// Nothing is dropped silently.
// Every number is checked: times are dates (UTC) or seconds in [0, limits::kMaxTimestamp],
// finite; durations finite in [0, limits::kMaxSeconds] (End before Start is malformed);
// GPU counts whole numbers in [0, limits::kMaxJobGpus] (0: skipped, "no GPU"); TP, PP and DP
// in [0, limits::kMaxGroupSize], nodes in [0, limits::kMaxJobNodes], and sizes that agree
// (CheckRequestSizes). The trace starts at its earliest submit time, so no job is submitted
// before it; a job submitted more than limits::kMaxSeconds after it is malformed. More than
// limits::kMaxTraceJobs jobs, or a line of more than limits::kMaxTraceFields fields in a
// header, is bad input. Text from the trace is escaped in messages. The caller bounds the
// text's size (limits::kMaxTraceBytes); the Philly reader streams the JSON (SAX), holding
// one job at a time.
absl::StatusOr<Trace> ReadTrace(absl::string_view text, const std::string& file, TraceFormat format,
                                const TraceOptions& options);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_TRACE_H_
