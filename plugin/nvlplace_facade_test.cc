// Tests for the C facade the select plugin calls: nvl_decide and the steps of a decision, on
// plain structs as nvl_ctld.c hands them over, never an exception.
#include "plugin/nvlplace_facade.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugin/placement_line.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A job as nvl_ctld.c's _job_of flattens it: GPU counts, node counts, and the SPANK
// environment holding the options ("NVLPLACE_TP=4").
struct Job {
  nvl_job_t job{};
  std::vector<std::string> env;
  std::vector<char*> envp;

  explicit Job(uint64_t gpus, std::vector<std::string> options = {}, int mode = NVL_MODE_RUN_NOW)
      : env(std::move(options)) {
    job.job_id = 7;
    job.mode = mode;
    job.gpus_per_job = gpus;
    job.gpu_requests = 1;
    job.min_nodes = 1;
    job.max_nodes = 500000;  // slurmctld's bound for a job without -N
  }
  // -N nodes --gpus-per-node=per_node
  static Job PerNode(int nodes, uint64_t per_node, std::vector<std::string> options = {}) {
    Job j(0, std::move(options));
    j.job.gpus_per_node = per_node;
    j.job.min_nodes = j.job.max_nodes = nodes;
    return j;
  }
  const nvl_job_t* get() {
    envp.clear();
    for (std::string& e : env) envp.push_back(e.data());
    job.env = envp.data();
    job.env_size = static_cast<uint32_t>(envp.size());
    return &job;
  }
};

// lab-islands: node[00-15], 8 GPUs each in two NVLink islands {0-3} and {4-7}; four leaves
// of four nodes under one spine.
class FacadeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nvlplace-facade-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    facade_ = Load("topology: " + std::filesystem::current_path().string() +
                   "/configs/lab-islands.yaml\ncandidates: 3\n");
    ASSERT_NE(facade_, nullptr) << err_;
    for (int i = 0; i < 16; ++i) {
      char name[16];
      std::snprintf(name, sizeof(name), "node%02d", i);
      names_.push_back(name);
      free_.push_back({0, 1, 2, 3, 4, 5, 6, 7});
    }
  }
  void TearDown() override {
    nvl_facade_free(facade_);
    std::filesystem::remove_all(dir_);
  }
  nvl_facade_t* Load(const std::string& text) {
    std::string path = (dir_ / "nvlplace.yaml").string();
    std::ofstream(path) << text;
    return nvl_facade_load(path.c_str(), err_, sizeof(err_));
  }
  // Decides on the current free lists; every node usable unless listed in `unusable`.
  nvl_decision_t* Decide(Job& job, std::vector<int> unusable = {}) {
    nodes_.clear();
    for (size_t i = 0; i < names_.size(); ++i) {
      bool usable = std::find(unusable.begin(), unusable.end(), i) == unusable.end();
      nodes_.push_back(
          {names_[i].c_str(), usable, free_[i].data(), static_cast<int>(free_[i].size())});
    }
    return nvl_decide(facade_, job.get(), nodes_.data(), static_cast<int>(nodes_.size()));
  }
  std::vector<std::string> Names(const nvl_candidate_t& c) {
    std::vector<std::string> out;
    for (int i = 0; i < c.num_nodes; ++i) out.push_back(names_[c.nodes[i]]);
    return out;
  }
  // Tells d that Slurm took node set i exactly as decided. RET nvl_decision_took's verdict.
  int TakeAsDecided(nvl_decision_t* d, int i) {
    const nvl_candidate_t* c = nvl_decision_candidate(d, i);
    nvl_layout_t got{c->num_nodes, c->nodes, c->gpu_offsets, c->gpus};
    return nvl_decision_took(d, i, &got);
  }

  std::filesystem::path dir_;
  char err_[1024] = "";
  nvl_facade_t* facade_ = nullptr;
  std::vector<std::string> names_;
  std::vector<std::vector<int>> free_;
  std::vector<nvl_node_t> nodes_;
};

