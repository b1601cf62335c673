// Tests for the topology builder's steps, one at a time: each step's result and its errors.
#include "placement/model/topology_builder.h"

#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/model/status_macros.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::FieldsAre;

using Step = TopologyBuilder::Step;
using Bounds = TopologyBuilder::Bounds;

// Runs the steps before `step`: the first error, if any.
absl::Status RunBefore(TopologyBuilder& b, Step step) {
  for (Step s : TopologyBuilder::Steps()) {
    if (s == step) return absl::OkStatus();
    NVL_RETURN_IF_ERROR((b.*s)());
  }
  return absl::InternalError("not one of Build's steps");
}

// Runs the steps up to `step`, itself included.
absl::Status RunThrough(TopologyBuilder& b, Step step) {
  NVL_RETURN_IF_ERROR(RunBefore(b, step));
  return (b.*step)();
}

// ---------------------------------------------------------------------------------------
// Hand-made specs, located as the YAML reader would locate them in c.yaml: GPU model i on
// line 2+i, node group i on line 4+i, NVLink domain i on line 8+i, switch i on line 10+i.

SourceLoc At(int line, std::string path) { return SourceLoc{"c.yaml", line, 5, std::move(path)}; }

void AddModel(TopologySpec& spec, std::string name, double nvlink_gbps) {
  int i = static_cast<int>(spec.gpu_models.size());
  spec.gpu_models.push_back(
      GpuModelSpec{std::move(name), nvlink_gbps, 64, At(2 + i, absl::StrCat("#/gpu_models/", i))});
}

NodeGroupSpec& AddGroup(TopologySpec& spec, std::vector<std::string> names, int gpus,
                        std::string model = "H100") {
  int i = static_cast<int>(spec.node_groups.size());
  spec.node_groups.push_back(NodeGroupSpec{
      std::move(names), gpus, std::move(model), {}, At(4 + i, absl::StrCat("#/nodes/", i))});
  return spec.node_groups.back();
}

DomainSpec& AddDomain(TopologySpec& spec, std::string name, std::vector<std::string> nodes) {
  int i = static_cast<int>(spec.domains.size());
  spec.domains.push_back(DomainSpec{std::move(name), std::move(nodes), 0,
                                    At(8 + i, absl::StrCat("#/nvlink_domains/", i))});
  return spec.domains.back();
}

SwitchSpec& AddSwitch(TopologySpec& spec, std::string name, std::string tier,
                      std::vector<std::string> nodes, std::vector<std::string> switches = {}) {
  int i = static_cast<int>(spec.switches.size());
  SwitchSpec s;
  s.name = std::move(name);
  s.tier = std::move(tier);
  s.nodes = std::move(nodes);
  s.switches = std::move(switches);
  s.loc = At(10 + i, absl::StrCat("#/switches/", i));
  spec.switches.push_back(std::move(s));
  return spec.switches.back();
}

// Two nodes of 4 GPUs under one leaf, under one spine.
TopologySpec Base() {
  TopologySpec spec;
  spec.name = "c";
  spec.loc = SourceLoc{"c.yaml", 0, 0, "#"};
  AddModel(spec, "H100", 900);
  AddGroup(spec, {"n0", "n1"}, 4);
  AddSwitch(spec, "leaf0", "leaf", {"n0", "n1"});
  AddSwitch(spec, "spine0", "spine", {}, {"leaf0"});
  return spec;
}

TEST(TopologyBuilderTest, BaseBuilds) {
  TopologySpec spec = Base();
  absl::StatusOr<std::shared_ptr<const Topology>> topo = TopologyBuilder(spec).Build();
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ((*topo)->num_gpus(), 8);  // 2 nodes x 4 GPUs
}

// ---------------------------------------------------------------------------------------
// Every error of every step: the spec is Base() changed so that the steps before pass and
// the step fails with exactly this message.

