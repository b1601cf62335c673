// Replay results: metrics, summary.json, jobs.csv, report.html.
#include "contrib/replay/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "contrib/replay/headline.h"
#include "contrib/replay/human_units.h"
#include "placement/engine/explain.h"
#include "placement/model/hostlist.h"

namespace nvlplace::replay {
namespace {

const char* kColors[] = {"#1b6ac9", "#d1495b", "#2e9d5b", "#8c5cc4", "#e08e0b", "#555555"};

double TimeWeightedMean(const std::vector<Sample>& s, int Sample::*field) {
  if (s.size() < 2) return s.empty() ? 0 : s[0].*field;
  double sum = 0, span = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    double dt = s[i + 1].time - s[i].time;
    sum += dt * (s[i].*field);
    span += dt;
  }
  return span > 0 ? sum / span : 0;
}

std::string Escape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// One SVG line chart: series of (x, y) per policy.
std::string LineChart(const std::string& title, const std::string& xlabel,
                      const std::string& ylabel, const std::vector<std::string>& names,
                      const std::vector<std::vector<std::pair<double, double>>>& series) {
  const double W = 640, H = 300, L = 60, R = 20, T = 30, B = 45;
  double xmax = 0, ymax = 0;
  for (const auto& s : series) {
    for (auto [x, y] : s) {
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  }
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  std::string svg = absl::StrFormat(
      "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
      "role=\"img\" aria-label=\"%s\">\n<text x=\"%g\" y=\"18\" font-weight=\"bold\">%s</text>\n",
      W, H, Escape(title), L, Escape(title));
  absl::StrAppendFormat(&svg,
                        "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#000\"/>"
                        "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#000\"/>\n",
                        L, H - B, W - R, H - B, L, T, L, H - B);
  for (int i = 0; i <= 4; ++i) {
    double y = H - B - i * (H - T - B) / 4;
    absl::StrAppendFormat(
        &svg, "<text x=\"%g\" y=\"%g\" font-size=\"10\" text-anchor=\"end\">%.3g</text>\n", L - 4,
        y + 3, ymax * i / 4);
    double x = L + i * (W - L - R) / 4;
    absl::StrAppendFormat(
        &svg, "<text x=\"%g\" y=\"%g\" font-size=\"10\" text-anchor=\"middle\">%.3g</text>\n", x,
        H - B + 14, xmax * i / 4);
  }
  absl::StrAppendFormat(
      &svg, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
      (L + W - R) / 2, H - 8, Escape(xlabel));
  absl::StrAppendFormat(&svg,
                        "<text x=\"12\" y=\"%g\" font-size=\"11\" transform=\"rotate(-90 12 %g)\" "
                        "text-anchor=\"middle\">%s</text>\n",
                        (T + H - B) / 2, (T + H - B) / 2, Escape(ylabel));
  for (size_t k = 0; k < series.size(); ++k) {
    std::string pts;
    for (auto [x, y] : series[k]) {
      absl::StrAppendFormat(&pts, "%.1f,%.1f ", L + x / xmax * (W - L - R),
                            H - B - y / ymax * (H - T - B));
    }
    const char* color = kColors[k % 6];
    absl::StrAppendFormat(&svg,
                          "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
                          "stroke-width=\"1.5\" points=\"%s\"/>\n",
                          color, pts);
    absl::StrAppendFormat(&svg, "<text x=\"%g\" y=\"%g\" font-size=\"11\" fill=\"%s\">%s</text>\n",
                          W - R - 110, T + static_cast<double>(14 * (k + 1)), color,
                          Escape(names[k]));
  }
  return svg + "</svg>\n";
}

// The headline's sentences, one paragraph each.
std::string HeadlineHtml(const nlohmann::json& summary) {
  std::string out;
  for (const std::string& sentence : Headline(summary)) {
    absl::StrAppend(&out, "<p>", Escape(sentence), "</p>\n");
  }
  return out;
}

}  // namespace

Stats Summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  // The nearest rank: p * (n - 1) >= 0, rounded half up.
  auto pct = [&](double p) {
    return v[static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)))];
  };
  s.p50 = pct(0.5);
  s.p95 = pct(0.95);
  s.p99 = pct(0.99);
  return s;
}