TEST_F(FacadeTest, DescribesItsConfiguration) {
  EXPECT_THAT(nvl_facade_describe(facade_),
              HasSubstr("topology lab-islands (16 nodes, 128 GPUs, 32 NVLink domains)"));
  EXPECT_EQ(nvl_facade_log_level(facade_), NVL_LOG_INFO);
}

TEST_F(FacadeTest, TpGroupGoesToAFreeIsland) {
  // node00 has 4 free GPUs split 2 + 2 over its islands; node01 has island {4-7} free.
  // Every other node is full. A first-fit choice would take node00 and split the group.
  for (int i = 0; i < 16; ++i) free_[i].clear();
  free_[0] = {2, 3, 6, 7};
  free_[1] = {4, 5, 6, 7};
  Job job = Job::PerNode(1, 4, {"NVLPLACE_TP=4"});
  nvl_decision_t* d = Decide(job);
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY) << nvl_decision_reason(d);
  EXPECT_EQ(nvl_decision_mask(d), 1);  // RUN_NOW: cons_tres may take only the decision's GPUs
  const nvl_candidate_t* c = nvl_decision_candidate(d, 0);
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(Names(*c), ElementsAre("node01"));
  EXPECT_THAT(c->describe, HasSubstr("gpus=node01:4-7 domains=node01:nvl1 "));
  // The GPU indexes per node, for masking cons_tres's choice inside the node.
  EXPECT_THAT(std::vector<int>(c->gpu_offsets, c->gpu_offsets + 2), ElementsAre(0, 4));
  EXPECT_THAT(std::vector<int>(c->gpus, c->gpus + 4), ElementsAre(4, 5, 6, 7));
  EXPECT_EQ(TakeAsDecided(d, 0), 1);
  int level = -1;
  EXPECT_THAT(nvl_decision_log(d, &level),
              HasSubstr("event=placed asked_gpus=4 asked_nodes=1 tp=4 pp=1 dp=1 nvl=strict "
                        "max_tier=none model=any exclusive=no gpus=node01:4-7 "));
  EXPECT_EQ(level, NVL_LOG_INFO);
  EXPECT_THAT(nvl_decision_comment(d), HasSubstr(" relaxations=none"));
  // The start waits for slurmctld: reported (and counted) at select_nodeinfo_set.
  EXPECT_EQ(nvl_decision_starting(d), 1);
  nvl_decision_started(d);
  EXPECT_EQ(nvl_decision_starting(d), 0);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, AStartSlurmKeepsPendingSaysWhyAndCountsNoPlacement) {
  Job job = Job::PerNode(1, 4, {"NVLPLACE_TP=4"});
  nvl_decision_t* d = Decide(job);
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY) << nvl_decision_reason(d);
  // The placement Slurm did not start, named in the line ("gpus=node00:0-3 domains=...").
  std::string taken = nvl_decision_candidate(d, 0)->describe;
  taken = taken.substr(0, taken.find(' '));
  EXPECT_EQ(TakeAsDecided(d, 0), 1);
  EXPECT_NE(nvl_decision_rankmap(d), nullptr);
  nvl_decision_dropped(d, "NvidiaImexChannels");
  EXPECT_EQ(nvl_decision_starting(d), 0);
  EXPECT_EQ(nvl_decision_rankmap(d), nullptr);
  EXPECT_THAT(nvl_decision_comment(d), HasSubstr("nvlplace: v=1 event=waiting "));
  EXPECT_THAT(nvl_decision_comment(d), HasSubstr("(Reason=NvidiaImexChannels)"));
  EXPECT_THAT(nvl_decision_log(d, nullptr), HasSubstr("\" " + taken + " "));
  nvl_decision_free(d);
  char line[2048];
  ASSERT_EQ(nvl_facade_summary(facade_, 1000, 300, line, sizeof(line)), 1);
  EXPECT_THAT(line, HasSubstr("since load: 0 jobs placed on nvlplace node sets, "));
  EXPECT_THAT(line, HasSubstr("; 1 placements Slurm kept pending"));
}