struct ErrorCase {
  std::string name;
  Step step;
  void (*change)(TopologySpec&);
  std::string message;
  Bounds bounds = {};
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class StepErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(StepErrorTest, StepRefusesTheSpec) {
  const ErrorCase& c = GetParam();
  TopologySpec spec = Base();
  c.change(spec);
  TopologyBuilder b(spec, c.bounds);
  ASSERT_THAT(RunBefore(b, c.step), IsOk());
  EXPECT_THAT((b.*c.step)(), StatusIs(absl::StatusCode::kInvalidArgument, c.message));
  // Create stops at the same error.
  Bounds defaults;
  if (c.bounds.max_switch_node_pairs == defaults.max_switch_node_pairs &&
      c.bounds.max_switch_ancestor_pairs == defaults.max_switch_ancestor_pairs) {
    EXPECT_THAT(Topology::Create(spec), StatusIs(absl::StatusCode::kInvalidArgument, c.message));
  }
}

Bounds NodePairs(int64_t n) {
  Bounds b;
  b.max_switch_node_pairs = n;
  return b;
}

Bounds AncestorPairs(int64_t n) {
  Bounds b;
  b.max_switch_ancestor_pairs = n;
  return b;
}

constexpr char kPrintable[] = "; names are printable UTF-8";

INSTANTIATE_TEST_SUITE_P(
    SetCluster, StepErrorTest,
    ::testing::Values(
        ErrorCase{"NoName", &TopologyBuilder::SetCluster, [](TopologySpec& s) { s.name = ""; },
                  "c.yaml: #: the cluster needs a name"},
        ErrorCase{"TabInName", &TopologyBuilder::SetCluster,
                  [](TopologySpec& s) { s.name = "c\t"; },
                  absl::StrCat("c.yaml: #: cluster name 'c\\x09': control character \\x09 is not "
                               "allowed (byte 2)",
                               kPrintable)},
        ErrorCase{"NoLinkSpeed", &TopologyBuilder::SetCluster,
                  [](TopologySpec& s) { s.link_gbps = 0; },
                  "c.yaml: #/link_gbps: link_gbps must be a positive number of Gb/s up to "
                  "1000000"},
        ErrorCase{"NegativeLatency", &TopologyBuilder::SetCluster,
                  [](TopologySpec& s) { s.nvlink_alpha_us = -1; },
                  "c.yaml: #/latency: latencies must be numbers of microseconds from 0 to "
                  "1000000"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    AddTiers, StepErrorTest,
    ::testing::Values(
        ErrorCase{"NoTiers", &TopologyBuilder::AddTiers, [](TopologySpec& s) { s.tiers.clear(); },
                  "c.yaml: #/tiers: at least one tier is needed"},
        ErrorCase{"SeventeenTiers", &TopologyBuilder::AddTiers,
                  [](TopologySpec& s) {
                    for (int i = 0; i < 14; ++i) s.tiers.push_back(absl::StrCat("t", i));
                  },
                  "c.yaml: #/tiers: 17 tiers; at most 16 are allowed"},  // 3 + 14 = 17
        ErrorCase{"NewlineInTier", &TopologyBuilder::AddTiers,
                  [](TopologySpec& s) { s.tiers[2] = "co\nre"; },
                  absl::StrCat("c.yaml: #/tiers: tier name 'co\\x0are': control character \\x0a "
                               "is not allowed (byte 3)",
                               kPrintable)},
        ErrorCase{"TierTwice", &TopologyBuilder::AddTiers,
                  [](TopologySpec& s) { s.tiers[2] = "leaf"; },
                  "c.yaml: #/tiers: tier 'leaf' is listed twice"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    AddGpuModels, StepErrorTest,
    ::testing::Values(
        ErrorCase{"NoModels", &TopologyBuilder::AddGpuModels,
                  [](TopologySpec& s) { s.gpu_models.clear(); },
                  "c.yaml: #/gpu_models: at least one GPU model is needed"},
        ErrorCase{"ModelWithoutName", &TopologyBuilder::AddGpuModels,
                  [](TopologySpec& s) { s.gpu_models[0].name = ""; },
                  "c.yaml:2:5: #/gpu_models/0: a GPU model needs a name"},
        ErrorCase{"NulInModel", &TopologyBuilder::AddGpuModels,
                  [](TopologySpec& s) { s.gpu_models[0].name = std::string("H\0", 2); },
                  absl::StrCat("c.yaml:2:5: #/gpu_models/0: GPU model name 'H\\x00': control "
                               "character \\x00 is not allowed (byte 2)",
                               kPrintable)},
        ErrorCase{"ModelTwice", &TopologyBuilder::AddGpuModels,
                  [](TopologySpec& s) { AddModel(s, "H100", 900); },
                  "c.yaml:3:5: #/gpu_models/1: GPU model 'H100' is declared twice"},
        ErrorCase{"NvlinkNaN", &TopologyBuilder::AddGpuModels,
                  [](TopologySpec& s) {
                    s.gpu_models[0].nvlink_gbps = std::numeric_limits<double>::quiet_NaN();
                  },
                  "c.yaml:2:5: #/gpu_models/0/nvlink_gbps: nvlink_gbps must be a number of GB/s "
                  "from 0 (no NVLink) up to 1000000"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    AddNodes, StepErrorTest,
    ::testing::Values(
        ErrorCase{"NoNodes", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) { s.node_groups.clear(); },
                  "c.yaml: #/nodes: no nodes are declared"},
        // 2,048 nodes x 2^20 GPUs (counted before the GPU count is checked) = 2^31 GPUs.
        ErrorCase{"MoreGpusThanAGpuIdHolds", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    s.node_groups[0].names = std::vector<std::string>(2048, "n");
                    s.node_groups[0].gpus = 1 << 20;
                  },
                  "c.yaml:4:5: #/nodes/0: the cluster has more than 2147483647 GPUs"},
        ErrorCase{"GroupWithoutNames", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) { s.node_groups[0].names.clear(); },
                  "c.yaml:4:5: #/nodes/0: a node group needs at least one node name"},
        ErrorCase{"NegativeGpus", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) { s.node_groups[0].gpus = -1; },
                  "c.yaml:4:5: #/nodes/0: gpus must be between 0 (CPU-only nodes) and 1024, not "
                  "-1"},
        ErrorCase{"ModelOnCpuOnlyNodes", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) { s.node_groups[0].gpus = 0; },
                  "c.yaml:4:5: #/nodes/0/model: these nodes have gpus: 0, so no GPU model; "
                  "remove model 'H100' or give their GPU count"},
        ErrorCase{"NoModelOnGpuNodes", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) { s.node_groups[0].model.clear(); },
                  "c.yaml:4:5: #/nodes/0: nodes with GPUs need a model; declared models: H100"},
        ErrorCase{"OnlyCpuNodes", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    for (NodeGroupSpec& g : s.node_groups) {
                      g.gpus = 0;
                      g.model.clear();
                      g.islands.clear();
                    }
                  },
                  "c.yaml: #/nodes: no node has a GPU: give at least one node group a gpus "
                  "count"},
        ErrorCase{"UnknownModel", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    AddModel(s, "B200", 1800);
                    s.node_groups[0].model = "A100";
                  },
                  "c.yaml:4:5: #/nodes/0: unknown GPU model 'A100'; declared models: H100, "
                  "B200"},
        ErrorCase{"EmptyIsland", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    s.node_groups[0].islands = {{0, 1, 2, 3}, {}};
                  },
                  "c.yaml:4:5: #/nodes/0: an NVLink island must hold at least one GPU"},
        ErrorCase{"IslandIndexOutOfRange", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    s.node_groups[0].islands = {{0, 1, 2, 4}};
                  },
                  "c.yaml:4:5: #/nodes/0: island GPU index 4 is out of range: the nodes have 4 "
                  "GPUs (0..3)"},
        ErrorCase{"GpuInTwoIslands", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    s.node_groups[0].islands = {{0, 1}, {1, 2, 3}};
                  },
                  "c.yaml:4:5: #/nodes/0: GPU 1 is in two NVLink islands"},
        ErrorCase{"IslandsMissAGpu", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    s.node_groups[0].islands = {{0, 1}, {3}};
                  },
                  "c.yaml:4:5: #/nodes/0: the islands cover 3 GPUs but the nodes have 4; list "
                  "every GPU index once"},  // 2 + 1 = 3
        ErrorCase{"ControlInNodeName", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    std::vector<std::string> names = s.node_groups[0].names.Expand();
                    names[1] = "n\x01";
                    s.node_groups[0].names = names;
                  },
                  absl::StrCat("c.yaml:4:5: #/nodes/0: node name 'n\\x01': control character "
                               "\\x01 is not allowed (byte 2)",
                               kPrintable)},
        ErrorCase{"NodeTwice", &TopologyBuilder::AddNodes,
                  [](TopologySpec& s) {
                    AddGroup(s, {"n2", "n1"}, 4);
                  },
                  "c.yaml:5:5: #/nodes/1: node 'n1' is declared twice (first on line 4)"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    AddDomains, StepErrorTest,
    ::testing::Values(
        ErrorCase{"DomainWithoutName", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) { AddDomain(s, "", {"n0"}); },
                  "c.yaml:8:5: #/nvlink_domains/0: an NVLink domain needs a name"},
        ErrorCase{"DelInDomainName", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) { AddDomain(s, "rack\x7f", {"n0"}); },
                  absl::StrCat("c.yaml:8:5: #/nvlink_domains/0: NVLink domain name 'rack\\x7f': "
                               "control character \\x7f is not allowed (byte 5)",
                               kPrintable)},
        ErrorCase{"DomainWithoutNodes", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) { AddDomain(s, "rack", {}); },
                  "c.yaml:8:5: #/nvlink_domains/0: an NVLink domain needs at least one node"},
        ErrorCase{"DomainTwice", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) {
                    AddDomain(s, "rack", {"n0"});
                    AddDomain(s, "rack", {"n1"});
                  },
                  "c.yaml:9:5: #/nvlink_domains/1: NVLink domain 'rack' is declared twice"},
        ErrorCase{"DomainNamedAfterANode", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) { AddDomain(s, "n1", {"n0"}); },
                  "c.yaml:8:5: #/nvlink_domains/0: NVLink domain 'n1' has the name of a node; "
                  "pick another name"},
        ErrorCase{"DomainNodeNotDeclared", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) {
                    AddDomain(s, "rack", {"n0", "n9"});
                  },
                  "c.yaml:8:5: #/nvlink_domains/0: node 'n9' is not declared under nodes"},
        ErrorCase{"NodeInTwoDomains", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) {
                    AddDomain(s, "rack", {"n0"});
                    AddDomain(s, "rack2", {"n1", "n0"});
                  },
                  "c.yaml:9:5: #/nvlink_domains/1: node 'n0' is in two NVLink domains: 'rack' "
                  "(line 8) and 'rack2'"},
        ErrorCase{"DomainNodeWithIslands", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) {
                    s.node_groups[0].islands = {{0, 1}, {2, 3}};
                    AddDomain(s, "rack", {"n0", "n1"});
                  },
                  "c.yaml:8:5: #/nvlink_domains/0: node 'n0' has 2 NVLink islands; a node in a "
                  "multi-node NVLink domain must have one"},
        ErrorCase{"DomainGpuCount", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) {
                    AddDomain(s, "rack", {"n0", "n1"}).expected_gpus = 16;
                  },
                  "c.yaml:8:5: #/nvlink_domains/0: NVLink domain 'rack' declares 16 GPUs but its "
                  "nodes have 8"},  // 2 nodes x 4 GPUs = 8
        // Spares leave at least one node to place on: 0..nodes-1 (here 0..1).
        ErrorCase{"DomainSparesEveryNode", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) {
                    AddDomain(s, "rack", {"n0", "n1"}).spares = 2;
                  },
                  "c.yaml:8:5: #/nvlink_domains/0/spares: NVLink domain 'rack' keeps 2 spare "
                  "nodes but has 2; spares must be from 0 to one less than its nodes (1)"},
        ErrorCase{"DomainSparesNegativeAtItsKey", &TopologyBuilder::AddDomains,
                  [](TopologySpec& s) {
                    DomainSpec& d = AddDomain(s, "rack", {"n0", "n1"});
                    d.spares = -1;
                    d.spares_loc = SourceLoc{"c.yaml", 8, 40, "#/nvlink_domains/0/spares"};
                  },
                  "c.yaml:8:40: #/nvlink_domains/0/spares: NVLink domain 'rack' keeps -1 spare "
                  "nodes but has 2; spares must be from 0 to one less than its nodes (1)"}),
    [](const auto& info) { return info.param.name; });

