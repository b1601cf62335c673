// Tests for the papers' metrics: group spread, fragmentation, step time; and their place in
// summary.json, jobs.csv and the console summary.
#include "contrib/replay/metrics.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contrib/replay/report.h"
#include "contrib/replay/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace::replay {
namespace {

using ::nvlplace::testing::IsOk;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The topology of `yaml` (a test fixture: it must parse and build).
std::shared_ptr<const Topology> TopologyOf(const char* yaml, const char* file) {
  auto spec = ParseTopologyYaml(yaml, file);
  EXPECT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

// 4 nodes of 4 GPUs (one NVLink domain each), two per leaf, one spine: GPU ids are
// node x 4 + index.
std::shared_ptr<const Topology> FourNodes() {
  return TopologyOf(R"(name: four
tiers: [leaf, spine]
gpu_models: [{name: H100}]
nodes: [{names: "n[0-3]", gpus: 4, model: H100}]
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-1]"}
  - {name: leaf1, tier: leaf, nodes: "n[2-3]"}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
)",
                    "four.yaml");
}

TEST(SpreadTest, LevelsAreDomainsThenTiers) {
  EXPECT_THAT(SpreadLevels(*FourNodes()), ElementsAre("nvlink_domain", "leaf", "spine"));
}

TEST(SpreadTest, DpGroupsAcrossFourNodesSpanFourDomainsAndTwoLeaves) {
  auto topo = FourNodes();
  SpreadUnits units(*topo);
  // TP 2, DP 4: ranks (0,1) on n0, (2,3) on n1, (4,5) on n2, (6,7) on n3.
  std::vector<GpuId> ranks = {0, 1, 4, 5, 8, 9, 12, 13};
  // TP groups {0,1} {4,5} {8,9} {12,13}: each one domain, one leaf, one spine.
  EXPECT_THAT(TpGroupSpread(units, ranks, 2, 1, 4), ElementsAre(1, 1, 1));
  // DP groups {0,4,8,12} and {1,5,9,13}: n0-n3 = 4 domains, leaf0 + leaf1 = 2 leaves, 1 spine.
  EXPECT_THAT(DpGroupSpread(units, ranks, 2, 1, 4), ElementsAre(4, 2, 1));
}

TEST(SpreadTest, SplitTpGroupsAndPipelines) {
  auto topo = FourNodes();
  SpreadUnits units(*topo);
  // TP 4, DP 2 on n0:0,1 n1:0,1 n0:2,3 n1:2,3. TP groups {0,1,4,5} and {2,3,6,7}: 2 domains
  // each, one leaf; DP groups {0,2} {1,3} (n0) and {4,6} {5,7} (n1): one domain each.
  std::vector<GpuId> split = {0, 1, 4, 5, 2, 3, 6, 7};
  EXPECT_THAT(TpGroupSpread(units, split, 4, 1, 2), ElementsAre(2, 1, 1));
  EXPECT_THAT(DpGroupSpread(units, split, 4, 1, 2), ElementsAre(1, 1, 1));
  // TP 2, PP 2, DP 2 in Megatron's default order: rank r = t + 2 (d + 2 p). DP group (t, p)
  // = ranks {t + 4p, t + 4p + 2}: (0,0) GPUs 0 and 4 (n0, n1), (1,0) 1 and 5, (0,1) 8 and 12
  // (n2, n3), (1,1) 9 and 13: each 2 domains under 1 leaf (stage 0 under leaf0, stage 1
  // under leaf1; only the pipeline crosses leaves).
  std::vector<GpuId> pipelined = {0, 1, 4, 5, 8, 9, 12, 13};
  EXPECT_THAT(DpGroupSpread(units, pipelined, 2, 2, 2), ElementsAre(2, 1, 1));
  // The same GPUs with the replicas outermost (ranks of replica 1 on n2, n3): each DP group
  // (0,0) = GPUs 0 and 8 crosses leaves.
  std::vector<GpuId> replicas_apart = {0, 1, 8, 9, 4, 5, 12, 13};
  EXPECT_THAT(DpGroupSpread(units, replicas_apart, 2, 2, 2), ElementsAre(2, 2, 1));
  // Mixed groups are averaged: DP groups of TP 2 DP 2 on {0,1, 4,8}: {0,4} is 2 domains and
  // 1 leaf, {1,8} 2 domains and 2 leaves: (1 + 2) / 2 = 1.5 leaves.
  EXPECT_THAT(DpGroupSpread(units, {0, 1, 4, 8}, 2, 1, 2), ElementsAre(2, 1.5, 1));
  // And the widest group: {1,8}'s 2 leaves.
  std::vector<double> widest;
  (void)DpGroupSpread(units, {0, 1, 4, 8}, 2, 1, 2, &widest);
  EXPECT_THAT(widest, ElementsAre(2, 2, 1));
  // TP groups {0,1} (n0) and {4,8} (n1, n2: 2 domains under 2 leaves): the widest is 2, 2, 1.
  EXPECT_THAT(TpGroupSpread(units, {0, 1, 4, 8}, 2, 1, 2, &widest), ElementsAre(1.5, 1.5, 1));
  EXPECT_THAT(widest, ElementsAre(2, 2, 1));
  EXPECT_THAT(DpGroupSpread(units, {0, 1, 2, 3}, 4, 1, 1, &widest), IsEmpty());
  EXPECT_THAT(widest, IsEmpty());
}