TEST_F(FacadeTest, StrictWaitsWithATopologyReason) {
  // TP=8 never fits a 4-GPU island: never runnable on this cluster.
  Job job(8, {"NVLPLACE_TP=8"});
  nvl_decision_t* d = Decide(job);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  EXPECT_EQ(nvl_decision_hold(d), 0);  // it waits; a bad request would be held
  EXPECT_THAT(nvl_decision_reason(d), HasSubstr("needs 1 TP group of 8 GPUs inside one NVLink "
                                                "domain; no free NVLink domain holds it"));
  EXPECT_THAT(nvl_decision_comment(d), HasSubstr("nvlplace: v=1 event=waiting "));
  EXPECT_EQ(nvl_decision_candidate(d, 0), nullptr);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, PreferRunsWithARelaxation) {
  Job job(8, {"NVLPLACE_TP=8", "NVLPLACE_NVL=prefer"});
  nvl_decision_t* d = Decide(job);
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY) << nvl_decision_reason(d);
  EXPECT_EQ(TakeAsDecided(d, 0), 1);
  EXPECT_THAT(nvl_decision_comment(d), HasSubstr("nvl=prefer"));
  nvl_decision_free(d);
}

TEST_F(FacadeTest, NodeSetsAreDistinctOnlyOnUsableNodesAndComputedWhenAsked) {
  Job job = Job::PerNode(2, 8);
  nvl_decision_t* d = Decide(job, /*unusable=*/{0, 1, 2});
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY) << nvl_decision_reason(d);
  std::set<std::vector<std::string>> seen;
  for (int i = 0; i < 3; ++i) {
    const nvl_candidate_t* c = nvl_decision_candidate(d, i);
    ASSERT_NE(c, nullptr) << "node set " << i;
    std::vector<std::string> names = Names(*c);
    EXPECT_EQ(names.size(), 2u);
    for (const auto& n : names) {
      EXPECT_THAT(n, ::testing::Not(::testing::AnyOf("node00", "node01", "node02")));
    }
    EXPECT_TRUE(seen.insert(names).second) << "node set " << i << " repeats";
    nvl_decision_refused(d, i);
  }
  EXPECT_EQ(nvl_decision_candidate(d, 3), nullptr);  // candidates: 3 in the configuration
  // Every node set refused (CPUs, memory): a job without a hard constraint goes to cons_tres.
  EXPECT_EQ(nvl_decision_exhausted(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, ANodeSetOfAnotherNodeCountIsNeverOffered) {
  // -N1 --gpus=16 on 8-GPU nodes: the engine's 16 GPUs span two nodes, which Slurm's node
  // count forbids; that node set is passed over, not handed to cons_tres to refuse.
  Job job(16);
  job.job.max_nodes = 1;
  nvl_decision_t* d = Decide(job);
  EXPECT_EQ(nvl_decision_candidate(d, 0), nullptr);
  EXPECT_EQ(nvl_decision_exhausted(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
  // A strict TP=4 job of 8 GPUs on -N1 when only two half-free nodes hold its groups: its
  // one node set has two nodes, so it waits.
  free_.assign(16, {});
  free_[3] = {0, 1, 2, 3};
  free_[4] = {0, 1, 2, 3};
  Job tp4(8, {"NVLPLACE_TP=4"});
  tp4.job.max_nodes = 1;
  d = Decide(tp4);
  EXPECT_EQ(nvl_decision_candidate(d, 0), nullptr);
  EXPECT_EQ(nvl_decision_exhausted(d), NVL_ACT_REFUSE);
  EXPECT_THAT(nvl_decision_comment(d), HasSubstr("no node set of nvlplace has the job's node "
                                                 "count (1 to 1 nodes)"));
  nvl_decision_free(d);
}

TEST_F(FacadeTest, BusyGpusAreNeverOffered) {
  for (int i = 0; i < 15; ++i) free_[i].clear();  // only node15 has free GPUs
  Job job(8);
  nvl_decision_t* d = Decide(job);
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY);
  EXPECT_THAT(Names(*nvl_decision_candidate(d, 0)), ElementsAre("node15"));
  EXPECT_EQ(nvl_decision_candidate(d, 1), nullptr);
  nvl_decision_free(d);
  // 9 GPUs: no room now, and TP=1 promises nothing cons_tres would not also need.
  Job nine(9);
  d = Decide(nine);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
  // "Could it ever run" (TEST_ONLY, asked as if every GPU were free): yes.
  Job ever(9, {"NVLPLACE_TP=1"}, NVL_MODE_TEST_ONLY);
  d = Decide(ever);
  EXPECT_NE(nvl_decision_action(d), NVL_ACT_REFUSE);
  nvl_decision_free(d);
  // A TEST_ONLY job that fits leaves the answer to cons_tres: no node set is offered (a fuzz
  // finding: crash-check-node-set-without-NVL_ACT_TRY).
  Job fits(4, {"NVLPLACE_TP=4"}, NVL_MODE_TEST_ONLY);
  d = Decide(fits);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  EXPECT_EQ(nvl_decision_candidate(d, 0), nullptr);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, BadRequestsAreHeldWithWhy) {
  Job job(8, {"NVLPLACE_TP=3"});
  nvl_decision_t* d = Decide(job);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  EXPECT_EQ(nvl_decision_hold(d), 1);
  EXPECT_THAT(nvl_decision_reason(d), HasSubstr("does not divide 8 GPUs"));
  nvl_decision_free(d);
  Job mode(8, {"NVLPLACE_TP=4", "NVLPLACE_NVL=sometimes"});  // the SPANK plugin bypassed
  d = Decide(mode);
  EXPECT_EQ(nvl_decision_hold(d), 1);
  EXPECT_THAT(nvl_decision_reason(d), HasSubstr("--nvl=sometimes"));
  nvl_decision_free(d);
}

TEST_F(FacadeTest, TierAboveTheTopLimitsNothingAndSaysSo) {
  // lab-islands has leaf and spine only: --nvl-max-tier=core is dropped as a named
  // relaxation (the same in `nvlplace place` and the replay), not silently.
  Job job(16, {"NVLPLACE_MAX_TIER=core"});
  nvl_decision_t* d = Decide(job);
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY) << nvl_decision_reason(d);
  EXPECT_EQ(TakeAsDecided(d, 0), 1);
  EXPECT_THAT(nvl_decision_comment(d),
              HasSubstr("relaxations=\"max-tier=core limits nothing: cluster lab-islands's "
                        "highest tier is spine (dropped)\""));
  nvl_decision_free(d);
  // A tier the cluster has is a hard limit: 40 GPUs exceed a leaf's 32.
  Job leaf(40, {"NVLPLACE_MAX_TIER=leaf"}, NVL_MODE_TEST_ONLY);
  d = Decide(leaf);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, UnknownNodesAreIgnored) {
  std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  nvl_node_t nodes[2] = {{"login1", 1, all.data(), 8}, {"node07", 1, all.data(), 8}};
  Job job(4);
  nvl_decision_t* d = nvl_decide(facade_, job.get(), nodes, 2);
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY);
  EXPECT_EQ(nvl_decision_candidate(d, 0)->nodes[0], 1);  // index into `nodes`
  nvl_decision_free(d);
}