TEST(TopologyBuilderTest, SparesAreCarriedIntoTheModelAndBack) {
  TopologySpec spec = Base();
  AddDomain(spec, "rack", {"n0", "n1"}).spares = 1;  // the most 2 nodes allow
  absl::StatusOr<std::shared_ptr<const Topology>> topo = TopologyBuilder(spec).Build();
  ASSERT_THAT(topo, IsOk());
  const NvlDomain& rack = (*topo)->domains()[(*topo)->FindDomain("rack")];
  EXPECT_TRUE(rack.multi_node);
  EXPECT_EQ(rack.spares, 1);
  TopologySpec back = (*topo)->ToSpec();
  ASSERT_EQ(back.domains.size(), 1u);
  EXPECT_EQ(back.domains[0].spares, 1);
  // A model that differs only in spares is a different model.
  spec.domains[0].spares = 0;
  absl::StatusOr<std::shared_ptr<const Topology>> none = TopologyBuilder(spec).Build();
  ASSERT_THAT(none, IsOk());
  EXPECT_THAT(CompareTopologies(**topo, **none),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "spares of NVLink domain rack differs: '1' vs '0'"));
}

INSTANTIATE_TEST_SUITE_P(
    AssignGpus, StepErrorTest,
    ::testing::Values(
        // The multi-node domain comes first; n0's second island then wants its name.
        ErrorCase{"IslandDomainNameTaken", &TopologyBuilder::AssignGpus,
                  [](TopologySpec& s) {
                    s.node_groups[0].islands = {{0, 1}, {2, 3}};
                    AddGroup(s, {"m0"}, 4);
                    AddDomain(s, "n1:nvl1", {"m0"});
                    s.switches[0].nodes.push_back("m0");
                  },
                  "c.yaml:4:5: #/nodes/0: NVLink domain name 'n1:nvl1' is used twice"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    AddSwitches, StepErrorTest,
    ::testing::Values(
        ErrorCase{"NoSwitches", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches.clear(); },
                  "c.yaml: #/switches: no switches are declared: every node must be under a leaf "
                  "switch"},
        ErrorCase{"SwitchWithoutName", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[1].name = ""; },
                  "c.yaml:11:5: #/switches/1: a switch needs a name"},
        ErrorCase{"NewlineInSwitchName", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[1].name = "spine\n"; },
                  absl::StrCat("c.yaml:11:5: #/switches/1: switch name 'spine\\x0a': control "
                               "character \\x0a is not allowed (byte 6)",
                               kPrintable)},
        ErrorCase{"SwitchTwice", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[1].name = "leaf0"; },
                  "c.yaml:11:5: #/switches/1: switch 'leaf0' is declared twice (first on line "
                  "10)"},
        ErrorCase{"UnknownTier", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[1].tier = "spline"; },
                  "c.yaml:11:5: #/switches/1/tier: unknown tier 'spline'; tiers are leaf, spine, "
                  "core"},
        ErrorCase{"NodesAndSwitches", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[1].nodes = {"n0"}; },
                  "c.yaml:11:5: #/switches/1: switch 'spine0' lists both nodes and switches; a "
                  "leaf holds nodes, a higher switch holds switches"},
        ErrorCase{"NeitherNodesNorSwitches", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[1].switches.clear(); },
                  "c.yaml:11:5: #/switches/1: switch 'spine0' has no nodes and no switches"},
        ErrorCase{"LinkTooFast", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[0].link_gbps = 2e6; },
                  "c.yaml:10:5: #/switches/0/link_gbps: link_gbps must be a positive number of "
                  "Gb/s up to 1000000"},
        ErrorCase{"OversubscriptionBelowOne", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[0].oversubscription = 0.5; },
                  "c.yaml:10:5: #/switches/0/oversubscription: oversubscription is a "
                  "downlink:uplink ratio and must be from 1 to 1000"},
        ErrorCase{"NegativeRail", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[0].rail = -2; },
                  "c.yaml:10:5: #/switches/0/rail: rail must be 0 or more"},
        ErrorCase{"RailOnASpine", &TopologyBuilder::AddSwitches,
                  [](TopologySpec& s) { s.switches[1].rail = 0; },
                  "c.yaml:11:5: #/switches/1/rail: only a leaf switch that holds nodes carries a "
                  "rail"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    AttachNodesAndChildren, StepErrorTest,
    ::testing::Values(
        ErrorCase{"NodeNotDeclared", &TopologyBuilder::AttachNodesAndChildren,
                  [](TopologySpec& s) { s.switches[0].nodes.push_back("n9"); },
                  "c.yaml:10:5: #/switches/0/nodes: node 'n9' is not declared under nodes"},
        ErrorCase{"NodeListedTwice", &TopologyBuilder::AttachNodesAndChildren,
                  [](TopologySpec& s) { s.switches[0].nodes.push_back("n0"); },
                  "c.yaml:10:5: #/switches/0/nodes: node 'n0' is listed twice"},
        ErrorCase{"RailPastTheGpus", &TopologyBuilder::AttachNodesAndChildren,
                  [](TopologySpec& s) { s.switches[0].rail = 4; },  // GPUs 0..3
                  "c.yaml:10:5: #/switches/0/rail: rail 4 does not exist on node 'n0', which has "
                  "4 GPUs"},
        ErrorCase{"ChildNotDeclared", &TopologyBuilder::AttachNodesAndChildren,
                  [](TopologySpec& s) { s.switches[1].switches.push_back("leaf9"); },
                  "c.yaml:11:5: #/switches/1/switches: switch 'leaf9' is not declared"},
        ErrorCase{"ChildListedTwice", &TopologyBuilder::AttachNodesAndChildren,
                  [](TopologySpec& s) { s.switches[1].switches.push_back("leaf0"); },
                  "c.yaml:11:5: #/switches/1/switches: switch 'leaf0' is listed twice"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    FabricShape, StepErrorTest,
    ::testing::Values(
        ErrorCase{"Cycle", &TopologyBuilder::CheckCycles,
                  [](TopologySpec& s) {
                    AddSwitch(s, "core0", "core", {}, {"spine0"});
                    s.switches[1].switches.push_back("core0");
                  },
                  "c.yaml:12:5: #/switches/2/switches: switch cycle: spine0 -> core0 -> spine0"},
        ErrorCase{"ChildTierNotLower", &TopologyBuilder::CheckTierOrder,
                  [](TopologySpec& s) { s.switches[1].tier = "leaf"; },
                  "c.yaml:11:5: #/switches/1/switches: switch 'leaf0' (tier leaf) is below "
                  "'spine0' (tier leaf); a child's tier must be lower than its parent's"},
        ErrorCase{"NodeUnderNoLeaf", &TopologyBuilder::AssignLeaves,
                  [](TopologySpec& s) { s.node_groups[0].names.push_back("n2"); },
                  "c.yaml:4:5: #/nodes/0: node 'n2' is under no leaf switch; list it in the "
                  "nodes of one leaf (or of one leaf per rail)"},
        ErrorCase{"NodeUnderTwoLeaves", &TopologyBuilder::AssignLeaves,
                  [](TopologySpec& s) { AddSwitch(s, "leaf1", "leaf", {"n1"}); },
                  "c.yaml:4:5: #/nodes/0: node 'n1' is under several leaf switches (leaf0, "
                  "leaf1); only rail leaves (rail: r) may share a node"},
        ErrorCase{"RailGap", &TopologyBuilder::AssignLeaves,
                  [](TopologySpec& s) {
                    s.switches[0].rail = 0;
                    AddSwitch(s, "rail2", "leaf", {"n0", "n1"}).rail = 2;
                  },
                  "c.yaml:4:5: #/nodes/0: node 'n0' has rail leaves for rails 0,2; every rail "
                  "0..R-1 needs exactly one leaf"},
        // leaf0 lists its 2 nodes, then spine0 the 2 under leaf0: 2 + 2 = 4 > 3.
        ErrorCase{"NodePairs", &TopologyBuilder::ComputeNodesUnder, [](TopologySpec&) {},
                  "c.yaml:11:5: #/switches/1: the fabric is too densely connected to model: "
                  "listing the nodes under each switch passes 3 entries at switch 'spine0'; "
                  "check the switches lists",
                  NodePairs(3)},
        // spine0 has no parent; leaf0 merges spine0's list of 1: 1 > 0.
        ErrorCase{"AncestorPairs", &TopologyBuilder::ComputeAncestors, [](TopologySpec&) {},
                  "c.yaml:10:5: #/switches/0: the fabric is too densely connected to model: "
                  "listing the switches above each switch passes 0 entries at switch 'leaf0'; "
                  "check the switches lists",
                  AncestorPairs(0)}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------
// What each step builds.

TEST(TopologyBuilderTest, SetClusterCopiesTheSettings) {
  TopologySpec spec = Base();
  spec.link_gbps = 200;
  spec.nvlink_alpha_us = 0.5;
  spec.net_alpha_us = 0;  // 0 is a valid latency
  TopologyBuilder b(spec);
  ASSERT_THAT(b.SetCluster(), IsOk());
  EXPECT_EQ(b.model().name(), "c");
  EXPECT_EQ(b.model().link_gbps(), 200);
  EXPECT_EQ(b.model().nvlink_alpha_us(), 0.5);
  EXPECT_EQ(b.model().net_alpha_us(), 0);
}

TEST(TopologyBuilderTest, TiersAndModelsKeepTheirOrder) {
  TopologySpec spec = Base();
  spec.tiers = {"tor", "agg"};
  AddModel(spec, "B200", 1800);
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::AddGpuModels), IsOk());
  EXPECT_THAT(b.model().tiers(), ElementsAre("tor", "agg"));
  EXPECT_EQ(b.model().FindTier("agg"), 1);
  ASSERT_EQ(b.model().gpu_models().size(), 2u);
  EXPECT_EQ(b.model().gpu_models()[1].name, "B200");
  EXPECT_EQ(b.model().gpu_models()[1].nvlink_gbps, 1800);
}

TEST(TopologyBuilderTest, AddNodesNumbersNodesInDeclarationOrder) {
  TopologySpec spec = Base();
  AddModel(spec, "B200", 1800);
  AddGroup(spec, {"m0"}, 2, "B200");
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::AddNodes), IsOk());
  const Topology& t = b.model();
  ASSERT_EQ(t.num_nodes(), 3);
  EXPECT_EQ(t.nodes()[2].name, "m0");
  EXPECT_EQ(t.nodes()[2].model, 1);  // B200
  EXPECT_EQ(t.FindNode("n1"), 1);
  EXPECT_EQ(t.num_gpus(), 0);  // numbered by AssignGpus
}

