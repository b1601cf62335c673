// Replay results: metrics, summary.json, jobs.csv, report.html.
#include "contrib/replay/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "contrib/replay/fixed_decimals.h"
#include "contrib/replay/headline.h"
#include "contrib/replay/human_units.h"
#include "contrib/replay/metrics.h"
#include "contrib/replay/report_charts.h"
#include "placement/engine/explain.h"
#include "placement/model/hostlist.h"

namespace nvlplace::replay {
namespace {

const char* kColors[] = {"#1b6ac9", "#d1495b", "#2e9d5b", "#8c5cc4", "#e08e0b", "#555555"};

template <typename T>
double TimeWeightedMean(const std::vector<Sample>& s, T Sample::*field) {
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

// The communication share of a step the estimates use: the replay's, else the assumed one.
double StepShare(const SimOptions& o) {
  return o.comm_share > 0 ? o.comm_share : kAssumedCommShare;
}

// Per level, the sum over jobs of their groups' spread (mean or max), and the jobs counted.
struct SpreadSum {
  explicit SpreadSum(size_t levels) : sum(levels, 0.0) {}
  void Add(const std::vector<double>& spread) {
    if (spread.size() != sum.size()) return;  // no such group
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += spread[i];
    ++jobs;
  }
  // {"nvlink_domain": 1.5, "leaf": 1.25, ...}: the mean over the jobs counted (0 for none).
  nlohmann::json Json(const std::vector<std::string>& levels) const {
    nlohmann::json out = nlohmann::json::object();
    for (size_t i = 0; i < levels.size(); ++i) out[levels[i]] = jobs > 0 ? sum[i] / jobs : 0.0;
    return out;
  }
  std::vector<double> sum;
  int jobs = 0;
};

// One row of the metrics table per policy: spread per level, free and fragmented GPUs, step
// time; throughput against the headline's baseline.
struct MetricsRow {
  std::string policy;
  std::vector<std::string> cells;
};
std::vector<std::string> MetricsHeader(const nlohmann::json& summary) {
  std::vector<std::string> h = {"policy", "TP:nvl"};
  for (const auto& level : summary["estimates"]["spread_levels"]) {
    std::string name = level.get<std::string>();
    h.push_back("DP:" + (name == "nvlink_domain" ? std::string("nvl") : name));
  }
  const auto& levels = summary["estimates"]["spread_levels"];
  if (levels.size() >= 2) h.push_back("DP:" + levels[1].get<std::string>() + " max");
  std::string base = ChooseHeadlinePair(summary).baseline;
  for (const char* c : {"unallocated", "fragmented", "step/base"}) h.push_back(c);
  h.push_back("thru vs " + base);
  return h;
}
std::vector<MetricsRow> MetricsRows(const nlohmann::json& summary) {
  std::string base = ChooseHeadlinePair(summary).baseline;
  double base_step = 1;
  for (const auto& p : summary["policies"]) {
    if (p["policy"] == base) base_step = p["step_time_ratio_mean"].get<double>();
  }
  auto spread = [](const nlohmann::json& p, const char* kind, const std::string& level,
                   const char* fold = "") {
    if (p[std::string(kind) + "_jobs"].get<int>() == 0) return std::string("-");
    return absl::StrFormat("%.2f", p[absl::StrCat(kind, "_spread", fold)][level].get<double>());
  };
  const auto& levels = summary["estimates"]["spread_levels"];
  std::vector<MetricsRow> rows;
  for (const auto& p : summary["policies"]) {
    MetricsRow row{p["policy"].get<std::string>(), {}};
    row.cells.push_back(spread(p, "tp_group", "nvlink_domain"));
    for (const auto& level : summary["estimates"]["spread_levels"]) {
      row.cells.push_back(spread(p, "dp_group", level.get<std::string>()));
    }
    if (levels.size() >= 2) row.cells.push_back(spread(p, "dp_group", levels[1], "_max"));
    row.cells.push_back(HumanNumber(p["unallocated_gpus_mean"].get<double>()));
    row.cells.push_back(HumanNumber(p["fragmented_gpus_mean"].get<double>()));
    double step = p["step_time_ratio_mean"].get<double>();
    row.cells.push_back(absl::StrFormat("x%.3f", step));
    row.cells.push_back(row.policy == base ? std::string("-") : HumanChange(base_step / step - 1));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Units of `level` (metrics.h UnitOf) a placement spans.
int Spanned(const Topology& topo, const std::vector<GpuId>& ranks, int level) {
  std::vector<int> units;
  units.reserve(ranks.size());
  for (GpuId g : ranks) units.push_back(UnitOf(topo, g, level));
  std::sort(units.begin(), units.end());
  return static_cast<int>(std::unique(units.begin(), units.end()) - units.begin());
}

// The same jobs placed by the headline's two policies, side by side: the (at most) kShown
// jobs whose estimated communication differs most between them.
std::string SideBySideHtml(const ReplayRun& run, const nlohmann::json& summary) {
  constexpr size_t kShown = 10;
  HeadlinePair pair = ChooseHeadlinePair(summary);
  const SimResult *a = nullptr, *b = nullptr;
  for (const SimResult& r : run.results) {
    if (r.policy == pair.subject) a = &r;
    if (r.policy == pair.baseline) b = &r;
  }
  if (a == nullptr || b == nullptr || a == b) return "";
  std::vector<std::pair<double, size_t>> differ;  // (-|comm difference|, job)
  for (size_t i = 0; i < a->jobs.size() && i < b->jobs.size(); ++i) {
    if (a->jobs[i].start < 0 || b->jobs[i].start < 0) continue;
    double d = std::fabs(a->jobs[i].comm_s - b->jobs[i].comm_s);
    if (d > 0) differ.push_back({-d, i});
  }
  std::sort(differ.begin(), differ.end());
  if (differ.size() > kShown) differ.resize(kShown);
  if (differ.empty()) return "";
  const std::string leaf = run.topo->tiers().empty() ? "switches" : run.topo->tiers()[0];
  std::string html = absl::StrCat("<h2>The same job, two policies</h2>\n<p>The ", differ.size(),
                                  " jobs whose estimated communication differs most between ",
                                  Escape(pair.subject), " and ", Escape(pair.baseline),
                                  ".</p>\n<table id=\"side-by-side\"><tr><th>job</th>"
                                  "<th>GPUs</th><th>TP</th>");
  for (const SimResult* r : {a, b}) {
    absl::StrAppend(&html, "<th>", Escape(r->policy), ": nodes</th><th>NVLink domains</th><th>",
                    Escape(leaf), " switches</th><th>comm per step</th>");
  }
  html += "</tr>\n";
  for (const auto& [neg, i] : differ) {
    const TraceJob& t = *a->jobs[i].job;
    absl::StrAppend(&html, "<tr><td>", Escape(t.id), "</td><td>", HumanCount(t.gpus), "</td><td>",
                    t.tp, "</td>");
    for (const SimResult* r : {a, b}) {
      const JobRecord& j = r->jobs[i];
      std::vector<std::string> names;
      for (auto& [node, gpus] : GpusByNode(j.ranks, *run.topo)) names.push_back(node);
      absl::StrAppend(&html, "<td>", Escape(CompressHostlist(names)), "</td><td>",
                      Spanned(*run.topo, j.ranks, 0), "</td><td>", Spanned(*run.topo, j.ranks, 1),
                      "</td><td>", HumanNumber(1000 * j.comm_s), " ms</td>");
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

// The papers' metrics table and how its estimates are made.
std::string MetricsHtml(const nlohmann::json& summary) {
  std::string html = "<h2>The metrics papers use</h2>\n<table id=\"metrics\"><tr>";
  for (const std::string& h : MetricsHeader(summary))
    absl::StrAppend(&html, "<th>", Escape(h), "</th>");
  html += "</tr>\n";
  for (const MetricsRow& row : MetricsRows(summary)) {
    absl::StrAppend(&html, "<tr><td>", Escape(row.policy), "</td>");
    for (const std::string& c : row.cells) absl::StrAppend(&html, "<td>", Escape(c), "</td>");
    html += "</tr>\n";
  }
  const auto& e = summary["estimates"];
  absl::StrAppend(
      &html,
      "</table>\n<section id=\"assumptions\"><h3>How these are estimated</h3><ul>\n"
      "<li><b>Spread</b> (Arnold, NeurIPS'25): for each job, the number of NVLink domains and "
      "of switches of each tier that each of its TP groups (TP:nvl) and DP groups (DP:level) "
      "spans, averaged over its groups, then over the jobs that have such groups (of two GPUs "
      "or more); <i>max</i>: each job's widest DP group, averaged over the jobs. Ranks are in "
      "Megatron's default order (TP innermost, then DP, PP outermost). A GPU's switch is "
      "the leaf its NIC reaches (its rail's leaf on a rail-optimized node), then the first "
      "parent up to the tier.</li>\n"
      "<li><b>Unallocated GPUs</b>: free GPUs, time mean over the replay. <b>Fragmented "
      "GPUs</b> (FGD, ATC'23, for whole GPUs): free GPUs that a job drawn from this trace's "
      "shapes could not use, in expectation: an NVLink domain with f free GPUs counts f times "
      "the share of the trace's jobs needing more than f GPUs in one domain (their TP size when "
      "they keep TP groups in a domain, else 1); time mean.</li>\n"
      "<li><b>Step time</b> (step/base): the cost model (alpha-beta ring all-reduces over the "
      "placement's links, a Llama-2-70B-like model in bf16 with Megatron, 8 micro-batches per "
      "step) estimates each job's communication per step on its placement (C) and on the "
      "baseline placement, ",
      Escape(BaselinePlacementText(e)), " (B). The step is taken to spend ",
      HumanShare(e["comm_share"].get<double>()), " of its time communicating on the baseline",
      e["comm_share_assumed"].get<bool>() ? " (assumed: the replay was run without --comm-share)"
                                          : " (the replay's --comm-share)",
      ", without overlap with compute, so a step takes (1 - s) + s &times; min(10, C / B) of the "
      "baseline's. The policy's figure is the mean over started jobs weighted by GPU-seconds; "
      "throughput is its inverse, compared with the baseline policy. It is an estimate from a "
      "model, not a measurement.</li>\n</ul></section>\n");
  return html;
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
  // How the papers' metrics below are estimated (report.html states it in words).
  const double share = StepShare(run.options);
  const std::vector<std::string> levels = SpreadLevels(*run.topo);
  out["estimates"] = {
      {"comm_share", share},
      {"comm_share_assumed", !(run.options.comm_share > 0)},
      {"comm_ratio_cap", 10},
      {"baseline_placement", run.options.baseline ? run.options.baseline->policy().name : ""},
      {"spread_levels", levels}};
  json policies = json::array();
  for (const SimResult& r : run.results) {
    std::vector<double> wait, jct, comm;
    int started = 0, rejected = 0, pending = 0, multi = 0, in_domain = 0, leaf = 0, spine = 0,
        relaxations = 0;
    SpreadSum tp_spread(levels.size()), dp_spread(levels.size()), dp_spread_max(levels.size());
    double step_sum = 0, step_weight = 0;  // step time ratio weighted by GPU-seconds
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
      tp_spread.Add(j.tp_spread);
      dp_spread.Add(j.dp_spread);
      dp_spread_max.Add(j.dp_spread_max);
      double w = static_cast<double>(j.job->gpus) * std::max(j.job->duration, 1.0);
      step_sum += w * StepTimeRatio(j.comm_s, j.best_comm_s, share);
      step_weight += w;
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
         {"decisions", r.decisions},
         {"tp_group_spread", tp_spread.Json(levels)},
         {"tp_group_jobs", tp_spread.jobs},
         {"dp_group_spread", dp_spread.Json(levels)},
         {"dp_group_jobs", dp_spread.jobs},
         {"dp_group_spread_max", dp_spread_max.Json(levels)},
         {"unallocated_gpus_mean", TimeWeightedMean(r.samples, &Sample::free_gpus)},
         {"fragmented_gpus_mean", TimeWeightedMean(r.samples, &Sample::fragmented_gpus)},
         {"step_time_ratio_mean", step_weight > 0 ? step_sum / step_weight : 1.0}});
  }
  out["policies"] = policies;
  return out;
}

void JobsCsv(const ReplayRun& run, const std::function<void(absl::string_view)>& emit) {
  std::string out =
      "policy,id,line,submit,start,end,wait,gpus,tp,pp,dp,nvl,status,nodes,gpus_by_node,job_tier,"
      "tp_in_domain,comm_s,stretch,tp_span_domains,tp_span_leaves,dp_span_domains,dp_span_leaves,"
      "step_time_ratio,reason\n";
  // Rows go out a chunk at a time through one buffer that keeps its room: the whole file
  // held at once was 400 MB for a million jobs on 131k GPUs, each page of it fresh.
  constexpr size_t kChunk = size_t{1} << 20;
  out.reserve(2 * kChunk);
  const double share = StepShare(run.options);
  // A group kind's mean span at level 0 (NVLink domains) or 1 (leaf switches); empty when
  // the job has no such group.
  auto span = [&out](const std::vector<double>& spread, size_t level) {
    if (level < spread.size()) AppendFixed(&out, spread[level], 3);
    out += ',';
  };
  std::vector<std::string> names;
  NodeGroups by_node;
  for (const SimResult& r : run.results) {
    for (const JobRecord& j : r.jobs) {
      const TraceJob& t = *j.job;
      const double submit = t.submit / run.options.load_scale;
      absl::StrAppend(&out, r.policy, ",", t.id, ",", t.line, ",");
      for (double v : {submit, j.start, j.end, j.start >= 0 ? j.start - submit : -1.0}) {
        AppendFixed(&out, v, 3);
        out += ',';
      }
      absl::StrAppend(&out, t.gpus, ",", t.tp, ",", t.pp, ",", t.dp, ",", NvlModeName(t.nvl), ",",
                      j.rejected ? "rejected" : (j.start < 0 ? "pending" : "started"), ",\"");
      by_node.Fill(j.ranks, *run.topo);
      names.clear();
      for (NodeId n : by_node.nodes()) names.push_back(run.topo->nodes()[n].name);
      absl::StrAppend(&out, CompressHostlist(names), "\",");
      // Each node's GPU indexes, written in place into room made for the longest they can
      // be: a StrAppend per GPU was a third of writing the file (a 1,024-GPU job lists
      // 1,024 of them), an append per character a fifth.
      size_t room = 0;
      for (size_t i = 0; i < by_node.nodes().size(); ++i) {
        room += names[i].size() + 2 + 12 * by_node.gpus(i).size();  // ';' name ':' " %d"...
      }
      const size_t at = out.size();
      out.resize(at + room);
      char* to = out.data() + at;
      char* const limit = to + room;
      for (size_t i = 0; i < by_node.nodes().size(); ++i) {
        if (i > 0) *to++ = ';';
        to = std::copy(names[i].begin(), names[i].end(), to);
        *to++ = ':';
        const std::vector<int>& gpus = by_node.gpus(i);
        for (size_t k = 0; k < gpus.size(); ++k) {
          if (k > 0) *to++ = ' ';
          to = std::to_chars(to, limit, gpus[k]).ptr;
        }
      }
      out.resize(static_cast<size_t>(to - out.data()));
      absl::StrAppend(&out, ",", j.job_tier, ",", j.tp_in_domain ? 1 : 0, ",");
      AppendFixed(&out, j.comm_s, 6);
      out += ',';
      AppendFixed(&out, j.stretch, 4);
      out += ',';
      span(j.tp_spread, 0);
      span(j.tp_spread, 1);
      span(j.dp_spread, 0);
      span(j.dp_spread, 1);
      if (j.start >= 0) AppendFixed(&out, StepTimeRatio(j.comm_s, j.best_comm_s, share), 4);
      out += ',';
      const size_t reason = out.size();
      out += j.reason;
      std::replace(out.begin() + static_cast<std::ptrdiff_t>(reason), out.end(), ',', ';');
      out += '\n';
      if (out.size() >= kChunk) {
        emit(out);
        out.clear();
      }
    }
  }
  if (!out.empty()) emit(out);
}

std::string JobsCsv(const ReplayRun& run) {
  std::string all;
  JobsCsv(run, [&all](absl::string_view chunk) { all.append(chunk.data(), chunk.size()); });
  return all;
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
      "sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse}td,th{white-space:"
      "nowrap;border:1px "
      "solid #bbb;padding:4px 8px;text-align:right}th{background:#eee}svg{margin:8px;border:1px "
      "solid "
      "#ddd}#headline{font-size:1.15em;max-width:60em}#side-by-side "
      "td{white-space:normal}.chart{width:100%;height:380px;margin:20px 0}"
      "</style></head><body>\n"
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
  html += "</table>\n" + MetricsHtml(summary) + SideBySideHtml(run, summary);
  if (!run.chart_library.empty()) {
    return absl::StrCat(html, "<h2>Charts</h2>\n", ChartsHtml(run, run.chart_library),
                        "</body></html>\n");
  }
  html += "<div id=\"plots\">\n";
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
  // The papers' metrics: groups' spread (Arnold), unallocated and fragmented GPUs (FGD), the
  // cost model's step time against the baseline placement and throughput against the
  // baseline policy.
  std::vector<std::string> header = MetricsHeader(s);
  std::vector<MetricsRow> rows = MetricsRows(s);
  std::vector<size_t> width(header.size(), 0);  // each column as wide as its widest cell
  for (size_t i = 0; i < header.size(); ++i) width[i] = std::max<size_t>(header[i].size(), 8);
  for (const MetricsRow& row : rows) {
    width[0] = std::max(width[0], row.policy.size());
    for (size_t i = 0; i < row.cells.size() && i + 1 < width.size(); ++i) {
      width[i + 1] = std::max(width[i + 1], row.cells[i].size());
    }
  }
  out += "\n";
  for (size_t i = 0; i < header.size(); ++i) {
    if (i == 0) {
      absl::StrAppendFormat(&out, "%-*s", static_cast<int>(width[i]), header[i]);
    } else {
      absl::StrAppendFormat(&out, " %*s", static_cast<int>(width[i]), header[i]);
    }
  }
  out += "\n";
  for (const MetricsRow& row : rows) {
    absl::StrAppendFormat(&out, "%-*s", static_cast<int>(width[0]), row.policy);
    for (size_t i = 0; i < row.cells.size() && i + 1 < width.size(); ++i) {
      absl::StrAppendFormat(&out, " %*s", static_cast<int>(width[i + 1]), row.cells[i]);
    }
    out += "\n";
  }
  absl::StrAppendFormat(&out,
                        "(TP:nvl, DP:<level>: NVLink domains or switches each TP or DP group "
                        "spans, mean; max: each job's widest DP group; unallocated and fragmented: "
                        "free GPUs, time mean; "
                        "step/base: estimated step time against %s, "
                        "communication %s of a step%s)\n",
                        BaselinePlacementText(s["estimates"]),
                        HumanShare(s["estimates"]["comm_share"].get<double>()),
                        s["estimates"]["comm_share_assumed"].get<bool>() ? ", assumed" : "");
  return out;
}

}  // namespace nvlplace::replay