TEST_F(FacadeTest, NullArgumentsAreFallbacksNotCrashes) {
  Job plain(4);
  Job strict(8, {"NVLPLACE_TP=8"});
  // No configuration: a job whose options promise something waits; any other is cons_tres's.
  nvl_decision_t* d = nvl_decide(nullptr, strict.get(), nullptr, 0);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  // The fallback's comment is written out by hand (it needs no memory): it is the placement
  // line Format would write.
  nvlplace::plugin::PlacementLine waiting;
  waiting.event = nvlplace::plugin::Event::kWaiting;
  waiting.why =
      "nvlplace could not decide on this job (an internal error, logged by slurmctld); it is "
      "tried again";
  EXPECT_EQ(std::string(nvl_decision_comment(d)), "nvlplace: " + nvlplace::plugin::Format(waiting));
  EXPECT_EQ(nvl_decision_exhausted(d), NVL_ACT_REFUSE);
  // A fallback makes no second look with preemption, and accepts no preemption for a
  // promise it cannot check.
  EXPECT_EQ(nvl_decision_waits(d), 0);
  EXPECT_EQ(nvl_decision_preempts(d, -1, nullptr, 1), 0);
  EXPECT_EQ(nvl_decision_starting(d), 0);  // a fallback never starts a job of its own
  nvl_decision_started(d);
  nvl_decision_dropped(d, nullptr);
  nvl_decision_free(d);
  d = nvl_decide(nullptr, plain.get(), nullptr, 0);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  EXPECT_EQ(nvl_decision_comment(d), nullptr);
  EXPECT_EQ(nvl_decision_candidate(d, 0), nullptr);
  EXPECT_EQ(nvl_decision_took(d, -1, nullptr), 1);
  EXPECT_EQ(nvl_decision_preempts(d, -1, nullptr, 1), 1);
  nvl_decision_free(d);
  d = nvl_decide(facade_, nullptr, nullptr, 0);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
  // A node array that is NULL with a count is the caller's bug: cons_tres, with an error.
  d = nvl_decide(facade_, plain.get(), nullptr, 3);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
  EXPECT_EQ(nvl_decision_action(nullptr), NVL_ACT_CONS_TRES);
  EXPECT_EQ(nvl_decision_candidate(nullptr, 0), nullptr);
  EXPECT_EQ(nvl_decision_starting(nullptr), 0);
  nvl_decision_started(nullptr);
  nvl_decision_dropped(nullptr, "Resources");
  nvl_decision_free(nullptr);
  EXPECT_EQ(nvl_facade_load(nullptr, err_, sizeof(err_)), nullptr);
  EXPECT_STREQ(err_, "no configuration file name");
}

