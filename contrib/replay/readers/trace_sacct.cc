// Slurm's accounting: sacct --parsable2 with JobID|Submit|Start|End|NNodes|AllocTRES. GPUs
// from gres/gpu=N, else the one gres/gpu:TYPE=N (TYPE: the GPU model); NNodes kept when it
// divides the GPUs; steps (JobID with '.') skipped; duration = End - Start.
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "contrib/replay/readers/trace_reader.h"

namespace nvlplace::replay::readers {
namespace {

constexpr const char* kColumns[] = {"jobid", "submit", "start", "end", "alloctres"};
// Columns that never hold '|': the ones read, and other ids, times, counts and TRES lists.
constexpr const char* kSepFree[] = {
    "jobid",      "jobidraw",   "submit",    "eligible",     "start",    "end",
    "elapsed",    "elapsedraw", "timelimit", "timelimitraw", "cputime",  "cputimeraw",
    "nnodes",     "ncpus",      "alloccpus", "reqcpus",      "reqmem",   "reqnodes",
    "allocnodes", "alloctres",  "reqtres",   "state",        "exitcode", "derivedexitcode",
    "priority",   "uid",        "gid",       "nodelist"};
// sacct --parsable2 does not escape '|' in a field: a JobName or Comment that holds one
// shifts the columns after it, so a row of more fields than the header is malformed.
constexpr char kSacctTooMany[] =
    "a field holds '|', which sacct does not escape; leave free-text columns (JobName, "
    "Comment, ...) out of --format, or remove the '|' from that line";

// Reasons a sacct line is skipped or read in part (the keys of Trace::skipped and ::relaxed).
constexpr char kSacctStep[] = "job step (JobID with '.'; its job's line is replayed)";
constexpr char kSacctNotRun[] = "never started or not finished (Start/End Unknown)";
constexpr char kSacctSeveralTypes[] = "GPUs of several types (gres/gpu:TYPE for two TYPEs)";
constexpr char kSacctTypedAndUntyped[] =
    "GPUs of a type and of no type (gres/gpu:TYPE below gres/gpu)";
constexpr char kSacctUnevenNodes[] =
    "NNodes does not divide the GPUs: replayed on any number of nodes";

// The GPUs of one sacct AllocTRES: the total (gres/gpu=N) and the typed entries
// (gres/gpu:TYPE=N, one per GPU model the accounting tracks), names in any case.
struct GpuTres {
  int total = -1;        // gres/gpu=N; -1 when absent
  std::string type;      // the first TYPE with N > 0, as written; "" when none
  int type_count = 0;    // its N
  bool several = false;  // another TYPE with N > 0
};

// Adds one GPU entry of AllocTRES, `name`=n, to `out`: the total when `typed` is false,
// else a `type`. RET InvalidArgument for a name given twice.
absl::Status AddGpuEntry(absl::string_view name, bool typed, absl::string_view type, int n,
                         GpuTres* out) {
  if (!typed) {
    if (out->total >= 0) {
      return absl::InvalidArgumentError(absl::StrCat("AllocTRES gives ", Esc(name), " twice"));
    }
    out->total = n;
  } else if (!out->type.empty() && absl::EqualsIgnoreCase(type, out->type)) {
    return absl::InvalidArgumentError(absl::StrCat("AllocTRES gives ", Esc(name), " twice"));
  } else if (n > 0 && out->type.empty()) {
    out->type = std::string(type);
    out->type_count = n;
  } else if (n > 0) {
    out->several = true;
  }
  return absl::OkStatus();
}

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
    absl::Status added = AddGpuEntry(name, typed, type, n, &out);
    if (!added.ok()) return added;
  }
  return out;
}

// The run time, End - Start, of a job that started and ended.
absl::Status ReadRunTime(const Row& f, TraceJob* j) {
  double start = 0, end = 0;
  if (!ParseTime(f["start"], &start)) {
    return absl::InvalidArgumentError(NotATime("Start", f["start"]));
  }
  if (!ParseTime(f["end"], &end)) return absl::InvalidArgumentError(NotATime("End", f["end"]));
  std::string span = CheckSpan("Start", start, "End", end);
  if (!span.empty()) return absl::InvalidArgumentError(span);
  j->duration = end - start;
  return absl::OkStatus();
}

// NNodes, the nodes the job got; 0 when not given.
absl::StatusOr<int> ReadNNodes(const Row& f) {
  int nnodes = 0;
  absl::string_view text = f["nnodes"];
  if (!text.empty() && !ParseCount(text, 0, limits::kMaxJobNodes, &nnodes)) {
    return absl::InvalidArgumentError(NotACount("NNodes", text, 0, limits::kMaxJobNodes));
  }
  return nnodes;
}

