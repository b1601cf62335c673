// Tests for the replay simulator: queueing, backfill, rejection, determinism.
#include "contrib/replay/simulator.h"

#include <limits>

#include "contrib/replay/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"
#include "tests/status_matchers.h"

namespace nvlplace::replay {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

class SimulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto topo = LoadTopologyFile("configs/lab-h100.yaml");  // 8 nodes x 8 GPUs
    ASSERT_THAT(topo, IsOk());
    topo_ = *topo;
    auto policy = LoadPolicy("configs/policies/topo.yaml");
    ASSERT_THAT(policy, IsOk());
    engine_ = std::make_unique<Engine>(topo_, *policy);
  }
  TraceJob Job(const std::string& id, double submit, double duration, int gpus, int tp = 0) {
    TraceJob j;
    j.id = id;
    j.submit = submit;
    j.duration = duration;
    j.gpus = gpus;
    j.tp = tp;
    return j;
  }
  std::shared_ptr<const Topology> topo_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(SimulatorTest, FifoWaitsForTheHead) {
  // a takes 48 GPUs for 100 s; b needs 32 and waits; c needs 8 and waits behind b in FIFO.
  std::vector<TraceJob> jobs = {Job("a", 0, 100, 48, 8), Job("b", 1, 50, 32, 8),
                                Job("c", 2, 10, 8, 8)};
  SimOptions fifo;
  fifo.scheduler = Scheduler::kFifo;
  SimResult r = Simulate(*engine_, jobs, fifo);
  EXPECT_DOUBLE_EQ(r.jobs[0].start, 0);
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 100);
  EXPECT_DOUBLE_EQ(r.jobs[2].start, 100);  // 64 - 32 = 32 GPUs left at t=100
  EXPECT_DOUBLE_EQ(r.makespan, 150);
}

TEST_F(SimulatorTest, BackfillStartsShortJobsBeforeTheReservation) {
  std::vector<TraceJob> jobs = {Job("a", 0, 100, 48, 8), Job("b", 1, 50, 32, 8),
                                Job("c", 2, 10, 8, 8)};
  SimResult r = Simulate(*engine_, jobs, SimOptions{});
  // c (10 s) ends at 12, before b's reservation at 100: it runs at once on the 16 free GPUs.
  EXPECT_DOUBLE_EQ(r.jobs[2].start, 2);
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 100);
}

// Backfill reserves with the plugin's estimate (FindEarliestStart, issue 24): a strict TP=4
// head that counting GPUs says could start now (4 GPUs free, but 2 + 2 over two nodes) had no
// reservation at all, so any later job could take the GPUs whose release would make room.
// Now the head is reserved the node whose job ends first, at that end; a long job keeps off
// that node, a short one may use it, and the head starts on time.
TEST_F(SimulatorTest, AStrictHeadIsReservedTheNodeWhoseJobEndCompletesItsDomain) {
  std::vector<TraceJob> jobs;
  // node0-5 full for a long time; two 6-GPU jobs leave 2 + 2 free GPUs on two nodes.
  for (int n = 0; n < 6; ++n) jobs.push_back(Job("full" + std::to_string(n), n, 10000, 8, 8));
  jobs.push_back(Job("six-a", 6, 100, 6));    // ends at 106
  jobs.push_back(Job("six-b", 7, 5000, 6));   //
  jobs.push_back(Job("head", 8, 100, 4, 4));  // TP=4 strict: 4 GPUs of one node
  jobs.push_back(Job("long", 9, 1000, 2));    // fits now beside either six, runs past 106
  jobs.push_back(Job("short", 10, 50, 2));    // ends at 60, before 106
  SimResult r = Simulate(*engine_, jobs, SimOptions{});
  auto node_of = [&](int job) { return topo_->gpus()[r.jobs[job].ranks.at(0)].node; };
  const NodeId reserved = node_of(6);  // six-a's
  ASSERT_NE(node_of(7), reserved);
  EXPECT_DOUBLE_EQ(r.jobs[8].start, 106);  // when six-a ends: its node has 8 free
  for (GpuId g : r.jobs[8].ranks) EXPECT_EQ(topo_->gpus()[g].node, reserved);
  // The long job started at once, beside six-b, not on the reserved node.
  EXPECT_DOUBLE_EQ(r.jobs[9].start, 9);
  EXPECT_EQ(node_of(9), node_of(7));
  // The short one ends before the reservation: it may use the reserved node's free GPUs.
  EXPECT_DOUBLE_EQ(r.jobs[10].start, 10);
  EXPECT_EQ(node_of(10), reserved);
}