// n0 (4 H100 GPUs in two islands, declared out of order), g0 and g1 (2 B200 GPUs), h0 (2
// H100 GPUs); the NVLink domain "rack" holds h0, g1 and g0.
TEST(TopologyBuilderTest, AssignGpusPutsMultiNodeDomainsFirst) {
  TopologySpec spec = Base();
  spec.node_groups[0].names = {"n0"};
  spec.node_groups[0].islands = {{3, 2}, {1, 0}};
  AddModel(spec, "B200", 1800);
  AddGroup(spec, {"g0", "g1"}, 2, "B200");
  AddGroup(spec, {"h0"}, 2);
  AddDomain(spec, "rack", {"h0", "g1", "g0"}).expected_gpus = 6;  // 3 nodes x 2 GPUs
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::AssignGpus), IsOk());
  const Topology& t = b.model();
  // GPUs node by node: n0 0..3, g0 4..5, g1 6..7, h0 8..9.
  ASSERT_EQ(t.num_gpus(), 10);
  EXPECT_THAT(t.nodes()[2].gpus, ElementsAre(6, 7));
  EXPECT_THAT(t.gpus()[7], FieldsAre(2, 1, 0));  // g1, index 1, in "rack"
  ASSERT_EQ(t.num_domains(), 3);
  const NvlDomain& rack = t.domains()[0];
  EXPECT_EQ(rack.name, "rack");
  EXPECT_TRUE(rack.multi_node);
  EXPECT_THAT(rack.nodes, ElementsAre(1, 2, 3));
  EXPECT_THAT(rack.gpus, ElementsAre(4, 5, 6, 7, 8, 9));
  EXPECT_EQ(rack.nvlink_gbps, 900);  // the slowest model's: min(1800, 900)
  // n0's islands, sorted: {0, 1} then {2, 3}.
  EXPECT_EQ(t.domains()[1].name, "n0:nvl0");
  EXPECT_THAT(t.domains()[1].gpus, ElementsAre(0, 1));
  EXPECT_EQ(t.domains()[2].name, "n0:nvl1");
  EXPECT_THAT(t.nodes()[0].domains, ElementsAre(1, 2));
  EXPECT_EQ(t.FindDomain("n0:nvl1"), 2);
}

