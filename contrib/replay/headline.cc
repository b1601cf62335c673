// The replay's headline sentences, computed from summary.json's figures.
#include "contrib/replay/headline.h"

#include <cmath>
#include <cstdint>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "contrib/replay/human_units.h"

namespace nvlplace::replay {
namespace {

using nlohmann::json;

double Number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string Ms(double seconds) { return HumanNumber(1000 * seconds) + " ms"; }

// How a measure is compared and printed.
enum class Kind {
  kShare,     // 0..1, compared in tenths of a point as printed ("68.6%")
  kRelative,  // > 0, compared by the relative change as printed ("+4.0%")
  kCount,     // whole numbers
};

struct Measure {
  const char* label;  // "mean wait"
  Kind kind;
  bool higher_is_better;
  std::function<double(const json&)> value;  // from one policy's summary
  std::function<std::string(double)> print;
};

const std::vector<Measure>& Measures() {
  static const auto* const kMeasures = new std::vector<Measure>{
      {"jobs under one leaf", Kind::kShare, true,
       [](const json& p) { return Number(p, "one_leaf_share"); }, HumanShare},
      {"TP groups in one NVLink domain", Kind::kShare, true,
       [](const json& p) { return Number(p, "tp_in_domain_share"); }, HumanShare},
      {"communication per job", Kind::kRelative, false,
       [](const json& p) { return Number(p, "comm_s_per_job_mean"); }, Ms},
      {"mean wait", Kind::kRelative, false,
       [](const json& p) { return p.contains("wait_s") ? Number(p["wait_s"], "mean") : 0.0; },
       HumanDuration},
      {"makespan", Kind::kRelative, false, [](const json& p) { return Number(p, "makespan_s"); },
       HumanDuration},
      {"jobs started", Kind::kCount, true, [](const json& p) { return Number(p, "jobs_started"); },
       [](double n) { return HumanCount(std::llround(n)); }},
      // The papers' metrics (0 in a summary without them: a tie, never said).
      {"estimated step time", Kind::kRelative, false,
       [](const json& p) { return Number(p, "step_time_ratio_mean"); },
       [](double x) { return absl::StrFormat("x%.3f", x); }},
      {"fragmented GPUs", Kind::kRelative, false,
       [](const json& p) { return Number(p, "fragmented_gpus_mean"); }, HumanNumber},
  };
  return *kMeasures;
}
const Measure& MeasureNamed(const std::string& label) {
  for (const Measure& m : Measures()) {
    if (label == m.label) return m;
  }
  return Measures()[0];  // never: the labels below are the table's
}

// Tenths of a point: 0.686 -> 686, as HumanShare prints it.
int64_t Tenths(double share) { return std::llround(1000 * share); }

// a - b in the measure's own sense: > 0 when a is larger, 0 when they print the same.
int Sign(const Measure& m, double a, double b) {
  switch (m.kind) {
    case Kind::kShare:
      return Tenths(a) > Tenths(b) ? 1 : (Tenths(a) < Tenths(b) ? -1 : 0);
    case Kind::kRelative:
      if (b <= 0) return a > 0 ? 1 : 0;
      if (std::fabs((a - b) / b) < 0.0005) return 0;  // "+0.0%"
      return a > b ? 1 : -1;
    case Kind::kCount:
      return std::llround(a) > std::llround(b) ? 1 : (std::llround(a) < std::llround(b) ? -1 : 0);
  }
  return 0;
}
// +1 when policy a is better than b on m, -1 when worse, 0 when they print the same.
int Better(const Measure& m, const json& a, const json& b) {
  int s = Sign(m, m.value(a), m.value(b));
  return m.higher_is_better ? s : -s;
}

std::string JoinAnd(const std::vector<std::string>& items) {
  if (items.size() <= 1) return items.empty() ? "" : items[0];
  return absl::StrCat(absl::StrJoin(items.begin(), items.end() - 1, ", "), " and ", items.back());
}

// "7.9 points more jobs under one leaf than firstfit (68.6% against 60.7%)".
std::string PointsClause(const Measure& m, const std::string& what, const json& s, const json& b,
                         const std::string& base) {
  int64_t d = Tenths(m.value(s)) - Tenths(m.value(b));
  if (d == 0) {
    return absl::StrCat("as many ", what, " as ", base, " (", m.print(m.value(s)), ")");
  }
  return absl::StrCat(HumanNumber(static_cast<double>(d < 0 ? -d : d) / 10), " points ",
                      d > 0 ? "more " : "fewer ", what, " than ", base, " (", m.print(m.value(s)),
                      " against ", m.print(m.value(b)), ")");
}

// "cuts estimated communication per job by 12% (387.0 ms against 439.0 ms)".
std::string CommClause(const json& s, const json& b) {
  const Measure& m = MeasureNamed("communication per job");
  double a = m.value(s), c = m.value(b);
  switch (Sign(m, a, c)) {
    case 0:
      return absl::StrCat("has the same estimated communication per job (", m.print(a), ")");
    case 1:
      if (c <= 0)
        return absl::StrCat("raises estimated communication per job from 0 to ", m.print(a));
      return absl::StrCat("raises estimated communication per job by ",
                          HumanChange((a - c) / c).substr(1), " (", m.print(a), " against ",
                          m.print(c), ")");
    default:
      return absl::StrCat("cuts estimated communication per job by ",
                          HumanChange((a - c) / c).substr(1), " (", m.print(a), " against ",
                          m.print(c), ")");
  }
}

// "mean wait +4.0% (1.2 h against 1.1 h)".
std::string CostClause(const Measure& m, const json& s, const json& b) {
  double a = m.value(s), c = m.value(b);
  if (Sign(m, a, c) == 0) return absl::StrCat(m.label, " unchanged (", m.print(a), ")");
  if (c <= 0) return absl::StrCat(m.label, " ", m.print(a), " against ", m.print(c));
  return absl::StrCat(m.label, " ", HumanChange((a - c) / c), " (", m.print(a), " against ",
                      m.print(c), ")");
}

std::string OnePolicy(const json& p) {
  const std::string name = p.value("policy", std::string());
  return absl::StrCat(
      name, ": ", MeasureNamed("jobs started").print(Number(p, "jobs_started")),
      std::llround(Number(p, "jobs_started")) == 1 ? " job started, " : " jobs started, ",
      HumanShare(Number(p, "one_leaf_share")), " of them under one leaf switch and ",
      HumanShare(Number(p, "tp_in_domain_share")),
      " with every TP group in one NVLink domain; estimated communication ",
      Ms(Number(p, "comm_s_per_job_mean")), " per job, mean wait ",
      MeasureNamed("mean wait").print(MeasureNamed("mean wait").value(p)), ", makespan ",
      HumanDuration(Number(p, "makespan_s")), ".");
}

}  // namespace

std::string BaselinePlacementText(const json& estimates) {
  const std::string name = estimates.value("baseline_placement", std::string());
  return name.empty()
             ? "each policy's own placement on the empty cluster"
             : absl::StrCat(name, "'s placement on the empty cluster, the same for every policy");
}

namespace {

// The papers' metrics of the subject against the baseline, when the summary has them:
// estimated throughput, the DP groups' spread over leaf switches (Arnold), fragmented GPUs
// (FGD).
std::string PapersSentence(const json& summary, const json& s, const json& b,
                           const std::string& base) {
  if (!s.contains("step_time_ratio_mean") || !b.contains("step_time_ratio_mean") ||
      !summary.contains("estimates")) {
    return "";
  }
  const json& e = summary["estimates"];
  const std::string subject = s.value("policy", std::string());
  std::vector<std::string> clauses;
  const Measure& step = MeasureNamed("estimated step time");
  double a = step.value(s), c = step.value(b);
  std::string model = absl::StrCat(
      "By the cost model (communication ", HumanShare(Number(e, "comm_share")), " of a step on ",
      BaselinePlacementText(e), e.value("comm_share_assumed", false) ? ", assumed" : "", "), ");
  if (Sign(step, a, c) == 0 || a <= 0) {
    clauses.push_back(absl::StrCat(model, subject, " and ", base, " have the same step time (",
                                   step.print(a), " of the baseline's) and training throughput"));
  } else {
    clauses.push_back(absl::StrCat(model, subject, "'s steps take ", step.print(a),
                                   " of the baseline's against ", step.print(c), " for ", base,
                                   ": ", HumanChange(c / a - 1), " training throughput"));
  }
  // DP groups over leaf switches (the first switch tier), as Arnold counts them.
  const json levels = e.value("spread_levels", json::array());
  if (levels.size() >= 2 && Number(s, "dp_group_jobs") > 0 && Number(b, "dp_group_jobs") > 0) {
    const std::string leaf = levels[1].get<std::string>();
    double x = Number(s["dp_group_spread"], leaf.c_str());
    double y = Number(b["dp_group_spread"], leaf.c_str());
    std::string px = absl::StrFormat("%.2f", x), py = absl::StrFormat("%.2f", y);
    if (px == py || x <= 0 || y <= 0) {
      clauses.push_back(absl::StrCat(subject, "'s DP groups span as many ", leaf, " switches as ",
                                     base, "'s (", px, " on average)"));
    } else {
      clauses.push_back(absl::StrCat(subject, "'s DP groups span ", px, " ", leaf,
                                     " switches on average against ", py, " for ", base, " (",
                                     absl::StrFormat("%.2fx", x < y ? y / x : x / y),
                                     x < y ? " fewer)" : " more)"));
    }
  }
  const Measure& frag = MeasureNamed("fragmented GPUs");
  double f = frag.value(s), g = frag.value(b);
  if (Sign(frag, f, g) == 0) {
    clauses.push_back(absl::StrCat("as many GPUs are fragmented for this trace's job shapes (",
                                   frag.print(f), ")"));
  } else {
    clauses.push_back(
        absl::StrCat(frag.print(f), " GPUs are fragmented for this trace's job shapes against ",
                     frag.print(g), g > 0 ? absl::StrCat(" (", HumanChange(f / g - 1), ")") : ""));
  }
  return absl::StrCat(absl::StrJoin(clauses, "; "), ".");
}

const json* Find(const json& policies, const std::string& name) {
  for (const json& p : policies) {
    if (p.value("policy", std::string()) == name) return &p;
  }
  return nullptr;
}

}  // namespace

HeadlinePair ChooseHeadlinePair(const json& summary) {
  HeadlinePair pair;
  const json& policies = summary.at("policies");
  if (policies.empty()) return pair;
  pair.subject = Find(policies, "topo") != nullptr ? "topo" : policies[0].value("policy", "");
  pair.baseline = pair.subject;
  if (pair.subject != "firstfit" && Find(policies, "firstfit") != nullptr) {
    pair.baseline = "firstfit";
    return pair;
  }
  for (const json& p : policies) {  // the last policy other than the subject
    std::string name = p.value("policy", std::string());
    if (name != pair.subject) pair.baseline = name;
  }
  return pair;
}

std::vector<std::string> Headline(const json& summary) {
  const json& policies = summary.at("policies");
  if (policies.empty()) return {"No policy was replayed."};
  HeadlinePair pair = ChooseHeadlinePair(summary);
  const json& s = *Find(policies, pair.subject);
  if (pair.baseline == pair.subject) return {OnePolicy(s)};
  const json& b = *Find(policies, pair.baseline);
  const std::string& base = pair.baseline;

  // What the subject buys against the baseline, and what it costs.
  const Measure& leaf = MeasureNamed("jobs under one leaf");
  const Measure& tp = MeasureNamed("TP groups in one NVLink domain");
  std::vector<std::string> gains = {PointsClause(leaf, "jobs under one leaf", s, b, base)};
  if (Sign(tp, tp.value(s), tp.value(b)) != 0) {
    gains.push_back(PointsClause(tp, "jobs with every TP group in one NVLink domain", s, b, base));
  }
  gains.push_back(CommClause(s, b));
  std::vector<std::string> costs = {CostClause(MeasureNamed("mean wait"), s, b),
                                    CostClause(MeasureNamed("makespan"), s, b)};
  const Measure& started = MeasureNamed("jobs started");
  if (Sign(started, started.value(s), started.value(b)) != 0) {
    costs.push_back(absl::StrCat("jobs started ", started.print(started.value(s)), " against ",
                                 started.print(started.value(b))));
  }
  std::vector<std::string> out = {
      absl::StrCat(pair.subject, " keeps ", JoinAnd(gains), "; ", absl::StrJoin(costs, ", "), ".")};

  // The verdict: the measures it wins and loses.
  std::vector<std::string> better, worse;
  for (const Measure& m : Measures()) {
    int r = Better(m, s, b);
    if (r > 0) better.push_back(m.label);
    if (r < 0) worse.push_back(m.label);
  }
  if (better.empty() && worse.empty()) {
    out.push_back(
        absl::StrCat("In short, ", pair.subject, " and ", base, " tie on every measure here."));
  } else if (worse.empty()) {
    out.push_back(absl::StrCat("In short, ", pair.subject, " is better than ", base, " on ",
                               JoinAnd(better), "; worse on nothing measured."));
  } else if (better.empty()) {
    out.push_back(absl::StrCat("In short, ", pair.subject, " is worse than ", base, " on ",
                               JoinAnd(worse), "; better on nothing measured."));
  } else {
    out.push_back(absl::StrCat("In short, ", pair.subject, " is better than ", base, " on ",
                               JoinAnd(better), "; worse on ", JoinAnd(worse), "."));
  }

  std::string papers = PapersSentence(summary, s, b, base);
  if (!papers.empty()) out.push_back(papers);

  // With three policies or more: the best on each main measure (all that print the same).
  if (policies.size() >= 3) {
    std::vector<std::string> won, tied;  // "topo for makespan (2.0 h)"; "makespan (2.0 h)"
    for (const char* label :
         {"jobs under one leaf", "communication per job", "mean wait", "makespan"}) {
      const Measure& m = MeasureNamed(label);
      const json* best = &policies[0];
      for (const json& p : policies) {
        if (Better(m, p, *best) > 0) best = &p;
      }
      std::vector<std::string> names;
      for (const json& p : policies) {
        if (Better(m, p, *best) == 0) names.push_back(p.value("policy", std::string()));
      }
      std::string figure = absl::StrCat(label, " (", m.print(m.value(*best)), ")");
      if (names.size() == policies.size()) {
        tied.push_back(figure);
      } else {
        won.push_back(absl::StrCat(JoinAnd(names), " for ", figure));
      }
    }
    std::string all = absl::StrCat("all ", policies.size(), " tie on ", JoinAnd(tied));
    if (won.empty()) {
      out.push_back(absl::StrCat("All ", policies.size(), " policies tie on ", JoinAnd(tied), "."));
    } else {
      out.push_back(absl::StrCat("Best of the ", policies.size(),
                                 " policies: ", absl::StrJoin(won, ", "), tied.empty() ? "" : "; ",
                                 tied.empty() ? "" : all, "."));
    }
  }
  return out;
}

}  // namespace nvlplace::replay
