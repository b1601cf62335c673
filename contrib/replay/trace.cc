// Job trace readers. Column mappings (documented in README.md, "Replay"):
//   native:  submit,duration,gpus[,nodes,tp,pp,dp,nvl,id]   (seconds; nvl strict|prefer|off)
//   sacct:   --parsable2 with JobID|Submit|Start|End|NNodes|AllocTRES (gres/gpu[:type]=N);
//            steps (JobID with '.') skipped; duration = End - Start
//   openb:   name,...,num_gpu,gpu_milli,...,creation_time,deletion_time,scheduled_time;
//            submit = creation_time, duration = deletion_time - scheduled_time
//   swf:     18 fields; 2 submit, 4 run time, 5 allocated processors (taken as GPUs; 8 if -1)
//   helios:  job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,
//            duration,queue
//   philly:  JSON array of {jobid, submitted_time, attempts[{start_time, end_time,
//            detail[{ip, gpus[]}]}]}; GPUs of the first attempt, run time of all attempts
#include "contrib/replay/trace.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace nvlplace::replay {
namespace {

// Seconds since the epoch from "YYYY-MM-DD[T ]HH:MM:SS", or a plain number of seconds.
bool ParseTime(absl::string_view s, double* out) {
  s = absl::StripAsciiWhitespace(s);
  if (absl::SimpleAtod(s, out)) return true;
  std::tm tm{};
  std::string str(s);
  if (str.size() >= 19 && (str[10] == 'T' || str[10] == ' ')) str[10] = 'T';
  const char* end = strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return false;
  *out = static_cast<double>(timegm(&tm));
  return true;
}

bool ParseInt(absl::string_view s, int* out) {
  s = absl::StripAsciiWhitespace(s);
  double d;
  if (absl::SimpleAtoi(s, out)) return true;
  if (absl::SimpleAtod(s, &d) && d == std::floor(d) && std::fabs(d) < 1e9) {
    *out = static_cast<int>(d);
    return true;
  }
  return false;
}

std::vector<std::string> SplitFields(absl::string_view line, char sep) {
  std::vector<std::string> out;
  for (absl::string_view f : absl::StrSplit(line, sep)) {
    f = absl::StripAsciiWhitespace(f);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.emplace_back(f);
  }
  return out;
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
  void Add(TraceJob job) { trace_->jobs.push_back(std::move(job)); }
  // Adds a job, or counts it as skipped ("no GPU") when it asks for none.
  void AddGpuJob(TraceJob job) {
    if (job.gpus == 0) {
      Skip("no GPU");
    } else {
      Add(std::move(job));
    }
  }
  const TraceOptions& options() const { return options_; }

 private:
  const std::string& file_;
  const TraceOptions& options_;
  Trace* trace_;
};

// Column indexes by header name; -1 when absent.
std::map<std::string, int> Columns(const std::vector<std::string>& header) {
  std::map<std::string, int> out;
  for (size_t i = 0; i < header.size(); ++i)
    out[absl::AsciiStrToLower(header[i])] = static_cast<int>(i);
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
// column ("file:1: the FORMAT header has no column 'x'"); a row with fewer fields than the
// header (or another number, with `exact`) is malformed. RET the first error of fn.
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
    if (header.empty()) {
      header = SplitFields(line, sep);
      cols = Columns(header);
      for (const char* c : need) {
        if (!cols.count(c)) {
          return absl::InvalidArgumentError(absl::StrCat(file, ":", line_no, ": the ", format,
                                                         " header has no column '", c, "'"));
        }
      }
      continue;
    }
    std::vector<std::string> fields = SplitFields(line, sep);
    absl::Status s;
    if (fields.size() < header.size() || (exact && fields.size() != header.size())) {
      s = r.Bad(line_no, absl::StrCat(fields.size(), " fields, the header has ", header.size()));
    } else {
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
        j.id = f["id"].empty() ? absl::StrCat("line", f.line) : f["id"];
        if (!ParseTime(f["submit"], &j.submit)) return r.Bad(f.line, "submit is not a time");
        if (!absl::SimpleAtod(f["duration"], &j.duration) || j.duration < 0) {
          return r.Bad(f.line, "duration is not a number of seconds >= 0");
        }
        if (!ParseInt(f["gpus"], &j.gpus) || j.gpus < 0)
          return r.Bad(f.line, "gpus is not a count");
        for (auto [name, field] : {std::pair{"nodes", &j.nodes}, std::pair{"tp", &j.tp},
                                   std::pair{"pp", &j.pp}, std::pair{"dp", &j.dp}}) {
          std::string v = f[name];
          if (!v.empty() && (!ParseInt(v, field) || *field < 0)) {
            return r.Bad(f.line, absl::StrCat(name, " is not a count"));
          }
        }
        std::string nvl = f["nvl"];
        if (!nvl.empty()) {
          absl::StatusOr<NvlMode> m = ParseNvlMode(nvl);
          if (!m.ok()) return r.Bad(f.line, m.status().message());
          j.nvl = *m;
        }
        r.AddGpuJob(std::move(j));
        return absl::OkStatus();
      });
}

