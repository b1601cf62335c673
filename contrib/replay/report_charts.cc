// report.html's charts: their data in C++, drawn in the page by the inlined library.
#include "contrib/replay/report_charts.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace nvlplace::replay {
namespace {

constexpr int kBins = 120;          // time series: bins over the replay
constexpr size_t kCdfPoints = 200;  // wait CDF: points per policy

struct Unit {
  double seconds;
  const char* name;
};
// Hours up to three days, else days.
Unit UnitFor(double seconds) {
  return seconds <= 72 * 3600 ? Unit{3600, "hours"} : Unit{86400, "days"};
}

// The size classes of the per-class breakdown, by GPU count.
int SizeClass(int gpus) { return gpus <= 8 ? 0 : gpus <= 64 ? 1 : gpus <= 256 ? 2 : 3; }
const char* kSizeNames[] = {"1-8 GPUs", "9-64 GPUs", "65-256 GPUs", "257+ GPUs"};

// The page code: draws each chart with ECharts (SVG renderer, so that a browser's DOM holds
// every label), then counts on <body> the charts with data and the overlapping labels.
constexpr char kChartCode[] = R"JS(
(function () {
  var D = JSON.parse(document.getElementById('chart-data').textContent);
  var fmt = new Intl.NumberFormat('en-US', {maximumFractionDigits: 1});
  function lines(key) {
    return D.policies.map(function (p, i) {
      return {name: p, type: 'line', showSymbol: false, data: D.series[key][i]};
    });
  }
  function cdf() {
    return D.policies.map(function (p, i) {
      return {name: p, type: 'line', step: 'end', showSymbol: false, data: D.cdf[i]};
    });
  }
  function bars(key) {
    return D.policies.map(function (p, i) {
      return {name: p, type: 'bar', data: D.classes[key][i]};
    });
  }
  function classAxis() {
    return {type: 'category', inverse: true, data: D.classes.names, axisLabel: {interval: 0}};
  }
  function yaxis(name, extra) {
    var a = axis(name, extra);
    a.nameLocation = 'end';
    a.nameGap = 14;
    a.nameTextStyle = {align: 'left'};
    return a;
  }
  function axis(name, extra) {
    var a = {type: 'value', name: name, nameLocation: 'middle', nameGap: 32,
             axisLabel: {hideOverlap: true, formatter: function (v) { return fmt.format(v); }}};
    for (var k in extra) a[k] = extra[k];
    return a;
  }
  var charts = [
    {id: 'wait-cdf', title: 'Wait time: share of jobs started within a wait', series: cdf(),
     x: axis('wait (' + D.wait_unit + ')'), y: yaxis('jobs (%)', {max: 100})},
    {id: 'util', title: 'GPU utilization (mean per bin)', series: lines('util'),
     x: axis('time (' + D.time_unit + ')'), y: yaxis('busy GPUs (%)', {max: 100})},
    {id: 'unallocated', title: 'Unallocated GPUs (mean per bin)', series: lines('unallocated'),
     x: axis('time (' + D.time_unit + ')'), y: yaxis('free GPUs')},
    {id: 'fragmented', title: "Fragmented GPUs for the trace's job shapes (FGD; mean per bin)",
     series: lines('fragmented'), x: axis('time (' + D.time_unit + ')'), y: yaxis('GPUs')},
    {id: 'largest', title: 'Largest free NVLink domain (mean per bin)', series: lines('largest'),
     x: axis('time (' + D.time_unit + ')'), y: yaxis('free GPUs')},
    {id: 'class-wait', title: 'Mean wait by job class (TP size, GPUs)', series: bars('wait'),
     y: classAxis(), x: axis('wait (' + D.wait_unit + ')'), tall: true},
    {id: 'class-leaf', title: 'Jobs under one leaf switch by job class', series: bars('leaf'),
     y: classAxis(), x: axis('jobs (%)', {max: 100}), tall: true},
    {id: 'class-comm', title: 'Estimated communication per step by job class (mean)',
     series: bars('comm'), y: classAxis(), x: axis('ms per step'), tall: true}
  ];
  var root = document.getElementById('charts');
  var drawn = [], pending = charts.length;
  charts.forEach(function (c) {
    var div = document.createElement('div');
    div.className = 'chart';
    div.id = 'chart-' + c.id;
    // Bars: room for every class and policy.
    if (c.tall) div.style.height = Math.max(380, 120 + D.classes.names.length * D.policies.length * 14) + 'px';
    root.appendChild(div);
    var chart = echarts.init(div, null, {renderer: 'svg'});
    drawn.push({chart: chart, div: div, series: c.series});
    // The checks run once every chart has drawn (ECharts draws on the next frame).
    var first = true;
    chart.on('finished', function () {
      if (first) { first = false; if (--pending === 0) check(); }
    });
    chart.setOption({
      animation: false,
      title: {text: c.title, left: 0, top: 0, textStyle: {fontSize: 14}},
      legend: {type: 'scroll', top: 26, left: 0, right: 0},
      tooltip: {trigger: 'axis'},
      grid: {top: 72, left: 16, right: 32, bottom: 48, containLabel: true},
      xAxis: c.x, yAxis: c.y, series: c.series
    });
  });
  window.addEventListener('resize', function () { drawn.forEach(function (d) { d.chart.resize(); }); });
  function boxes(div) {
    return Array.prototype.slice.call(div.querySelectorAll('text')).filter(function (t) {
      return t.textContent.trim() !== '' && t.getAttribute('opacity') !== '0';
    }).map(function (t) { return t.getBoundingClientRect(); }).filter(function (b) {
      return b.width > 0 && b.height > 0;
    });
  }
  // The first overlapping pair's texts, to say where.
  function overlapping_texts(div) {
    var t = Array.prototype.slice.call(div.querySelectorAll('text')).filter(function (x) {
      return x.textContent.trim() !== '' && x.getAttribute('opacity') !== '0';
    });
    for (var i = 0; i < t.length; ++i) {
      for (var j = i + 1; j < t.length; ++j) {
        var a = t[i].getBoundingClientRect(), b = t[j].getBoundingClientRect();
        if (a.width > 0 && b.width > 0 && a.left < b.right - 1 && b.left < a.right - 1 &&
            a.top < b.bottom - 1 && b.top < a.bottom - 1) {
          return JSON.stringify([t[i].textContent, t[j].textContent]);
        }
      }
    }
    return '';
  }
  function overlaps(div) {
    var b = boxes(div), n = 0;
    for (var i = 0; i < b.length; ++i) {
      for (var j = i + 1; j < b.length; ++j) {
        if (b[i].left < b[j].right - 1 && b[j].left < b[i].right - 1 &&
            b[i].top < b[j].bottom - 1 && b[j].top < b[i].bottom - 1) ++n;
      }
    }
    return n;
  }
  function check() {
  var withData = 0, overlapping = 0, where = [];
  drawn.forEach(function (d) {
    var hasData = d.series.length > 0 && d.series.every(function (s) { return s.data.length > 0; }) &&
        Array.prototype.slice.call(d.div.querySelectorAll('path')).some(function (p) {
          var r = p.getBoundingClientRect(); return r.width > 0 && r.height > 0;
        });
    if (hasData) ++withData;
    var n = overlaps(d.div);
    overlapping += n;
    if (n > 0) where.push(d.div.id + ':' + n + ':' + overlapping_texts(d.div));
  });
  document.body.dataset.chartLib = 'echarts';
  document.body.dataset.charts = drawn.length;
  document.body.dataset.chartsWithData = withData;
  document.body.dataset.labelOverlaps = overlapping;
  document.body.dataset.overlapWhere = where.join(' ');
  }
})();
)JS";

}  // namespace

