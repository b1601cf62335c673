// Tests for the slurmctld side's decisions (decision.h), without Slurm: which jobs go to
// cons_tres, which wait, which are held or refused at submit, what each logs and leaves in
// its SystemComment, and the check of what Slurm allocates against the decision.
#include "plugin/decision.h"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"

namespace nvlplace::plugin {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

// A node as the tests hold it, its GPU lists owned; Decide takes views of them (LiveNode), as
// of slurmctld's snapshot.
struct TestNode {
  absl::string_view name;
  bool usable = false;
  std::vector<int> free;
  std::vector<std::pair<int, int64_t>> busy_until;
};
std::vector<LiveNode> Views(const std::vector<TestNode>& nodes) {
  std::vector<LiveNode> views;
  for (const TestNode& n : nodes) views.push_back(LiveNode{n.name, n.usable, n.free, n.busy_until});
  return views;
}

// A decider loaded from an nvlplace.yaml that names one of configs/ (and any further
// lines), and the nodes slurmctld lists, each wholly free: what the fixtures below share.
class DeciderTest : public ::testing::Test {
 protected:
  // Nodes printf(name_format, i) for i in first..last, with `gpus` GPUs each.
  void Load(const std::string& config, const std::string& more_yaml, const char* name_format,
            int first, int last, int gpus) {
    nodes_.clear();
    dir_ = std::filesystem::temp_directory_path() /
           ("nvlplace-decision-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::string path = (dir_ / "nvlplace.yaml").string();
    std::ofstream(path) << "topology: " << std::filesystem::current_path().string() << "/configs/"
                        << config << "\n"
                        << more_yaml;
    auto loaded = LoadPluginConfig(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    decider_ = std::make_unique<Decider>(*std::move(loaded));
    std::vector<int> all(gpus);
    for (int g = 0; g < gpus; ++g) all[g] = g;
    for (int i = first; i <= last; ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), name_format, i);
      nodes_.push_back(TestNode{names_.emplace_back(name), true, all});
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<JobDecision> Decide(const SlurmJob& job) {
    return decider_->Decide(job, Views(nodes_));
  }

  // The Decider keeps one engine state between calls and brings it to each call's nodes by
  // difference (the capacity indexes kept with it catch up). Whatever the calls before left
  // in it, a decision is the one a Decider that never decided before makes: the same action,
  // node sets, start time, line and comment, over random snapshots (lists out of order, with
  // repeats, a node missing or unusable, exclusive jobs) in every mode. And a node Slurm does
  // not give is one with every GPU busy that it does not offer.
  void ExpectKeptStateDecidesAsAFreshOne(int gpus_per_node, int rounds) {
    std::mt19937 rng(11);
    auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    const std::string path = (dir_ / "nvlplace.yaml").string();
    auto fresh = [&path]() {
      auto config = LoadPluginConfig(path);
      EXPECT_TRUE(config.ok()) << config.status();
      return std::make_unique<Decider>(*std::move(config));
    };
    for (int round = 0; round < rounds; ++round) {
      SCOPED_TRACE(round);
      const std::vector<TestNode> before = nodes_;
      const int busy_in_4 = pick(4);  // of 4 GPUs, about this many busy
      for (TestNode& n : nodes_) {
        n.free.clear();
        n.busy_until.clear();
        for (int g = 0; g < gpus_per_node; ++g) {
          if (pick(4) >= busy_in_4) {
            n.free.push_back(g);
          } else {
            n.busy_until.push_back({g, 1000 + 50 * pick(20)});
          }
        }
        if (pick(20) == 0 && !n.free.empty()) n.free.push_back(n.free.front());  // a repeat
        if (pick(20) == 0) std::reverse(n.free.begin(), n.free.end());
        n.usable = pick(10) > 0;
      }
      if (pick(3) == 0) {
        for (TestNode& n : nodes_) n.usable = true;  // every node offered: the kept index
      }
      if (pick(5) == 0) nodes_.pop_back();  // a node Slurm does not give
      const int gpus = 1 << pick(7);
      SlurmJob job;
      job.id = static_cast<uint32_t>(1000 + round);
      const Mode modes[] = {Mode::kRunNow, Mode::kRunNow, Mode::kWillRun, Mode::kTestOnly};
      job.mode = modes[pick(4)];
      job.gpus_per_job = static_cast<uint64_t>(gpus);
      job.gpu_requests = 1;
      job.min_nodes = 1;
      job.max_nodes = 64;
      if (int tp = 1 << pick(5); tp > 1 && tp <= gpus) {
        job.env.push_back("NVLPLACE_TP=" + std::to_string(tp));
      }
      if (pick(3) == 0) job.env.push_back("NVLPLACE_NVL=prefer");
      job.now = 1000;
      job.whole_node = pick(10) == 0;
      std::unique_ptr<Decider> new_one = fresh();
      auto kept = decider_->Decide(job, Views(nodes_));
      auto want = new_one->Decide(job, Views(nodes_));
      ASSERT_EQ(kept->action(), want->action()) << want->log().text;
      EXPECT_EQ(kept->log().text, want->log().text);
      EXPECT_EQ(kept->comment(), want->comment());
      EXPECT_EQ(kept->start_time(), want->start_time());
      if (nodes_.size() < before.size()) {
        std::vector<TestNode> full = nodes_;
        full.push_back(TestNode{before.back().name, false, {}});
        std::unique_ptr<Decider> other = fresh();
        auto same = other->Decide(job, Views(full));
        ASSERT_EQ(same->action(), want->action()) << same->log().text;
        EXPECT_EQ(same->log().text, want->log().text);
        nodes_ = before;  // the node comes back next round
      }
      for (int i = 0; i < 4; ++i) {
        const Candidate* k = kept->CandidateAt(i);
        const Candidate* w = want->CandidateAt(i);
        ASSERT_EQ(k == nullptr, w == nullptr) << i;
        if (w == nullptr) break;
        EXPECT_EQ(k->layout, w->layout) << i;
        EXPECT_EQ(k->Describe(), w->Describe()) << i;
        kept->Refused(i);
        want->Refused(i);
      }
    }
  }

  std::filesystem::path dir_;
  std::unique_ptr<Decider> decider_;
  std::deque<std::string> names_;  // the nodes' names (a TestNode holds a view, as of Slurm's)
  std::vector<TestNode> nodes_;
};

// lab-islands: node[00-15], 8 GPUs each in two NVLink islands {0-3} and {4-7}; four leaves
// of four nodes under one spine.
class DecisionTest : public DeciderTest {
 protected:
  void SetUp() override {
    Load("lab-islands.yaml", "candidates: 3\nlog_level: debug\n", "node%02d", 0, 15, 8);
  }

  static SlurmJob Job(uint32_t id, uint64_t gpus, std::vector<std::string> env = {},
                      Mode mode = Mode::kRunNow) {
    SlurmJob j;
    j.id = id;
    j.mode = mode;
    j.gpus_per_job = gpus;
    j.gpu_requests = gpus ? 1 : 0;
    j.min_nodes = 1;
    j.env = std::move(env);
    return j;
  }
  // Only these GPUs free on these nodes; every other node full.
  void OnlyFree(std::vector<std::pair<int, std::vector<int>>> free) {
    for (TestNode& n : nodes_) n.free.clear();
    for (auto& [node, gpus] : free) nodes_[node].free = gpus;
  }
};

TEST_F(DecisionTest, JobsWithoutGpusGoToConsTresSilently) {
  auto d = Decide(Job(1, 0));
  EXPECT_EQ(d->action(), Action::kConsTres);
  EXPECT_THAT(d->log().text, IsEmpty());
  EXPECT_FALSE(d->comment());
  EXPECT_TRUE(d->Took(-1, Layout{{3}, {{}}}));
  EXPECT_FALSE(d->comment());  // no comment of ours to remove, none to add
  EXPECT_EQ(decider_->counters().cons_tres, 0u);
}

TEST_F(DecisionTest, StrictTpGroupIsTriedOnAFreeIslandAndCheckedAgainstSlurm) {
  // node00 has 4 free GPUs split 2 + 2; node01 has island {4-7} free (issue 15's case).
  OnlyFree({{0, {2, 3, 6, 7}}, {1, {4, 5, 6, 7}}});
  auto d = Decide(Job(2, 4, {"NVLPLACE_TP=4"}));
  ASSERT_EQ(d->action(), Action::kTry) << d->log().text;
  EXPECT_TRUE(d->hard());
  EXPECT_TRUE(d->mask_gpus());
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->layout, (Layout{{1}, {{4, 5, 6, 7}}}));
  // Slurm allocates exactly the decision: accepted, logged, and the comment says where.
  EXPECT_TRUE(d->Took(0, c->layout));
  EXPECT_EQ(d->log().text,
            "v=1 event=placed asked_gpus=4 asked_nodes=any tp=4 pp=1 dp=1 nvl=strict "
            "max_tier=none model=any exclusive=no " +
                c->Describe() + " slurm_gpus=node01:4-7 candidate=1 candidates=1 relaxations=none");
  EXPECT_THAT(c->Describe(), StartsWith("gpus=node01:4-7 domains=node01:nvl1 span_domains=1 "
                                        "span_nodes=1 span_tier=node score="));
  ASSERT_TRUE(d->comment());
  EXPECT_EQ(*d->comment(), "nvlplace: " + d->log().text);  // the same line
  // Counted once slurmctld starts it (select_nodes may still keep it pending).
  EXPECT_TRUE(d->starting());
  EXPECT_EQ(decider_->counters().as_decided, 0u);
  d->Started();
  EXPECT_FALSE(d->starting());
  EXPECT_EQ(decider_->counters().as_decided, 1u);
  EXPECT_EQ(decider_->counters().placed, 1u);
}

TEST_F(DecisionTest, AStartSlurmKeepsPendingIsAWaitNotAPlacement) {
  // job_test accepted the node set, then select_nodes kept the job pending (no IMEX channel
  // left): no placement is counted, and the line and comment say the job waits and why.
  OnlyFree({{1, {4, 5, 6, 7}}});
  for (int round = 0; round < 2; ++round) {
    auto d = Decide(Job(6, 4, {"NVLPLACE_TP=4"}));
    ASSERT_EQ(d->action(), Action::kTry) << d->log().text;
    const Candidate* c = d->CandidateAt(0);
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(d->Took(0, c->layout));
    ASSERT_TRUE(d->starting());
    EXPECT_FALSE(d->rank_map().empty());
    d->Dropped("NvidiaImexChannels");
    EXPECT_FALSE(d->starting());
    EXPECT_TRUE(d->rank_map().empty());
    ASSERT_TRUE(d->comment());
    EXPECT_EQ(*d->comment(),
              "nvlplace: v=1 event=waiting asked_gpus=4 asked_nodes=any tp=4 pp=1 dp=1 "
              "nvl=strict max_tier=none model=any exclusive=no why=\"Slurm kept the job "
              "pending after accepting this placement (Reason=NvidiaImexChannels); it is "
              "placed again when Slurm next tries to start it\" " +
                  c->Describe() + " candidate=1 candidates=1");
    if (round == 0) {
      EXPECT_EQ("nvlplace: " + d->log().text, *d->comment());
    } else {
      EXPECT_THAT(d->log().text, IsEmpty());  // the same wait is logged once
    }
    d->Started();  // too late: nothing to count
  }
  Counters n = decider_->counters();
  EXPECT_EQ(n.placed, 0u);
  EXPECT_EQ(n.as_decided, 0u);
  EXPECT_EQ(n.not_started, 1u);
  // The next start that slurmctld makes is placed and counted once.
  auto d = Decide(Job(6, 4, {"NVLPLACE_TP=4"}));
  ASSERT_TRUE(d->Took(0, d->CandidateAt(0)->layout));
  d->Started();
  d->Dropped("Resources");  // not after a start
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=placed "));
  EXPECT_EQ(decider_->counters().placed, 1u);
  EXPECT_THAT(decider_->CountersLine(), HasSubstr("; 1 placements Slurm kept pending"));
  // A job left to cons_tres made no promise: its dropped start says nothing.
  SlurmJob other_model = Job(7, 8);
  other_model.gpu_type = "a100";
  auto left = Decide(other_model);
  ASSERT_EQ(left->action(), Action::kConsTres);
  ASSERT_TRUE(left->Took(-1, Layout{{0}, {{0, 1, 2, 3, 4, 5, 6, 7}}}));
  left->Dropped("AssocGrpGRES");
  EXPECT_FALSE(left->comment());
  EXPECT_THAT(left->log().text, IsEmpty());
  EXPECT_EQ(decider_->counters().not_started, 1u);
  EXPECT_EQ(decider_->counters().cons_tres, 0u);
}

TEST_F(DecisionTest, ThePlacementLineNamesCons_tresAloneWhenAsked) {
  // compare_cons_tres: the same state offered to cons_tres alone took node00's 2 + 2.
  OnlyFree({{0, {2, 3, 6, 7}}, {1, {4, 5, 6, 7}}});
  auto d = Decide(Job(2, 4, {"NVLPLACE_TP=4"}));
  ASSERT_EQ(d->action(), Action::kTry);
  d->ConsTresAlone(Layout{{0}, {{2, 3, 6, 7}}});
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(d->Took(0, c->layout));
  EXPECT_THAT(d->log().text,
              ::testing::EndsWith(" relaxations=none cons_tres_alone=node00:2-3,6-7"));
  // The comment is the same line without it: the admin's measurement, not the job's.
  EXPECT_EQ("nvlplace: " + d->log().text, *d->comment() + " cons_tres_alone=node00:2-3,6-7");
  auto none = Decide(Job(3, 4, {"NVLPLACE_TP=4"}));
  none->ConsTresAlone(Layout{});  // cons_tres would not start it now
  ASSERT_NE(none->CandidateAt(0), nullptr);
  EXPECT_TRUE(none->Took(0, none->CandidateAt(0)->layout));
  EXPECT_THAT(none->log().text, ::testing::EndsWith(" cons_tres_alone=none"));
}

TEST_F(DecisionTest, AStrictJobNeverRunsOtherwiseThanDecided) {
  // Issue 15: --gpus=8 --nvl-tp=4, node00 with 7 free and node01 with 4-7 free; cons_tres
  // packs the first node (7 + 1). The check rejects that node set.
  OnlyFree({{0, {1, 2, 3, 4, 5, 6, 7}}, {1, {4, 5, 6, 7}}});
  auto d = Decide(Job(3, 8, {"NVLPLACE_TP=4"}));
  ASSERT_EQ(d->action(), Action::kTry);
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->layout, (Layout{{0, 1}, {{4, 5, 6, 7}, {4, 5, 6, 7}}}));
  Layout packed{{0, 1}, {{1, 2, 3, 4, 5, 6, 7}, {4}}};
  EXPECT_FALSE(d->Took(0, packed));
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=rejected "));
  EXPECT_THAT(d->log().text, HasSubstr(" gpus=\"node00:4-7 node01:4-7\" "));
  EXPECT_THAT(d->log().text, HasSubstr(" slurm_gpus=\"node00:1-7 node01:4\" candidate=1 "));
  EXPECT_FALSE(d->comment());
  EXPECT_EQ(decider_->counters().strict_rejected, 1u);
  EXPECT_EQ(decider_->counters().placed, 0u);
}

TEST_F(DecisionTest, ASoftJobPlacedOtherwiseSaysSoEverywhere) {
  OnlyFree({{0, {1, 2, 3, 4, 5, 6, 7}}, {1, {4, 5, 6, 7}}});
  auto d = Decide(Job(4, 8));  // no options: TP=1, nothing hard
  ASSERT_EQ(d->action(), Action::kTry);
  EXPECT_FALSE(d->hard());
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  Layout other{{0}, {{0, 1, 2, 3, 4, 5, 6, 7}}};
  EXPECT_TRUE(d->Took(0, other));
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=differs "));
  EXPECT_THAT(d->log().text, HasSubstr(" slurm_gpus=node00:0-7 "));
  ASSERT_TRUE(d->comment());
  EXPECT_THAT(*d->comment(),
              HasSubstr(" relaxations=\"cons_tres allocated node00:0-7 instead of "));
  d->Started();
  Counters n = decider_->counters();
  EXPECT_EQ(n.differed, 1u);
  EXPECT_EQ(n.as_decided, 0u);
}

TEST_F(DecisionTest, StrictWaitsWithOneLinePerReasonAndAComment) {
  OnlyFree({{0, {2, 3, 6, 7}}});  // no free island of 4
  for (int round = 0; round < 2; ++round) {
    auto d = Decide(Job(5, 4, {"NVLPLACE_TP=4"}));
    EXPECT_EQ(d->action(), Action::kRefuse);
    EXPECT_FALSE(d->hold());
    ASSERT_TRUE(d->comment());
    EXPECT_THAT(*d->comment(),
                StartsWith("nvlplace: v=1 event=waiting asked_gpus=4 asked_nodes=any tp=4 pp=1 "
                           "dp=1 nvl=strict max_tier=none model=any exclusive=no why=\"needs 1 TP "
                           "group of 4 GPUs inside one NVLink domain"));
    if (round == 0) {
      EXPECT_EQ("nvlplace: " + d->log().text, *d->comment());
    } else {
      EXPECT_THAT(d->log().text, IsEmpty());  // the same reason is not logged every cycle
    }
  }
  EXPECT_EQ(decider_->counters().waiting, 1u);
  // Backfill's will_run gets no start time, and the same comment (a job that only backfill
  // tries, behind a higher-priority one, is told why it waits), logged at debug only.
  auto w = Decide(Job(5, 4, {"NVLPLACE_TP=4"}, Mode::kWillRun));
  EXPECT_EQ(w->action(), Action::kRefuse);
  ASSERT_TRUE(w->comment());
  EXPECT_THAT(*w->comment(), StartsWith("nvlplace: v=1 event=waiting "));
  EXPECT_EQ(decider_->counters().waiting, 1u);
}

// A strict job that waits on free GPUs, looked at again where the GPUs of the running jobs it
// may preempt count as free (slurmctld's preemptee candidates): that second look says only
// what Slurm will do, preempt on the node set's nodes, and never disturbs the first look's
// wait line (logged once, counted once).
TEST_F(DecisionTest, ASecondLookWithPreemptionSaysOnlyWhatSlurmPreempts) {
  OnlyFree({{0, {2, 3, 6, 7}}});  // no free island of 4
  auto first = Decide(Job(5, 4, {"NVLPLACE_TP=4"}));
  ASSERT_TRUE(first->waits());
  ASSERT_TRUE(first->comment());
  const std::string wait_line = first->log().text;
  EXPECT_THAT(wait_line, StartsWith("v=1 event=waiting "));

  // Nothing to preempt that would make room: quiet, no comment, nothing counted.
  SlurmJob again = Job(5, 4, {"NVLPLACE_TP=4"});
  again.preempting = true;
  auto none = Decide(again);
  EXPECT_TRUE(none->waits());
  EXPECT_THAT(none->log().text, IsEmpty());
  EXPECT_FALSE(none->comment());
  // ... and the first look's line is still the job's last one: not logged again.
  EXPECT_THAT(Decide(Job(5, 4, {"NVLPLACE_TP=4"}))->log().text, IsEmpty());
  EXPECT_EQ(decider_->counters().waiting, 1u);

  // node01's island 4-7 is held by preemptable jobs: the second look finds it.
  OnlyFree({{0, {2, 3, 6, 7}}, {1, {4, 5, 6, 7}}});
  auto d = Decide(again);
  ASSERT_EQ(d->action(), Action::kTry);
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->layout.nodes, std::vector<int>{1});
  // cons_tres would preempt elsewhere: a hard job's node set is rejected.
  EXPECT_FALSE(d->Preempts(0, {2}, 1));
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=rejected "));
  EXPECT_THAT(d->log().text, HasSubstr("why=\"cons_tres would preempt on node02, not the node "
                                       "set's nodes\""));
  EXPECT_FALSE(d->comment());
  EXPECT_EQ(decider_->counters().strict_rejected, 1u);
  // cons_tres preempts 2 jobs on node01: the job waits for them, and says so.
  EXPECT_TRUE(d->Preempts(0, {1}, 2));
  EXPECT_THAT(d->log().text,
              HasSubstr(" why=\"Slurm preempts 2 running jobs on node01 first; the job starts "
                        "once their GPUs are free\" gpus=node01:4-7 "));
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=waiting "));
  ASSERT_TRUE(d->comment());
  EXPECT_EQ(*d->comment(), "nvlplace: " + d->log().text);
  EXPECT_TRUE(d->rank_map().empty());  // nothing runs yet
  Counters n = decider_->counters();
  EXPECT_EQ(n.preempting, 1u);
  EXPECT_EQ(n.waiting, 1u);
  EXPECT_EQ(n.placed, 0u);
  // The next scheduling cycles, preemption under way (the preempted jobs' GPUs held until they
  // end): the first look's wait line and the second look's line, neither logged nor counted
  // again.
  for (int cycle = 0; cycle < 2; ++cycle) {
    OnlyFree({{0, {2, 3, 6, 7}}});
    EXPECT_THAT(Decide(Job(5, 4, {"NVLPLACE_TP=4"}))->log().text, IsEmpty()) << cycle;
    OnlyFree({{0, {2, 3, 6, 7}}, {1, {4, 5, 6, 7}}});
    auto next = Decide(again);
    ASSERT_NE(next->CandidateAt(0), nullptr);
    EXPECT_TRUE(next->Preempts(0, {1}, 2));
    EXPECT_THAT(next->log().text, IsEmpty()) << cycle;
  }
  EXPECT_EQ(decider_->counters().preempting, 1u);
  EXPECT_EQ(decider_->counters().waiting, 1u);
}

