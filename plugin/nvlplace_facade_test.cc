// Tests for the C facade the select plugin calls: plain structs in, node sets out, never an
// exception.
#include "plugin/nvlplace_facade.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

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
  // Places on the current free lists; every node usable unless listed in `unusable`.
  int Place(nvl_request_t q, nvl_result_t* r, std::vector<int> unusable = {}) {
    std::vector<nvl_node_t> nodes;
    for (size_t i = 0; i < names_.size(); ++i) {
      bool usable = std::find(unusable.begin(), unusable.end(), i) == unusable.end();
      nodes.push_back(
          {names_[i].c_str(), usable, free_[i].data(), static_cast<int>(free_[i].size())});
    }
    return nvl_facade_place(facade_, nodes.data(), static_cast<int>(nodes.size()), &q, r);
  }
  std::vector<std::string> Names(const nvl_candidate_t& c) {
    std::vector<std::string> out;
    for (int i = 0; i < c.num_nodes; ++i) out.push_back(names_[c.nodes[i]]);
    return out;
  }

  std::filesystem::path dir_;
  char err_[1024] = "";
  nvl_facade_t* facade_ = nullptr;
  std::vector<std::string> names_;
  std::vector<std::vector<int>> free_;
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
  nvl_request_t q{};
  q.job_id = 7;
  q.nodes = 1;
  q.gpus_per_node = 4;
  q.tp = 4;
  nvl_result_t r;
  ASSERT_EQ(Place(q, &r), NVL_PLACED) << r.reason;
  EXPECT_TRUE(r.hard);  // strict (the default) with TP > 1
  EXPECT_STREQ(r.request, "4 GPUs on 1 nodes (TP=4 PP=1 DP=1, nvl=strict)");
  ASSERT_GE(r.num_candidates, 1);
  EXPECT_THAT(Names(r.candidates[0]), ::testing::ElementsAre("node01"));
  EXPECT_THAT(r.candidates[0].describe, HasSubstr("gpus=node01:4-7 domains=node01:nvl1 "));
  // The GPU indexes per node, for steering cons_tres's choice inside the node.
  const nvl_candidate_t& c = r.candidates[0];
  EXPECT_THAT(std::vector<int>(c.gpu_offsets, c.gpu_offsets + 2), ::testing::ElementsAre(0, 4));
  EXPECT_THAT(std::vector<int>(c.gpus, c.gpus + 4), ::testing::ElementsAre(4, 5, 6, 7));
  EXPECT_STREQ(r.relaxations, "none");
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, StrictWaitsWithATopologyReason) {
  // TP=8 never fits a 4-GPU island.
  nvl_request_t q{};
  q.gpus = 8;
  q.tp = 8;
  nvl_result_t r;
  EXPECT_EQ(Place(q, &r), NVL_NO_ROOM);
  EXPECT_TRUE(r.hard);
  EXPECT_THAT(r.reason, HasSubstr("needs 1 TP group of 8 GPUs inside one NVLink domain; no "
                                  "free NVLink domain holds it"));
  EXPECT_EQ(r.num_candidates, 0);
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, PreferRunsWithARelaxation) {
  nvl_request_t q{};
  q.gpus = 8;
  q.tp = 8;
  q.nvl = "prefer";
  nvl_result_t r;
  ASSERT_EQ(Place(q, &r), NVL_PLACED) << r.reason;
  EXPECT_FALSE(r.hard);
  EXPECT_THAT(r.relaxations, HasSubstr("nvl=prefer"));
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, CandidatesAreDistinctAndOnlyOnUsableNodes) {
  nvl_request_t q{};
  q.nodes = 2;
  q.gpus_per_node = 8;
  nvl_result_t r;
  ASSERT_EQ(Place(q, &r, /*unusable=*/{0, 1, 2}), NVL_PLACED) << r.reason;
  EXPECT_EQ(r.num_candidates, 2);  // the best and the runner-up; more only when asked
  EXPECT_EQ(nvl_facade_more(facade_, &r), 1);
  EXPECT_EQ(r.num_candidates, 3);
  EXPECT_EQ(nvl_facade_more(facade_, &r), 0);  // candidates: 3 in the configuration
  EXPECT_EQ(r.num_candidates, 3);
  std::set<std::vector<std::string>> seen;
  for (int c = 0; c < r.num_candidates; ++c) {
    auto names = Names(r.candidates[c]);
    EXPECT_EQ(names.size(), 2u);
    for (const auto& n : names)
      EXPECT_THAT(n, ::testing::Not(::testing::AnyOf("node00", "node01", "node02")));
    EXPECT_TRUE(seen.insert(names).second) << "candidate " << c << " repeats";
  }
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, BusyGpusAreNeverOffered) {
  for (int i = 0; i < 15; ++i) free_[i].clear();  // only node15 has free GPUs
  nvl_request_t q{};
  q.gpus = 8;
  nvl_result_t r;
  ASSERT_EQ(Place(q, &r), NVL_PLACED) << r.reason;
  ASSERT_EQ(r.num_candidates, 1);
  EXPECT_THAT(Names(r.candidates[0]), ::testing::ElementsAre("node15"));
  nvl_result_clear(&r);
  q.gpus = 9;
  EXPECT_EQ(Place(q, &r), NVL_NO_ROOM);
  EXPECT_FALSE(r.hard);  // TP=1: nothing to wait for that cons_tres would not also need
  nvl_result_clear(&r);
  q.ignore_busy = 1;  // "could it ever run"
  EXPECT_EQ(Place(q, &r), NVL_PLACED);
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, BadRequestsSayWhy) {
  nvl_request_t q{};
  q.gpus = 8;
  q.tp = 3;
  nvl_result_t r;
  EXPECT_EQ(Place(q, &r), NVL_BAD_REQUEST);
  EXPECT_THAT(r.reason, HasSubstr("does not divide 8 GPUs"));
  nvl_result_clear(&r);
  q.tp = 4;
  q.nvl = "sometimes";
  EXPECT_EQ(Place(q, &r), NVL_BAD_REQUEST);
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, TierAboveTheTopLimitsNothing) {
  nvl_request_t q{};
  q.gpus = 16;
  q.max_tier = "core";  // lab-islands has leaf and spine only
  nvl_result_t r;
  EXPECT_EQ(Place(q, &r), NVL_PLACED) << r.reason;
  EXPECT_FALSE(r.hard);
  nvl_result_clear(&r);
  q.max_tier = "leaf";
  q.gpus = 40;  // 4 nodes x 8 = 32 GPUs under one leaf
  EXPECT_EQ(Place(q, &r), NVL_NO_ROOM);
  EXPECT_TRUE(r.hard);
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, UnknownNodesAreIgnored) {
  std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  nvl_node_t nodes[2] = {{"login1", 1, all.data(), 8}, {"node07", 1, all.data(), 8}};
  nvl_request_t q{};
  q.gpus = 4;
  nvl_result_t r;
  ASSERT_EQ(nvl_facade_place(facade_, nodes, 2, &q, &r), NVL_PLACED) << r.reason;
  ASSERT_EQ(r.num_candidates, 1);
  EXPECT_EQ(r.candidates[0].nodes[0], 1);  // index into `nodes`
  nvl_result_clear(&r);
}

