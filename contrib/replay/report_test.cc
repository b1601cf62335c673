// Tests for the replay report's words and numbers: human units and the headline sentences.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "contrib/replay/headline.h"
#include "contrib/replay/human_units.h"
#include "contrib/replay/report_charts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace nvlplace::replay {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::SizeIs;

TEST(HumanUnitsTest, Durations) {
  struct Case {
    double seconds;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{
           {0, "0 s"},
           {45, "45 s"},
           {750, "12.5 min"},     // 750 / 60 = 12.5
           {11520, "3.2 h"},      // 11520 / 3600 = 3.2
           {354240, "4.1 days"},  // 354240 / 86400 = 4.1
           {1e9, "11,574 days"},  // 1e9 / 86400 = 11574.07
           {std::numeric_limits<double>::quiet_NaN(), "n/a"},
       }) {
    EXPECT_EQ(HumanDuration(c.seconds), c.want) << c.seconds;
  }
}

TEST(HumanUnitsTest, CountsNumbersSharesAndChanges) {
  EXPECT_EQ(HumanCount(0), "0");
  EXPECT_EQ(HumanCount(3000), "3,000");
  EXPECT_EQ(HumanCount(-1234567), "-1,234,567");
  EXPECT_EQ(HumanCount(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
  EXPECT_EQ(HumanNumber(1234.56), "1,234.6");
  EXPECT_EQ(HumanNumber(-0.04), "0.0");  // no "-0.0"
  EXPECT_EQ(HumanShare(0.686), "68.6%");
  EXPECT_EQ(HumanChange(0.04), "+4.0%");
  EXPECT_EQ(HumanChange(-0.123), "-12%");  // no decimal from 10% on
  EXPECT_EQ(HumanChange(0.0996), "+10%");  // 9.96% rounds to 10.0: printed as 10%
}

// One policy's line of summary.json, with the figures the headline reads.
json Policy(const std::string& name, double one_leaf, double tp_in_domain, double comm_s,
            double wait_mean_s, double makespan_s, int started = 3000) {
  return json{{"policy", name},
              {"jobs_started", started},
              {"one_leaf_share", one_leaf},
              {"tp_in_domain_share", tp_in_domain},
              {"comm_s_per_job_mean", comm_s},
              {"wait_s", {{"mean", wait_mean_s}}},
              {"makespan_s", makespan_s}};
}
json Summary(std::vector<json> policies) { return json{{"policies", policies}}; }

TEST(HeadlineTest, TopoWinsOnLocalityAtACostInWait) {
  json s = Summary({Policy("topo", 0.686, 0.99, 0.387, 4320, 864000),
                    Policy("firstfit", 0.607, 0.99, 0.439, 3960, 950400)});
  EXPECT_THAT(
      Headline(s),
      ElementsAre(
          // 68.6 - 60.7 = 7.9 points; (0.387 - 0.439) / 0.439 = -11.8% -> 12%;
          // (4320 - 3960) / 3960 = +9.1%; (864000 - 950400) / 950400 = -9.1%.
          "topo keeps 7.9 points more jobs under one leaf than firstfit (68.6% against 60.7%) "
          "and cuts estimated communication per job by 12% (387.0 ms against 439.0 ms); mean "
          "wait +9.1% (1.2 h against 1.1 h), makespan -9.1% (10.0 days against 11.0 days).",
          "In short, topo is better than firstfit on jobs under one leaf, communication per "
          "job and makespan; worse on mean wait."));
}

TEST(HeadlineTest, TopoLoses) {
  json s = Summary({Policy("topo", 0.60, 0.95, 0.5, 3600, 172800),
                    Policy("firstfit", 0.65, 0.99, 0.4, 3600, 172800)});
  EXPECT_THAT(
      Headline(s),
      ElementsAre(
          // 60.0 - 65.0 = -5.0 points; 95.0 - 99.0 = -4.0 points; (0.5 - 0.4) / 0.4 = +25%.
          "topo keeps 5.0 points fewer jobs under one leaf than firstfit (60.0% against 65.0%), "
          "4.0 points fewer jobs with every TP group in one NVLink domain than firstfit (95.0% "
          "against 99.0%) and raises estimated communication per job by 25% (500.0 ms against "
          "400.0 ms); mean wait unchanged (1.0 h), makespan unchanged (2.0 days).",
          "In short, topo is worse than firstfit on jobs under one leaf, TP groups in one "
          "NVLink domain and communication per job; better on nothing measured."));
}

TEST(HeadlineTest, FiguresThatPrintTheSameTie) {
  // 0.50004 prints as 50.0% like 0.5; 0.30001 s is +0.003% of 0.3 s; 10.0004 s: +0.004%.
  json s = Summary({Policy("topo", 0.50004, 1.0, 0.30001, 10.0004, 5400),
                    Policy("firstfit", 0.5, 1.0, 0.3, 10, 5400)});
  EXPECT_THAT(Headline(s),
              ElementsAre("topo keeps as many jobs under one leaf as firstfit (50.0%) and has the "
                          "same estimated communication per job (300.0 ms); mean wait unchanged "
                          "(10 s), makespan unchanged (1.5 h).",
                          "In short, topo and firstfit tie on every measure here."));
}

TEST(HeadlineTest, AZeroBaselineIsNotAPercentage) {
  json s =
      Summary({Policy("topo", 1, 1, 0.2, 60, 1000, 10), Policy("firstfit", 1, 1, 0.2, 0, 1000, 9)});
  std::vector<std::string> h = Headline(s);
  ASSERT_THAT(h, SizeIs(2));
  EXPECT_EQ(h[0],
            "topo keeps as many jobs under one leaf as firstfit (100.0%) and has the same "
            "estimated communication per job (200.0 ms); mean wait 60 s against 0 s, makespan "
            "unchanged (16.7 min), jobs started 10 against 9.");
  EXPECT_EQ(h[1], "In short, topo is better than firstfit on jobs started; worse on mean wait.");
}

TEST(HeadlineTest, TheBaselineIsFirstfitElseTheLastPolicy) {
  auto pair = [](std::vector<std::string> names) {
    std::vector<json> p;
    for (const auto& n : names) p.push_back(Policy(n, 0.5, 1, 0.1, 10, 100));
    HeadlinePair h = ChooseHeadlinePair(Summary(p));
    return h.subject + " vs " + h.baseline;
  };
  EXPECT_EQ(pair({"topo", "pack", "firstfit", "random"}), "topo vs firstfit");
  EXPECT_EQ(pair({"firstfit", "pack", "topo"}), "topo vs firstfit");
  EXPECT_EQ(pair({"topo", "pack", "random"}), "topo vs random");
  EXPECT_EQ(pair({"pack", "random", "topo"}), "topo vs random");  // the last other than topo
  EXPECT_EQ(pair({"pack", "random"}), "pack vs random");          // no topo: the first
  EXPECT_EQ(pair({"firstfit", "pack"}), "firstfit vs pack");
  EXPECT_EQ(pair({"topo"}), "topo vs topo");
}

TEST(HeadlineTest, OnePolicyIsDescribedAlone) {
  EXPECT_THAT(Headline(Summary({Policy("topo", 1, 1, 0.2722, 0, 1000000100, 2)})),
              ElementsAre("topo: 2 jobs started, 100.0% of them under one leaf switch and 100.0% "
                          "with every TP group in one NVLink domain; estimated communication "
                          "272.2 ms per job, mean wait 0 s, makespan 11,574 days."));
  EXPECT_THAT(Headline(Summary({})), ElementsAre("No policy was replayed."));
}

TEST(HeadlineTest, ThreePoliciesNameTheBestOnEachMeasure) {
  json s = Summary({Policy("topo", 0.686, 0.99, 0.387, 4320, 864000),
                    Policy("pack", 0.650, 0.99, 0.400, 3960, 900000),
                    Policy("firstfit", 0.607, 0.99, 0.439, 3960, 950400)});
  std::vector<std::string> h = Headline(s);
  ASSERT_THAT(h, SizeIs(3));
  EXPECT_EQ(h[2],
            "Best of the 3 policies: topo for jobs under one leaf (68.6%), topo for communication "
            "per job (387.0 ms), pack and firstfit for mean wait (1.1 h), topo for makespan "
            "(10.0 days).");
}

TEST(HeadlineTest, MeasuresAllPoliciesTieOnAreSaidOnce) {
  json s = Summary({Policy("topo", 0.8, 1, 1.4283, 1440, 7200),
                    Policy("pack", 0.8, 1, 1.4283, 1440, 7200),
                    Policy("firstfit", 0.6, 1, 1.4283, 1440, 7200)});
  std::vector<std::string> h = Headline(s);
  ASSERT_THAT(h, SizeIs(3));
  // 1440 s = 24.0 min; 7200 s = 2.0 h.
  EXPECT_EQ(h[2],
            "Best of the 3 policies: topo and pack for jobs under one leaf (80.0%); all 3 tie on "
            "communication per job (1,428.3 ms), mean wait (24.0 min) and makespan (2.0 h).");
  s = Summary({Policy("topo", 0.8, 1, 1, 1, 1), Policy("pack", 0.8, 1, 1, 1, 1),
               Policy("firstfit", 0.8, 1, 1, 1, 1)});
  EXPECT_EQ(Headline(s)[2],
            "All 3 policies tie on jobs under one leaf (80.0%), communication per job "
            "(1,000.0 ms), mean wait (1 s) and makespan (1 s).");
}

// A summary with the papers' metrics (SummaryJson's keys).
json WithPapers(json policy, double step, double dp_leaf_spread, double fragmented) {
  policy["step_time_ratio_mean"] = step;
  policy["dp_group_jobs"] = 10;
  policy["dp_group_spread"] = {{"nvlink_domain", 2 * dp_leaf_spread}, {"leaf", dp_leaf_spread}};
  policy["fragmented_gpus_mean"] = fragmented;
  return policy;
}

TEST(HeadlineTest, ThePapersMetricsAgainstTheBaseline) {
  json s =
      Summary({WithPapers(Policy("topo", 0.686, 0.99, 0.387, 4320, 864000), 1.034, 1.2, 12.3),
               WithPapers(Policy("firstfit", 0.607, 0.99, 0.439, 3960, 950400), 1.067, 2.0, 20.1)});
  s["estimates"] = {{"comm_share", 0.3},
                    {"comm_share_assumed", true},
                    {"baseline_placement", "topo"},
                    {"spread_levels", {"nvlink_domain", "leaf", "spine"}}};
  std::vector<std::string> h = Headline(s);
  ASSERT_THAT(h, SizeIs(3));
  // The verdict now counts the step time and fragmentation too.
  EXPECT_EQ(h[1],
            "In short, topo is better than firstfit on jobs under one leaf, communication per "
            "job, makespan, estimated step time and fragmented GPUs; worse on mean wait.");
  // 1.067 / 1.034 - 1 = +3.2%; 2.00 / 1.20 = 1.67x; 12.3 / 20.1 - 1 = -38.8% -> -39%.
  EXPECT_EQ(h[2],
            "By the cost model (communication 30.0% of a step on topo's placement on the empty "
            "cluster, the same for every policy, assumed), topo's steps take x1.034 of the "
            "baseline's against x1.067 for firstfit: "
            "+3.2% training throughput; topo's DP groups span 1.20 leaf switches on average "
            "against 2.00 for firstfit (1.67x fewer); 12.3 GPUs are fragmented for this trace's "
            "job shapes against 20.1 (-39%).");
  // Losing on all three, with the share given.
  s = Summary({WithPapers(Policy("topo", 0.5, 1, 0.3, 10, 100), 1.1, 3.0, 8),
               WithPapers(Policy("random", 0.5, 1, 0.3, 10, 100), 1.0, 1.5, 4)});
  s["estimates"] = {{"comm_share", 0.5},
                    {"comm_share_assumed", false},
                    {"spread_levels", {"nvlink_domain", "leaf"}}};
  // 1.0 / 1.1 - 1 = -9.1%; 3.00 / 1.50 = 2.00x more; 8 / 4 - 1 = +100%.
  EXPECT_EQ(Headline(s)[2],
            "By the cost model (communication 50.0% of a step on each policy's own placement "
            "on the empty cluster), topo's steps take x1.100 of the baseline's against x1.000 "
            "for random: -9.1% "
            "training throughput; topo's DP groups span 3.00 leaf switches on average against "
            "1.50 for random (2.00x more); 8.0 GPUs are fragmented for this trace's job shapes "
            "against 4.0 (+100%).");
}

TEST(ChartsTest, StepsAreBinnedByTimeWeightedMeans) {
  using Points = std::vector<std::pair<double, double>>;
  // 2 from 0 to 10, 4 from 10 to 30; bins of 10 s: 2, 4, 4, and [30, 40) uncovered.
  EXPECT_EQ(BinSteps({0, 10, 30}, {2, 4}, 40, 4), (Points{{5, 2}, {15, 4}, {25, 4}}));
  // 0 from 0 to 5, 10 from 5 to 20; bins of 10 s: (0 x 5 + 10 x 5) / 10 = 5, then 10.
  EXPECT_EQ(BinSteps({0, 5, 20}, {0, 10}, 20, 2), (Points{{5, 5}, {15, 10}}));
  EXPECT_TRUE(BinSteps({0}, {1}, 20, 2).empty());  // one sample: no step
}

}  // namespace
}  // namespace nvlplace::replay
