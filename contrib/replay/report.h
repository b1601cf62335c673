// Replay results: per-policy metrics, summary.json ("nvlplace.replay/1"), jobs.csv and a
// self-contained report.html with SVG plots.
#ifndef NVLPLACE_CONTRIB_REPLAY_REPORT_H_
#define NVLPLACE_CONTRIB_REPLAY_REPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "contrib/replay/simulator.h"
#include "nlohmann/json.hpp"

namespace nvlplace::replay {

struct Stats {
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;
};
Stats Summarize(std::vector<double> values);

struct ReplayRun {
  std::string topology_file;
  std::string trace_file;
  const Trace* trace = nullptr;
  SimOptions options;
  uint64_t seed = 0;
  const Topology* topo = nullptr;
  std::vector<SimResult> results;  // one per policy, in the order asked
  // A charting library's code (ECharts' echarts.min.js) to inline into report.html; empty:
  // plain SVG plots.
  std::string chart_library;
};

nlohmann::json SummaryJson(const ReplayRun& run);
// jobs.csv: a row per job and policy. Whole, or handed to `emit` a chunk (about 1 MiB) at a
// time in order, so that a million jobs need not be held as one string.
std::string JobsCsv(const ReplayRun& run);
void JobsCsv(const ReplayRun& run, const std::function<void(absl::string_view)>& emit);
std::string ReportHtml(const ReplayRun& run, const nlohmann::json& summary);
std::string SummaryText(const nlohmann::json& summary);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_REPORT_H_
