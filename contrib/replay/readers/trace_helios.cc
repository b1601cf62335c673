// The Helios/Acme traces (SenseTime, Shanghai AI Lab): job_id,user,vc,gpu_num,cpu_num,
// node_num,state,submit_time,start_time,end_time,duration,queue.
#include <utility>

#include "contrib/replay/readers/trace_reader.h"

namespace nvlplace::replay::readers {
namespace {

constexpr const char* kColumns[] = {"job_id", "gpu_num", "submit_time", "duration"};
constexpr Table kHelios = {"helios", ',', kColumns, /*exact=*/true};

absl::Status ReadRow(const Row& f, Reader& r) {
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