// Two fabrics: leaf0 under spine0 under core0, leaf1 under nothing, so leaf1 is the unit of
// its GPUs at every level above the domains (a switch met at three levels counts at each).
TEST(SpreadTest, ATreeThatEndsBelowATierCountsItsTopSwitchAtEveryLevelAbove) {
  auto topo = TopologyOf(R"(name: split
tiers: [leaf, spine, core]
gpu_models: [{name: H100}]
nodes: [{names: "n[0-3]", gpus: 4, model: H100}]
switches:
  - {name: leaf0, tier: leaf, nodes: "n[0-1]"}
  - {name: leaf1, tier: leaf, nodes: "n[2-3]"}
  - {name: spine0, tier: spine, switches: "leaf0"}
  - {name: core0, tier: core, switches: "spine0"}
)",
                         "split.yaml");
  SpreadUnits units(*topo);
  // TP groups {n2, n3} (both under leaf1 alone) and {n0, n2} (one GPU in each fabric).
  std::vector<double> widest;
  EXPECT_THAT(TpGroupSpread(units, {8, 12, 0, 9}, 2, 1, 2, &widest), ElementsAre(2, 1.5, 1.5, 1.5));
  EXPECT_THAT(widest, ElementsAre(2, 2, 2, 2));
  // One DP group over the four nodes: 4 domains, 2 leaves, spine0 + leaf1, core0 + leaf1.
  EXPECT_THAT(DpGroupSpread(units, {0, 4, 8, 12}, 1, 1, 4), ElementsAre(4, 2, 2, 2));
}

TEST(SpreadTest, NoGroupOrSizesThatDoNotMatchGiveNothing) {
  auto topo = FourNodes();
  SpreadUnits units(*topo);
  EXPECT_THAT(TpGroupSpread(units, {0, 1, 2, 3}, 1, 1, 4), IsEmpty());  // TP 1: no TP group
  EXPECT_THAT(DpGroupSpread(units, {0, 1, 2, 3}, 4, 1, 1), IsEmpty());  // DP 1: no DP group
  EXPECT_THAT(DpGroupSpread(units, {0, 1, 2}, 2, 1, 2), IsEmpty());     // 2 x 2 != 3 ranks
}