// A job without a hard constraint that cons_tres starts only by preempting: no GPUs are chosen
// yet, so none are named; any nodes will do.
TEST_F(DecisionTest, ASoftJobThatPreemptsWaitsWithoutAPlacement) {
  OnlyFree({{0, {0, 1, 2, 3}}});
  auto d = Decide(Job(6, 4));
  ASSERT_EQ(d->action(), Action::kTry);
  EXPECT_TRUE(d->Preempts(0, {3, 4}, 1));
  EXPECT_THAT(d->log().text,
              HasSubstr(" why=\"Slurm preempts 1 running job on node03,node04 first;"));
  EXPECT_THAT(d->log().text, HasSubstr(" gpus=node00:0-3 "));  // the node set it was offered
  EXPECT_TRUE(d->Preempts(-1, {5}, 1));
  EXPECT_THAT(d->log().text, Not(HasSubstr(" gpus=")));
  EXPECT_THAT(d->log().text, HasSubstr("on node05 first"));
}

// A job asking for more GPUs than are free, when slurmctld can add none (free_is_all), is
// refused at once: cons_tres would search every node to say the same. It waits with Slurm's
// own reason (no comment, no hold, no line); a hard job still says why it waits.
TEST_F(DecisionTest, MoreGpusThanAreFreeWaitWithoutConsTresSearch) {
  OnlyFree({{0, {2, 3, 6, 7}}, {1, {0, 1}}});  // 6 free
  auto all_free = [](SlurmJob j) {
    j.free_is_all = true;
    return j;
  };
  for (const SlurmJob& job :
       {all_free(Job(60, 8)), all_free(Job(61, 8, {"NVLPLACE_TP=4", "NVLPLACE_NVL=prefer"}))}) {
    auto d = Decide(job);
    EXPECT_EQ(d->action(), Action::kRefuse) << job.id;
    EXPECT_FALSE(d->hold());
    EXPECT_FALSE(d->comment());
    EXPECT_THAT(d->log().text, IsEmpty());
    EXPECT_EQ(d->CandidateAt(0), nullptr);
  }
  // Without the caller's word that nothing more can be freed: cons_tres's, as before.
  EXPECT_EQ(Decide(Job(62, 8))->action(), Action::kConsTres);
  // As many as are free: no shortcut (cons_tres may take them spread).
  EXPECT_NE(Decide(all_free(Job(63, 6)))->action(), Action::kRefuse);
  // Per node: 2 nodes x 4 > 6 waits; 2 x 2 does not.
  SlurmJob per_node = all_free(Job(64, 0));
  per_node.gpus_per_node = 4;
  per_node.gpu_requests = 1;
  per_node.min_nodes = per_node.max_nodes = 2;
  EXPECT_EQ(Decide(per_node)->action(), Action::kRefuse);
  per_node.gpus_per_node = 2;
  EXPECT_NE(Decide(per_node)->action(), Action::kRefuse);
  // Free GPUs of nodes the job may not use do not count.
  nodes_[0].usable = false;
  EXPECT_EQ(Decide(all_free(Job(65, 4)))->action(), Action::kRefuse);
  nodes_[0].usable = true;
  // A hard job names its own reason.
  auto strict = Decide(all_free(Job(66, 8, {"NVLPLACE_TP=4"})));
  EXPECT_EQ(strict->action(), Action::kRefuse);
  ASSERT_TRUE(strict->comment());
  EXPECT_THAT(*strict->comment(), StartsWith("nvlplace: v=1 event=waiting "));
  // Only RUN_NOW: test_only asks as if every GPU were free, will_run asks when.
  EXPECT_EQ(Decide(all_free(Job(67, 8, {}, Mode::kTestOnly)))->action(), Action::kConsTres);
  EXPECT_EQ(Decide(all_free(Job(68, 8, {}, Mode::kWillRun)))->action(), Action::kConsTres);
}

