// Job trace readers. Column mappings (documented in README.md, "Replay"):
//   native:  submit,duration,gpus[,nodes,tp,pp,dp,nvl,id]   (seconds; nvl strict|prefer|off)
//   sacct:   --parsable2 with JobID|Submit|Start|End|NNodes|AllocTRES; GPUs from gres/gpu=N,
//            else the one gres/gpu:TYPE=N (TYPE: the GPU model); NNodes kept when it divides
//            the GPUs; steps (JobID with '.') skipped; duration = End - Start
//   openb:   name,...,num_gpu,gpu_milli,gpu_spec,...,creation_time,deletion_time,
//            scheduled_time; submit = creation_time, duration = deletion_time -
//            scheduled_time; gpu_spec naming one model is the GPU model
//   swf:     18 fields; 2 submit, 4 run time, 5 allocated processors (taken as GPUs; 8 if -1)
//   helios:  job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,
//            duration,queue
//   philly:  JSON array of {jobid, submitted_time, attempts[{start_time, end_time,
//            detail[{ip, gpus[]}]}]}; GPUs of the first attempt, run time of all attempts
#include "contrib/replay/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <iterator>
#include <memory>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "placement/model/limits.h"

namespace nvlplace::replay {
namespace {

// Text from the trace in a message: quoted, control bytes escaped, at most 64 bytes shown.
std::string Esc(absl::string_view text) { return QuoteUserText(text); }

// A job id as the outputs show it: as written, control bytes and backslashes escaped as in
// messages (\x1b, \\).
std::string CleanId(absl::string_view id) {
  std::string out;
  out.reserve(id.size());
  for (char c : id) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  return out;
}

// A number of seconds in a message: whole seconds in full (1000000001, not 1e+09).
std::string Secs(double seconds) { return absl::StrFormat("%.12g", seconds); }

constexpr int64_t kMaxSecondsInt = static_cast<int64_t>(limits::kMaxSeconds);
constexpr int64_t kMaxTimestampInt = static_cast<int64_t>(limits::kMaxTimestamp);

// A time field a trace leaves empty on purpose (never started, still running).
bool IsNoTime(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  return s.empty() || s == "Unknown" || s == "None" || s == "null";
}

// Seconds since the epoch from "YYYY-MM-DD[T ]HH:MM:SS" (UTC), or a plain number of seconds;
// finite and in [0, kMaxTimestamp]. False for anything else (nan, inf, -5, trailing text).
bool ParseTime(absl::string_view s, double* out) {
  s = absl::StripAsciiWhitespace(s);
  double v;
  if (absl::SimpleAtod(s, &v)) {
    if (!std::isfinite(v) || v < 0 || v > limits::kMaxTimestamp) return false;
    *out = v;
    return true;
  }
  if (s.size() != 19 || (s[10] != 'T' && s[10] != ' ')) return false;
  std::string str(s);
  str[10] = 'T';
  std::tm tm{};
  const char* end = strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return false;
  v = static_cast<double>(timegm(&tm));
  if (!(v >= 0 && v <= limits::kMaxTimestamp)) return false;
  *out = v;
  return true;
}

std::string NotATime(const char* name, absl::string_view s) {
  return absl::StrCat(name, " ", Esc(s), " is not a time: give a date YYYY-MM-DDTHH:MM:SS (UTC) ",
                      "or seconds from 0 to ", kMaxTimestampInt);
}

// A duration in seconds: finite, in [0, kMaxSeconds].
bool ParseSeconds(absl::string_view s, double* out) {
  double v;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(s), &v)) return false;
  if (!(v >= 0 && v <= limits::kMaxSeconds)) return false;  // also NaN
  *out = v;
  return true;
}

std::string NotSeconds(const char* name, absl::string_view s) {
  return absl::StrCat(name, " ", Esc(s), " is not a number of seconds from 0 to ", kMaxSecondsInt);
}

// A duration from two times: end - start, in [0, kMaxSeconds]; empty when fine.
std::string CheckSpan(const char* start_name, double start, const char* end_name, double end) {
  if (end < start) {
    return absl::StrCat(end_name, " is before ", start_name, " (", Secs(end - start),
                        " s): not a run time");
  }
  if (end - start > limits::kMaxSeconds) {
    return absl::StrCat(end_name, " - ", start_name, " = ", Secs(end - start), " s is more than ",
                        kMaxSecondsInt, " s");
  }
  return "";
}

