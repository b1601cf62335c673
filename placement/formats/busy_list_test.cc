// Tests for the busy list: its syntax, its errors and its cost on long lines.
#include "placement/formats/busy_list.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

// `nodes` nodes of `gpus` GPUs under one leaf.
std::shared_ptr<const Topology> Cluster(int nodes, int gpus) {
  std::string yaml = absl::StrCat("name: c\ngpu_models: [{name: H100}]\nnodes: [{names: \"n[0-",
                                  nodes - 1, "]\", gpus: ", gpus,
                                  ", model: H100}]\nswitches: [{name: l, tier: leaf, nodes: "
                                  "\"n[0-",
                                  nodes - 1, "]\"}]\n");
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(yaml, "c.yaml");
  EXPECT_THAT(spec, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

TEST(BusyListTest, MarksNodesAndIndexes) {
  ClusterState state(Cluster(4, 8));
  ASSERT_THAT(LoadBusyList("n0\nn[1-2]:0-1,6  # comment\n\nn3: 7 , 2 - 3\n", "b", &state), IsOk());
  // n0: 8; n1, n2: 0, 1, 6 each; n3: 2, 3, 7. 8 + 3 + 3 + 3 = 17 busy of 32.
  EXPECT_EQ(state.num_free(), 32 - 17);
  EXPECT_EQ(state.free_on_node(0), 0);
  EXPECT_EQ(state.free_on_node(1), 5);
  EXPECT_EQ(state.free_on_node(3), 5);
  const Topology& t = state.topology();
  EXPECT_TRUE(state.busy(t.nodes()[2].gpus[6]));
  EXPECT_FALSE(state.busy(t.nodes()[2].gpus[5]));
  EXPECT_TRUE(state.busy(t.nodes()[3].gpus[3]));
}

TEST(BusyListTest, ReadsGpusInTheOrderGiven) {
  std::shared_ptr<const Topology> topo = Cluster(4, 8);
  // Lines in order, each line's nodes in hostlist order, each node's GPUs by index.
  absl::StatusOr<std::vector<GpuId>> ranks =
      ReadGpusInOrder("n3:6-7\nn[1,0]:2,0\nn2", "the GPU list", *topo);
  ASSERT_THAT(ranks, IsOk());
  std::vector<std::string> named;
  for (GpuId g : *ranks) {
    named.push_back(
        absl::StrCat(topo->nodes()[topo->gpus()[g].node].name, ":", topo->gpus()[g].index));
  }
  EXPECT_THAT(named,
              ::testing::ElementsAre("n3:6", "n3:7", "n1:0", "n1:2", "n0:0", "n0:2", "n2:0", "n2:1",
                                     "n2:2", "n2:3", "n2:4", "n2:5", "n2:6", "n2:7"));
  EXPECT_THAT(
      ReadGpusInOrder("n1:0-1\nn[0-1]:1", "the GPU list", *topo),
      StatusIs(absl::StatusCode::kInvalidArgument, "the GPU list:2: GPU n1:1 is given twice"));
  EXPECT_THAT(
      ReadGpusInOrder("n1:8", "w", *topo),
      StatusIs(absl::StatusCode::kInvalidArgument, "w:1: GPU 8 is out of range: n1 has GPUs 0-7"));
}

struct BadLine {
  std::string text;
  std::string message;
};

class BusyListErrorTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(BusyListErrorTest, RefusesAndLeavesTheStateAlone) {
  ClusterState state(Cluster(4, 8));
  EXPECT_THAT(LoadBusyList("n0:0\n" + GetParam().text, "b.busy", &state),
              StatusIs(absl::StatusCode::kInvalidArgument, GetParam().message));
  EXPECT_EQ(state.num_free(), 32);
}

INSTANTIATE_TEST_SUITE_P(
    Syntax, BusyListErrorTest,
    ::testing::Values(
        // A range is lo-hi: "1-2-3" used to be read as 1-2.
        BadLine{"n1:1-2-3",
                "b.busy:2: '1-2-3' is not a GPU index or range such as 0-3 (a range is lo-hi)"},
        BadLine{"n1:3-1",
                "b.busy:2: '3-1' is not a GPU index or range such as 0-3 (a range is "
                "lo-hi)"},
        BadLine{"n1:+1",
                "b.busy:2: '+1' is not a GPU index or range such as 0-3 (a range is "
                "lo-hi)"},
        BadLine{"n1:", "b.busy:2: '' is not a GPU index or range such as 0-3 (a range is lo-hi)"},
        BadLine{std::string("n1:0\x01", 5),
                "b.busy:2: '0\\x01' is not a GPU index or range such as 0-3 (a range is lo-hi)"},
        // The first item past the node's GPUs is named, as before.
        BadLine{"n1:0-9,12", "b.busy:2: GPU 0-9 is out of range: n1 has GPUs 0-7"},
        BadLine{"n1:1,99999999999",
                "b.busy:2: '99999999999' is not a GPU index or range such "
                "as 0-3 (a range is lo-hi)"},
        BadLine{"n9:0", "b.busy:2: node 'n9' is not in cluster c"},
        BadLine{"n[1-2",
                "b.busy:2: bad hostlist \"n[1-2\" at character 2: '[' without a "
                "matching ']'"}));

TEST(BusyListTest, ManyPlainTerms) {
  // 300,000 terms "n0,n1,...,n7,n0,...": the hostlist parser searched the rest of the line for
  // each term (82 s). Time is bounded by tests/boundary/findings.py, not asserted here.
  ClusterState state(Cluster(8, 8));
  std::string line;
  for (int i = 0; i < 300000; ++i) absl::StrAppend(&line, i ? "," : "", "n", i % 8);
  line += ":0";
  absl::Status s;
  s = LoadBusyList(line, "b", &state);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(state.num_free(), 64 - 8);
}

TEST(BusyListTest, LongIndexListsOnManyNodes) {
  // 10,000 nodes x an index list of 50,000 items: parsed again for every node, 500,000,000
  // items.
  ClusterState state(Cluster(10000, 1));
  std::string line = "n[0-9999]:";
  for (int i = 0; i < 50000; ++i) absl::StrAppend(&line, i ? "," : "", "0");
  absl::Status s;
  s = LoadBusyList(line, "b", &state);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(state.num_free(), 0);
}

}  // namespace
}  // namespace nvlplace