TEST_F(DecisionTest, ANodeListedTwiceCountsOnceWithItsFirstFreeList) {
  // slurmctld never lists a node twice; if a snapshot did, its first entry is the node's
  // state: a second entry must neither add free GPUs nor move the node's index.
  OnlyFree({{0, {2, 3, 6, 7}}});  // node01 is full
  nodes_.push_back(TestNode{"node01", true, {0, 1, 2, 3}});
  auto d = Decide(Job(41, 4, {"NVLPLACE_TP=4"}));
  EXPECT_EQ(d->action(), Action::kRefuse) << d->log().text;
  EXPECT_EQ(d->CandidateAt(0), nullptr);
  // Its first entry free and the second full: it is placed, by its first index.
  OnlyFree({{1, {0, 1, 2, 3}}});
  nodes_.back().free.clear();
  auto e = Decide(Job(42, 4, {"NVLPLACE_TP=4"}));
  ASSERT_EQ(e->action(), Action::kTry) << e->log().text;
  ASSERT_NE(e->CandidateAt(0), nullptr);
  EXPECT_EQ(e->CandidateAt(0)->layout, (Layout{{1}, {{0, 1, 2, 3}}}));
}

TEST_F(DecisionTest, AStateKeptBetweenCallsDecidesAsAFreshOne) {
  ExpectKeptStateDecidesAsAFreshOne(8, 300);
}