// A whole number ("8", or "8.0") in [lo, hi].
bool ParseCount(absl::string_view s, int64_t lo, int64_t hi, int* out) {
  s = absl::StripAsciiWhitespace(s);
  int64_t v;
  if (!absl::SimpleAtoi(s, &v)) {
    double d;
    if (!absl::SimpleAtod(s, &d) || !std::isfinite(d) || d != std::floor(d) || d < -1e18 ||
        d > 1e18) {
      return false;
    }
    v = static_cast<int64_t>(d);
  }
  if (v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

std::string NotACount(const char* name, absl::string_view s, int64_t lo, int64_t hi) {
  return absl::StrCat(name, " ", Esc(s), " is not a whole number from ", lo, " to ", hi);
}

// CheckTraceJob but the submit time: id, duration, GPUs and sizes.
absl::Status CheckJobShape(const TraceJob& j) {
  if (j.id.size() > limits::kMaxJobIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job id is ", j.id.size(), " bytes long; at most ", limits::kMaxJobIdBytes));
  }
  if (!(j.duration >= 0 && j.duration <= limits::kMaxSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "duration ", Secs(j.duration), " is not a number of seconds from 0 to ", kMaxSecondsInt));
  }
  if (j.gpus < 1 || j.gpus > limits::kMaxJobGpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("gpus=", j.gpus, " is not from 1 to ", limits::kMaxJobGpus));
  }
  if (j.gpu_model.size() > limits::kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GPU model ", Esc(j.gpu_model), " is longer than ", limits::kMaxNameBytes, " bytes"));
  }
  return CheckRequestSizes(RequestOf(j));
}

// Reads the rows of a header-led table, calling row(fields, line) and collecting problems.
class Reader {
 public:
  Reader(const std::string& file, const TraceOptions& options, Trace* trace)
      : file_(file), options_(options), trace_(trace) {}

  // A malformed line: counted, reported, fatal in strict mode.
  absl::Status Bad(int line, absl::string_view message) {
    ++trace_->malformed;
    std::string text = absl::StrCat(file_, ":", line, ": ", message);
    if (options_.strict) {
      return absl::InvalidArgumentError(absl::StrCat(text, " (--strict)"));
    }
    if (trace_->problems.size() < 20) trace_->problems.push_back(text);
    return absl::OkStatus();
  }
  void Skip(const std::string& reason) { ++trace_->skipped[reason]; }
  // Adds a job that passes CheckTraceJob (else the line is malformed), or counts it as
  // skipped ("no GPU") when it asks for none. Too many jobs is fatal. `relaxed`, when set,
  // says what the job was read without; it is counted once the job is added.
  absl::Status AddGpuJob(TraceJob job, const char* relaxed = nullptr) {
    if (job.gpus == 0) {
      Skip("no GPU");
      return absl::OkStatus();
    }
    // The submit time is still absolute here; ReadTrace checks it once the start is known.
    absl::Status valid = CheckJobShape(job);
    if (!valid.ok()) return Bad(job.line, valid.message());
    if (trace_->jobs.size() >= options_.max_jobs) {
      return absl::InvalidArgumentError(absl::StrCat(file_, ":", job.line, ": more than ",
                                                     options_.max_jobs,
                                                     " jobs in one trace; split the trace"));
    }
    trace_->jobs.push_back(std::move(job));
    if (relaxed != nullptr) ++trace_->relaxed[relaxed];
    return absl::OkStatus();
  }
  const TraceOptions& options() const { return options_; }
  const std::string& file() const { return file_; }

 private:
  const std::string& file_;
  const TraceOptions& options_;
  Trace* trace_;
};

// Fields of a line, at most limits::kMaxTraceFields of them (callers count first).
std::vector<std::string> SplitFields(absl::string_view line, char sep) {
  std::vector<std::string> out;
  for (absl::string_view f : absl::StrSplit(line, sep)) {
    f = absl::StripAsciiWhitespace(f);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.emplace_back(f);
  }
  return out;
}

// One data row of a header-led table.
struct Row {
  const std::vector<std::string>& fields;
  const std::map<std::string, int>& cols;
  int line;
  // The field under a (lower-case) header name; "" when the trace has no such column.
  std::string operator[](const char* name) const {
    auto it = cols.find(name);
    return it == cols.end() || it->second >= static_cast<int>(fields.size()) ? ""
                                                                             : fields[it->second];
  }
};