nlohmann::json SummaryJson(const ReplayRun& run) {
  using nlohmann::json;
  auto stats = [](const Stats& s) {
    return json{{"mean", s.mean}, {"p50", s.p50}, {"p95", s.p95}, {"p99", s.p99}};
  };
  json out;
  out["schema"] = "nvlplace.replay/1";
  out["topology"] = {{"file", run.topology_file},
                     {"name", run.topo->name()},
                     {"gpus", run.topo->num_gpus()},
                     {"nodes", run.topo->num_nodes()}};
  json skipped = json::object();
  for (const auto& [reason, n] : run.trace->skipped) skipped[reason] = n;
  json relaxed = json::object();
  for (const auto& [reason, n] : run.trace->relaxed) relaxed[reason] = n;
  out["trace"] = {{"file", run.trace_file},
                  {"format", TraceFormatName(run.trace->format)},
                  {"jobs", run.trace->jobs.size()},
                  {"malformed_lines", run.trace->malformed},
                  {"skipped", skipped},
                  {"relaxed", relaxed}};
  out["options"] = {{"scheduler", run.options.scheduler == Scheduler::kFifo ? "fifo" : "backfill"},
                    {"load_scale", run.options.load_scale},
                    {"comm_share", run.options.comm_share},
                    {"seed", run.seed}};
  json policies = json::array();
  for (const SimResult& r : run.results) {
    std::vector<double> wait, jct, comm;
    int started = 0, rejected = 0, pending = 0, multi = 0, in_domain = 0, leaf = 0, spine = 0,
        relaxations = 0;
    for (const JobRecord& j : r.jobs) {
      if (j.rejected) {
        ++rejected;
        continue;
      }
      if (j.start < 0) {
        ++pending;
        continue;
      }
      ++started;
      double submit = j.job->submit / run.options.load_scale;
      wait.push_back(j.start - submit);
      jct.push_back(j.end - submit);
      comm.push_back(j.comm_s);
      if (j.job->gpus > 1) {
        ++multi;
        in_domain += j.tp_in_domain;
      }
      leaf += j.job_tier <= 0;
      spine += j.job_tier <= 1;
      relaxations += j.relaxations;
    }
    auto share = [](int a, int b) { return b > 0 ? static_cast<double>(a) / b : 1.0; };
    double util = TimeWeightedMean(r.samples, &Sample::busy_gpus) / run.topo->num_gpus();
    policies.push_back(
        {{"policy", r.policy},
         {"jobs_started", started},
         {"rejected", rejected},
         {"pending_at_end", pending},
         {"wait_s", stats(Summarize(wait))},
         {"completion_s", stats(Summarize(jct))},
         {"makespan_s", r.makespan},
         {"utilization_mean", util},
         {"unusable_free_gpus_mean", TimeWeightedMean(r.samples, &Sample::unusable_free)},
         {"largest_free_domain_mean", TimeWeightedMean(r.samples, &Sample::largest_free_domain)},
         {"tp_in_domain_share", share(in_domain, multi)},
         {"one_leaf_share", share(leaf, started)},
         {"one_spine_share", share(spine, started)},
         {"comm_s_per_job_mean", Summarize(comm).mean},
         {"relaxations", relaxations},
         {"fallbacks", 0},
         {"decisions", r.decisions}});
  }
  out["policies"] = policies;
  return out;
}