TEST(TopologyBuilderTest, AddSwitchesTakesTheClusterSpeedByDefault) {
  TopologySpec spec = Base();
  spec.link_gbps = 200;
  spec.switches[1].link_gbps = 800;
  spec.switches[1].oversubscription = 2;
  spec.switches[0].rail = 0;
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::AddSwitches), IsOk());
  const Topology& t = b.model();
  ASSERT_EQ(t.num_switches(), 2);
  EXPECT_EQ(t.FindSwitch("spine0"), 1);
  const Switch& leaf = t.switches()[0];
  EXPECT_EQ(leaf.tier, 0);
  EXPECT_EQ(leaf.rail, 0);
  EXPECT_EQ(leaf.link_gbps, 200);  // the cluster's
  EXPECT_EQ(leaf.oversubscription, 1);
  const Switch& spine = t.switches()[1];
  EXPECT_EQ(spine.tier, 1);
  EXPECT_EQ(spine.link_gbps, 800);
  EXPECT_EQ(spine.oversubscription, 2);
  EXPECT_TRUE(leaf.nodes.empty());  // attached by the next step
}

// Two leaves, each under both spines; a core over both spines.
TopologySpec MultiRooted() {
  TopologySpec spec = Base();
  spec.switches.clear();
  AddSwitch(spec, "leaf0", "leaf", {"n0"});
  AddSwitch(spec, "leaf1", "leaf", {"n1"});
  AddSwitch(spec, "spine0", "spine", {}, {"leaf0", "leaf1"});
  AddSwitch(spec, "spine1", "spine", {}, {"leaf1", "leaf0"});
  AddSwitch(spec, "core0", "core", {}, {"spine0", "spine1"});
  return spec;
}