// Calls fn(Row) for each data row of a header-led table. The header must name every `need`
// column ("file:1: the FORMAT header has no column 'x'"), no column twice, and have at most
// kMaxTraceFields; a row with fewer fields than the header (or another number, with
// `exact`, or more than kMaxTraceFields) is malformed, counted before it is split. RET the
// first error of fn.
template <typename Fn>
absl::Status ForEachTableRow(absl::string_view text, char sep, const std::string& file,
                             const char* format, std::initializer_list<const char*> need,
                             bool exact, Reader& r, Fn fn) {
  int line_no = 0;
  std::vector<std::string> header;
  std::map<std::string, int> cols;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    size_t count = static_cast<size_t>(std::count(line.begin(), line.end(), sep)) + 1;
    if (header.empty()) {
      if (count > limits::kMaxTraceFields) {
        return absl::InvalidArgumentError(absl::StrCat(file, ":", line_no, ": the ", format,
                                                       " header has ", count, " fields; at most ",
                                                       limits::kMaxTraceFields));
      }
      header = SplitFields(line, sep);
      for (size_t i = 0; i < header.size(); ++i) {
        std::string name = absl::AsciiStrToLower(header[i]);
        if (!cols.emplace(name, static_cast<int>(i)).second) {
          return absl::InvalidArgumentError(absl::StrCat(
              file, ":", line_no, ": the ", format, " header names column ", Esc(name), " twice"));
        }
      }
      for (const char* c : need) {
        if (!cols.count(c)) {
          return absl::InvalidArgumentError(absl::StrCat(file, ":", line_no, ": the ", format,
                                                         " header has no column '", c, "'"));
        }
      }
      continue;
    }
    absl::Status s;
    if (count < header.size() || (exact && count != header.size()) ||
        count > limits::kMaxTraceFields) {
      s = r.Bad(line_no, absl::StrCat(count, " fields, the header has ", header.size()));
    } else {
      std::vector<std::string> fields = SplitFields(line, sep);
      s = fn(Row{fields, cols, line_no});
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ReadNative(absl::string_view text, const std::string& file, Reader& r) {
  return ForEachTableRow(
      text, ',', file, "native", {"submit", "duration", "gpus"}, true, r, [&](const Row& f) {
        TraceJob j;
        j.line = f.line;
        j.id = f["id"].empty() ? absl::StrCat("line", f.line) : CleanId(f["id"]);
        if (!ParseTime(f["submit"], &j.submit)) {
          return r.Bad(f.line, NotATime("submit", f["submit"]));
        }
        if (!ParseSeconds(f["duration"], &j.duration)) {
          return r.Bad(f.line, NotSeconds("duration", f["duration"]));
        }
        if (!ParseCount(f["gpus"], 0, limits::kMaxJobGpus, &j.gpus)) {
          return r.Bad(f.line, NotACount("gpus", f["gpus"], 0, limits::kMaxJobGpus));
        }
        for (auto [name, field, max] : {std::tuple{"nodes", &j.nodes, limits::kMaxJobNodes},
                                        std::tuple{"tp", &j.tp, int64_t{limits::kMaxGroupSize}},
                                        std::tuple{"pp", &j.pp, int64_t{limits::kMaxGroupSize}},
                                        std::tuple{"dp", &j.dp, int64_t{limits::kMaxGroupSize}}}) {
          std::string v = f[name];
          if (!v.empty() && !ParseCount(v, 0, max, field)) {
            return r.Bad(f.line, NotACount(name, v, 0, max));
          }
        }
        std::string nvl = f["nvl"];
        if (!nvl.empty()) {
          absl::StatusOr<NvlMode> m = ParseNvlMode(nvl);
          if (!m.ok()) return r.Bad(f.line, m.status().message());
          j.nvl = *m;
        }
        return r.AddGpuJob(std::move(j));
      });
}

// The GPUs of one sacct AllocTRES: the total (gres/gpu=N) and the typed entries
// (gres/gpu:TYPE=N, one per GPU model the accounting tracks), names in any case.
struct GpuTres {
  int total = -1;        // gres/gpu=N; -1 when absent
  std::string type;      // the first TYPE with N > 0, as written; "" when none
  int type_count = 0;    // its N
  bool several = false;  // another TYPE with N > 0
};

// Reads the GPU entries of `alloc`; other TRES (cpu, mem, gres/gpumem, ...) are ignored.
// RET InvalidArgument naming the entry for a count that is not a whole number from 0 to
// kMaxJobGpus, an empty TYPE, or a name given twice.
absl::StatusOr<GpuTres> ReadGpuTres(absl::string_view alloc) {
  constexpr absl::string_view kGpu = "gres/gpu";
  GpuTres out;
  for (absl::string_view tres : absl::StrSplit(alloc, ',')) {
    size_t eq = tres.find('=');
    absl::string_view name = tres.substr(0, eq);
    if (!absl::StartsWithIgnoreCase(name, kGpu)) continue;
    absl::string_view rest = name.substr(kGpu.size());
    bool typed = absl::StartsWith(rest, ":");
    if (!rest.empty() && !typed) continue;  // gres/gpumem, gres/gpu_util: not GPUs
    absl::string_view type = typed ? rest.substr(1) : "";
    int n = 0;
    if (eq == absl::string_view::npos ||
        !ParseCount(tres.substr(eq + 1), 0, limits::kMaxJobGpus, &n)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AllocTRES ", Esc(tres), " has no GPU count from 0 to ", limits::kMaxJobGpus));
    }
    if (typed && type.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("AllocTRES ", Esc(tres), " has no GPU type after 'gres/gpu:'"));
    }
    if (!typed) {
      if (out.total >= 0) {
        return absl::InvalidArgumentError(absl::StrCat("AllocTRES gives ", Esc(name), " twice"));
      }
      out.total = n;
    } else if (!out.type.empty() && absl::EqualsIgnoreCase(type, out.type)) {
      return absl::InvalidArgumentError(absl::StrCat("AllocTRES gives ", Esc(name), " twice"));
    } else if (n > 0 && out.type.empty()) {
      out.type = std::string(type);
      out.type_count = n;
    } else if (n > 0) {
      out.several = true;
    }
  }
  return out;
}

// Reasons a sacct line is skipped or read in part (the keys of Trace::skipped and ::relaxed).
constexpr char kSacctStep[] = "job step (JobID with '.'; its job's line is replayed)";
constexpr char kSacctSeveralTypes[] = "GPUs of several types (gres/gpu:TYPE for two TYPEs)";
constexpr char kSacctTypedAndUntyped[] =
    "GPUs of a type and of no type (gres/gpu:TYPE below gres/gpu)";
constexpr char kSacctUnevenNodes[] =
    "NNodes does not divide the GPUs: replayed on any number of nodes";

absl::Status ReadSacct(absl::string_view text, const std::string& file, Reader& r) {
  return ForEachTableRow(
      text, '|', file, "sacct", {"jobid", "submit", "start", "end", "alloctres"}, false, r,
      [&](const Row& f) {
        std::string id = f["jobid"];
        if (id.find('.') != std::string::npos) {
          r.Skip(kSacctStep);
          return absl::OkStatus();
        }
        TraceJob j;
        j.line = f.line;
        j.id = CleanId(id);
        double start = 0, end = 0;
        if (!ParseTime(f["submit"], &j.submit)) {
          return r.Bad(f.line, NotATime("Submit", f["submit"]));
        }
        if (IsNoTime(f["start"]) || IsNoTime(f["end"])) {
          r.Skip("never started or not finished (Start/End Unknown)");
          return absl::OkStatus();
        }
        if (!ParseTime(f["start"], &start)) return r.Bad(f.line, NotATime("Start", f["start"]));
        if (!ParseTime(f["end"], &end)) return r.Bad(f.line, NotATime("End", f["end"]));
        std::string span = CheckSpan("Start", start, "End", end);
        if (!span.empty()) return r.Bad(f.line, span);
        j.duration = end - start;
        // NNodes is the nodes the job got: kept as "exactly that many" when the GPUs split
        // evenly over them (the shape Slurm gave, --nodes with --gpus-per-node); otherwise
        // the job is replayed on any number of nodes and counted as relaxed.
        int nnodes = 0;
        std::string nnodes_text = f["nnodes"];
        if (!nnodes_text.empty() && !ParseCount(nnodes_text, 0, limits::kMaxJobNodes, &nnodes)) {
          return r.Bad(f.line, NotACount("NNodes", nnodes_text, 0, limits::kMaxJobNodes));
        }
        absl::StatusOr<GpuTres> gpus = ReadGpuTres(f["alloctres"]);
        if (!gpus.ok()) return r.Bad(f.line, gpus.status().message());
        if (gpus->several) {
          r.Skip(kSacctSeveralTypes);
          return absl::OkStatus();
        }
        if (gpus->total < 0) {
          j.gpus = gpus->type_count;  // typed only: the accounting tracks only the types
        } else if (gpus->type.empty() || gpus->type_count == gpus->total) {
          j.gpus = gpus->total;
        } else if (gpus->type_count > gpus->total) {
          return r.Bad(f.line,
                       absl::StrCat("AllocTRES has ", gpus->type_count, " GPUs of type ",
                                    Esc(gpus->type), ", more than its gres/gpu=", gpus->total));
        } else {
          // Some GPUs of a type the accounting does not track: more than one model.
          r.Skip(kSacctTypedAndUntyped);
          return absl::OkStatus();
        }
        j.gpu_model = gpus->type;
        const char* relaxed = nullptr;
        if (nnodes > 0 && j.gpus > 0) {
          if (j.gpus % nnodes == 0) {
            j.nodes = nnodes;
          } else {
            relaxed = kSacctUnevenNodes;
          }
        }
        return r.AddGpuJob(std::move(j), relaxed);
      });
}

// An openb gpu_spec: "" or "nan" (no constraint), one model ("V100M32", "T4", "G2"), or the
// models a pod accepts separated by '|' ("V100M16|V100M32").
struct OpenbSpec {
  std::string model;     // the one model named (repeats and empty options ignored), or ""
  bool several = false;  // more than one model named: any model serves here
};

OpenbSpec ReadOpenbSpec(absl::string_view spec) {
  OpenbSpec out;
  absl::string_view model;
  for (absl::string_view option : absl::StrSplit(spec, '|')) {
    option = absl::StripAsciiWhitespace(option);
    if (option.empty() || absl::EqualsIgnoreCase(option, "nan")) continue;
    if (model.empty()) {
      model = option;
    } else if (!absl::EqualsIgnoreCase(option, model)) {
      out.several = true;
      return out;
    }
  }
  out.model = std::string(model);
  return out;
}

constexpr char kOpenbSeveralModels[] = "gpu_spec names several GPU models: replayed on any model";

absl::Status ReadOpenb(absl::string_view text, const std::string& file, Reader& r) {
  return ForEachTableRow(
      text, ',', file, "openb",
      {"name", "num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"}, true, r,
      [&](const Row& f) {
        TraceJob j;
        j.line = f.line;
        j.id = CleanId(f["name"]);
        int milli = 0;
        double deleted, scheduled;
        if (!ParseCount(f["num_gpu"], 0, limits::kMaxJobGpus, &j.gpus)) {
          return r.Bad(f.line, NotACount("num_gpu", f["num_gpu"], 0, limits::kMaxJobGpus));
        }
        if (!ParseCount(f["gpu_milli"], 0, 1000, &milli)) {
          return r.Bad(f.line, NotACount("gpu_milli", f["gpu_milli"], 0, 1000));
        }
        if (!ParseTime(f["creation_time"], &j.submit)) {
          return r.Bad(f.line, NotATime("creation_time", f["creation_time"]));
        }
        if (IsNoTime(f["deletion_time"]) || IsNoTime(f["scheduled_time"])) {
          r.Skip("never scheduled or never deleted");
          return absl::OkStatus();
        }
        if (!ParseTime(f["scheduled_time"], &scheduled)) {
          return r.Bad(f.line, NotATime("scheduled_time", f["scheduled_time"]));
        }
        if (!ParseTime(f["deletion_time"], &deleted)) {
          return r.Bad(f.line, NotATime("deletion_time", f["deletion_time"]));
        }
        std::string span = CheckSpan("scheduled_time", scheduled, "deletion_time", deleted);
        if (!span.empty()) return r.Bad(f.line, span);
        if (j.gpus == 1 && milli < 1000 && r.options().skip_shared) {
          r.Skip("shared GPU (gpu_milli < 1000)");
          return absl::OkStatus();
        }
        j.duration = deleted - scheduled;
        j.nodes = 1;  // openb pods are single-node
        OpenbSpec spec = ReadOpenbSpec(f["gpu_spec"]);
        j.gpu_model = std::move(spec.model);
        return r.AddGpuJob(std::move(j), spec.several ? kOpenbSeveralModels : nullptr);
      });
}

absl::Status ReadSwf(absl::string_view text, Reader& r) {
  constexpr size_t kSwfFields = 18;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == ';') continue;
    // The first 18 fields; more are ignored, and never stored.
    std::vector<absl::string_view> f;
    for (absl::string_view field :
         absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      f.push_back(field);
      if (f.size() == kSwfFields) break;
    }
    if (f.size() < kSwfFields) {
      absl::Status s = r.Bad(line_no, absl::StrCat(f.size(), " fields, SWF has 18"));
      if (!s.ok()) return s;
      continue;
    }
    TraceJob j;
    j.line = line_no;
    j.id = CleanId(f[0]);
    double run_time;
    bool no_run_time = false;
    std::string problem;
    int procs = 0, requested = 0;
    if (!ParseTime(f[1], &j.submit)) {
      problem = NotATime("submit time (field 2)", f[1]);
    } else if (absl::SimpleAtod(f[3], &run_time) && run_time == -1) {
      no_run_time = true;  // SWF's "unknown"
    } else if (!ParseSeconds(f[3], &j.duration)) {
      problem = NotSeconds("run time (field 4)", f[3]);
    }
    if (problem.empty() && !ParseCount(f[4], -1, limits::kMaxJobGpus, &procs)) {
      problem = NotACount("allocated processors (field 5)", f[4], -1, limits::kMaxJobGpus);
    }
    if (problem.empty() && !ParseCount(f[7], -1, limits::kMaxJobGpus, &requested)) {
      problem = NotACount("requested processors (field 8)", f[7], -1, limits::kMaxJobGpus);
    }
    if (!problem.empty()) {
      absl::Status s = r.Bad(line_no, problem);
      if (!s.ok()) return s;
      continue;
    }
    if (no_run_time) {
      r.Skip("no run time (-1)");
      continue;
    }
    if (procs <= 0) procs = requested;
    if (procs <= 0) {
      r.Skip("no processors");
      continue;
    }
    j.gpus = procs;
    absl::Status s = r.AddGpuJob(std::move(j));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ReadHelios(absl::string_view text, const std::string& file, Reader& r) {
  return ForEachTableRow(
      text, ',', file, "helios", {"job_id", "gpu_num", "submit_time", "duration"}, true, r,
      [&](const Row& f) {
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
      });
}

// ---- Philly: a SAX reader, one job in memory at a time ----------------------------------

// Counts the lines the JSON parser has read: the parser pulls bytes through this iterator.
class LineCountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  LineCountingIterator(const char* p, int* line) : p_(p), line_(line) {}
  reference operator*() const { return *p_; }
  LineCountingIterator& operator++() {
    if (*p_ == '\n') ++*line_;
    ++p_;
    return *this;
  }
  LineCountingIterator operator++(int) {
    LineCountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const LineCountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const LineCountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  int* line_;
};

// The Philly schema as SAX events: [ {jobid, submitted_time, attempts: [ {start_time,
// end_time, detail: [ {ip, gpus: [...]} ]} ]} ]. Other keys are skipped. Holds one job.
class PhillySax : public nlohmann::json_sax<nlohmann::json> {
 public:
  // Nesting deeper than this is refused (the schema needs 6 levels).
  static constexpr size_t kMaxDepth = 64;

  PhillySax(Reader& r, const int* line) : r_(r), line_(line) {}

  // The first fatal error (bad JSON, strict mode, too many jobs); OK otherwise.
  const absl::Status& status() const { return status_; }
  bool saw_array() const { return saw_array_; }

  bool null() override { return Scalar(Kind::kNull, ""); }
  bool boolean(bool) override { return Scalar(Kind::kOther, ""); }
  bool number_integer(number_integer_t) override { return Scalar(Kind::kOther, ""); }
  bool number_unsigned(number_unsigned_t) override { return Scalar(Kind::kOther, ""); }
  bool number_float(number_float_t, const string_t&) override { return Scalar(Kind::kOther, ""); }
  bool string(string_t& val) override { return Scalar(Kind::kString, val); }
  bool binary(binary_t&) override { return Scalar(Kind::kOther, ""); }
  bool start_object(std::size_t) override { return Open(/*object=*/true); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(/*object=*/false); }
  bool end_array() override { return Close(); }
  bool key(string_t& val) override {
    if (!stack_.empty()) stack_.back().key = val.size() <= 32 ? val : std::string("?");
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // nlohmann's message shows the last token read (<U+0000> for control bytes): cut it short.
    absl::string_view what = ex.what();
    if (what.size() > 300) what = what.substr(0, 300);
    status_ = absl::InvalidArgumentError(
        absl::StrCat(r_.file(), ":", *line_ + 1, ": not valid JSON: ", what));
    return false;
  }

 private:
  enum class Kind { kNull, kString, kOther };
  // What a container is, from its parent and key.
  enum class Ctx { kJobs, kJob, kAttempts, kAttempt, kDetails, kDetail, kGpus, kSkip };
  struct Frame {
    Ctx ctx;
    bool object;
    std::string key;  // objects: the key of the value being read
  };
  struct Job {
    int index = 0;
    int line = 0;
    std::string error;  // the first problem
    std::string id;
    bool has_submit = false, has_attempts = false;
    double submit = 0;
    int attempts = 0;
    bool first_has_detail = false;
    int64_t gpus = 0;     // of the first attempt
    double duration = 0;  // of all attempts
    // The times of the attempt being read, when given.
    double start = 0, end = 0;
    bool has_start = false, has_end = false;
  };

  void JobError(std::string message) {
    if (job_.error.empty()) job_.error = std::move(message);
  }
  const std::string& Key() const { return stack_.back().key; }

  bool Scalar(Kind kind, absl::string_view val) {
    if (stack_.empty()) return Fail("not a JSON array of Philly jobs");
    const Frame& f = stack_.back();
    switch (f.ctx) {
      case Ctx::kJobs:
        ++index_;
        Keep(r_.Bad(*line_ + 1, absl::StrCat("job ", index_, ": not a JSON object")));
        break;
      case Ctx::kJob:
        if (Key() == "jobid") {
          if (kind == Kind::kString) {
            job_.id = CleanId(val);
          } else {
            JobError("jobid is not a string");
          }
        } else if (Key() == "submitted_time") {
          job_.has_submit = true;
          if (kind != Kind::kString || !ParseTime(val, &job_.submit)) {
            JobError(kind == Kind::kString ? NotATime("submitted_time", val)
                                           : "submitted_time is not a string");
          }
        } else if (Key() == "attempts") {
          job_.has_attempts = true;
          JobError("attempts is not an array");
        }
        break;
      case Ctx::kAttempt:
        if (Key() == "start_time" || Key() == "end_time") {
          bool start = Key() == "start_time";
          if (kind == Kind::kString && !IsNoTime(val)) {
            if (ParseTime(val, start ? &job_.start : &job_.end)) {
              (start ? job_.has_start : job_.has_end) = true;
            } else {
              JobError(NotATime(start ? "start_time" : "end_time", val));
            }
          } else if (kind != Kind::kNull && kind != Kind::kString) {
            JobError(absl::StrCat(Key(), " is not a string"));
          }
        } else if (Key() == "detail" && job_.attempts == 1) {
          job_.first_has_detail = true;
          JobError("detail is not an array");
        }
        break;
      case Ctx::kDetail:
        if (Key() == "gpus" && job_.attempts == 1) {
          gpus_seen_ = true;
          JobError("gpus is not an array");
        }
        break;
      case Ctx::kGpus:
        if (job_.attempts == 1) ++job_.gpus;
        break;
      default:
        break;
    }
    return status_.ok();
  }

  bool Open(bool object) {
    if (stack_.size() >= kMaxDepth) {
      return Fail(absl::StrCat("JSON nested deeper than ", kMaxDepth, " levels"));
    }
    Ctx ctx = Ctx::kSkip;
    if (stack_.empty()) {
      if (object) return Fail("not a JSON array of Philly jobs");
      saw_array_ = true;
      ctx = Ctx::kJobs;
    } else {
      const Frame& f = stack_.back();
      switch (f.ctx) {
        case Ctx::kJobs:
          ++index_;
          if (object) {
            job_ = Job{};
            job_.index = index_;
            job_.line = *line_ + 1;  // the parser has just read this object's '{'
            ctx = Ctx::kJob;
          } else {
            Keep(r_.Bad(*line_ + 1, absl::StrCat("job ", index_, ": not a JSON object")));
          }
          break;
        case Ctx::kJob:
          if (f.key == "attempts") {
            job_.has_attempts = true;
            if (object) {
              JobError("attempts is not an array");
            } else {
              ctx = Ctx::kAttempts;
            }
          } else if (f.key == "jobid" || f.key == "submitted_time") {
            JobError(absl::StrCat(f.key, " is not a string"));
          }
          break;
        case Ctx::kAttempts:
          if (object) {
            ++job_.attempts;
            job_.has_start = job_.has_end = false;
            ctx = Ctx::kAttempt;
          } else {
            JobError("an attempt is not a JSON object");
          }
          break;
        case Ctx::kAttempt:
          if (f.key == "detail" && job_.attempts == 1) {
            job_.first_has_detail = true;
            if (object) {
              JobError("detail is not an array");
            } else {
              ctx = Ctx::kDetails;
            }
          } else if (f.key == "start_time" || f.key == "end_time") {
            JobError(absl::StrCat(f.key, " is not a string"));
          }
          break;
        case Ctx::kDetails:
          if (object) {
            gpus_seen_ = false;
            ctx = Ctx::kDetail;
          } else {
            JobError("a detail entry is not a JSON object");
          }
          break;
        case Ctx::kDetail:
          if (f.key == "gpus") {
            gpus_seen_ = true;
            ctx = object ? Ctx::kSkip : Ctx::kGpus;
            if (object) JobError("gpus is not an array");
          }
          break;
        case Ctx::kGpus:
          ++job_.gpus;  // an entry of any kind is one GPU
          break;
        case Ctx::kSkip:
          break;
      }
    }
    stack_.push_back({ctx, object, ""});
    return status_.ok();
  }

  bool Close() {
    if (stack_.empty()) return Fail("unbalanced JSON");
    Ctx ctx = stack_.back().ctx;
    stack_.pop_back();
    switch (ctx) {
      case Ctx::kDetail:
        if (!gpus_seen_) JobError("a detail entry has no gpus");
        break;
      case Ctx::kAttempt:
        if (job_.has_start && job_.has_end) {
          std::string span = CheckSpan("start_time", job_.start, "end_time", job_.end);
          if (!span.empty()) {
            JobError(absl::StrCat("attempt ", job_.attempts, ": ", span));
          } else {
            job_.duration += job_.end - job_.start;  // each <= kMaxSeconds: no overflow
          }
        }
        if (job_.attempts == 1 && !job_.first_has_detail) JobError("attempt 1 has no detail");
        break;
      case Ctx::kJob:
        EndJob();
        break;
      default:
        break;
    }
    return status_.ok();
  }

  void EndJob() {
    if (job_.error.empty() && !job_.has_submit) JobError("no submitted_time");
    if (job_.error.empty() && !job_.has_attempts) JobError("no attempts");
    if (job_.error.empty() && job_.duration > limits::kMaxSeconds) {
      JobError(absl::StrCat("the attempts' run times add up to ", Secs(job_.duration),
                            " s, more than ", kMaxSecondsInt));
    }
    if (job_.error.empty() && job_.gpus > limits::kMaxJobGpus) {
      JobError(absl::StrCat("attempt 1 has ", job_.gpus, " GPUs, more than ", limits::kMaxJobGpus));
    }
    if (!job_.error.empty()) {
      Keep(r_.Bad(job_.line, absl::StrCat("job ", job_.index, ": ", job_.error)));
      return;
    }
    if (job_.attempts == 0) {
      r_.Skip("no attempt (never ran)");
      return;
    }
    TraceJob j;
    j.line = job_.line;
    j.id = job_.id.empty() ? absl::StrCat("job", job_.index) : job_.id;
    j.submit = job_.submit;
    j.duration = job_.duration;
    j.gpus = static_cast<int>(job_.gpus);
    Keep(r_.AddGpuJob(std::move(j)));
  }

  bool Fail(absl::string_view message) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(absl::StrCat(r_.file(), ":", *line_ + 1, ": ", message));
    }
    return false;
  }
  void Keep(absl::Status s) {
    if (status_.ok() && !s.ok()) status_ = std::move(s);
  }

  Reader& r_;
  const int* line_;  // lines fully read by the parser
  absl::Status status_;
  std::vector<Frame> stack_;
  bool saw_array_ = false;
  bool gpus_seen_ = false;
  int index_ = 0;  // jobs seen, 1-based
  Job job_;
};