// One backfill pass over jobs that arrived together: the reserved node's free GPUs are held
// once for the run of jobs that must keep off them and let go before a job that may use
// them; each job sees what it would alone.
TEST_F(SimulatorTest, OneBackfillPassHoldsTheReservedNodeOnlyForJobsThatKeepOffIt) {
  std::vector<TraceJob> jobs;
  for (int n = 0; n < 6; ++n) jobs.push_back(Job("full" + std::to_string(n), n, 10000, 8, 8));
  jobs.push_back(Job("six-a", 6, 100, 6));    // ends at 106: its node is reserved for head
  jobs.push_back(Job("six-b", 7, 5000, 6));   //
  jobs.push_back(Job("head", 8, 100, 4, 4));  // TP=4 strict: waits for six-a's node
  jobs.push_back(Job("long", 9, 1000, 2));    // keeps off: takes six-b's 2 free GPUs
  jobs.push_back(Job("long2", 9, 1000, 2));   // keeps off: nothing left off the reserved node
  jobs.push_back(Job("short", 9, 50, 2));     // ends before 106: the reserved node's 2 GPUs
  SimResult r = Simulate(*engine_, jobs, SimOptions{});
  auto node_of = [&](int job) { return topo_->gpus()[r.jobs[job].ranks.at(0)].node; };
  EXPECT_DOUBLE_EQ(r.jobs[9].start, 9);
  EXPECT_EQ(node_of(9), node_of(7));
  EXPECT_GT(r.jobs[10].start, 9);  // long2 waited
  EXPECT_DOUBLE_EQ(r.jobs[11].start, 9);
  EXPECT_EQ(node_of(11), node_of(6));
  EXPECT_DOUBLE_EQ(r.jobs[8].start, 106);  // the head on time, on the reserved node
  EXPECT_EQ(topo_->gpus()[r.jobs[8].ranks.at(0)].node, node_of(6));
}

TEST_F(SimulatorTest, NeverPlaceableJobsAreRejectedWithAReason) {
  std::vector<TraceJob> jobs = {Job("big", 0, 10, 128), Job("wide", 1, 10, 16, 16),
                                Job("ok", 2, 10, 8, 8)};
  SimResult r = Simulate(*engine_, jobs, SimOptions{});
  EXPECT_TRUE(r.jobs[0].rejected);
  EXPECT_THAT(r.jobs[0].reason, HasSubstr("has 64"));
  EXPECT_TRUE(r.jobs[1].rejected);  // TP=16 never fits an 8-GPU NVLink domain (strict)
  EXPECT_THAT(r.jobs[1].reason, HasSubstr("largest free domain has 8 GPUs"));
  EXPECT_DOUBLE_EQ(r.jobs[2].start, 2);
}

TEST_F(SimulatorTest, ReportsWhetherAJobWithoutSizesStayedInOneDomain) {
  // 12 GPUs without TP/PP/DP: one group, more than one 8-GPU NVLink domain can hold.
  std::vector<TraceJob> jobs = {Job("x", 0, 10, 12), Job("y", 1, 10, 8)};
  SimResult r = Simulate(*engine_, jobs, SimOptions{});
  EXPECT_FALSE(r.jobs[0].tp_in_domain);
  EXPECT_TRUE(r.jobs[1].tp_in_domain);
}

TEST_F(SimulatorTest, DeterministicAndNoGpuReusedAtOnce) {
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 300; ++i) {
    jobs.push_back(Job("j" + std::to_string(i), i * 7.0, 50 + (i * 37) % 400, 1 << (i % 5),
                       (i % 3 == 0) ? std::min(8, 1 << (i % 5)) : 0));
  }
  SimResult a = Simulate(*engine_, jobs, SimOptions{});
  SimResult b = Simulate(*engine_, jobs, SimOptions{});
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].ranks, b.jobs[i].ranks);
    EXPECT_EQ(a.jobs[i].start, b.jobs[i].start);
  }
  // At every job start, no running job holds any of its GPUs.
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    for (size_t k = 0; k < a.jobs.size(); ++k) {
      if (k == i || a.jobs[k].start < 0 || a.jobs[i].start < 0) continue;
      bool overlap = a.jobs[k].start <= a.jobs[i].start && a.jobs[i].start < a.jobs[k].end;
      if (!overlap) continue;
      for (GpuId g : a.jobs[i].ranks) {
        EXPECT_EQ(std::count(a.jobs[k].ranks.begin(), a.jobs[k].ranks.end(), g), 0)
            << "GPU " << g << " of job " << i << " held by job " << k;
      }
    }
  }
  Trace trace;
  trace.jobs = jobs;
  ReplayRun run{"lab", "synthetic", &trace, SimOptions{}, 1, topo_.get(), {a}};
  nlohmann::json s = SummaryJson(run);
  EXPECT_EQ(s["schema"], "nvlplace.replay/1");
  EXPECT_EQ(s["policies"][0]["jobs_started"].get<int>(), 300);
  EXPECT_GT(s["policies"][0]["utilization_mean"].get<double>(), 0);
  std::string html = ReportHtml(run, s);
  EXPECT_EQ(std::count(html.begin(), html.end(), '\n') > 10, true);
  EXPECT_THAT(html, HasSubstr("<polyline class=\"series\""));
}