TEST_F(FacadeTest, AFreeListWithoutIndexesIsRefusedNotRead) {
  // Found by the facade fuzzer: free_gpus NULL with num_free > 0 was dereferenced.
  std::vector<int> all = {0, 1, 2, 3};
  nvl_node_t nodes[2] = {{"node00", 1, all.data(), 4}, {"node01", 1, nullptr, 4}};
  Job job(4);
  nvl_decision_t* d = nvl_decide(facade_, job.get(), nodes, 2);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  int level = -1;
  EXPECT_THAT(nvl_decision_log(d, &level),
              HasSubstr("v=1 event=cons_tres why=\"internal error: node 1 lists 4 free GPUs but no "
                        "indexes\""));
  EXPECT_EQ(level, NVL_LOG_ERROR);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, ABusyListWithoutIndexesIsRefusedNotRead) {
  std::vector<int> gpus = {0, 1};
  std::vector<int64_t> until = {100, 100};
  nvl_node_t nodes[2] = {{"node00", 1, nullptr, 0, gpus.data(), until.data(), 2},
                         {"node01", 1, nullptr, 0, gpus.data(), nullptr, 2}};
  Job job(4, {"NVLPLACE_TP=4"}, NVL_MODE_WILL_RUN);
  nvl_decision_t* d = nvl_decide(facade_, job.get(), nodes, 2);
  EXPECT_THAT(nvl_decision_log(d, nullptr),
              HasSubstr("internal error: node 1 lists 2 busy GPUs but no indexes"));
  nvl_decision_free(d);
}