TEST(TopologyBuilderTest, AttachNodesAndChildrenLinksBothWays) {
  TopologySpec spec = MultiRooted();
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::AttachNodesAndChildren), IsOk());
  const std::vector<Switch>& sw = b.model().switches();
  EXPECT_THAT(sw[0].nodes, ElementsAre(0));
  EXPECT_THAT(sw[3].children, ElementsAre(1, 0));  // declaration order
  EXPECT_THAT(sw[0].parents, ElementsAre(2, 3));
  EXPECT_THAT(sw[2].parents, ElementsAre(4));
  EXPECT_TRUE(sw[4].parents.empty());
}

struct CycleCase {
  std::string name;
  void (*change)(TopologySpec&);
  std::string message;  // empty: no cycle
};

void PrintTo(const CycleCase& c, std::ostream* os) { *os << c.name; }

class CheckCyclesTest : public ::testing::TestWithParam<CycleCase> {};

TEST_P(CheckCyclesTest, FindsCyclesOnly) {
  TopologySpec spec = MultiRooted();
  GetParam().change(spec);
  TopologyBuilder b(spec);
  ASSERT_THAT(RunBefore(b, &TopologyBuilder::CheckCycles), IsOk());
  if (GetParam().message.empty()) {
    EXPECT_THAT(b.CheckCycles(), IsOk());
  } else {
    EXPECT_THAT(b.CheckCycles(), StatusIs(absl::StatusCode::kInvalidArgument, GetParam().message));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CheckCyclesTest,
    ::testing::Values(
        // Each leaf is reached twice, through both spines: no cycle.
        CycleCase{"Diamonds", [](TopologySpec&) {}, ""},
        CycleCase{"SelfLoop", [](TopologySpec& s) { s.switches[2].switches.push_back("spine0"); },
                  "c.yaml:12:5: #/switches/2/switches: switch cycle: spine0 -> spine0"},
        // From each new switch in declaration order: leaf0, leaf1 and spine0 are done; from
        // spine1, core0 is new and lists spine0 (done), then spine1, still on the path.
        CycleCase{"ThroughTheCore",
                  [](TopologySpec& s) { s.switches[3].switches.push_back("core0"); },
                  "c.yaml:14:5: #/switches/4/switches: switch cycle: spine1 -> core0 -> spine1"},
        CycleCase{"LeafUnderItsLeaf",
                  [](TopologySpec& s) {
                    s.switches[0].nodes.clear();
                    s.switches[0].switches = {"leaf1"};
                    s.switches[1].nodes.clear();
                    s.switches[1].switches = {"leaf0"};
                  },
                  "c.yaml:11:5: #/switches/1/switches: switch cycle: leaf0 -> leaf1 -> leaf0"}),
    [](const auto& info) { return info.param.name; });

TEST(TopologyBuilderTest, CheckTierOrderSortsSwitchesBottomUp) {
  TopologySpec spec = MultiRooted();
  std::swap(spec.switches[0], spec.switches[4]);  // core0 first, leaf0 last
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::CheckTierOrder), IsOk());
  // ComputeNodesUnder walks that order: core0's list needs its spines', theirs the leaves'.
  ASSERT_THAT(b.ComputeNodesUnder(), IsOk());
  EXPECT_THAT(b.model().switches()[0].nodes_under, ElementsAre(0, 1));
}