TEST_F(FacadeTest, NullArgumentsAreErrorsNotCrashes) {
  nvl_result_t r;
  EXPECT_EQ(nvl_facade_place(nullptr, nullptr, 0, nullptr, &r), NVL_INTERNAL);
  nvl_result_clear(&r);
  EXPECT_EQ(nvl_facade_place(facade_, nullptr, 3, nullptr, &r), NVL_INTERNAL);
  EXPECT_EQ(nvl_facade_more(facade_, &r), 0);
  nvl_result_clear(&r);
  EXPECT_EQ(nvl_facade_more(nullptr, nullptr), 0);
  EXPECT_EQ(nvl_facade_load(nullptr, err_, sizeof(err_)), nullptr);
}

TEST_F(FacadeTest, AFreeListWithoutIndexesIsRefusedNotRead) {
  // Found by the facade fuzzer: free_gpus NULL with num_free > 0 was dereferenced.
  std::vector<int> all = {0, 1, 2, 3};
  nvl_node_t nodes[2] = {{"node00", 1, all.data(), 4}, {"node01", 1, nullptr, 4}};
  nvl_request_t q{};
  q.gpus = 4;
  nvl_result_t r;
  EXPECT_EQ(nvl_facade_place(facade_, nodes, 2, &q, &r), NVL_INTERNAL);
  EXPECT_THAT(r.reason, HasSubstr("node 1 lists 4 free GPUs but no indexes"));
  EXPECT_EQ(r.num_candidates, 0);
  nvl_result_clear(&r);
  q.ignore_busy = 1;  // refused before anything else, whatever the request
  EXPECT_EQ(nvl_facade_place(facade_, nodes, 2, &q, &r), NVL_INTERNAL);
  nvl_result_clear(&r);
  nvl_job_t job{};
  job.job_id = 9;
  job.gpus_per_job = 4;
  job.gpu_requests = 1;
  nvl_decision_t* d = nvl_decide(facade_, &job, nodes, 2);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(nvl_decision_action(d), NVL_ACT_CONS_TRES);
  int level = -1;
  EXPECT_THAT(nvl_decision_log(d, &level),
              HasSubstr("v=1 event=cons_tres why=\"internal error: node 1 lists 4 free GPUs but no "
                        "indexes\""));
  EXPECT_EQ(level, NVL_LOG_ERROR);
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
  nvl_request_t q{};
  q.gpus = 8;
  nvl_result_t r;
  ASSERT_EQ(nvl_facade_place(kept, nodes, 4, &q, &r), NVL_PLACED) << r.reason;
  ASSERT_GE(r.num_candidates, 1);
  for (int c = 0; c < r.num_candidates; ++c) {
    ASSERT_EQ(r.candidates[c].num_nodes, 1);
    EXPECT_EQ(r.candidates[c].nodes[0], 3);  // h0
  }
  nvl_result_clear(&r);
  q.gpus = 16;  // a1 and a0 hold 16 free GPUs that nvlplace must not count
  EXPECT_NE(nvl_facade_place(kept, nodes, 4, &q, &r), NVL_PLACED);
  nvl_result_clear(&r);
  nvl_facade_free(kept);
}

TEST_F(FacadeTest, BadConfigurationGivesOneLine) {
  nvl_facade_t* f = Load("topology: lab.yaml\nlog_level: chatty\n");
  EXPECT_EQ(f, nullptr);
  EXPECT_THAT(err_, HasSubstr("nvlplace.yaml:2:12: #/log_level: log level 'chatty'"));
  EXPECT_EQ(std::string(err_).find('\n'), std::string::npos);
}

}  // namespace