// WILL_RUN reads every node's busy GPUs and end times through one buffer a thread keeps from
// call to call; on a thread's first call, and on a call with more busy GPUs than any before,
// it grows while the nodes are read. Each answer is the one the end times give. (A view left
// in the buffer's old room can read the right values here by luck; fuzz.facade, under ASan,
// fails on it: checked by hand on 2026-12-06.)
TEST_F(FacadeTest, WillRunReadsEveryNodesEndTimesAsTheBufferGrows) {
  const int64_t now = 1'000'000;
  // Every GPU busy. Node k's GPUs end at now + 1000 + 10 k, except node09's island {4-7},
  // which ends first (now + 500) when `early`.
  auto ask = [&](bool early) {
    std::vector<std::vector<int>> busy(16);
    std::vector<std::vector<int64_t>> until(16);
    std::vector<nvl_node_t> nodes;
    for (int k = 0; k < 16; ++k) {
      for (int g = 0; g < 8; ++g) {
        busy[k].push_back(g);
        until[k].push_back(early && k == 9 && g >= 4 ? now + 500 : now + 1000 + 10 * k);
      }
      nodes.push_back({names_[k].c_str(), 1, nullptr, 0, busy[k].data(), until[k].data(), 8});
    }
    Job job(4, {"NVLPLACE_TP=4"}, NVL_MODE_WILL_RUN);
    job.job.now = now;
    nvl_decision_t* d = nvl_decide(facade_, job.get(), nodes.data(), 16);
    std::pair<int64_t, std::vector<std::string>> got{nvl_decision_start_time(d), {}};
    if (const nvl_candidate_t* c = nvl_decision_candidate(d, 0)) got.second = Names(*c);
    nvl_decision_free(d);
    return got;
  };
  using Answer = std::pair<int64_t, std::vector<std::string>>;
  const Answer early{now + 500, {"node09"}}, late{now + 1000, {"node00"}};
  std::vector<Answer> in_thread;
  std::thread([&] {
    in_thread.push_back(ask(true));   // the thread's first call: the buffer grows
    in_thread.push_back(ask(false));  // its room kept
  }).join();
  EXPECT_THAT(in_thread, ElementsAre(early, late));
  EXPECT_EQ(ask(true), early);
}

TEST_F(FacadeTest, TheSubmitCheckReadsTheJobDescriptionsTres) {
  // job_submit/nvlplace hands over the description's tres_per_* strings, not counts.
  Job never(0, {"NVLPLACE_TP=8"}, NVL_MODE_TEST_ONLY);
  never.job.gpu_requests = 0;
  never.job.tres_per_job = "gres/gpu:8";
  nvl_decision_t* d = Decide(never);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);  // TP=8 never fits a 4-GPU island
  EXPECT_THAT(nvl_decision_reason(d), HasSubstr("never runnable on this cluster: 8 GPUs"));
  nvl_decision_free(d);
  // A count that is not a plain number: slurmctld's own checks decide.
  never.job.tres_per_job = "gres/gpu:h100:lots";
  d = Decide(never);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
  // A typed request names the model: lab-islands has none called A100.
  never.job.tres_per_job = "gres:gpu:a100:4";
  never.env = {"NVLPLACE_TP=4"};
  d = Decide(never);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  EXPECT_THAT(nvl_decision_reason(d), HasSubstr("GPU model 'a100' is not in cluster"));
  nvl_decision_free(d);
  // No GPU at all: nothing for nvlplace.
  never.job.tres_per_job = "cpu:4";
  d = Decide(never);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, CpuOnlyAndUnplacedNodesAreKnownButNeverOffered) {
  // lab-mixed: node[00-13] with GPUs, cpu[0-1] without; and here node[06-09] kept from
  // nvlplace (placed: false) in a copy of it.
  nvl_facade_t* mixed =
      Load("topology: " + std::filesystem::current_path().string() + "/configs/lab-mixed.yaml\n");
  ASSERT_NE(mixed, nullptr) << err_;
  EXPECT_EQ(nvl_facade_knows_node(mixed, "cpu0"), 1);  // not "not in its topology"
  EXPECT_EQ(nvl_facade_knows_node(mixed, "node13"), 1);
  EXPECT_EQ(nvl_facade_knows_node(mixed, "login1"), 0);
  nvl_facade_free(mixed);

  std::string path = (dir_ / "kept.yaml").string();
  std::ofstream(path) << R"(name: kept
tiers: [leaf]
gpu_models: [{name: A100}, {name: H100}]
nodes:
  - {names: "a[0-1]", gpus: 8, model: A100, placed: false}
  - {names: "cpu0", gpus: 0}
  - {names: "h0", gpus: 8, model: H100}
switches: [{name: leaf0, tier: leaf, nodes: "a[0-1],cpu0,h0"}]
)";
  nvl_facade_t* kept = Load("topology: " + path + "\n");
  ASSERT_NE(kept, nullptr) << err_;
  EXPECT_EQ(nvl_facade_knows_node(kept, "a0"), 1);
  EXPECT_EQ(nvl_facade_knows_node(kept, "cpu0"), 1);
  // Slurm lists every GPU free: only h0's are ever offered.
  std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  nvl_node_t nodes[4] = {{"a0", 1, all.data(), 8},
                         {"a1", 1, all.data(), 8},
                         {"cpu0", 1, nullptr, 0},
                         {"h0", 1, all.data(), 8}};
  Job job(8);
  nvl_decision_t* d = nvl_decide(kept, job.get(), nodes, 4);
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_TRY);
  const nvl_candidate_t* c;
  for (int i = 0; (c = nvl_decision_candidate(d, i)) != nullptr; ++i) {
    ASSERT_EQ(c->num_nodes, 1);
    EXPECT_EQ(c->nodes[0], 3);  // h0
    nvl_decision_refused(d, i);
  }
  nvl_decision_free(d);
  Job sixteen(16, {"NVLPLACE_TP=1"});  // a1 and a0 hold 16 free GPUs nvlplace must not count
  d = nvl_decide(kept, sixteen.get(), nodes, 4);
  EXPECT_NE(nvl_decision_action(d), NVL_ACT_TRY);
  nvl_decision_free(d);
  nvl_facade_free(kept);
}