std::string JobsCsv(const ReplayRun& run) {
  std::string out =
      "policy,id,line,submit,start,end,wait,gpus,tp,pp,dp,nvl,status,nodes,gpus_by_node,job_tier,"
      "tp_in_domain,comm_s,stretch,reason\n";
  for (const SimResult& r : run.results) {
    for (const JobRecord& j : r.jobs) {
      const TraceJob& t = *j.job;
      std::string status = j.rejected ? "rejected" : (j.start < 0 ? "pending" : "started");
      std::vector<std::string> names;
      std::string by_node;
      for (auto& [node, gpus] : GpusByNode(j.ranks, *run.topo)) {
        absl::StrAppend(&by_node, by_node.empty() ? "" : ";", node, ":", absl::StrJoin(gpus, " "));
        names.push_back(std::move(node));
      }
      double submit = t.submit / run.options.load_scale;
      std::string reason = j.reason;
      std::replace(reason.begin(), reason.end(), ',', ';');
      absl::StrAppendFormat(
          &out, "%s,%s,%d,%.3f,%.3f,%.3f,%.3f,%d,%d,%d,%d,%s,%s,%s,%s,%d,%d,%.6f,%.4f,%s\n",
          r.policy, t.id, t.line, submit, j.start, j.end, j.start >= 0 ? j.start - submit : -1.0,
          t.gpus, t.tp, t.pp, t.dp, NvlModeName(t.nvl), status,
          "\"" + CompressHostlist(names) + "\"", by_node, j.job_tier, j.tp_in_domain ? 1 : 0,
          j.comm_s, j.stretch, reason);
    }
  }
  return out;
}

std::string ReportHtml(const ReplayRun& run, const nlohmann::json& summary) {
  std::vector<std::string> names;
  std::vector<std::vector<std::pair<double, double>>> cdf, util, unusable, largest;
  for (const SimResult& r : run.results) {
    names.push_back(r.policy);
    std::vector<double> wait;
    for (const JobRecord& j : r.jobs) {
      if (j.start >= 0) wait.push_back(j.start - j.job->submit / run.options.load_scale);
    }
    std::sort(wait.begin(), wait.end());
    std::vector<std::pair<double, double>> c;
    size_t step = std::max<size_t>(1, wait.size() / 300);
    for (size_t i = 0; i < wait.size(); i += step)
      c.push_back(
          {wait[i] / 3600, (static_cast<double>(i) + 1.0) / static_cast<double>(wait.size())});
    if (!wait.empty()) c.push_back({wait.back() / 3600, 1.0});
    cdf.push_back(c);
    std::vector<std::pair<double, double>> u, f, l;
    for (const Sample& s : r.samples) {
      u.push_back({s.time / 3600, 100.0 * s.busy_gpus / run.topo->num_gpus()});
      f.push_back({s.time / 3600, static_cast<double>(s.unusable_free)});
      l.push_back({s.time / 3600, static_cast<double>(s.largest_free_domain)});
    }
    util.push_back(u);
    unusable.push_back(f);
    largest.push_back(l);
  }
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>nvlplace replay: ",
      Escape(run.topo->name()),
      "</title>\n<style>body{font-family:"
      "sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse}td,th{border:1px "
      "solid #bbb;padding:4px 8px;text-align:right}th{background:#eee}svg{margin:8px;border:1px "
      "solid #ddd}#headline{font-size:1.15em;max-width:60em}</style></head><body>\n"
      "<h1>nvlplace replay</h1>\n<section id=\"headline\">\n",
      HeadlineHtml(summary), "</section>\n<p>Cluster <b>", Escape(run.topo->name()), "</b> (",
      HumanCount(run.topo->num_gpus()), " GPUs, ", HumanCount(run.topo->num_nodes()),
      " nodes); trace <b>", Escape(run.trace_file), "</b> (",
      summary["trace"]["format"].get<std::string>(), ", ",
      HumanCount(static_cast<int64_t>(run.trace->jobs.size())), " jobs, ",
      HumanCount(run.trace->malformed), " malformed lines); scheduler ",
      summary["options"]["scheduler"].get<std::string>(), ", load scale ", run.options.load_scale,
      ".</p>\n<table id=\"summary\"><tr><th>policy</th><th>started</th><th>rejected</th>"
      "<th>wait mean</th><th>wait p95</th><th>completion mean</th><th>makespan</th>"
      "<th>utilization</th><th>unusable free GPUs</th><th>TP in one NVLink domain</th>"
      "<th>one leaf</th><th>comm per job</th><th>relaxations</th></tr>\n");
  for (const auto& p : summary["policies"]) {
    absl::StrAppend(&html, "<tr><td>", Escape(p["policy"].get<std::string>()), "</td><td>",
                    HumanCount(p["jobs_started"].get<int64_t>()), "</td><td>",
                    HumanCount(p["rejected"].get<int64_t>()), "</td><td>",
                    HumanDuration(p["wait_s"]["mean"].get<double>()), "</td><td>",
                    HumanDuration(p["wait_s"]["p95"].get<double>()), "</td><td>",
                    HumanDuration(p["completion_s"]["mean"].get<double>()), "</td><td>",
                    HumanDuration(p["makespan_s"].get<double>()), "</td><td>",
                    HumanShare(p["utilization_mean"].get<double>()), "</td><td>",
                    HumanNumber(p["unusable_free_gpus_mean"].get<double>()), "</td><td>",
                    HumanShare(p["tp_in_domain_share"].get<double>()), "</td><td>",
                    HumanShare(p["one_leaf_share"].get<double>()), "</td><td>",
                    HumanNumber(1000 * p["comm_s_per_job_mean"].get<double>()), " ms</td><td>",
                    HumanCount(p["relaxations"].get<int64_t>()), "</td></tr>\n");
  }
  html += "</table>\n<div id=\"plots\">\n";
  html += LineChart("Wait time CDF", "wait (hours)", "share of jobs", names, cdf);
  html += LineChart("GPU utilization", "time (hours)", "busy GPUs (%)", names, util);
  html += LineChart("Fragmentation: free GPUs no pending job can use", "time (hours)", "GPUs",
                    names, unusable);
  html += LineChart("Largest free NVLink domain", "time (hours)", "free GPUs", names, largest);
  // After layout, the page counts the plots and data lines the browser actually drew (with
  // a non-empty bounding box) into <body data-plots-rendered data-series-rendered>, so that
  // a headless browser can check the page (tests/cli/report_chromium.sh).
  html +=
      "</div>\n<script>window.addEventListener('load',function(){var p=0,s=0;"
      "document.querySelectorAll('svg.plot').forEach(function(svg){var b=svg.getBBox();"
      "if(b.width>0&&b.height>0)p++;svg.querySelectorAll('polyline.series').forEach("
      "function(l){var c=l.getBBox();if(l.getTotalLength()>0&&(c.width>0||c.height>0))s++;});"
      "});document.body.dataset.plotsRendered=p;document.body.dataset.seriesRendered=s;});"
      "</script>\n</body></html>\n";
  return html;
}