// Backfill's will_run for a strict job that cannot fit now: the earliest end time of the
// running jobs after which its TP group has a whole island, on the nodes that give it.
TEST_F(DecisionTest, WillRunGivesAStrictJobTheEarliestTimeItsIslandIsFree) {
  OnlyFree({{0, {2, 3, 6, 7}}});  // node00: 2 + 2 free over its islands; the rest full
  // node00: GPUs 4,5 free at 1100, 0,1 at 1300; node01: 0,1 free at 1050 but 2,3 only at
  // 5000; every other node busy for ever (no end time known).
  nodes_[0].busy_until = {{0, 1300}, {1, 1300}, {4, 1100}, {5, 1100}};
  nodes_[1].busy_until = {{0, 1050}, {1, 1050}, {2, 5000}, {3, 5000},
                          {4, 5000}, {5, 5000}, {6, 5000}, {7, 5000}};
  SlurmJob job = Job(40, 4, {"NVLPLACE_TP=4"}, Mode::kWillRun);
  job.now = 1000;
  auto d = Decide(job);
  ASSERT_EQ(d->action(), Action::kTry);
  EXPECT_EQ(d->start_time(), 1100);  // not 1050: node01's island is still half busy then
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->layout, (Layout{{0}, {{4, 5, 6, 7}}}));
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=will-run mode=will_run "));
  EXPECT_THAT(d->log().text, HasSubstr(" start_in=100 gpus=node00:4-7 "));
  EXPECT_FALSE(d->mask_gpus());
  EXPECT_FALSE(d->comment());
  EXPECT_TRUE(d->Took(0, Layout{}));

  // The window backfill asks about (24.11+): nothing before its end -> no start time; from
  // its start on, GPUs freed by then count and the time is not before it.
  SlurmJob ending = job;
  ending.will_run_end = 1080;
  EXPECT_EQ(Decide(ending)->action(), Action::kRefuse);
  SlurmJob later = job;
  later.will_run_start = 1200;
  auto l = Decide(later);
  ASSERT_EQ(l->action(), Action::kTry);
  EXPECT_EQ(l->start_time(), 1200);
  // Jobs past their end time (still ending): free from now, as far as nvlplace knows.
  SlurmJob overdue = job;
  overdue.now = 1150;
  auto o = Decide(overdue);
  ASSERT_EQ(o->action(), Action::kTry);
  EXPECT_EQ(o->start_time(), 1150);

  // Asked about now only, or in the main scheduler: the job waits, as before.
  SlurmJob now_only = job;
  now_only.now_only = true;
  EXPECT_EQ(Decide(now_only)->action(), Action::kRefuse);
  SlurmJob run_now = job;
  run_now.mode = Mode::kRunNow;
  auto r = Decide(run_now);
  EXPECT_EQ(r->action(), Action::kRefuse);
  EXPECT_EQ(r->start_time(), 0);
  // A job that fits now starts now: no later time.
  OnlyFree({{2, {0, 1, 2, 3}}});
  auto fits = Decide(job);
  ASSERT_EQ(fits->action(), Action::kTry);
  EXPECT_EQ(fits->start_time(), 0);
}