TEST_F(FacadeTest, BadConfigurationGivesOneLine) {
  nvl_facade_t* f = Load("topology: lab.yaml\nlog_level: chatty\n");
  EXPECT_EQ(f, nullptr);
  EXPECT_THAT(err_, HasSubstr("nvlplace.yaml:2:12: #/log_level: log level 'chatty'"));
  EXPECT_EQ(std::string(err_).find('\n'), std::string::npos);
}

TEST_F(FacadeTest, WithoutAConfigurationJobsWithOptionsWaitAndSayWhy) {
  Job strict(8, {"NVLPLACE_TP=8", "NVLPLACE_NVL=strict"});
  nvl_decision_t* d = nvl_decide_unconfigured(strict.get(), "nvlplace.yaml:1:11: bad YAML");
  ASSERT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  EXPECT_EQ(nvl_decision_candidate(d, 0), nullptr);
  EXPECT_THAT(nvl_decision_reason(d), HasSubstr("event=waiting"));
  EXPECT_THAT(nvl_decision_reason(d), HasSubstr("nvlplace.yaml:1:11: bad YAML"));
  nvl_decision_free(d);
  // Any nvlplace option is a promise: even TP=1 waits rather than run without the plugin.
  Job tp1(1, {"NVLPLACE_TP=1"});
  d = nvl_decide_unconfigured(tp1.get(), "x");
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  nvl_decision_free(d);
  // Backfill neither plans it nor reserves for it.
  Job will_run(8, {"NVLPLACE_TP=8"}, NVL_MODE_WILL_RUN);
  d = nvl_decide_unconfigured(will_run.get(), "x");
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_REFUSE);
  nvl_decision_free(d);
  // A plain job is cons_tres's; so is "could it ever run" (the job is accepted, and waits).
  Job plain(8);
  d = nvl_decide_unconfigured(plain.get(), "x");
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
  Job test_only(8, {"NVLPLACE_TP=8"}, NVL_MODE_TEST_ONLY);
  d = nvl_decide_unconfigured(test_only.get(), "x");
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
  d = nvl_decide_unconfigured(nullptr, nullptr);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  nvl_decision_free(d);
}

