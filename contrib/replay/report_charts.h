// report.html's charts drawn by a charting library (ECharts) inlined into the page: the data
// each chart shows, binned and in human units, and the page code that draws and checks them.
#ifndef NVLPLACE_CONTRIB_REPLAY_REPORT_CHARTS_H_
#define NVLPLACE_CONTRIB_REPLAY_REPORT_CHARTS_H_

#include <string>
#include <utility>
#include <vector>

#include "contrib/replay/report.h"
#include "nlohmann/json.hpp"

namespace nvlplace::replay {

// The time-weighted mean of a step function (value[i] from times[i] to times[i + 1]) over
// `bins` equal bins of [0, horizon]: (bin centre, mean) for each bin the function covers.
std::vector<std::pair<double, double>> BinSteps(const std::vector<double>& times,
                                                const std::vector<double>& values, double horizon,
                                                int bins);

// Everything the charts show, per policy: wait CDF, binned time series, per-job-class means.
nlohmann::json ChartData(const ReplayRun& run);

// The charts' HTML: the library (its text, inlined as is), the data and the code that draws
// each chart, then counts on <body> the charts that have data (data-charts-with-data) and the
// chart labels whose boxes overlap (data-label-overlaps), for a headless browser to check.
std::string ChartsHtml(const ReplayRun& run, const std::string& library_js);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_REPORT_CHARTS_H_