// Refuses a JSON token (a string, a number, a literal) longer than kMaxJsonTokenBytes before
// the parser buffers it: one pass, strings and escapes followed. RET InvalidArgument naming
// the line where the token starts.
absl::Status CheckJsonTokens(absl::string_view text, const std::string& file) {
  int line = 1, token_line = 1;
  size_t token = 0;  // bytes of the token being read
  bool in_string = false, escaped = false;
  auto too_long = [&] {
    return absl::InvalidArgumentError(absl::StrCat(file, ":", token_line, ": a JSON ",
                                                   in_string ? "string" : "value", " longer than ",
                                                   limits::kMaxJsonTokenBytes, " bytes"));
  };
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        token = 0;
        continue;
      }
      if (c == '\n') ++line;  // invalid JSON, reported by the parser
      if (++token > limits::kMaxJsonTokenBytes) return too_long();
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        token = 0;
        token_line = line;
        break;
      case '\n':
        ++line;
        [[fallthrough]];
      case ' ':
      case '\t':
      case '\r':
      case '[':
      case ']':
      case '{':
      case '}':
      case ',':
      case ':':
        token = 0;
        break;
      default:
        if (token == 0) token_line = line;
        if (++token > limits::kMaxJsonTokenBytes) return too_long();
    }
  }
  return absl::OkStatus();
}