// Adds j with its GPUs from `gpus` (of one type at most) on `nnodes` nodes (0: any).
absl::Status AddJob(TraceJob j, const GpuTres& gpus, int nnodes, Reader& r) {
  if (gpus.total < 0) {
    j.gpus = gpus.type_count;  // typed only: the accounting tracks only the types
  } else if (gpus.type.empty() || gpus.type_count == gpus.total) {
    j.gpus = gpus.total;
  } else if (gpus.type_count > gpus.total) {
    return r.Bad(j.line, absl::StrCat("AllocTRES has ", gpus.type_count, " GPUs of type ",
                                      Esc(gpus.type), ", more than its gres/gpu=", gpus.total));
  } else {
    // Some GPUs of a type the accounting does not track: more than one model.
    r.Skip(kSacctTypedAndUntyped);
    return absl::OkStatus();
  }
  j.gpu_model = gpus.type;
  // NNodes is kept as "exactly that many" when the GPUs split evenly over them (the shape
  // Slurm gave, --nodes with --gpus-per-node); otherwise the job is replayed on any number
  // of nodes and counted as relaxed.
  const char* relaxed = nullptr;
  if (nnodes > 0 && j.gpus > 0) {
    if (j.gpus % nnodes == 0) {
      j.nodes = nnodes;
    } else {
      relaxed = kSacctUnevenNodes;
    }
  }
  return r.AddGpuJob(std::move(j), relaxed);
}

// Whether the columns the reader uses read as sacct prints them: a JobID, times (or Unknown),
// NNodes, and AllocTRES as TRES=count entries (a shifted row puts other text there). Used to
// tell a line that ends with '|' from one whose JobName holds it (ForEachTableRow).
absl::Status CheckColumns(const Row& f) {
  if (f["jobid"].empty()) return absl::InvalidArgumentError("no JobID");
  for (const char* column : {"submit", "start", "end"}) {
    double t = 0;
    if (!IsNoTime(f[column]) && !ParseTime(f[column], &t)) {
      return absl::InvalidArgumentError(NotATime(column, f[column]));
    }
  }
  absl::StatusOr<int> nnodes = ReadNNodes(f);
  if (!nnodes.ok()) return nnodes.status();
  absl::string_view alloc = f["alloctres"];
  for (absl::string_view tres : absl::StrSplit(alloc, ',', absl::SkipEmpty())) {
    if (!absl::StrContains(tres, '=')) {
      return absl::InvalidArgumentError(absl::StrCat("AllocTRES entry ", Esc(tres), " has no '='"));
    }
  }
  return ReadGpuTres(alloc).status();
}

constexpr Table kSacct = {"sacct",
                          '|',
                          kColumns,
                          /*exact=*/true,
                          /*trailing_sep=*/true,
                          /*too_many_hint=*/kSacctTooMany,
                          /*sep_free=*/kSepFree,
                          /*check=*/CheckColumns};

absl::Status ReadRow(const Row& f, Reader& r) {
  absl::string_view id = f["jobid"];
  if (absl::StrContains(id, '.')) {
    r.Skip(kSacctStep);
    return absl::OkStatus();
  }
  // A job that never ran is skipped whatever its Submit (sacct may print Unknown there too).
  if (IsNoTime(f["start"]) || IsNoTime(f["end"])) {
    r.Skip(kSacctNotRun);
    return absl::OkStatus();
  }
  TraceJob j;
  j.line = f.line;
  j.id = CleanId(id);
  if (!ParseTime(f["submit"], &j.submit)) return r.Bad(f.line, NotATime("Submit", f["submit"]));
  absl::Status run_time = ReadRunTime(f, &j);
  if (!run_time.ok()) return r.Bad(f.line, run_time.message());
  absl::StatusOr<int> nnodes = ReadNNodes(f);
  if (!nnodes.ok()) return r.Bad(f.line, nnodes.status().message());
  absl::StatusOr<GpuTres> gpus = ReadGpuTres(f["alloctres"]);
  if (!gpus.ok()) return r.Bad(f.line, gpus.status().message());
  if (gpus->several) {
    r.Skip(kSacctSeveralTypes);
    return absl::OkStatus();
  }
  return AddJob(std::move(j), *gpus, *nnodes, r);
}

}  // namespace

absl::Status ReadSacct(absl::string_view text, Reader& r) {
  return ForEachTableRow(text, kSacct, r, [&r](const Row& f) { return ReadRow(f, r); });
}

}  // namespace nvlplace::replay::readers