TEST(SpreadTest, ARailOptimizedNodeReachesOneLeafPerRail) {
  auto spec = ParseTopologyYaml(R"(name: rails
tiers: [leaf, spine]
gpu_models: [{name: H100}]
nodes: [{names: "n[0-1]", gpus: 2, model: H100}]
switches:
  - {name: rail0, tier: leaf, rail: 0, nodes: "n[0-1]"}
  - {name: rail1, tier: leaf, rail: 1, nodes: "n[0-1]"}
  - {name: spine0, tier: spine, switches: "rail[0-1]"}
)",
                                "rails.yaml");
  ASSERT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  SpreadUnits units(**topo);
  // GPU 0 of each node on rail0, GPU 1 on rail1; both under spine0.
  EXPECT_EQ(UnitOf(**topo, 0, 1), UnitOf(**topo, 2, 1));
  EXPECT_NE(UnitOf(**topo, 0, 1), UnitOf(**topo, 1, 1));
  EXPECT_EQ(UnitOf(**topo, 0, 2), UnitOf(**topo, 1, 2));
  // TP 2 DP 2: DP groups {n0:0, n1:0} and {n0:1, n1:1} each stay on one rail leaf; the TP
  // groups (one node each) talk over NVLink and leave their domain through one NIC: 1 domain,
  // 1 leaf (counted per GPU they were 2 rail leaves, and a one-node job of 8 GPUs was 8).
  EXPECT_THAT(DpGroupSpread(units, {0, 1, 2, 3}, 2, 1, 2), ElementsAre(2, 1, 1));
  EXPECT_THAT(TpGroupSpread(units, {0, 1, 2, 3}, 2, 1, 2), ElementsAre(1, 1, 1));
  // A DP group of a node's two GPUs: one domain, one leaf.
  EXPECT_THAT(DpGroupSpread(units, {0, 1}, 1, 1, 2), ElementsAre(1, 1, 1));
}