absl::Status ReadSacct(absl::string_view text, const std::string& file, Reader& r) {
  return ForEachTableRow(
      text, '|', file, "sacct", {"jobid", "submit", "start", "end", "alloctres"}, false, r,
      [&](const Row& f) {
        std::string id = f["jobid"];
        if (id.find('.') != std::string::npos) return absl::OkStatus();  // a job step
        TraceJob j;
        j.line = f.line;
        j.id = id;
        double start = 0, end = 0;
        if (!ParseTime(f["submit"], &j.submit)) return r.Bad(f.line, "Submit is not a time");
        if (!ParseTime(f["start"], &start) || !ParseTime(f["end"], &end)) {
          r.Skip("never started or not finished (Start/End Unknown)");
          return absl::OkStatus();
        }
        j.duration = std::max(0.0, end - start);
        // NNodes is what the job got, not what it asked: left as "any number of nodes".
        std::string alloc = f["alloctres"];
        for (absl::string_view tres : absl::StrSplit(alloc, ',')) {
          if (!absl::StartsWith(tres, "gres/gpu")) continue;
          size_t eq = tres.find('=');
          absl::string_view name = tres.substr(0, eq);
          if (name != "gres/gpu") continue;  // typed entries repeat the total
          if (eq == absl::string_view::npos || !ParseInt(tres.substr(eq + 1), &j.gpus)) {
            return r.Bad(f.line, absl::StrCat("cannot read '", tres, "'"));
          }
        }
        r.AddGpuJob(std::move(j));
        return absl::OkStatus();
      });
}

absl::Status ReadOpenb(absl::string_view text, const std::string& file, Reader& r) {
  return ForEachTableRow(
      text, ',', file, "openb",
      {"name", "num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"}, true, r,
      [&](const Row& f) {
        TraceJob j;
        j.line = f.line;
        j.id = f["name"];
        int milli = 0;
        double created, deleted, scheduled;
        if (!ParseInt(f["num_gpu"], &j.gpus) || !ParseInt(f["gpu_milli"], &milli) ||
            !ParseTime(f["creation_time"], &created)) {
          return r.Bad(f.line, "num_gpu, gpu_milli or creation_time is not a number");
        }
        if (!ParseTime(f["deletion_time"], &deleted) ||
            !ParseTime(f["scheduled_time"], &scheduled)) {
          r.Skip("never scheduled or never deleted");
          return absl::OkStatus();
        }
        if (j.gpus == 1 && milli < 1000 && r.options().skip_shared) {
          r.Skip("shared GPU (gpu_milli < 1000)");
          return absl::OkStatus();
        }
        j.submit = created;
        j.duration = std::max(0.0, deleted - scheduled);
        j.nodes = 1;  // openb pods are single-node
        r.AddGpuJob(std::move(j));
        return absl::OkStatus();
      });
}