absl::Status ReadPhilly(absl::string_view text, Reader& r) {
  absl::Status tokens = CheckJsonTokens(text, r.file());
  if (!tokens.ok()) return tokens;
  int lines = 0;
  PhillySax sax(r, &lines);
  LineCountingIterator begin(text.data(), &lines), end(text.data() + text.size(), &lines);
  bool ok = nlohmann::json::sax_parse(begin, end, &sax);
  if (!sax.status().ok()) return sax.status();
  if (!ok || !sax.saw_array()) {
    return absl::InvalidArgumentError(absl::StrCat(r.file(), ": not a JSON array of Philly jobs"));
  }
  return absl::OkStatus();
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
    return absl::InvalidArgumentError(absl::StrCat(
        "submit ", Secs(j.submit), " is not a number of seconds from 0 to ", kMaxSecondsInt));
  }
  return CheckJobShape(j);
}

absl::StatusOr<TraceFormat> ParseTraceFormat(absl::string_view name) {
  for (TraceFormat f :
       {TraceFormat::kAuto, TraceFormat::kNative, TraceFormat::kSacct, TraceFormat::kOpenb,
        TraceFormat::kSwf, TraceFormat::kHelios, TraceFormat::kPhilly}) {
    if (name == TraceFormatName(f)) return f;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "trace format '", name, "' is not one of auto, native, sacct, openb, swf, helios, philly"));
}