// Like lab-h100, but the leaves' uplinks are 2:1 oversubscribed: crossing the spine halves
// the DP all-reduce bandwidth.
std::shared_ptr<const Topology> Oversubscribed() {
  auto spec = ParseTopologyYaml(R"(name: oversubscribed
tiers: [leaf, spine]
gpu_models: [{name: H100}]
nodes: [{names: "node[0-7]", gpus: 8, model: H100}]
switches:
  - {name: leaf0, tier: leaf, nodes: "node[0-3]", oversubscription: 2}
  - {name: leaf1, tier: leaf, nodes: "node[4-7]", oversubscription: 2}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
)",
                                "test.yaml");
  EXPECT_THAT(spec, IsOk());
  if (!spec.ok()) return nullptr;
  auto topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return topo.ok() ? *topo : nullptr;
}

TEST_F(SimulatorTest, CommSlowdownStretchesBadPlacements) {
  std::shared_ptr<const Topology> topo = Oversubscribed();
  ASSERT_NE(topo, nullptr);
  Engine engine(topo, *LoadPolicy("configs/policies/topo.yaml"));
  // a and a2 leave one free node per leaf, so b (TP=8 DP=2) must cross the spine: its
  // communication estimate exceeds the best on the empty cluster (one leaf) and it stretches.
  std::vector<TraceJob> jobs = {Job("a", 0, 1000, 24, 8), Job("a2", 0, 1000, 24, 8),
                                Job("b", 1, 100, 16, 8)};
  SimOptions opts;
  opts.comm_share = 0.5;
  SimResult r = Simulate(engine, jobs, opts);
  ASSERT_GE(r.jobs[2].start, 0);
  EXPECT_EQ(r.jobs[2].job_tier, 1);
  EXPECT_GT(r.jobs[2].stretch, 1.0);
  EXPECT_DOUBLE_EQ(r.jobs[2].end - r.jobs[2].start, 100 * r.jobs[2].stretch);
  // With the model off, the recorded duration stands.
  SimResult off = Simulate(engine, jobs, SimOptions{});
  EXPECT_DOUBLE_EQ(off.jobs[2].stretch, 1.0);
}

TEST_F(SimulatorTest, ACommonBaselineMeasuresEveryPolicyAgainstOnePlacement) {
  std::shared_ptr<const Topology> topo = Oversubscribed();
  ASSERT_NE(topo, nullptr);
  Engine topo_engine(topo, *LoadPolicy("configs/policies/topo.yaml"));
  // One TP=8 DP=4 job on the empty cluster: topo keeps it under one leaf.
  std::vector<TraceJob> jobs = {Job("b", 0, 100, 32, 8)};
  SimOptions own;
  own.comm_share = 0.5;
  SimResult best = Simulate(topo_engine, jobs, own);
  ASSERT_GE(best.jobs[0].start, 0);
  ASSERT_EQ(best.jobs[0].job_tier, 0);
  EXPECT_DOUBLE_EQ(best.jobs[0].best_comm_s, best.jobs[0].comm_s);
  // Every seed of random is measured against topo's placement, not against its own draw on
  // the empty cluster (as spread as its placements: no stretch for spreading).
  SimOptions common = own;
  common.baseline = &topo_engine;
  bool some_stretched = false;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Engine random(topo, std::make_shared<const Policy>(
                            (*LoadPolicy("configs/policies/random.yaml"))->WithSeed(seed)));
    SimResult r = Simulate(random, jobs, common);
    ASSERT_GE(r.jobs[0].start, 0);
    EXPECT_DOUBLE_EQ(r.jobs[0].best_comm_s, best.jobs[0].comm_s);
    EXPECT_EQ(r.jobs[0].stretch > 1.0, r.jobs[0].job_tier > 0) << "seed " << seed;
    some_stretched |= r.jobs[0].stretch > 1.0;
  }
  EXPECT_TRUE(some_stretched);
  // A baseline on another topology is refused, not silently used.
  SimResult other = Simulate(*engine_, jobs, common);
  EXPECT_TRUE(other.jobs[0].rejected);
  EXPECT_THAT(other.jobs[0].reason, HasSubstr("baseline engine places on another topology"));
}