std::vector<std::pair<double, double>> BinSteps(const std::vector<double>& times,
                                                const std::vector<double>& values, double horizon,
                                                int bins) {
  std::vector<std::pair<double, double>> out;
  if (times.size() < 2 || !(horizon > 0) || bins <= 0) return out;
  const double width = horizon / bins;
  std::vector<double> sum(bins, 0.0), covered(bins, 0.0);
  for (size_t i = 0; i + 1 < times.size(); ++i) {
    double a = std::max(0.0, times[i]), b = std::min(horizon, times[i + 1]);
    for (int k = std::max(0, static_cast<int>(a / width)); k < bins && k * width < b; ++k) {
      double lo = std::max(a, k * width), hi = std::min(b, (k + 1) * width);
      if (hi > lo) {
        sum[k] += (hi - lo) * values[i];
        covered[k] += hi - lo;
      }
    }
  }
  for (int k = 0; k < bins; ++k) {
    if (covered[k] > 0) out.push_back({(k + 0.5) * width, sum[k] / covered[k]});
  }
  return out;
}

nlohmann::json ChartData(const ReplayRun& run) {
  using nlohmann::json;
  double horizon = 0, longest_wait = 0;
  for (const SimResult& r : run.results) {
    if (!r.samples.empty()) horizon = std::max(horizon, r.samples.back().time);
    for (const JobRecord& j : r.jobs) {
      if (j.start >= 0)
        longest_wait = std::max(longest_wait, j.start - j.job->submit / run.options.load_scale);
    }
  }
  const Unit time = UnitFor(horizon), wait = UnitFor(longest_wait);
  json out = {{"time_unit", time.name}, {"wait_unit", wait.name}};
  json policies = json::array(), cdf = json::array();
  json series = {{"util", json::array()},
                 {"unallocated", json::array()},
                 {"fragmented", json::array()},
                 {"largest", json::array()}};
  // Job classes: (TP, size class) -> index, in that order.
  std::map<std::pair<int, int>, int> classes;
  for (const TraceJob& j : run.trace->jobs) classes[{j.tp, SizeClass(j.gpus)}] = 0;
  json names = json::array();
  int next = 0;
  for (auto& [key, index] : classes) {
    index = next++;
    names.push_back(absl::StrCat(key.first > 1 ? absl::StrCat("TP ", key.first) : "no TP", ", ",
                                 kSizeNames[key.second]));
  }
  json class_wait = json::array(), class_leaf = json::array(), class_comm = json::array();
  for (const SimResult& r : run.results) {
    policies.push_back(r.policy);
    std::vector<double> waits;
    std::vector<double> n(classes.size(), 0), wait_sum(classes.size(), 0), leaf(classes.size(), 0),
        comm(classes.size(), 0);
    for (const JobRecord& j : r.jobs) {
      if (j.start < 0) continue;
      double w = j.start - j.job->submit / run.options.load_scale;
      waits.push_back(w);
      int c = classes[{j.job->tp, SizeClass(j.job->gpus)}];
      n[c] += 1;
      wait_sum[c] += w / wait.seconds;
      leaf[c] += j.job_tier <= 0;
      comm[c] += 1000 * j.comm_s;
    }
    std::sort(waits.begin(), waits.end());
    json points = json::array();
    size_t step = std::max<size_t>(1, waits.size() / kCdfPoints);
    for (size_t i = 0; i < waits.size(); i += step) {
      points.push_back({waits[i] / wait.seconds,
                        100.0 * static_cast<double>(i + 1) / static_cast<double>(waits.size())});
    }
    if (!waits.empty()) points.push_back({waits.back() / wait.seconds, 100.0});
    cdf.push_back(points);
    std::vector<double> times, util, unallocated, fragmented, largest;
    for (const Sample& s : r.samples) {
      times.push_back(s.time);
      util.push_back(100.0 * s.busy_gpus / run.topo->num_gpus());
      unallocated.push_back(s.free_gpus);
      fragmented.push_back(s.fragmented_gpus);
      largest.push_back(s.largest_free_domain);
    }
    auto binned = [&](const std::vector<double>& v) {
      json pts = json::array();
      for (auto [t, y] : BinSteps(times, v, horizon, kBins)) pts.push_back({t / time.seconds, y});
      return pts;
    };
    series["util"].push_back(binned(util));
    series["unallocated"].push_back(binned(unallocated));
    series["fragmented"].push_back(binned(fragmented));
    series["largest"].push_back(binned(largest));
    json cw = json::array(), cl = json::array(), cc = json::array();
    for (size_t c = 0; c < classes.size(); ++c) {
      // A class none of whose jobs started under this policy has no bar ("-").
      cw.push_back(n[c] > 0 ? json(wait_sum[c] / n[c]) : json("-"));
      cl.push_back(n[c] > 0 ? json(100 * leaf[c] / n[c]) : json("-"));
      cc.push_back(n[c] > 0 ? json(comm[c] / n[c]) : json("-"));
    }
    class_wait.push_back(cw);
    class_leaf.push_back(cl);
    class_comm.push_back(cc);
  }
  out["policies"] = policies;
  out["cdf"] = cdf;
  out["series"] = series;
  out["classes"] = {
      {"names", names}, {"wait", class_wait}, {"leaf", class_leaf}, {"comm", class_comm}};
  return out;
}

std::string ChartsHtml(const ReplayRun& run, const std::string& library_js) {
  // Inside <script>, "</" could end the element early: JSON escapes it as "<\/".
  std::string data = absl::StrReplaceAll(ChartData(run).dump(), {{"</", "<\\/"}});
  return absl::StrCat("<div id=\"charts\"></div>\n<script>\n", library_js,
                      "\n</script>\n<script type=\"application/json\" id=\"chart-data\">", data,
                      "</script>\n<script>", kChartCode, "</script>\n");
}

}  // namespace nvlplace::replay
