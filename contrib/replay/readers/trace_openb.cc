// Alibaba's openb pod list: name,...,num_gpu,gpu_milli,gpu_spec,...,creation_time,
// deletion_time,scheduled_time; submit = creation_time, duration = deletion_time -
// scheduled_time; a gpu_spec naming one model is the GPU model; pods are single-node.
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "contrib/replay/readers/trace_reader.h"

namespace nvlplace::replay::readers {
namespace {

constexpr const char* kColumns[] = {"name",          "num_gpu",       "gpu_milli",
                                    "creation_time", "deletion_time", "scheduled_time"};
constexpr Table kOpenb = {"openb", ',', kColumns, /*exact=*/true};

constexpr char kOpenbNotRun[] = "never scheduled or never deleted";
constexpr char kOpenbShared[] = "shared GPU (gpu_milli < 1000)";
constexpr char kOpenbSeveralModels[] = "gpu_spec names several GPU models: replayed on any model";

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

// num_gpu, gpu_milli (into *milli) and creation_time, which every pod has.
absl::Status ReadGpusAndSubmit(const Row& f, TraceJob* j, int* milli) {
  if (!ParseCount(f["num_gpu"], 0, limits::kMaxJobGpus, &j->gpus)) {
    return absl::InvalidArgumentError(NotACount("num_gpu", f["num_gpu"], 0, limits::kMaxJobGpus));
  }
  if (!ParseCount(f["gpu_milli"], 0, 1000, milli)) {
    return absl::InvalidArgumentError(NotACount("gpu_milli", f["gpu_milli"], 0, 1000));
  }
  if (!ParseTime(f["creation_time"], &j->submit)) {
    return absl::InvalidArgumentError(NotATime("creation_time", f["creation_time"]));
  }
  return absl::OkStatus();
}

// The run time, deletion_time - scheduled_time, of a pod that was scheduled and deleted.
absl::StatusOr<double> ReadRunTime(const Row& f) {
  double deleted = 0, scheduled = 0;
  if (!ParseTime(f["scheduled_time"], &scheduled)) {
    return absl::InvalidArgumentError(NotATime("scheduled_time", f["scheduled_time"]));
  }
  if (!ParseTime(f["deletion_time"], &deleted)) {
    return absl::InvalidArgumentError(NotATime("deletion_time", f["deletion_time"]));
  }
  std::string span = CheckSpan("scheduled_time", scheduled, "deletion_time", deleted);
  if (!span.empty()) return absl::InvalidArgumentError(span);
  return deleted - scheduled;
}

absl::Status ReadRow(const Row& f, Reader& r) {
  TraceJob j;
  j.line = f.line;
  j.id = CleanId(f["name"]);
  int milli = 0;
  absl::Status read = ReadGpusAndSubmit(f, &j, &milli);
  if (!read.ok()) return r.Bad(f.line, read.message());
  if (IsNoTime(f["deletion_time"]) || IsNoTime(f["scheduled_time"])) {
    r.Skip(kOpenbNotRun);
    return absl::OkStatus();
  }
  absl::StatusOr<double> run_time = ReadRunTime(f);
  if (!run_time.ok()) return r.Bad(f.line, run_time.status().message());
  if (j.gpus == 1 && milli < 1000 && r.options().skip_shared) {
    r.Skip(kOpenbShared);
    return absl::OkStatus();
  }
  j.duration = *run_time;
  j.nodes = 1;  // openb pods are single-node
  OpenbSpec spec = ReadOpenbSpec(f["gpu_spec"]);
  j.gpu_model = std::move(spec.model);
  return r.AddGpuJob(std::move(j), spec.several ? kOpenbSeveralModels : nullptr);
}

}  // namespace

absl::Status ReadOpenb(absl::string_view text, Reader& r) {
  return ForEachTableRow(text, kOpenb, r, [&r](const Row& f) { return ReadRow(f, r); });
}

}  // namespace nvlplace::replay::readers
