// The NVLink health file: read, applied to a cluster (domains split, nodes cut off), and
// every mistake named at its line.
#include "placement/formats/nvlink_health_yaml.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/status_macros.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<std::shared_ptr<const Topology>> Apply(const char* health) {
  auto spec = ParseTopologyYaml(testing::kTwoRacksYaml, "racks.yaml");
  EXPECT_THAT(spec, IsOk());
  NVL_ASSIGN_OR_RETURN(NvlinkHealth h, ParseNvlinkHealthYaml(health, "health.yaml"));
  NVL_ASSIGN_OR_RETURN(TopologySpec healthy, ApplyNvlinkHealth(*spec, h));
  return Topology::Create(healthy);
}

std::vector<std::string> MultiNodeDomains(const Topology& topo) {
  std::vector<std::string> out;
  for (const NvlDomain& d : topo.domains()) {
    if (d.multi_node) out.push_back(d.name + "=" + std::to_string(d.nodes.size()));
  }
  return out;
}

TEST(NvlinkHealthTest, AnEmptyFileIsAHealthyFabric) {
  auto topo = Apply("");
  ASSERT_THAT(topo, IsOk());
  EXPECT_THAT(MultiNodeDomains(**topo), ElementsAre("rack1=6", "rack2=6"));
}

// An NVSwitch tray down: rack1 is two NVLink partitions of 3 trays; a tray in none has no
// NVLink at all (one island per GPU), like a tray whose NVLink is down.
TEST(NvlinkHealthTest, SplitsAndDownNodesChangeTheDomains) {
  auto topo = Apply(R"(splits:
  - {domain: rack1, partitions: ["gb[01-03]", "gb[04-05]"]}
down: ["gb12"]
)");
  ASSERT_THAT(topo, IsOk());
  EXPECT_THAT(MultiNodeDomains(**topo), ElementsAre("rack2=5", "rack1/p1=3", "rack1/p2=2"));
  for (const char* alone : {"gb06", "gb12"}) {
    const Node& n = (*topo)->nodes()[(*topo)->FindNode(alone)];
    EXPECT_EQ(n.domains.size(), 4u) << alone;  // one island per GPU
  }
  const Node& healthy = (*topo)->nodes()[(*topo)->FindNode("gb07")];
  EXPECT_EQ((*topo)->domains()[healthy.domains[0]].name, "rack2");
}

// rack1 keeps 2 spare trays; its partitions keep none (a broken rack plans no spares), and a
// rack left with 2 trays keeps 1 spare at most.
TEST(NvlinkHealthTest, SparesShrinkWithTheRack) {
  auto healthy = Apply("");
  ASSERT_THAT(healthy, IsOk());
  EXPECT_EQ((*healthy)->domains()[(*healthy)->nodes()[0].domains[0]].spares, 2);
  auto split = Apply("splits:\n  - {domain: rack1, partitions: [\"gb[01-03]\", \"gb[04-06]\"]}\n");
  ASSERT_THAT(split, IsOk());
  EXPECT_EQ((*split)->domains()[(*split)->nodes()[0].domains[0]].spares, 0);
  auto down = Apply("down: [\"gb[03-06]\"]\n");
  ASSERT_THAT(down, IsOk());
  const NvlDomain& rack1 = (*down)->domains()[(*down)->nodes()[0].domains[0]];
  EXPECT_EQ(rack1.nodes.size(), 2u);
  EXPECT_EQ(rack1.spares, 1);
}

struct BadCase {
  const char* name;
  const char* health;
  const char* message;
};

class NvlinkHealthBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(NvlinkHealthBadTest, NamesTheLineAndWhatIsWrong) {
  EXPECT_THAT(Apply(GetParam().health),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NvlinkHealthBadTest,
    ::testing::Values(
        BadCase{"UnknownDomain", "splits:\n  - {domain: rack9, partitions: [\"gb01\"]}\n",
                "health.yaml:2:5: #/splits/0: cluster racks has no multi-node NVLink domain rack9"},
        BadCase{"NodeOfAnotherDomain",
                "splits:\n  - {domain: rack1, partitions: [\"gb[01-02]\", \"gb07\"]}\n",
                "health.yaml:2:5: #/splits/0: node gb07 is not in NVLink domain rack1"},
        BadCase{"NodeInTwoPartitions",
                "splits:\n  - {domain: rack1, partitions: [\"gb[01-03]\", \"gb[03-04]\"]}\n",
                "node gb03 is in two partitions of rack1"},
        BadCase{"UnknownNode", "down: [\"gb99\"]\n",
                "health.yaml:1:8: #/down/0: node gb99 is not in cluster racks"},
        BadCase{"UnknownKey", "broken: [gb01]\n",
                "health.yaml:1:1: #/broken: unknown key 'broken'; allowed here: splits, down"},
        BadCase{"NoPartitions", "splits:\n  - {domain: rack1, partitions: []}\n",
                "expected a list of hostlists, one per NVLink partition"},
        BadCase{"BadHostlist", "down: [\"gb[01-\"]\n", "health.yaml:1:8: #/down/0:"},
        BadCase{"BadYaml", "splits: [\n", "health.yaml:2:1"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nvlplace