TEST_F(DecisionTest, WillRunFindsNoTimeWhenNoEndFreesEnough) {
  OnlyFree({{0, {2, 3, 6, 7}}});
  nodes_[0].busy_until = {{0, 1300}, {4, 1100}};  // 1 and 5 busy for ever
  SlurmJob job = Job(41, 4, {"NVLPLACE_TP=4"}, Mode::kWillRun);
  job.now = 1000;
  EXPECT_EQ(Decide(job)->action(), Action::kRefuse);
  // Busy GPUs on a node the job may not use do not count.
  nodes_[0].busy_until = {{0, 1300}, {1, 1300}, {4, 1100}, {5, 1100}};
  nodes_[0].usable = false;
  EXPECT_EQ(Decide(job)->action(), Action::kRefuse);
  // A job without a hard constraint is cons_tres's to time, as before.
  nodes_[0].usable = true;
  auto prefer = Decide(Job(42, 4, {"NVLPLACE_TP=4", "NVLPLACE_NVL=prefer"}, Mode::kWillRun));
  EXPECT_EQ(prefer->start_time(), 0);
}

TEST_F(DecisionTest, SubmitTimeRefusesOnlyWhatCanNeverRun) {
  OnlyFree({});  // the cluster is full now; test_only asks "could it ever run"
  auto busy = Decide(Job(6, 4, {"NVLPLACE_TP=4"}, Mode::kTestOnly));
  EXPECT_EQ(busy->action(), Action::kConsTres);
  auto never = Decide(Job(7, 8, {"NVLPLACE_TP=8"}, Mode::kTestOnly));  // islands hold 4
  EXPECT_EQ(never->action(), Action::kRefuse);
  EXPECT_THAT(never->log().text, StartsWith("v=1 event=refused mode=test_only asked_gpus=8 "
                                            "asked_nodes=any tp=8 "));
  EXPECT_THAT(never->log().text, HasSubstr(" why=\"never runnable on this cluster: needs 1 TP "
                                           "group of 8 GPUs"));
  EXPECT_THAT(never->reason(), StartsWith("never runnable on this cluster: 8 GPUs (TP=8"));
  auto plain = Decide(Job(8, 8, {}, Mode::kTestOnly));
  EXPECT_EQ(plain->action(), Action::kConsTres);
}

TEST_F(DecisionTest, OptionsThatCannotBeUsedAreRefusedOrHeldNeverDropped) {
  struct Case {
    SlurmJob job;
    std::string why;
  };
  SlurmJob per_socket = Job(11, 0, {"NVLPLACE_TP=4"});
  per_socket.gpus_per_socket = 4;
  per_socket.gpu_requests = 1;
  SlurmJob two_kinds = Job(12, 8, {"NVLPLACE_TP=4"});
  two_kinds.gpu_requests = 2;
  SlurmJob named = Job(13, 8, {"NVLPLACE_TP=4"});
  named.required_nodes = 1;  // -w node08 -N2: node08 and one more
  named.min_nodes = named.max_nodes = 2;
  SlurmJob range = Job(14, 8, {"NVLPLACE_TP=4"});
  range.min_nodes = 2;
  range.max_nodes = 4;
  SlurmJob uneven = Job(16, 8, {"NVLPLACE_TP=4"});
  uneven.min_nodes = uneven.max_nodes = 3;
  SlurmJob other_model = Job(17, 8, {"NVLPLACE_TP=4"});
  other_model.gpu_type = "a100";  // --gpus=a100:8: a type this topology does not have
  std::vector<Case> cases = {
      {Job(9, 1, {"NVLPLACE_TP=8"}), "TP x PP = 8 x 1 = 8 does not divide 1 GPUs"},
      {Job(10, 8, {"NVLPLACE_TP=65536", "NVLPLACE_PP=65536"}), "TP x PP"},
      {Job(15, 8, {"NVLPLACE_TP=four"}), "--nvl-tp=four: must be a whole number"},
      {per_socket, "--gpus-per-socket"},
      {two_kinds, "2 kinds of GPU"},
      {named, "-w names 1 node(s) for a job of 2 node(s)"},
      {uneven, "8 GPUs do not split evenly over 3 nodes"},
      {range, "8 GPUs on 2 to 4 nodes: nvlplace needs an exact node count (-N2"},
      {other_model, "GPU model 'a100' is not in cluster lab-islands; its models are H100-PCIe"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    SlurmJob submit = c.job;
    submit.mode = Mode::kTestOnly;
    auto at_submit = Decide(submit);
    EXPECT_EQ(at_submit->action(), Action::kRefuse);
    EXPECT_THAT(at_submit->log().text, StartsWith("v=1 event=refused mode=test_only "));
    EXPECT_THAT(at_submit->log().text, HasSubstr(c.why));
    auto queued = Decide(c.job);
    EXPECT_EQ(queued->action(), Action::kRefuse);
    EXPECT_TRUE(queued->hold());
    ASSERT_TRUE(queued->comment());
    EXPECT_THAT(*queued->comment(), StartsWith("nvlplace: v=1 event=held "));
    EXPECT_THAT(*queued->comment(), HasSubstr(c.why));
    EXPECT_THAT(*queued->comment(), HasSubstr("; resubmit with other --nvl-* options or GPUs\""));
  }
}

TEST_F(DecisionTest, ATypedJobIsPlacedOnItsModelNamedInAnyCase) {
  SlurmJob typed = Job(18, 4, {"NVLPLACE_TP=4"});
  typed.gpu_type = "h100-pcie";  // --gpus=h100-pcie:4; the topology says H100-PCIe
  auto d = Decide(typed);
  ASSERT_EQ(d->action(), Action::kTry) << d->log().text;
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(d->Took(0, c->layout));
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=placed asked_gpus=4 asked_nodes=any tp=4 "
                                        "pp=1 dp=1 nvl=strict max_tier=none model=H100-PCIe "));
}