TEST(TopologyBuilderTest, AssignLeavesOrdersRailLeavesByRail) {
  TopologySpec spec = Base();
  spec.switches.clear();
  AddSwitch(spec, "rail1", "leaf", {"n0", "n1"}).rail = 1;
  AddSwitch(spec, "rail0", "leaf", {"n1", "n0"}).rail = 0;
  AddSwitch(spec, "spine0", "spine", {}, {"rail0", "rail1"});
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::AssignLeaves), IsOk());
  EXPECT_THAT(b.model().nodes()[0].leaves, ElementsAre(1, 0));  // leaves[r] carries rail r
  EXPECT_THAT(b.model().nodes()[1].leaves, ElementsAre(1, 0));
}

TEST(TopologyBuilderTest, ComputeNodesUnderListsEachNodeOnce) {
  TopologySpec spec = MultiRooted();
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::ComputeNodesUnder), IsOk());
  const std::vector<Switch>& sw = b.model().switches();
  EXPECT_THAT(sw[0].nodes_under, ElementsAre(0));
  EXPECT_THAT(sw[3].nodes_under, ElementsAre(0, 1));  // leaf1's node came first: sorted
  EXPECT_THAT(sw[4].nodes_under, ElementsAre(0, 1));  // reached through both spines
}

// Switches with the same nodes below them hold one list (SharedNodes): rail leaves of the
// same nodes, spines with the same children (as a rail's cores), spines with other children
// over the same nodes; a switch with other nodes below it has a list of its own.
TEST(TopologyBuilderTest, ComputeNodesUnderSharesEqualLists) {
  TopologySpec spec = Base();
  spec.switches.clear();
  AddSwitch(spec, "rail0", "leaf", {"n0", "n1"}).rail = 0;
  AddSwitch(spec, "rail1", "leaf", {"n1", "n0"}).rail = 1;
  AddSwitch(spec, "spine0", "spine", {}, {"rail0"});
  AddSwitch(spec, "spine1", "spine", {}, {"rail0"});
  AddSwitch(spec, "spine2", "spine", {}, {"rail1", "rail0"});
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::ComputeNodesUnder), IsOk());
  const std::vector<Switch>& sw = b.model().switches();
  for (const Switch& s : sw) {
    EXPECT_THAT(s.nodes_under, ElementsAre(0, 1)) << s.name;
    EXPECT_TRUE(s.nodes_under.SameList(sw[0].nodes_under)) << s.name;
  }

  TopologySpec multi = MultiRooted();
  TopologyBuilder m(multi);
  ASSERT_THAT(RunThrough(m, &TopologyBuilder::ComputeNodesUnder), IsOk());
  const std::vector<Switch>& ms = m.model().switches();
  EXPECT_FALSE(ms[0].nodes_under.SameList(ms[1].nodes_under));  // leaf0 {0}, leaf1 {1}
  EXPECT_TRUE(ms[2].nodes_under.SameList(ms[3].nodes_under));   // children in another order
  EXPECT_TRUE(ms[4].nodes_under.SameList(ms[2].nodes_under));   // core0 over both spines
}

struct PairBoundCase {
  int64_t bound;
  bool ok;
};

class PairBoundTest : public ::testing::TestWithParam<PairBoundCase> {};

// MultiRooted() merges 1 + 1 (the leaves' nodes) + 2 + 2 (each spine's two leaves) + 4 (the
// core's two spines) = 10 (switch, node) pairs, and top-down 0 (core0) + 1 + 1 (each spine
// merges core0's list of 1) + 2 + 2 + 2 + 2 (each leaf merges both spines' lists of 2) = 10
// (switch, switch above) pairs.
TEST_P(PairBoundTest, RefusesPastTheBound) {
  TopologySpec spec = MultiRooted();
  Bounds nodes, ancestors;
  nodes.max_switch_node_pairs = ancestors.max_switch_ancestor_pairs = GetParam().bound;
  TopologyBuilder by_nodes(spec, nodes), by_ancestors(spec, ancestors);
  EXPECT_EQ(RunThrough(by_nodes, &TopologyBuilder::ComputeNodesUnder).ok(), GetParam().ok);
  EXPECT_EQ(RunThrough(by_ancestors, &TopologyBuilder::ComputeAncestors).ok(), GetParam().ok);
}