absl::Status ReadSwf(absl::string_view text, Reader& r) {
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == ';') continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (f.size() < 18) {
      absl::Status s = r.Bad(line_no, absl::StrCat(f.size(), " fields, SWF has 18"));
      if (!s.ok()) return s;
      continue;
    }
    TraceJob j;
    j.line = line_no;
    j.id = std::string(f[0]);
    int procs = 0;
    if (!absl::SimpleAtod(f[1], &j.submit) || !absl::SimpleAtod(f[3], &j.duration) ||
        !ParseInt(f[4], &procs)) {
      absl::Status s = r.Bad(line_no, "submit, run time or processors is not a number");
      if (!s.ok()) return s;
      continue;
    }
    if (j.duration < 0) {
      r.Skip("no run time (-1)");
      continue;
    }
    if (procs <= 0 && !ParseInt(f[7], &procs)) procs = 0;
    if (procs <= 0) {
      r.Skip("no processors");
      continue;
    }
    j.gpus = procs;
    r.Add(j);
  }
  return absl::OkStatus();
}

absl::Status ReadHelios(absl::string_view text, const std::string& file, Reader& r) {
  return ForEachTableRow(
      text, ',', file, "helios", {"job_id", "gpu_num", "submit_time", "duration"}, true, r,
      [&](const Row& f) {
        TraceJob j;
        j.line = f.line;
        j.id = f["job_id"];
        if (!ParseInt(f["gpu_num"], &j.gpus) || !ParseTime(f["submit_time"], &j.submit) ||
            !absl::SimpleAtod(f["duration"], &j.duration)) {
          return r.Bad(f.line, "gpu_num, submit_time or duration cannot be read");
        }
        // node_num is what the job got, not what it asked: left as "any number of nodes".
        r.AddGpuJob(std::move(j));
        return absl::OkStatus();
      });
}

absl::Status ReadPhilly(absl::string_view text, const std::string& file, Reader& r) {
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": not a JSON array of Philly jobs"));
  }
  int index = 0;
  for (const nlohmann::json& job : doc) {
    ++index;  // the job's position stands in for a line
    try {
      TraceJob j;
      j.line = index;
      j.id = job.value("jobid", absl::StrCat("job", index));
      if (!ParseTime(job.at("submitted_time").get<std::string>(), &j.submit)) {
        absl::Status s = r.Bad(index, "submitted_time is not a time");
        if (!s.ok()) return s;
        continue;
      }
      const nlohmann::json& attempts = job.at("attempts");
      if (attempts.empty()) {
        r.Skip("no attempt (never ran)");
        continue;
      }
      for (const nlohmann::json& d : attempts[0].at("detail"))
        j.gpus += static_cast<int>(d.at("gpus").size());
      for (const nlohmann::json& a : attempts) {
        double s, e;
        if (a.at("start_time").is_string() && a.at("end_time").is_string() &&
            ParseTime(a["start_time"].get<std::string>(), &s) &&
            ParseTime(a["end_time"].get<std::string>(), &e)) {
          j.duration += std::max(0.0, e - s);
        }
      }
      r.AddGpuJob(std::move(j));
    } catch (const nlohmann::json::exception& e) {
      absl::Status s = r.Bad(index, absl::StrCat("job ", index, ": ", e.what()));
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

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
  absl::string_view first = t.substr(0, t.find('\n'));
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
  std::vector<absl::string_view> f =
      absl::StrSplit(first, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (f.size() >= 18) return TraceFormat::kSwf;
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
      s = ReadPhilly(text, file, r);
      break;
  }
  if (!s.ok()) return s;
  if (trace.jobs.empty() && trace.malformed == 0 && trace.skipped.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": no jobs in the trace (format ", TraceFormatName(trace.format), ")"));
  }
  // Times from the trace start.
  double t0 = 0;
  if (!trace.jobs.empty()) {
    t0 = std::min_element(trace.jobs.begin(), trace.jobs.end(),
                          [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; })
             ->submit;
  }
  for (TraceJob& j : trace.jobs) j.submit -= t0;
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  return trace;
}

}  // namespace nvlplace::replay
