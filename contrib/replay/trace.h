// Job traces for replay: readers for the native CSV, sacct, Alibaba openb, SWF, Helios/Acme
// and Philly layouts, each mapping its columns onto one TraceJob.
#ifndef NVLPLACE_CONTRIB_REPLAY_TRACE_H_
#define NVLPLACE_CONTRIB_REPLAY_TRACE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/request.h"

namespace nvlplace::replay {

struct TraceJob {
  std::string id;
  double submit = 0;    // seconds from the trace start
  double duration = 0;  // recorded run time, seconds
  int gpus = 0;
  int nodes = 0;        // 0: any
  int tp = 0, pp = 0, dp = 0;  // 0: not given
  NvlMode nvl = NvlMode::kStrict;
  int line = 0;         // where it came from
};

enum class TraceFormat { kAuto, kNative, kSacct, kOpenb, kSwf, kHelios, kPhilly };

absl::StatusOr<TraceFormat> ParseTraceFormat(absl::string_view name);
const char* TraceFormatName(TraceFormat f);

struct TraceOptions {
  bool strict = false;        // a malformed line is fatal
  bool skip_shared = false;   // openb: skip pods with gpu_milli < 1000 instead of 1 GPU
};

struct Trace {
  TraceFormat format = TraceFormat::kNative;
  std::vector<TraceJob> jobs;  // sorted by submit time, then line
  int malformed = 0;           // lines that could not be read
  std::vector<std::string> problems;           // "file:line: message", first 20
  std::map<std::string, int> skipped;          // reason -> jobs skipped on purpose
};

// Detects the format from the first lines: a header naming the columns, ';' SWF comments,
// a '|' separated sacct header, or a JSON array (Philly).
TraceFormat DetectTraceFormat(absl::string_view text);

// Reads a whole trace. Malformed lines are counted and reported with file:line (fatal with
// options.strict); lines skipped on purpose (no GPU, a failed job with no run time) are
// counted by reason. Nothing is dropped silently.
absl::StatusOr<Trace> ReadTrace(absl::string_view text, const std::string& file,
                                TraceFormat format, const TraceOptions& options);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_TRACE_H_