INSTANTIATE_TEST_SUITE_P(MultiRooted, PairBoundTest,
                         ::testing::Values(PairBoundCase{9, false}, PairBoundCase{10, true},
                                           PairBoundCase{11, true}));

// leaf0 (400 Gb/s, 1:1) under spine0 (800 Gb/s, 4:1) and spine1 (100 Gb/s), both under core0.
TEST(TopologyBuilderTest, ComputeAncestorsKeepsTheBestWayUp) {
  TopologySpec spec = MultiRooted();
  spec.switches[2].link_gbps = 800;
  spec.switches[2].oversubscription = 4;
  spec.switches[3].link_gbps = 100;
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::ComputeAncestors), IsOk());
  constexpr double kInf = std::numeric_limits<double>::infinity();
  using A = TopologyBuilder::Ancestor;
  auto is = [](SwitchId id, int tier, double up) {
    return ::testing::AllOf(::testing::Field(&A::id, id), ::testing::Field(&A::tier, tier),
                            ::testing::Field(&A::up_gbps, up));
  };
  EXPECT_THAT(b.ancestors(4), ElementsAre(is(4, 2, kInf)));
  EXPECT_THAT(b.ancestors(2), ElementsAre(is(2, 1, kInf), is(4, 2, 200)));  // 800 / 4 = 200
  EXPECT_THAT(b.ancestors(0),
              ElementsAre(is(0, 0, kInf), is(2, 1, 400),  // leaf0's uplink: 400 / 1
                          is(3, 1, 400),                  // the same
                          is(4, 2, 200)));                // max(min(400, 200), min(400, 100)) = 200
}

TEST(TopologyBuilderTest, GroupLeavesSharesAGroupBetweenNodesOfTheSameLeaves) {
  TopologySpec spec = Base();
  spec.node_groups[0].names = {"n0", "n1", "n2"};
  spec.switches[0].nodes = {"n0", "n2"};
  AddSwitch(spec, "leaf1", "leaf", {"n1"});
  spec.switches[1].switches.push_back("leaf1");
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::GroupLeaves), IsOk());
  EXPECT_EQ(b.model().num_leaf_groups(), 2);
  EXPECT_EQ(b.model().LeafGroup(0), 0);
  EXPECT_EQ(b.model().LeafGroup(1), 1);
  EXPECT_EQ(b.model().LeafGroup(2), 0);  // leaf0, as n0
}

// MultiRooted(): at the spine tier leaf0, leaf1 and both spines are one component, with both
// spines above both leaves; at the core tier core0 joins it.
TEST(TopologyBuilderTest, ComputeTierComponentsAnswersFromThem) {
  TopologySpec spec = MultiRooted();
  spec.switches[0].link_gbps = 100;  // leaf0
  TopologyBuilder b(spec);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::ComputeTierComponents), IsOk());
  const Topology& t = b.model();
  EXPECT_TRUE(t.has_tier_components());
  EXPECT_EQ(t.num_inexact_components(), 0);
  // Through spine0 or spine1, at min(leaf0's 100, leaf1's 400, the spine's 400) Gb/s.
  EXPECT_EQ(t.CommonTier(0, 1), 1);
  EXPECT_EQ(t.PathGbps(0, 1), 100);
  EXPECT_EQ(t.CommonTier(1, 1), Topology::kSameNode);
}

TEST(TopologyBuilderTest, ComputeTierComponentsOnlyWhenAsked) {
  TopologySpec spec = MultiRooted();
  Bounds bounds;
  bounds.tier_components = false;
  TopologyBuilder b(spec, bounds);
  ASSERT_THAT(RunThrough(b, &TopologyBuilder::ComputeTierComponents), IsOk());
  const Topology& t = b.model();
  EXPECT_FALSE(t.has_tier_components());
  // The same answers, from the ancestor lists.
  EXPECT_EQ(t.CommonTier(0, 1), 1);
  EXPECT_EQ(t.PathGbps(0, 1), 400);
}

// ---------------------------------------------------------------------------------------
// The steps together.

TEST(TopologyBuilderTest, StepsOneByOneBuildWhatCreateBuilds) {
  TopologySpec spec = MultiRooted();
  AddModel(spec, "GB200", 1800);
  AddGroup(spec, {"gb0", "gb1"}, 4, "GB200");
  AddDomain(spec, "rack", {"gb0", "gb1"});
  spec.switches[1].nodes = {"n1", "gb0", "gb1"};
  TopologyBuilder b(spec);
  for (Step step : TopologyBuilder::Steps()) ASSERT_THAT((b.*step)(), IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> created = Topology::Create(spec);
  ASSERT_THAT(created, IsOk());
  EXPECT_THAT(CompareTopologies(b.model(), **created), IsOk());
  for (NodeId x = 0; x < b.model().num_nodes(); ++x) {
    for (NodeId y = 0; y < b.model().num_nodes(); ++y) {
      EXPECT_EQ(b.model().CommonTier(x, y), (*created)->CommonTier(x, y));
      EXPECT_EQ(b.model().PathGbps(x, y), (*created)->PathGbps(x, y));
    }
  }
}

TEST(TopologyBuilderTest, DefaultBoundsAreTheNamedLimits) {
  Bounds b;
  EXPECT_EQ(b.max_switch_node_pairs, limits::kMaxSwitchNodePairs);
  EXPECT_EQ(b.max_switch_ancestor_pairs, limits::kMaxSwitchAncestorPairs);
  EXPECT_TRUE(b.tier_components);
}

}  // namespace
}  // namespace nvlplace