TEST_F(DecisionTest, ATypedJobIsOfferedOnlyNodesOfItsModel) {
  // lab-mixed: H100 node[00-05], A100 node[06-09], H100-PCIe node[10-13], cpu[0-1]. An A100
  // job is offered only A100 nodes however many node sets are asked for, although the H100
  // nodes (faster NVLink) would score higher; and an H100 job is not offered node06, whose
  // 4 free GPUs are the best fit of a 4-GPU group.
  std::string path = (dir_ / "mixed.yaml").string();
  std::ofstream(path) << "topology: " << std::filesystem::current_path().string()
                      << "/configs/lab-mixed.yaml\ncandidates: 16\n";
  auto loaded = LoadPluginConfig(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Decider mixed(*std::move(loaded));
  std::vector<TestNode> live;
  std::deque<std::string> names;
  for (int i = 0; i < 14; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "node%02d", i);
    live.push_back(TestNode{names.emplace_back(name), true, {0, 1, 2, 3, 4, 5, 6, 7}});
  }
  live[6].free = {4, 5, 6, 7};
  live.push_back(TestNode{"cpu0", true, {}});
  for (auto [type, first, last] : {std::tuple{"A100", 6, 9}, std::tuple{"H100", 0, 5}}) {
    SCOPED_TRACE(type);
    SlurmJob typed = Job(19, 4, {"NVLPLACE_TP=4"});
    typed.gpu_type = type;
    auto d = mixed.Decide(typed, Views(live));
    ASSERT_EQ(d->action(), Action::kTry) << d->log().text;
    int offered = 0;
    for (int i = 0; const Candidate* c = d->CandidateAt(i); ++i, ++offered) {
      for (int node : c->layout.nodes) {
        EXPECT_GE(node, first) << c->Describe();
        EXPECT_LE(node, last) << c->Describe();
      }
      d->Refused(i);
    }
    EXPECT_EQ(offered, last - first + 1);  // one node set per node of the model
  }
}

TEST_F(DecisionTest, TheSameShapesWithoutOptionsAreLeftToConsTres) {
  SlurmJob two_kinds = Job(20, 8);
  two_kinds.gpu_requests = 2;
  SlurmJob named = Job(21, 8);
  named.required_nodes = 1;
  named.min_nodes = named.max_nodes = 2;
  SlurmJob other_model = Job(22, 8);
  other_model.gpu_type = "a100";
  for (const SlurmJob& job : {two_kinds, named, other_model}) {
    auto d = Decide(job);
    EXPECT_EQ(d->action(), Action::kConsTres);
    EXPECT_THAT(d->log().text, StartsWith("v=1 event=cons_tres why="));
    EXPECT_TRUE(d->Took(-1, Layout{{0, 1}, {{0, 1, 2, 3}, {0, 1, 2, 3}}}));
    ASSERT_TRUE(d->comment());
    EXPECT_EQ(*d->comment(), "");  // removes a stale comment of ours, if any
    d->Started();
  }
  EXPECT_EQ(decider_->counters().cons_tres, 3u);
}

TEST_F(DecisionTest, NodesNamedWithDashWAreAllTheJobsNodes) {
  // -w node[08-09] --gpus=8 --nvl-tp=4: min_nodes 2 (Slurm counts the named nodes), any max.
  for (TestNode& n : nodes_) n.usable = n.name == "node08" || n.name == "node09";
  SlurmJob job = Job(22, 8, {"NVLPLACE_TP=4"});
  job.required_nodes = 2;
  job.min_nodes = 2;
  job.max_nodes = 500;
  auto d = Decide(job);
  ASSERT_EQ(d->action(), Action::kTry) << d->log().text;
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->layout.nodes, (std::vector<int>{8, 9}));
  EXPECT_EQ(d->request(), "8 GPUs on 2 nodes (TP=4 PP=1 DP=2, nvl=strict)");
}

TEST_F(DecisionTest, AnExclusiveJobsNodeSetIsItsNodesWhole) {
  // srun --gpus=2 --nvl-tp=2 --exclusive (Slurm's test39.16 shape): cons_tres gives a
  // whole-node job every GPU of its nodes and refuses it a node with any GPU allocated, so a
  // node set masked to 2 GPUs was refused every time. The node set is the wholly free node,
  // all of it, the engine's TP group first.
  OnlyFree({{0, {2, 3, 4, 5, 6, 7}}, {1, {0, 1, 2, 3, 4, 5, 6, 7}}, {2, {4, 5, 6, 7}}});
  SlurmJob job = Job(23, 2, {"NVLPLACE_TP=2"});
  job.whole_node = true;
  auto d = Decide(job);
  ASSERT_EQ(d->action(), Action::kTry) << d->log().text;
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->layout, (Layout{{1}, {{0, 1, 2, 3, 4, 5, 6, 7}}}));
  ASSERT_EQ(c->facts.gpus.size(), 1u);
  EXPECT_EQ(c->facts.gpus[0].gpus.size(), 8u);
  EXPECT_EQ(d->CandidateAt(1), nullptr);  // no other node is wholly free
  // What Slurm allocates to it is the decision.
  EXPECT_TRUE(d->Took(0, Layout{{1}, {{0, 1, 2, 3, 4, 5, 6, 7}}}));
  EXPECT_THAT(d->log().text, StartsWith("v=1 event=placed "));
  EXPECT_THAT(d->log().text, HasSubstr(" exclusive=yes gpus=node01:0-7 "));
  d->Started();
  EXPECT_EQ(decider_->counters().as_decided, 1u);
}

TEST_F(DecisionTest, EveryNodeSetRefused) {
  OnlyFree({{0, {0, 1, 2, 3}}, {1, {0, 1, 2, 3}}, {2, {4, 5, 6, 7}}});
  // Hard: the job waits, saying cons_tres refused the node sets.
  auto strict = Decide(Job(30, 4, {"NVLPLACE_TP=4"}));
  ASSERT_EQ(strict->action(), Action::kTry);
  for (int i = 0; strict->CandidateAt(i) != nullptr; ++i) strict->Refused(i);
  EXPECT_EQ(strict->num_candidates(), 3);
  EXPECT_EQ(strict->Exhausted(), Action::kRefuse);
  ASSERT_TRUE(strict->comment());
  EXPECT_THAT(*strict->comment(), StartsWith("nvlplace: v=1 event=waiting "));
  EXPECT_THAT(*strict->comment(), HasSubstr("cons_tres refused the 3 node sets that keep it"));
  EXPECT_THAT(*strict->comment(), HasSubstr(" candidate=1 candidates=3"));
  // Soft: cons_tres's own choice, as a named relaxation.
  auto soft = Decide(Job(31, 4));
  ASSERT_EQ(soft->action(), Action::kTry);
  for (int i = 0; soft->CandidateAt(i) != nullptr; ++i) soft->Refused(i);
  EXPECT_EQ(soft->Exhausted(), Action::kConsTres);
  EXPECT_TRUE(soft->Took(-1, Layout{{5}, {{0, 1, 2, 3}}}));
  EXPECT_THAT(soft->log().text, StartsWith("v=1 event=placed-by-cons_tres "));
  EXPECT_THAT(soft->log().text,
              HasSubstr(" slurm_gpus=node05:0-3 candidates=3 relaxations=\"cons_tres "
                        "refused the 3 node sets of nvlplace, first node"));
  ASSERT_TRUE(soft->comment());
  EXPECT_EQ(*soft->comment(), "nvlplace: " + soft->log().text);
  soft->Started();
  EXPECT_EQ(decider_->counters().relaxed, 1u);
}