TEST_F(SimulatorTest, InvalidJobsAreRejectedAndTheReplayEnds) {
  // A NaN submit time made the event loop spin for ever (t never advanced); TP x PP =
  // 65536 x 65536 wrapped to 0 and trapped (SIGFPE) in ResolveRequest.
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<TraceJob> jobs = {
      Job("ok", 0, 10, 8, 8),    Job("nan", kNan, 10, 8), Job("inf", kInf, 10, 8),
      Job("ninf", -kInf, 10, 8), Job("dnan", 1, kNan, 8), Job("dinf", 1, kInf, 8),
      Job("neg", 1, 10, -8),     Job("late", 2e9, 10, 8), Job("ok2", 3, 10, 8)};
  jobs.push_back(Job("huge", 4, 10, 8, 65536));
  jobs.back().pp = 65536;
  for (Scheduler scheduler : {Scheduler::kFifo, Scheduler::kBackfill}) {
    SimOptions options;
    options.scheduler = scheduler;
    SimResult r = Simulate(*engine_, jobs, options);
    EXPECT_DOUBLE_EQ(r.jobs[0].start, 0);
    EXPECT_DOUBLE_EQ(r.jobs[8].start, 3);
    for (int i : {1, 2, 3, 4, 5, 6, 7, 9}) {
      EXPECT_TRUE(r.jobs[i].rejected) << jobs[i].id;
      EXPECT_THAT(r.jobs[i].reason, HasSubstr("not a valid trace job")) << jobs[i].id;
    }
    EXPECT_THAT(r.jobs[1].reason, HasSubstr("submit nan"));
    EXPECT_THAT(r.jobs[9].reason, HasSubstr("lower tp or pp"));
    EXPECT_DOUBLE_EQ(r.makespan, 13);
  }
}

TEST_F(SimulatorTest, OptionsOutOfRangeAreRefused) {
  std::vector<TraceJob> jobs = {Job("a", 0, 10, 8)};
  auto refused = [&](const SimOptions& o, const std::string& what) {
    EXPECT_THAT(CheckSimOptions(o), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(what)));
    // Simulate itself replays nothing: a NaN load scale made every submit time NaN.
    SimResult r = Simulate(*engine_, jobs, o);
    ASSERT_EQ(r.jobs.size(), 1u);
    EXPECT_TRUE(r.jobs[0].rejected);
    EXPECT_THAT(r.jobs[0].reason, HasSubstr(what));
  };
  for (double scale : {0.0, -1.0, 1e-320, 1e-4, 1e4, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
    SimOptions o;
    o.load_scale = scale;
    refused(o, "load scale");
  }
  for (double share : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    SimOptions o;
    o.comm_share = share;
    refused(o, "communication share");
  }
  for (double every : {1e-300, 0.5, -1.0, 2e9, std::numeric_limits<double>::quiet_NaN()}) {
    SimOptions o;
    o.sample_every = every;
    refused(o, "sample interval");
  }
  SimOptions edge;
  edge.load_scale = 1e-3;  // 1 / limits::kMaxLoadScale
  edge.comm_share = 1;
  edge.sample_every = 1;
  EXPECT_THAT(CheckSimOptions(edge), IsOk());
  EXPECT_DOUBLE_EQ(Simulate(*engine_, jobs, edge).jobs[0].start, 0);
}

