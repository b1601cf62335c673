// The Standard Workload Format (Parallel Workloads Archive): ';' comments, then 18
// whitespace-separated fields a job; 2 submit, 4 run time, 5 allocated processors (taken as
// GPUs; the requested ones, field 8, when not given).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "contrib/replay/readers/trace_reader.h"

namespace nvlplace::replay::readers {
namespace {

constexpr size_t kSwfFields = 18;

constexpr char kSwfNoRunTime[] = "no run time (-1)";
constexpr char kSwfNoProcessors[] = "no processors";

// The first 18 fields of a job line; more are ignored, and never stored.
std::vector<absl::string_view> SwfFields(absl::string_view line) {
  std::vector<absl::string_view> f;
  for (absl::string_view field : absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    f.push_back(field);
    if (f.size() == kSwfFields) break;
  }
  return f;
}

// The numbers of a job line that are not the job's own fields.
struct SwfCounts {
  bool no_run_time = false;  // run time -1: SWF's "unknown"
  int procs = 0;             // allocated processors (field 5); -1: unknown
  int requested = 0;         // requested processors (field 8); -1: unknown
};

// Fields 2, 4, 5 and 8, in that order, into j and *n. RET the first that is malformed.
absl::Status ReadNumbers(const std::vector<absl::string_view>& f, TraceJob* j, SwfCounts* n) {
  double run_time;
  if (!ParseTime(f[1], &j->submit)) {
    return absl::InvalidArgumentError(NotATime("submit time (field 2)", f[1]));
  }
  if (absl::SimpleAtod(f[3], &run_time) && run_time == -1) {
    n->no_run_time = true;
  } else if (!ParseSeconds(f[3], &j->duration)) {
    return absl::InvalidArgumentError(NotSeconds("run time (field 4)", f[3]));
  }
  if (!ParseCount(f[4], -1, limits::kMaxJobGpus, &n->procs)) {
    return absl::InvalidArgumentError(
        NotACount("allocated processors (field 5)", f[4], -1, limits::kMaxJobGpus));
  }
  if (!ParseCount(f[7], -1, limits::kMaxJobGpus, &n->requested)) {
    return absl::InvalidArgumentError(
        NotACount("requested processors (field 8)", f[7], -1, limits::kMaxJobGpus));
  }
  return absl::OkStatus();
}

// The job of line `line_no`, split into fields `f`.
absl::Status ReadJob(int line_no, const std::vector<absl::string_view>& f, Reader& r) {
  if (f.size() < kSwfFields) return r.Bad(line_no, absl::StrCat(f.size(), " fields, SWF has 18"));
  TraceJob j;
  j.line = line_no;
  j.id = CleanId(f[0]);
  SwfCounts n;
  absl::Status read = ReadNumbers(f, &j, &n);
  if (!read.ok()) return r.Bad(line_no, read.message());
  if (n.no_run_time) {
    r.Skip(kSwfNoRunTime);
    return absl::OkStatus();
  }
  int procs = n.procs > 0 ? n.procs : n.requested;
  if (procs <= 0) {
    r.Skip(kSwfNoProcessors);
    return absl::OkStatus();
  }
  j.gpus = procs;
  return r.AddGpuJob(std::move(j));
}

}  // namespace

absl::Status ReadSwf(absl::string_view text, Reader& r) {
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == ';') continue;
    absl::Status s = ReadJob(line_no, SwfFields(line), r);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace nvlplace::replay::readers
