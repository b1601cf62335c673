// The Helios/Acme traces (SenseTime, Shanghai AI Lab): job_id,user,vc,gpu_num,cpu_num,
// node_num,state,submit_time,start_time,end_time,duration,queue. A job with an empty
// start_time or end_time (never started, or still running) is skipped.
#include <utility>

#include "absl/status/statusor.h"
#include "contrib/replay/readers/trace_reader.h"

namespace nvlplace::replay::readers {
namespace {

constexpr const char* kColumns[] = {"job_id", "gpu_num", "submit_time", "duration"};
constexpr Table kHelios = {"helios", ',', kColumns, /*exact=*/true};

constexpr char kHeliosNotRun[] = "never started or not finished (start_time/end_time empty)";

// Whether the job ran, from start_time and end_time when the trace has them: a job that
// left the queue before it started leaves start_time empty, one still running end_time.
// The state is not used: a CANCELLED or FAILED job with a start_time ran and held its GPUs.
// RET InvalidArgument for a time that is neither empty nor a time.
absl::StatusOr<bool> Ran(const Row& f) {
  for (const char* name : {"start_time", "end_time"}) {
    if (f.cols.count(name) == 0) continue;  // not in this trace
    absl::string_view v = f[name];
    if (IsNoTime(v)) return false;
    double t = 0;
    if (!ParseTime(v, &t)) return absl::InvalidArgumentError(NotATime(name, v));
  }
  return true;
}

absl::Status ReadRow(const Row& f, Reader& r) {
  // A job that never ran is skipped whatever its other fields.
  absl::StatusOr<bool> ran = Ran(f);
  if (!ran.ok()) return r.Bad(f.line, ran.status().message());
  if (!*ran) {
    r.Skip(kHeliosNotRun);
    return absl::OkStatus();
  }
  TraceJob j;
  j.line = f.line;
  j.id = CleanId(f["job_id"]);
  if (!ParseCount(f["gpu_num"], 0, limits::kMaxJobGpus, &j.gpus)) {
    return r.Bad(f.line, NotACount("gpu_num", f["gpu_num"], 0, limits::kMaxJobGpus));
  }
  if (!ParseTime(f["submit_time"], &j.submit)) {
    return r.Bad(f.line, NotATime("submit_time", f["submit_time"]));
  }
  if (!ParseSeconds(f["duration"], &j.duration)) {
    return r.Bad(f.line, NotSeconds("duration", f["duration"]));
  }
  // node_num is what the job got, not what it asked: left as "any number of nodes".
  return r.AddGpuJob(std::move(j));
}

}  // namespace

absl::Status ReadHelios(absl::string_view text, Reader& r) {
  return ForEachTableRow(text, kHelios, r, [&r](const Row& f) { return ReadRow(f, r); });
}

}  // namespace nvlplace::replay::readers