TEST_F(SimulatorTest, SamplesStayBoundedOnALongReplay) {
  // 300 jobs of the whole cluster, 1e9 s each, one after another: the makespan is 3e11 s,
  // 300 times the horizon the sample interval is taken from (1e9 / 400 = 2.5e6 s), so
  // 120,000 samples without a bound.
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 300; ++i) jobs.push_back(Job("j" + std::to_string(i), 0, 1e9, 64));
  SimResult r = Simulate(*engine_, jobs, SimOptions{});
  EXPECT_DOUBLE_EQ(r.makespan, 3e11);
  EXPECT_LE(r.samples.size(), kMaxSamples);
  EXPECT_GE(r.samples.size(), kMaxSamples / 4);
  // Still a regular grid from 0 that covers the replay.
  ASSERT_GE(r.samples.size(), 3u);
  double step = r.samples[1].time - r.samples[0].time;
  EXPECT_DOUBLE_EQ(r.samples[0].time, 0);
  EXPECT_DOUBLE_EQ(r.samples[2].time - r.samples[1].time, step);
  EXPECT_GE(r.samples.back().time, 3e11);
  // The cluster is full all along (the first sample is taken before the first arrival).
  for (size_t i = 1; i + 1 < r.samples.size(); ++i) EXPECT_EQ(r.samples[i].busy_gpus, 64);
}

// A typed job runs only on its model's nodes, and waits for them while the other model is
// free; a model the cluster lacks is a rejected job with the reason, not a crash (issue 11:
// the replay dropped TraceJob.gpu_model and placed typed jobs on any model).
TEST(SimulatorModelTest, TypedJobsRunOnlyOnTheirModel) {
  auto topo = LoadTopologyFile("tests/fixtures/topologies/two-models.yaml");  // 2 H100, 2 A100
  ASSERT_THAT(topo, IsOk());
  auto policy = LoadPolicy("configs/policies/topo.yaml");
  ASSERT_THAT(policy, IsOk());
  Engine engine(*topo, *policy);
  auto job = [](const char* id, double submit, int gpus, const char* model) {
    TraceJob j;
    j.id = id;
    j.submit = submit;
    j.duration = 100;
    j.gpus = gpus;
    j.gpu_model = model;
    return j;
  };
  std::vector<TraceJob> jobs = {job("h1", 0, 16, "H100"), job("h2", 1, 8, "h100"),
                                job("any", 2, 8, ""), job("b200", 3, 8, "B200")};
  jobs[2].duration = 50;  // ends at 52, before h2's reservation at 100: backfilled
  SimResult r = Simulate(engine, jobs, SimOptions{});
  ASSERT_EQ(r.jobs.size(), 4u);
  EXPECT_DOUBLE_EQ(r.jobs[0].start, 0);
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 100);  // both H100 nodes busy until h1 ends at 0 + 100
  EXPECT_DOUBLE_EQ(r.jobs[2].start, 2);    // any model: an A100 node at once
  for (GpuId g : r.jobs[2].ranks) EXPECT_EQ((*topo)->nodes()[(*topo)->gpus()[g].node].model, 1);
  for (int i : {0, 1}) {
    for (GpuId g : r.jobs[i].ranks) {
      EXPECT_EQ((*topo)->nodes()[(*topo)->gpus()[g].node].model, 0) << jobs[i].id;  // H100
    }
  }
  EXPECT_TRUE(r.jobs[3].rejected);
  EXPECT_THAT(r.jobs[3].reason, HasSubstr("GPU model 'B200' is not in cluster two-models"));
}

// EASY backfill reserves the head's start from GPUs of its model: with the A100 nodes free,
// counting every GPU put no reservation on a waiting H100 job, and a long H100 job jumped it.
// A job of another model backfills whatever its length.
TEST(SimulatorModelTest, BackfillReservesTheHeadsModel) {
  auto topo = LoadTopologyFile("tests/fixtures/topologies/two-models.yaml");  // 2 H100, 2 A100
  ASSERT_THAT(topo, IsOk());
  auto policy = LoadPolicy("configs/policies/topo.yaml");
  ASSERT_THAT(policy, IsOk());
  Engine engine(*topo, *policy);
  auto job = [](const char* id, double submit, double duration, int gpus) {
    TraceJob j;
    j.id = id;
    j.submit = submit;
    j.duration = duration;
    j.gpus = gpus;
    j.gpu_model = "H100";
    return j;
  };
  std::vector<TraceJob> jobs = {job("a", 0, 100, 8), job("head", 1, 100, 16),
                                job("long", 2, 500, 8), job("a100", 3, 500, 8)};
  jobs[3].gpu_model = "A100";
  SimResult r = Simulate(engine, jobs, SimOptions{});
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 100);  // when a frees its 8 H100: 8 + 8 = 16
  EXPECT_DOUBLE_EQ(r.jobs[2].start, 200);  // 2 + 500 > 100: not backfilled; after head
  EXPECT_DOUBLE_EQ(r.jobs[3].start, 3);    // another model: it cannot delay the head
}

}  // namespace
}  // namespace nvlplace::replay