// The table gives what the walk up first parents gives, for every GPU and level of every
// bundled config (rail-optimized fabrics, multi-node domains, nodes without GPUs; the split
// fabric above checks a tree that ends below a tier through the spreads).
TEST(SpreadTest, UnitsFromTheTableAreTheWalksUnits) {
  std::vector<std::string> configs = testing::ConfigFiles();
  ASSERT_FALSE(configs.empty()) << "no configs/*.yaml: run from the source root";
  int checked = 0;
  for (const std::string& path : configs) {
    absl::StatusOr<std::shared_ptr<const Topology>> topo = LoadTopologyFile(path);
    ASSERT_THAT(topo, IsOk()) << path;
    SpreadUnits units(**topo);
    const int levels = static_cast<int>(SpreadLevels(**topo).size());
    for (GpuId g = 0; g < (*topo)->num_gpus(); ++g) {
      for (int level = 0; level < levels; ++level) {
        ASSERT_EQ(units.Unit(g, level), UnitOf(**topo, g, level))
            << path << ": GPU " << g << " level " << level;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(FragmentationTest, FreeGpusTooFewForTheTraceShapes) {
  // Half the jobs need 1 GPU in a domain, a quarter 4, a quarter 8.
  std::map<int, double> chunks = {{1, 0.5}, {4, 0.25}, {8, 0.25}};
  // P(chunk > f) for f = 0..4: 1, then 0.5 (4 and 8) up to f = 3, 0.25 (8) at f = 4.
  EXPECT_THAT(LargerChunkShare(chunks, 4), ElementsAre(1.0, 0.5, 0.5, 0.5, 0.25));
  // 3 free: 3 x 0.5 = 1.5; 8 free: 0; 1 free: 1 x 0.5 = 0.5; 5 free: 5 x 0.25 = 1.25;
  // total 3.25.
  EXPECT_THAT(FragmentedGpus({3, 0, 8, 1, 5}, chunks), DoubleEq(3.25));
  EXPECT_THAT(FragmentedGpus({3, 7}, {{1, 1.0}}), DoubleEq(0));  // single GPUs fit anywhere
}

TEST(StepTimeTest, TheCommunicationShareScalesWithTheEstimate) {
  EXPECT_THAT(StepTimeRatio(0.4, 0.2, 0.3), DoubleEq(1.3));  // 0.7 + 0.3 x 2
  EXPECT_THAT(StepTimeRatio(5.0, 0.2, 0.3), DoubleEq(3.7));  // 25x capped at 10: 0.7 + 3
  EXPECT_THAT(StepTimeRatio(0.2, 0.2, 0.5), DoubleEq(1.0));  // the best placement
  EXPECT_THAT(StepTimeRatio(0.3, 0.0, 0.3), DoubleEq(1.0));  // nothing to communicate
}

// A replay on FourNodes: the figures reach summary.json, jobs.csv and the console.
TEST(ReplayMetricsTest, SummaryJobsCsvAndConsoleCarryThem) {
  auto topo = FourNodes();
  auto policy = LoadPolicy("configs/policies/firstfit.yaml");
  ASSERT_THAT(policy, IsOk());
  Engine engine(topo, *policy);
  // a: 4 GPUs (TP 4, one node) for 100 s; b: TP 2 DP 4 (8 GPUs) for 100 s from t = 0.
  TraceJob a;
  a.id = "a";
  a.duration = 100;
  a.gpus = 4;
  a.tp = 4;
  TraceJob b = a;
  b.id = "b";
  b.gpus = 8;
  b.tp = 2;
  b.dp = 4;
  std::vector<TraceJob> jobs = {a, b};
  SimOptions options;
  options.sample_every = 10;
  SimResult r = Simulate(engine, jobs, options);
  ASSERT_GE(r.jobs[1].start, 0);
  Trace trace;
  trace.jobs = jobs;
  ReplayRun run{"four", "t", &trace, options, 1, topo.get(), {r}};
  nlohmann::json s = SummaryJson(run);
  const auto& p = s["policies"][0];
  EXPECT_EQ(s["estimates"]["comm_share"], kAssumedCommShare);  // none given: assumed
  EXPECT_EQ(s["estimates"]["comm_share_assumed"], true);
  EXPECT_EQ(p["tp_group_jobs"], 2);  // a (TP 4) and b (TP 2)
  EXPECT_EQ(p["dp_group_jobs"], 1);  // b only (a has DP 1)
  // First fit: a on n0, b on n1 and n2 (4 + 4): DP groups of b span 2 domains under 2 leaves.
  EXPECT_THAT(p["dp_group_spread"]["nvlink_domain"].get<double>(), DoubleEq(2));
  EXPECT_THAT(p["dp_group_spread"]["leaf"].get<double>(), DoubleEq(2));
  // Samples every 10 s; the one at 0 is taken before the arrivals (16 free), those at 10 to
  // 100 while a and b run (4 free), and one at 110 closes the series:
  // (16 x 10 + 4 x 100) / 110 = 560 / 110.
  EXPECT_THAT(p["unallocated_gpus_mean"].get<double>(), DoubleEq(560.0 / 110));
  // Chunks: a 4, b 2 (half each). n3's 4 free GPUs hold either: nothing fragmented.
  EXPECT_THAT(p["fragmented_gpus_mean"].get<double>(), DoubleEq(0));
  EXPECT_GE(p["step_time_ratio_mean"].get<double>(), 1.0);
  std::string csv = JobsCsv(run);
  EXPECT_THAT(csv, HasSubstr(",tp_span_domains,tp_span_leaves,dp_span_domains,dp_span_leaves,"
                             "step_time_ratio,reason\n"));
  EXPECT_THAT(csv, HasSubstr(",1.000,1.000,2.000,2.000,"));  // b: TP in one node, DP as above
  std::string text = SummaryText(s);
  EXPECT_THAT(text, HasSubstr("DP:leaf"));
  EXPECT_THAT(text, HasSubstr("communication 30.0% of a step, assumed"));
  std::string html = ReportHtml(run, s);
  EXPECT_THAT(html, HasSubstr("<table id=\"metrics\">"));
  EXPECT_THAT(html, HasSubstr("30.0% of its time communicating on the baseline (assumed"));
  EXPECT_THAT(html, HasSubstr("on the baseline placement, each policy's own placement on the "
                              "empty cluster (B)"));
  EXPECT_THAT(html, HasSubstr("<th>DP:leaf max</th>"));
  EXPECT_THAT(html, HasSubstr("<polyline class=\"series\""));  // no library: SVG plots
  // With a charting library: inlined as is, the charts' data beside it, no SVG plots.
  run.chart_library = "/* the library */";
  html = ReportHtml(run, s);
  EXPECT_THAT(html, HasSubstr("<script>\n/* the library */\n</script>"));
  EXPECT_THAT(html, HasSubstr("<script type=\"application/json\" id=\"chart-data\">"));
  EXPECT_THAT(html, HasSubstr("\"names\":[\"TP 2, 1-8 GPUs\",\"TP 4, 1-8 GPUs\"]"));  // a, b
  EXPECT_THAT(html, ::testing::Not(HasSubstr("<polyline")));
}

}  // namespace
}  // namespace nvlplace::replay
