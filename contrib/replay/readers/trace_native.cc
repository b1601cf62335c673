// The native CSV trace: submit,duration,gpus[,nodes,tp,pp,dp,nvl,id] (seconds; nvl
// strict|prefer|off), any column order, one job a row.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "contrib/replay/readers/trace_reader.h"
#include "placement/model/request.h"

namespace nvlplace::replay::readers {
namespace {

constexpr const char* kColumns[] = {"submit", "duration", "gpus"};
constexpr Table kNative = {"native", ',', kColumns, /*exact=*/true};

// submit, duration and gpus, which every row gives.
absl::Status ReadTimesAndGpus(const Row& f, TraceJob* j) {
  if (!ParseTime(f["submit"], &j->submit)) {
    return absl::InvalidArgumentError(NotATime("submit", f["submit"]));
  }
  if (!ParseSeconds(f["duration"], &j->duration)) {
    return absl::InvalidArgumentError(NotSeconds("duration", f["duration"]));
  }
  if (!ParseCount(f["gpus"], 0, limits::kMaxJobGpus, &j->gpus)) {
    return absl::InvalidArgumentError(NotACount("gpus", f["gpus"], 0, limits::kMaxJobGpus));
  }
  return absl::OkStatus();
}

// nodes, tp, pp and dp, each 0 when not given.
absl::Status ReadSizes(const Row& f, TraceJob* j) {
  for (auto [name, field, max] : {std::tuple{"nodes", &j->nodes, limits::kMaxJobNodes},
                                  std::tuple{"tp", &j->tp, int64_t{limits::kMaxGroupSize}},
                                  std::tuple{"pp", &j->pp, int64_t{limits::kMaxGroupSize}},
                                  std::tuple{"dp", &j->dp, int64_t{limits::kMaxGroupSize}}}) {
    absl::string_view v = f[name];
    if (!v.empty() && !ParseCount(v, 0, max, field)) {
      return absl::InvalidArgumentError(NotACount(name, v, 0, max));
    }
  }
  return absl::OkStatus();
}

// nvl, strict when not given.
absl::Status ReadNvl(const Row& f, TraceJob* j) {
  absl::string_view nvl = f["nvl"];
  if (nvl.empty()) return absl::OkStatus();
  absl::StatusOr<NvlMode> m = ParseNvlMode(nvl);
  if (!m.ok()) return m.status();
  j->nvl = *m;
  return absl::OkStatus();
}

absl::Status ReadRow(const Row& f, Reader& r) {
  TraceJob j;
  j.line = f.line;
  j.id = f["id"].empty() ? absl::StrCat("line", f.line) : CleanId(f["id"]);
  absl::Status read = ReadTimesAndGpus(f, &j);
  if (read.ok()) read = ReadSizes(f, &j);
  if (read.ok()) read = ReadNvl(f, &j);
  if (!read.ok()) return r.Bad(f.line, read.message());
  return r.AddGpuJob(std::move(j));
}

}  // namespace

absl::Status ReadNative(absl::string_view text, Reader& r) {
  return ForEachTableRow(text, kNative, r, [&r](const Row& f) { return ReadRow(f, r); });
}

}  // namespace nvlplace::replay::readers