TEST_F(FacadeTest, TheLastGoodCopyLoadsWhenItsSourceIsGone) {
  std::string snap = (dir_ / "state" / "nvlplace" / "last-good").string();
  char err[1024] = "";
  ASSERT_EQ(nvl_facade_save_snapshot(facade_, snap.c_str(), err, sizeof(err)), 0) << err;
  // The source file broken afterwards: the copy does not read it.
  std::ofstream(dir_ / "nvlplace.yaml") << "topology: [unclosed\n";
  char source[512] = "";
  nvl_facade_t* copy =
      nvl_facade_load_snapshot(snap.c_str(), source, sizeof(source), err, sizeof(err));
  ASSERT_NE(copy, nullptr) << err;
  EXPECT_EQ(std::string(source), (dir_ / "nvlplace.yaml").string());
  EXPECT_THAT(nvl_facade_describe(copy), HasSubstr("16 nodes, 128 GPUs"));
  // It decides as the original did.
  Job job(4, {"NVLPLACE_TP=4"});
  nvl_decision_t* a = Decide(job);
  std::swap(facade_, copy);
  nvl_decision_t* b = Decide(job);
  std::swap(facade_, copy);
  ASSERT_EQ(nvl_decision_action(a), NVL_ACT_TRY);
  ASSERT_EQ(nvl_decision_action(b), NVL_ACT_TRY);
  EXPECT_EQ(Names(*nvl_decision_candidate(a, 0)), Names(*nvl_decision_candidate(b, 0)));
  nvl_decision_free(a);
  nvl_decision_free(b);
  nvl_facade_free(copy);
  // A second save replaces the first; no directory: NULL and why.
  ASSERT_EQ(nvl_facade_save_snapshot(facade_, snap.c_str(), err, sizeof(err)), 0) << err;
  EXPECT_EQ(
      nvl_facade_load_snapshot((dir_ / "none").c_str(), source, sizeof(source), err, sizeof(err)),
      nullptr);
  EXPECT_THAT(err, HasSubstr("none/nvlplace.yaml"));
}

TEST_F(FacadeTest, AChangedHealthFileMakesTheConfigurationStale) {
  std::string health = (dir_ / "health.yaml").string();
  std::ofstream(health) << "down: [node03]\n";
  nvl_facade_t* f = Load("topology: " + std::filesystem::current_path().string() +
                         "/configs/lab-islands.yaml\nnvlink_health: " + health + "\n");
  ASSERT_NE(f, nullptr) << err_;
  EXPECT_THAT(nvl_facade_describe(f), HasSubstr("NVLink health from " + health));
  EXPECT_EQ(nvl_facade_stale(f, 1000.0), 0);
  EXPECT_EQ(nvl_facade_files_changed(f), 0);
  std::ofstream(health) << "down: [node03, node04]\n";
  EXPECT_EQ(nvl_facade_stale(f, 1000.5), 0);  // at most once a second
  EXPECT_EQ(nvl_facade_files_changed(f), 1);  // at once: the check of a thread whose turn came
  EXPECT_EQ(nvl_facade_stale(f, 1002.0), 1);
  EXPECT_EQ(nvl_facade_stale(f, 1002.5), 0);  // another thread in the same second: not again
  nvl_facade_accept_files(f);  // its reload failed: this one stays, the change counts as seen
  EXPECT_EQ(nvl_facade_files_changed(f), 0);  // a thread that waited for that load: no reload
  EXPECT_EQ(nvl_facade_stale(f, 1004.0), 0);
  // The configuration without a health file never is.
  EXPECT_EQ(nvl_facade_stale(facade_, 1004.0), 0);
  EXPECT_EQ(nvl_facade_files_changed(facade_), 0);
  EXPECT_EQ(nvl_facade_files_changed(nullptr), 0);
  nvl_facade_free(f);
}

TEST_F(FacadeTest, TheStatusFileSaysWhatIsInForce) {
  std::string path = (dir_ / "state" / "nvlplace" / "status.json").string();
  ASSERT_EQ(nvl_write_status(path.c_str(), facade_, "/etc/slurm/nvlplace.yaml", "snapshot", 1.7e9,
                             "nvlplace.yaml:3:1: bad", 1.7e9 + 5),
            0);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("\"schema\": \"nvlplace.status/1\""));
  EXPECT_THAT(text, HasSubstr("\"in_force\": \"snapshot\""));
  EXPECT_THAT(text, HasSubstr("\"last_error\": \"nvlplace.yaml:3:1: bad\""));
  EXPECT_THAT(text, HasSubstr("16 nodes, 128 GPUs"));
  EXPECT_EQ(nvl_write_status(nullptr, facade_, "", "", 0, "", 0), -1);
}

}  // namespace