TEST_F(DecisionTest, SummaryComesWhenCountersChangeAndTheIntervalPassed) {
  EXPECT_EQ(decider_->SummaryDue(1000, 300), "");  // nothing happened yet
  auto d = Decide(Job(40, 4, {"NVLPLACE_TP=4"}));
  ASSERT_EQ(d->action(), Action::kTry);
  ASSERT_TRUE(d->Took(0, d->CandidateAt(0)->layout));
  d->Started();
  EXPECT_THAT(decider_->SummaryDue(1000, 300),
              StartsWith("since load: 1 jobs placed on nvlplace node sets, 1 allocated as "
                         "decided, 0 differently"));
  auto e = Decide(Job(41, 4, {"NVLPLACE_TP=4"}));
  ASSERT_TRUE(e->Took(0, e->CandidateAt(0)->layout));
  e->Started();
  EXPECT_EQ(decider_->SummaryDue(1100, 300), "");  // too soon
  EXPECT_THAT(decider_->SummaryDue(1300, 300), HasSubstr("2 jobs placed"));
}

TEST_F(DecisionTest, RequestOfBoundsEverySizeBeforeUsingIt) {
  SlurmJob huge = Job(50, 0);
  huge.gpus_per_task = UINT64_MAX;
  huge.num_tasks = UINT32_MAX;
  huge.gpu_requests = 1;
  JobRequest r = RequestOf(huge, NvlMode::kStrict);
  EXPECT_TRUE(r.gpus);
  EXPECT_THAT(r.unusable, HasSubstr("more GPUs than nvlplace places"));
  SlurmJob per_node = Job(51, 0);
  per_node.gpus_per_node = 1ull << 40;
  per_node.min_nodes = 2;
  r = RequestOf(per_node, NvlMode::kStrict);
  EXPECT_THAT(r.unusable, HasSubstr("GPUs on each of 2 nodes"));
  SlurmJob tasks = Job(52, 0);
  tasks.gpus_per_task = 2;
  tasks.num_tasks = 4;
  r = RequestOf(tasks, NvlMode::kStrict);
  EXPECT_THAT(r.unusable, IsEmpty());
  EXPECT_EQ(r.spec.gpus, 8);  // 2 GPUs x 4 tasks
}

// The submit-time check reads the job description's tres_per_* strings (what nvl_ctld.c's
// _gpus_in did in C before).
TEST(GpusInTresTest, ReadsEveryFormSlurmWrites) {
  struct Case {
    const char* tres;
    uint64_t count;
    int entries;
    const char* type;
    bool unreadable;
  } cases[] = {
      {"", 0, 0, "", false},
      {"gres:gpu:8", 8, 1, "", false},
      {"gres/gpu:8", 8, 1, "", false},
      {"gres/gpu:h100:8", 8, 1, "h100", false},
      {"gres:gpu", 1, 1, "", false},                        // "gpu" alone is one
      {"gres/gpu:h100", 1, 1, "h100", false},               // one of that type
      {"gres:gpu:2,gres:gpu:a100:1", 3, 2, "a100", false},  // summed; the first type
      {"gres:gpu:h100:2;gres:gpu:a100:1", 3, 2, "h100", false},
      {"cpu:4,gres:mps:100", 0, 0, "", false},     // no GPU entry
      {"gres:gpus:4", 0, 0, "", false},            // "gpus" is another GRES
      {"gres/gpu:h100:lots", 0, 1, "h100", true},  // not a plain number
      {"gres/gpu:h100:-2", 0, 1, "h100", true},    //
      {"gres/gpu:8x", 1, 1, "", false},  // one GPU, no type: a digit-led word is not a type
      {"gres/gpu:99999999999", 16777217, 1, "", false},  // saturated past any job's size
      {",,gres:gpu:4,,", 4, 1, "", false},
  };
  for (const Case& c : cases) {
    TresGpus g = GpusInTres(c.tres);
    EXPECT_EQ(g.count, c.count) << c.tres;
    EXPECT_EQ(g.entries, c.entries) << c.tres;
    EXPECT_EQ(g.type, c.type) << c.tres;
    EXPECT_EQ(g.unreadable, c.unreadable) << c.tres;
  }
}

}  // namespace
// The job learns where it runs: NVLPLACE_RANKMAP's value, in the engine's rank order when
// Slurm allocated what was decided, else Slurm's allocation grouped by NVLink domain.
TEST_F(DecisionTest, AnAcceptedAllocationHasItsRankMap) {
  OnlyFree({{3, {4, 5, 6, 7}}, {9, {0, 1, 2, 3}}});
  auto d = Decide(Job(60, 8, {"NVLPLACE_TP=4"}));
  ASSERT_EQ(d->action(), Action::kTry);
  const Candidate* c = d->CandidateAt(0);
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(d->Took(0, c->layout));
  std::vector<std::string> words = absl::StrSplit(d->rank_map(), ' ');
  ASSERT_EQ(words.size(), 3u) << d->rank_map();
  EXPECT_EQ(words[0], "v1");
  EXPECT_THAT(words, ::testing::Contains("node03:4-7:node03:nvl1"));
  EXPECT_THAT(words, ::testing::Contains("node09:0-3:node09:nvl0"));
  EXPECT_EQ(d->rank_map(), RankMapText(*decider_->config().topology, c->facts.gpus));
  // Not a RUN_NOW allocation: no map.
  auto later = Decide(Job(61, 8, {"NVLPLACE_TP=4"}, Mode::kWillRun));
  if (const Candidate* lc = later->CandidateAt(0)) {
    later->Took(0, lc->layout);
    EXPECT_EQ(later->rank_map(), "");
  }
}

TEST_F(DecisionTest, RankMapsKeepEachDomainsNodesTogether) {
  const Topology& topo = *decider_->config().topology;
  std::vector<NodeGpus> got = {{"node01", {0, 1}}, {"node02", {4, 5}}, {"node01", {4}}};
  EXPECT_EQ(RankMapText(topo, got),
            "v1 node01:0-1:node01:nvl0 node02:4-5:node02:nvl1 node01:4:node01:nvl1");
  EXPECT_EQ(RankMapText(topo, {{"node00", {2, 6}}, {"nowhere", {0}}, {"node04", {}}}),
            "v1 node00:2,6:node00:nvl0,node00:nvl1 nowhere:0:?");
  // A node's GPUs in rank order, not by index: its local rank i belongs on the i-th.
  EXPECT_EQ(RankMapText(topo, {{"node01", {4, 5, 6, 7, 0, 1}}}),
            "v1 node01:4-7,0-1:node01:nvl1,node01:nvl0");
  // Trays of two NVL72 racks as Slurm lists them (node order): rack01's trays come together.
  auto gb = LoadTopologyFile("configs/gb200-nvl72-su.yaml");
  ASSERT_TRUE(gb.ok()) << gb.status();
  std::vector<NodeGpus> grouped = GroupedByDomain(
      **gb, {{"gb001", {0, 1, 2, 3}}, {"gb019", {0, 1, 2, 3}}, {"gb002", {0, 1, 2, 3}}});
  EXPECT_EQ(RankMapText(**gb, grouped),
            "v1 gb001:0-3:nvl72-rack01 gb002:0-3:nvl72-rack01 gb019:0-3:nvl72-rack02");
}

// The decider on configs/gb200-nvl72-su.yaml (8 racks of 18 trays, 2 spare trays per rack)
// and its 144 trays gb001..gb144, every one usable and full until a test frees some.
class DecisionSparesTest : public DeciderTest {
 protected:
  // gb[001-144], every tray full until Free.
  void SetUp() override {
    Load("gb200-nvl72-su.yaml", "", "gb%03d", 1, 144, 4);
    if (!HasFatalFailure()) Free(1, 144, false);
  }

