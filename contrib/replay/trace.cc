// Job traces for replay: the format table (name and reader of each TraceFormat), format
// detection, and ReadTrace, which runs one reader (readers/trace_FORMAT.cc, column mappings
// there and in README.md, "Replay") and then puts the jobs on the trace's own clock.
#include "contrib/replay/trace.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "contrib/replay/readers/trace_reader.h"
#include "placement/model/limits.h"

namespace nvlplace::replay {
namespace {

using readers::Reader;

// Every format: the name --trace-format takes, and its reader (none for auto: the format is
// detected first). The only place a format's name is written.
struct FormatEntry {
  TraceFormat format;
  const char* name;
  readers::ReadFn read;
};
constexpr FormatEntry kFormats[] = {
    {TraceFormat::kAuto, "auto", nullptr},
    {TraceFormat::kNative, "native", readers::ReadNative},
    {TraceFormat::kSacct, "sacct", readers::ReadSacct},
    {TraceFormat::kOpenb, "openb", readers::ReadOpenb},
    {TraceFormat::kSwf, "swf", readers::ReadSwf},
    {TraceFormat::kHelios, "helios", readers::ReadHelios},
    {TraceFormat::kPhilly, "philly", readers::ReadPhilly},
};

const FormatEntry* EntryOf(TraceFormat f) {
  for (const FormatEntry& e : kFormats) {
    if (e.format == f) return &e;
  }
  return nullptr;
}

// Runs the reader of `format` (not auto) over text.
absl::Status ReadJobs(absl::string_view text, TraceFormat format, Reader& r) {
  const FormatEntry* e = EntryOf(format);
  if (e == nullptr || e->read == nullptr) {
    return absl::InternalError(
        absl::StrCat("no reader for trace format ", static_cast<int>(format)));
  }
  return e->read(text, r);
}

// Puts times on the trace's own clock, from its earliest submit time (every time read is
// finite, in [0, kMaxTimestamp]): no job is submitted before it. A job submitted more than
// kMaxSeconds after it is malformed, and dropped.
absl::Status StartAtEarliestSubmit(Trace* trace, Reader& r) {
  std::vector<TraceJob>& jobs = trace->jobs;
  if (jobs.empty()) return absl::OkStatus();
  const TraceJob& first =
      *std::min_element(jobs.begin(), jobs.end(),
                        [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  const double t0 = first.submit;
  const int first_line = first.line;
  size_t kept = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    TraceJob& j = jobs[i];
    j.submit -= t0;
    if (j.submit > limits::kMaxSeconds) {
      absl::Status s =
          r.Bad(j.line, absl::StrCat("submitted ", readers::Secs(j.submit),
                                     " s after the trace start (line ", first_line,
                                     "); a trace spans at most ", readers::kMaxSecondsInt, " s"));
      if (!s.ok()) return s;
      continue;
    }
    if (kept != i) jobs[kept] = std::move(j);
    ++kept;
  }
  jobs.resize(kept);
  return absl::OkStatus();
}

// `text` without a leading UTF-8 byte order mark, which editors on Windows and Excel's "CSV
// UTF-8" write: left in, it became part of the first column's name ("the sacct header has
// no column 'jobid'") or hid a Philly file's '['. The only place it is stripped.
absl::string_view WithoutBom(absl::string_view text) {
  constexpr absl::string_view kBom = "\xEF\xBB\xBF";
  if (absl::StartsWith(text, kBom)) text.remove_prefix(kBom.size());
  return text;
}

}  // namespace

RequestSpec RequestOf(const TraceJob& j) {
  RequestSpec s;
  s.gpus = j.gpus;
  s.nodes = j.nodes;
  s.tp = j.tp;
  s.pp = j.pp;
  s.dp = j.dp;
  s.nvl = j.nvl;
  s.gpu_model = j.gpu_model;
  return s;
}

absl::Status CheckTraceJob(const TraceJob& j) {
  if (!(j.submit >= 0 && j.submit <= limits::kMaxSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat("submit ", readers::Secs(j.submit),
                                                   " is not a number of seconds from 0 to ",
                                                   readers::kMaxSecondsInt));
  }
  return readers::CheckJobShape(j);
}

absl::StatusOr<TraceFormat> ParseTraceFormat(absl::string_view name) {
  for (const FormatEntry& e : kFormats) {
    if (name == e.name) return e.format;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "trace format '", name, "' is not one of ",
      absl::StrJoin(kFormats, ", ",
                    [](std::string* out, const FormatEntry& e) { out->append(e.name); })));
}

const char* TraceFormatName(TraceFormat f) {
  const FormatEntry* e = EntryOf(f);
  return e == nullptr ? "?" : e->name;
}

TraceFormat DetectTraceFormat(absl::string_view text) {
  absl::string_view t = absl::StripLeadingAsciiWhitespace(WithoutBom(text));
  if (!t.empty() && t[0] == '[') return TraceFormat::kPhilly;
  if (!t.empty() && t[0] == ';') return TraceFormat::kSwf;
  // The first line, or its first 64 KiB: a header is never longer.
  absl::string_view first = t.substr(0, std::min(t.find('\n'), size_t{64} << 10));
  std::string lower = absl::AsciiStrToLower(first);
  if (lower.find('|') != std::string::npos && lower.find("jobid") != std::string::npos) {
    return TraceFormat::kSacct;
  }
  if (lower.find("gpu_milli") != std::string::npos) return TraceFormat::kOpenb;
  if (lower.find("gpu_num") != std::string::npos) return TraceFormat::kHelios;
  if (lower.find("submit") != std::string::npos && lower.find("gpus") != std::string::npos) {
    return TraceFormat::kNative;
  }
  // Plain numeric rows with many fields: SWF without its header comments.
  int fields = 0;
  for (absl::string_view f : absl::StrSplit(first, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    (void)f;
    if (++fields >= 18) return TraceFormat::kSwf;
  }
  return TraceFormat::kNative;
}

absl::StatusOr<Trace> ReadTrace(absl::string_view text, const std::string& file, TraceFormat format,
                                const TraceOptions& options) {
  text = WithoutBom(text);
  Trace trace;
  trace.format = format == TraceFormat::kAuto ? DetectTraceFormat(text) : format;
  Reader r(file, options, &trace);
  absl::Status s = ReadJobs(text, trace.format, r);
  if (s.ok()) s = StartAtEarliestSubmit(&trace, r);
  if (!s.ok()) return s;
  if (trace.jobs.empty() && trace.malformed == 0 && trace.skipped.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": no jobs in the trace (format ", TraceFormatName(trace.format), ")"));
  }
  // By submit time, then line: the order of a stable sort, without its buffer.
  std::sort(trace.jobs.begin(), trace.jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return a.submit < b.submit || (a.submit == b.submit && a.line < b.line);
  });
  return trace;
}

}  // namespace nvlplace::replay