std::string SummaryText(const nlohmann::json& s) {
  std::string out = absl::StrCat(absl::StrJoin(Headline(s), "\n"), "\n\n");
  absl::StrAppendFormat(&out, "%-10s %9s %8s %10s %10s %12s %6s %9s %9s %8s %10s\n", "policy",
                        "started", "rejected", "wait mean", "wait p95", "makespan", "util",
                        "unusable", "TP-in-NVL", "one-leaf", "comm/job");
  for (const auto& p : s["policies"]) {
    absl::StrAppendFormat(
        &out, "%-10s %9s %8s %10s %10s %12s %6s %9s %9s %8s %10s\n", p["policy"].get<std::string>(),
        HumanCount(p["jobs_started"].get<int64_t>()), HumanCount(p["rejected"].get<int64_t>()),
        HumanDuration(p["wait_s"]["mean"].get<double>()),
        HumanDuration(p["wait_s"]["p95"].get<double>()),
        HumanDuration(p["makespan_s"].get<double>()),
        HumanShare(p["utilization_mean"].get<double>()),
        HumanNumber(p["unusable_free_gpus_mean"].get<double>()),
        HumanShare(p["tp_in_domain_share"].get<double>()),
        HumanShare(p["one_leaf_share"].get<double>()),
        HumanNumber(1000 * p["comm_s_per_job_mean"].get<double>()) + " ms");
  }
  return out;
}

}  // namespace nvlplace::replay