  // The job waits (held, not left to cons_tres), its comment a waiting line that says `why`.
  void ExpectWaits(const SlurmJob& job, const std::string& why) {
    auto d = Decide(job);
    EXPECT_EQ(d->action(), Action::kRefuse) << d->log().text;
    ASSERT_TRUE(d->comment());
    EXPECT_THAT(*d->comment(), HasSubstr("event=waiting"));
    EXPECT_THAT(*d->comment(), HasSubstr(why));
  }
  // Trays first..last (1-based, as their names) wholly free, or full.
  void Free(int first, int last, bool free = true) {
    for (int i = first; i <= last; ++i) {
      nodes_[i - 1].free = free ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{};
    }
  }
  static SlurmJob Job(uint32_t id, uint64_t gpus, std::vector<std::string> env = {}) {
    SlurmJob j;
    j.id = id;
    j.mode = Mode::kRunNow;
    j.gpus_per_job = gpus;
    j.gpu_requests = 1;
    j.min_nodes = 1;
    j.max_nodes = 500000;
    j.env = std::move(env);
    return j;
  }
};

// A job requeued after it lost a tray may take its rack's spare trays: a replacement inside
// the NVLink domain (issue 25). Only rack01's 18 trays are free.
// As DecisionTest's, on NVL72 racks that keep 2 spare trays each: a tray not given must
// count as busy, never as a free spare.
TEST_F(DecisionSparesTest, AStateKeptBetweenCallsDecidesAsAFreshOne) {
  ExpectKeptStateDecidesAsAFreshOne(4, 150);
}

TEST_F(DecisionSparesTest, ARequeuedJobMayTakeTheSpares) {
  Free(1, 18);
  // 17 trays in one TP group: one more than the rack plans for.
  SlurmJob job = Job(70, 68, {"NVLPLACE_TP=68"});
  auto first = Decide(job);
  EXPECT_EQ(first->action(), Action::kRefuse);
  EXPECT_THAT(first->log().text, HasSubstr("spares"));
  job.restarts = 1;
  auto requeued = Decide(job);
  ASSERT_EQ(requeued->action(), Action::kTry) << requeued->log().text;
  EXPECT_EQ(requeued->CandidateAt(0)->layout.nodes.size(), 17u);
}

// A policy with max_comm_ratio: a plain job that could run now only over two racks (its DP
// all-reduce off NVLink) waits for a rack, with the reason in its comment, where cons_tres
// would run it spread out; with 2 trays free in one rack it runs there.
TEST_F(DecisionSparesTest, APlainJobWaitsForARackUnderMaxCommRatio) {
  std::ifstream preset("configs/policies/topo.yaml");
  std::string policy((std::istreambuf_iterator<char>(preset)), std::istreambuf_iterator<char>());
  std::string path = (dir_ / "ratio.yaml").string();
  std::ofstream(path) << policy << "use_spares: true\nmax_comm_ratio: 3\n";
  Load("gb200-nvl72-su.yaml", "policy: " + path + "\n", "gb%03d", 1, 144, 4);
  ASSERT_FALSE(HasFatalFailure());
  Free(1, 144, false);
  Free(1, 1);
  Free(19, 19);  // one free tray in rack 1, one in rack 2
  SlurmJob job = Job(73, 8);
  ExpectWaits(job, "max_comm_ratio 3");
  Free(2, 2);
  auto local = Decide(job);
  ASSERT_EQ(local->action(), Action::kTry) << local->log().text;
  EXPECT_EQ(local->CandidateAt(0)->layout.nodes, (std::vector<int>{0, 1}));
}

// A plain job (no option, no hard constraint) that would fit only on the spare trays waits
// rather than go to cons_tres, which would take them; requeued, it may take them.
TEST_F(DecisionSparesTest, APlainJobWaitsRatherThanTakeTheSpares) {
  Free(1, 2);  // two trays of rack 1 free: its 2 spares
  SlurmJob job = Job(72, 8);
  ExpectWaits(job, "spares");
  // Two more trays free: it fits beside the spares and is placed.
  Free(3, 4);
  EXPECT_EQ(Decide(job)->action(), Action::kTry);
  Free(3, 4, false);
  job.restarts = 1;
  EXPECT_EQ(Decide(job)->action(), Action::kTry);
}

// A requeued job goes back to the rack it ran in (its failed tray replaced there) when the
// rack has room, and says so; where it has none, it goes elsewhere and still says which.
TEST_F(DecisionSparesTest, ARequeuedJobGoesBackToItsRack) {
  // Racks 1 and 2 free (rack 2 with one tray drained), the others full.
  Free(1, 36);
  nodes_[19].usable = false;  // gb020
  SlurmJob job = Job(71, 64, {"NVLPLACE_TP=64"});
  // Its placement line, once Slurm took node set 0 as decided.
  auto placed = [](JobDecision* d) {
    const Candidate* c = d->CandidateAt(0);
    if (c == nullptr || !d->Took(0, c->layout)) return std::string("not placed");
    return *d->comment();
  };
  auto fresh = Decide(job);
  ASSERT_EQ(fresh->action(), Action::kTry) << fresh->log().text;
  std::string line = placed(fresh.get());
  EXPECT_THAT(line, HasSubstr("domains=nvl72-rack01 "));
  EXPECT_THAT(line, Not(HasSubstr("back_to")));

  // It ran in rack 2, lost gb020 and was requeued: rack 2 has 16 usable trays and its 1
  // spare left, so the 16 trays it needs are there.
  job.restarts = 1;
  job.previous_comment =
      "nvlplace: v=1 event=placed asked_gpus=64 asked_nodes=any tp=64 pp=1 dp=1 nvl=strict "
      "max_tier=none model=any exclusive=no gpus=\"gb[019-034]:0-3\" domains=nvl72-rack02 "
      "span_domains=1 span_nodes=16 span_tier=leaf score=97.0 origin=\"best fit\" "
      "relaxations=none";
  auto back = Decide(job);
  ASSERT_EQ(back->action(), Action::kTry) << back->log().text;
  for (int n : back->CandidateAt(0)->layout.nodes) EXPECT_TRUE(n >= 18 && n < 36) << n;
  line = placed(back.get());
  EXPECT_THAT(line, HasSubstr("domains=nvl72-rack02 "));
  EXPECT_THAT(line, HasSubstr("back_to=nvl72-rack02"));

  // A waiting line keeps where it goes back to; and with rack 2 full it goes to rack 1.
  job.previous_comment =
      "nvlplace: v=1 event=waiting asked_gpus=64 asked_nodes=any tp=64 pp=1 dp=1 nvl=strict "
      "max_tier=none model=any exclusive=no why=\"...\" back_to=nvl72-rack02";
  Free(19, 36, false);
  auto elsewhere = Decide(job);
  ASSERT_EQ(elsewhere->action(), Action::kTry) << elsewhere->log().text;
  line = placed(elsewhere.get());
  EXPECT_THAT(line, HasSubstr("domains=nvl72-rack01 "));
  EXPECT_THAT(line, HasSubstr("back_to=nvl72-rack02"));
}

}  // namespace nvlplace::plugin