const char* TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kAuto:
      return "auto";
    case TraceFormat::kNative:
      return "native";
    case TraceFormat::kSacct:
      return "sacct";
    case TraceFormat::kOpenb:
      return "openb";
    case TraceFormat::kSwf:
      return "swf";
    case TraceFormat::kHelios:
      return "helios";
    case TraceFormat::kPhilly:
      return "philly";
  }
  return "?";
}

TraceFormat DetectTraceFormat(absl::string_view text) {
  absl::string_view t = absl::StripLeadingAsciiWhitespace(text);
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
  Trace trace;
  trace.format = format == TraceFormat::kAuto ? DetectTraceFormat(text) : format;
  Reader r(file, options, &trace);
  absl::Status s;
  switch (trace.format) {
    case TraceFormat::kAuto:
    case TraceFormat::kNative:
      s = ReadNative(text, file, r);
      break;
    case TraceFormat::kSacct:
      s = ReadSacct(text, file, r);
      break;
    case TraceFormat::kOpenb:
      s = ReadOpenb(text, file, r);
      break;
    case TraceFormat::kSwf:
      s = ReadSwf(text, r);
      break;
    case TraceFormat::kHelios:
      s = ReadHelios(text, file, r);
      break;
    case TraceFormat::kPhilly:
      s = ReadPhilly(text, r);
      break;
  }
  if (!s.ok()) return s;
  // Times from the trace start, its earliest submit time (every time read is finite, in
  // [0, kMaxTimestamp]): no job is submitted before it. A job submitted more than
  // kMaxSeconds after it is malformed.
  if (!trace.jobs.empty()) {
    const TraceJob& first =
        *std::min_element(trace.jobs.begin(), trace.jobs.end(),
                          [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
    const double t0 = first.submit;
    const int first_line = first.line;
    size_t kept = 0;
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
      TraceJob& j = trace.jobs[i];
      j.submit -= t0;
      if (j.submit > limits::kMaxSeconds) {
        s = r.Bad(j.line,
                  absl::StrCat("submitted ", Secs(j.submit), " s after the trace start (line ",
                               first_line, "); a trace spans at most ", kMaxSecondsInt, " s"));
        if (!s.ok()) return s;
        continue;
      }
      if (kept != i) trace.jobs[kept] = std::move(j);
      ++kept;
    }
    trace.jobs.resize(kept);
  }
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
