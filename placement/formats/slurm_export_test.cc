// Tests for exporting Slurm's topology.conf and gres.conf (ExportSlurm): exact files, what
// stock Slurm sees of them, their size, and the round trip through ImportSlurm.
#include "placement/formats/slurm_export.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/read_file.h"
#include "placement/formats/slurm_testing.h"
#include "placement/formats/topology_yaml.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::Import;
using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::Options;
using ::nvlplace::testing::StatusIs;
using ::nvlplace::testing::TierOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const Topology> FromYaml(const std::string& yaml) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(yaml, "inline.yaml");
  EXPECT_THAT(spec, IsOk());
  if (!spec.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return topo.ok() ? *topo : nullptr;
}

// Drops the "# nvlplace:" annotations: what stock Slurm sees of an exported file.
std::string WithoutAnnotations(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "# nvlplace:")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text, absl::string_view prefix) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, prefix)) out.emplace_back(line);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Export, and the round trip.

// Export, import (both files, or topology.conf alone), build, compare; and export again. With
// multi-node NVLink domains, the same through the block description: topology-block.conf
// (ImportSlurm) and topology.yaml (ImportSlurmTopologyYaml), each alone or with gres.conf.
void ExpectRoundTrip(const Topology& m, const std::string& what) {
  SlurmFiles files = ExportSlurm(m);
  for (bool with_gres : {true, false}) {
    SCOPED_TRACE(what + (with_gres ? " with gres.conf" : " without gres.conf"));
    absl::StatusOr<std::shared_ptr<const Topology>> back =
        Import(files.topology_conf, with_gres ? files.gres_conf : "", Options(0));
    ASSERT_THAT(back, IsOk()) << files.topology_conf;
    EXPECT_THAT(CompareTopologies(m, **back), IsOk());
    EXPECT_EQ(ExportSlurm(**back).topology_conf, files.topology_conf);
    EXPECT_EQ(ExportSlurm(**back).gres_conf, files.gres_conf);
  }
  bool blocks = false;
  for (const NvlDomain& d : m.domains()) blocks = blocks || d.multi_node;
  EXPECT_EQ(files.block_conf.empty(), !blocks) << what;
  if (!blocks) return;
  SlurmExportOptions yaml_options;
  yaml_options.blocks = SlurmExportOptions::Blocks::kYaml;
  SlurmFiles yaml_files = ExportSlurm(m, yaml_options);
  EXPECT_TRUE(yaml_files.block_conf.empty());
  for (bool yaml : {false, true}) {
    const std::string& text = yaml ? yaml_files.topology_yaml : files.block_conf;
    for (bool with_gres : {true, false}) {
      SCOPED_TRACE(absl::StrCat(what, yaml ? " topology.yaml" : " topology-block.conf",
                                with_gres ? " with gres.conf" : ""));
      std::string gres = with_gres ? files.gres_conf : "";
      absl::StatusOr<SlurmImport> imported =
          yaml ? ImportSlurmTopologyYaml(text, "topology.yaml", gres, "gres.conf", Options(0))
               : ImportSlurmWithNotes(text, "topology-block.conf", gres, "gres.conf", Options(0));
      ASSERT_THAT(imported, IsOk()) << text;
      EXPECT_THAT(imported->notes, ElementsAre());
      absl::StatusOr<std::shared_ptr<const Topology>> back = Topology::Create(imported->spec);
      ASSERT_THAT(back, IsOk()) << text;
      EXPECT_THAT(CompareTopologies(m, **back), IsOk()) << text;
      EXPECT_EQ(ExportSlurm(**back, yaml ? yaml_options : SlurmExportOptions{}).topology_conf,
                files.topology_conf);
      EXPECT_EQ(
          yaml ? ExportSlurm(**back, yaml_options).topology_yaml : ExportSlurm(**back).block_conf,
          text);
    }
  }
  // Slurm 23.11's BlockLevels=, where every domain has the first one's node count.
  SlurmExportOptions levels_options;
  levels_options.block_levels = true;
  if (!CheckSlurmBlockExport(m, levels_options).ok()) return;
  std::string levels_conf = ExportSlurm(m, levels_options).block_conf;
  EXPECT_THAT(levels_conf, HasSubstr("\nBlockLevels=0")) << what;
  for (bool with_gres : {true, false}) {
    SCOPED_TRACE(
        absl::StrCat(what, " topology-block.conf for 23.11", with_gres ? " with gres.conf" : ""));
    absl::StatusOr<SlurmImport> imported =
        ImportSlurmWithNotes(levels_conf, "topology-block.conf", with_gres ? files.gres_conf : "",
                             "gres.conf", Options(0));
    ASSERT_THAT(imported, IsOk()) << levels_conf;
    EXPECT_THAT(imported->notes, ElementsAre());
    absl::StatusOr<std::shared_ptr<const Topology>> back = Topology::Create(imported->spec);
    ASSERT_THAT(back, IsOk()) << levels_conf;
    EXPECT_THAT(CompareTopologies(m, **back), IsOk()) << levels_conf;
    EXPECT_EQ(ExportSlurm(**back, levels_options).block_conf, levels_conf);
  }
}

// Names the cluster YAML takes but Slurm's files cannot hold as themselves are refused before
// anything is written: the export of a switch named 'le\\af0' read back as 'leaf0' in Slurm
// (an escape) and not at all in nvlplace's own import; one named 'le"af1' opened a quote
// that never closed.
struct UnexportableCase {
  std::string name;
  std::string from;  // replaced in the cluster below
  std::string to;
  std::string error;
};

class UnexportableTest : public ::testing::TestWithParam<UnexportableCase> {};

TEST_P(UnexportableTest, IsRefusedWithTheName) {
  const UnexportableCase& c = GetParam();
  std::string yaml =
      "name: c\ntiers: [leaf, spine]\ngpu_models: [{name: H100}]\n"
      "nodes: [{names: 'n[0-3]', gpus: 8, model: H100}]\n"
      "switches:\n  - {name: l0, tier: leaf, nodes: 'n[0-1]'}\n"
      "  - {name: l1, tier: leaf, nodes: 'n[2-3]'}\n"
      "  - {name: s0, tier: spine, switches: 'l0,l1'}\n";
  ASSERT_THAT(CheckSlurmExportable(*FromYaml(yaml)), IsOk());
  std::shared_ptr<const Topology> topo = FromYaml(absl::StrReplaceAll(yaml, {{c.from, c.to}}));
  ASSERT_NE(topo, nullptr);
  EXPECT_THAT(CheckSlurmExportable(*topo),
              ::nvlplace::testing::StatusIs(absl::StatusCode::kInvalidArgument, c.error));
}

INSTANTIATE_TEST_SUITE_P(
    Names, UnexportableTest,
    ::testing::Values(
        UnexportableCase{"BackslashInASwitch", "name: s0", "name: 's\\0'",
                         "switch 's\\0' has a backslash, which Slurm's files read as an escape "
                         "or a line continuation; rename it"},
        UnexportableCase{"QuoteInASwitch", "name: s0", "name: 's\"0'",
                         "switch 's\"0' has a quote, which Slurm's lines read as the start of a "
                         "quoted value; rename it"},
        UnexportableCase{"SpaceInASwitch", "name: s0", "name: 's 0'",
                         "switch 's 0' has a space, which ends a name in Slurm's hostlists; "
                         "rename it"},
        UnexportableCase{"CommaInTheClusterName", "name: c\n", "name: 'c,d'\n",
                         "cluster name 'c,d' has a comma, which Slurm's lists read as a "
                         "separator; rename it"}),
    [](const auto& info) { return info.param.name; });

// From Slurm 24.05 cons_tres takes the least-linked GPU first: the export for such a release
// writes no Links=, and the islands still come back from the nvlplace annotations.
TEST(ExportLinksTest, NoLinksForSlurm2405On) {
  EXPECT_TRUE(SlurmLinksHelp(22, 5));
  EXPECT_TRUE(SlurmLinksHelp(23, 11));
  EXPECT_TRUE(SlurmLinksHelp(24, 2));
  EXPECT_FALSE(SlurmLinksHelp(24, 5));
  EXPECT_FALSE(SlurmLinksHelp(24, 11));
  EXPECT_FALSE(SlurmLinksHelp(26, 5));
  absl::StatusOr<std::shared_ptr<const Topology>> m = LoadTopologyFile("configs/lab-islands.yaml");
  ASSERT_THAT(m, IsOk());
  SlurmFiles with = ExportSlurm(**m);
  SlurmFiles without = ExportSlurm(**m, SlurmExportOptions{.links = false});
  EXPECT_THAT(with.gres_conf, HasSubstr(" Links=-1,1,1,1,0,0,0,0\n"));
  EXPECT_THAT(without.gres_conf, Not(HasSubstr("Links=")));
  EXPECT_THAT(without.gres_conf, HasSubstr("File=/dev/nvidia7\n"));
  EXPECT_EQ(without.topology_conf, with.topology_conf);
  absl::StatusOr<std::shared_ptr<const Topology>> back =
      Import(without.topology_conf, without.gres_conf, Options(0));
  ASSERT_THAT(back, IsOk());
  EXPECT_THAT(CompareTopologies(**m, **back), IsOk());
}

TEST(RoundTripTest, EveryBundledConfig) {
  std::vector<std::string> configs = testing::ConfigFiles();
  ASSERT_FALSE(configs.empty()) << "no configs/*.yaml: run from the source root";
  for (const std::string& path : configs) {
    absl::StatusOr<std::shared_ptr<const Topology>> m = LoadTopologyFile(path);
    ASSERT_THAT(m, IsOk()) << path;
    ExpectRoundTrip(**m, path);
  }
}

TEST(ExportSlurmTest, CpuOnlyNodesHaveNoGresAndUnplacedNodesKeepTheirFlag) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(R"(name: m
tiers: [leaf]
gpu_models: [{name: H100}, {name: A100}]
nodes:
  - {names: "g0", gpus: 8, model: H100}
  - {names: "k0", gpus: 4, model: A100, placed: false}
  - {names: "cpu[0-1]", gpus: 0}
switches: [{name: l, tier: leaf, nodes: "g0,k0,cpu[0-1]"}]
)",
                                                        "m.yaml");
  ASSERT_THAT(spec, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> m = Topology::Create(*spec);
  ASSERT_THAT(m, IsOk());
  SlurmFiles files = ExportSlurm(**m);
  EXPECT_THAT(files.topology_conf, HasSubstr("SwitchName=l Nodes=g0,k0,cpu[0-1]\n"));
  EXPECT_THAT(files.topology_conf, HasSubstr("# nvlplace: nodes names=cpu[0-1] gpus=0\n"));
  EXPECT_THAT(files.topology_conf,
              HasSubstr("# nvlplace: nodes names=k0 gpus=4 model=A100 placed=false\n"));
  EXPECT_THAT(files.topology_conf,
              HasSubstr("# nvlplace: gpu_model name=A100 nvlink_gbps=600 pcie_gbps=64\n"));
  EXPECT_THAT(files.gres_conf, Not(HasSubstr("cpu")));
  EXPECT_THAT(files.gres_conf, HasSubstr("NodeName=k0 Name=gpu Type=A100 File=/dev/nvidia3"));
  ExpectRoundTrip(**m, "cpu-only and unplaced nodes");
}

// What the bundled configs do not exercise: rails under a spine of their own, a domain split
// across leaves, a leaf mixing domain and plain nodes, speeds that LinkSpeed cannot hold,
// oversubscription, an unused GPU model, custom tier names and a name with a space.
const char kOddCluster[] = R"(
name: odd cluster
tiers: [tor, agg, top]
link_gbps: 200
latency: {nvlink_alpha_us: 0.75, net_alpha_us: 3.1}
gpu_models:
  - {name: GB200, nvlink_gbps: 1800}
  - {name: H100, nvlink_gbps: 900}
  - {name: spare, nvlink_gbps: 123.456}
nodes:
  - {names: "gb[01-04]", gpus: 4, model: GB200}
  - {names: "h[1-2]", gpus: 8, model: H100, islands: [[0, 1, 2, 3], [4, 5, 6, 7]]}
  - {names: "r[1-2]", gpus: 2, model: H100}
nvlink_domains:
  - {name: rackA, nodes: "gb[01-04]", gpus: 16}
switches:
  - {name: tor0, tier: tor, nodes: "gb[01-02]", link_gbps: 12.5}
  - {name: tor1, tier: tor, nodes: "gb[03-04],h1"}
  - {name: tor2, tier: tor, nodes: h2, oversubscription: 1.5}
  - {name: rail0, tier: tor, rail: 0, nodes: "r[1-2]"}
  - {name: rail1, tier: tor, rail: 1, nodes: "r[1-2]"}
  - {name: railspine1, tier: agg, switches: rail1}
  - {name: agg0, tier: agg, switches: "tor[0-2],rail0", link_gbps: 800}
  - {name: top, tier: top, switches: "agg0,railspine1"}
)";

// Two racks under one leaf, which sits straight under a core (no spine switch).
const char kTwoRacksPerLeaf[] = R"(
name: two-racks
gpu_models: [{name: GB200, nvlink_gbps: 1800}]
nodes: [{names: "gb[01-08]", gpus: 4, model: GB200}]
nvlink_domains:
  - {name: rack1, nodes: "gb[01-04]"}
  - {name: rack2, nodes: "gb[05-08]"}
switches:
  - {name: leaf0, tier: leaf, nodes: "gb[01-08]"}
  - {name: core0, tier: core, switches: leaf0}
)";

// A domain named like a switch cannot become a Slurm switch.
const char kDomainNamedLikeSwitch[] = R"(
name: clash
tiers: [leaf]
gpu_models: [{name: GB200}]
nodes: [{names: "gb[1-2]", gpus: 4, model: GB200}]
nvlink_domains: [{name: leaf0, nodes: "gb[1-2]"}]
switches: [{name: leaf0, tier: leaf, nodes: "gb[1-2]"}]
)";

// Racks of unequal size and spares, one rack of one node, nodes in no rack, a rail-optimized
// fabric under them, a name with a '#', six racks (BlockSizes up to 8 racks): the block
// description must still give the model back exactly.
const char kUnevenRacks[] = R"(
name: uneven
tiers: [leaf, spine]
gpu_models: [{name: GB200}, {name: H100}]
nodes:
  - {names: "gb[01-22]", gpus: 4, model: GB200}
  - {names: "h[1-2]", gpus: 8, model: H100}
nvlink_domains:
  - {name: rack-1, nodes: "gb[01-06]", spares: 2}
  - {name: "rack#2", nodes: "gb[07-10]"}
  - {name: r3, nodes: "gb[11-15]", spares: 1}
  - {name: r4, nodes: gb16}
  - {name: r5, nodes: "gb[17-20]", spares: 3}
  - {name: r6, nodes: "gb[21-22]"}
switches:
  - {name: rail0, tier: leaf, rail: 0, nodes: "gb[01-22]"}
  - {name: rail1, tier: leaf, rail: 1, nodes: "gb[01-22]"}
  - {name: rail2, tier: leaf, rail: 2, nodes: "gb[01-22]"}
  - {name: rail3, tier: leaf, rail: 3, nodes: "gb[01-22]"}
  - {name: hleaf, tier: leaf, nodes: "h[1-2]", link_gbps: 200}
  - {name: spine, tier: spine, switches: "rail[0-3],hleaf", oversubscription: 2}
)";

TEST(RoundTripTest, OddShapes) {
  for (const char* yaml : {kOddCluster, kTwoRacksPerLeaf, kDomainNamedLikeSwitch, kUnevenRacks}) {
    std::shared_ptr<const Topology> m = FromYaml(yaml);
    ASSERT_NE(m, nullptr);
    ExpectRoundTrip(*m, m->name());
  }
}

// Names holding '#' (Slurm reads "\#" as one): a multi-node NVLink domain, a switch, a GPU
// model and nodes. The fuzz finding slurm_import/crash-check-hash-in-name-round-trip-26e9548c
// came back from its own export as a switch cut at the '#'.
TEST(RoundTripTest, NamesWithAHash) {
  std::shared_ptr<const Topology> m = FromYaml(R"(name: hashes
tiers: [leaf]
gpu_models: [{name: "H100#sxm", nvlink_gbps: 900, pcie_gbps: 128}]
nodes:
  - {names: "n#[0-3]", gpus: 4, model: "H100#sxm"}
nvlink_domains:
  - {name: "rack#1", nodes: "n#[0-1]"}
  - {name: "rack#2", nodes: "n#[2-3]"}
switches:
  - {name: "leaf#0", tier: leaf, nodes: "n#[0-3]"}
)");
  ASSERT_NE(m, nullptr);
  SlurmFiles files = ExportSlurm(*m);
  EXPECT_THAT(files.topology_conf, HasSubstr("SwitchName=rack\\#1 Nodes=n\\#[0-1]\n"));
  EXPECT_THAT(files.gres_conf, HasSubstr("NodeName=n\\#[0-3] Name=gpu Type=H100\\#sxm "));
  ExpectRoundTrip(*m, m->name());
}

TEST(ExportSlurmTest, WritesLabClusterExactly) {
  absl::StatusOr<std::shared_ptr<const Topology>> m = LoadTopologyFile("configs/lab-h100.yaml");
  ASSERT_THAT(m, IsOk());
  SlurmFiles files = ExportSlurm(**m);
  EXPECT_EQ(files.topology_conf,
            "# topology.conf of cluster lab-h100, written by nvlplace for Slurm's "
            "topology/tree.\n"
            "# Slurm reads the SwitchName lines and ignores comments; the \"# nvlplace:\" "
            "comments carry\n"
            "# what Slurm cannot express (GPU models, NVLink domains, tiers, rails) for "
            "nvlplace.\n"
            "# nvlplace: cluster name=lab-h100 tiers=leaf,spine link_gbps=400 "
            "nvlink_alpha_us=0.6 net_alpha_us=2.7\n"
            "# nvlplace: gpu_model name=H100 nvlink_gbps=900 pcie_gbps=128\n"
            "# nvlplace: nodes names=node[0-7] gpus=8 model=H100\n"
            "# nvlplace: switch name=leaf0 tier=leaf\n"
            "SwitchName=leaf0 Nodes=node[0-3]\n"
            "# nvlplace: switch name=leaf1 tier=leaf\n"
            "SwitchName=leaf1 Nodes=node[4-7]\n"
            "# nvlplace: switch name=spine0 tier=spine\n"
            "SwitchName=spine0 Switches=leaf[0-1]\n");
  std::vector<std::string> gres = Lines(files.gres_conf, "NodeName=");
  ASSERT_EQ(gres.size(), 8u);  // one shape x 8 GPU indexes
  EXPECT_EQ(gres[0],
            "NodeName=node[0-7] Name=gpu Type=H100 File=/dev/nvidia0 "
            "Links=-1,1,1,1,1,1,1,1");
  EXPECT_EQ(gres[7],
            "NodeName=node[0-7] Name=gpu Type=H100 File=/dev/nvidia7 "
            "Links=1,1,1,1,1,1,1,-1");
}

TEST(ExportSlurmTest, IslandsGiveLinksAndAnnotation) {
  absl::StatusOr<std::shared_ptr<const Topology>> m = LoadTopologyFile("configs/lab-islands.yaml");
  ASSERT_THAT(m, IsOk());
  SlurmFiles files = ExportSlurm(**m);
  EXPECT_THAT(files.topology_conf,
              HasSubstr("# nvlplace: nodes names=node[00-15] gpus=8 model=H100-PCIe "
                        "islands=0,1,2,3/4,5,6,7\n"));
  EXPECT_THAT(files.gres_conf, HasSubstr("NodeName=node[00-15] Name=gpu Type=H100-PCIe "
                                         "File=/dev/nvidia5 Links=0,0,0,0,1,-1,1,1\n"));
}

TEST(ExportSlurmTest, RailLeavesAboveRailZeroAreAnnotations) {
  absl::StatusOr<std::shared_ptr<const Topology>> m =
      LoadTopologyFile("configs/dgx-h100-superpod-su.yaml");
  ASSERT_THAT(m, IsOk());
  std::string conf = ExportSlurm(**m).topology_conf;
  EXPECT_THAT(Lines(conf, "SwitchName="),
              ElementsAre("SwitchName=su1-leaf-rail0 Nodes=dgx[001-032]",
                          "SwitchName=su1-spine1 Switches=su1-leaf-rail0",
                          "SwitchName=su1-spine2 Switches=su1-leaf-rail0",
                          "SwitchName=su1-spine3 Switches=su1-leaf-rail0",
                          "SwitchName=su1-spine4 Switches=su1-leaf-rail0"));
  EXPECT_THAT(conf, HasSubstr("# nvlplace: switch name=su1-leaf-rail7 tier=leaf rail=7 "
                              "nodes=dgx[001-032]\n"));
  EXPECT_THAT(conf, HasSubstr("# nvlplace: switch name=su1-spine1 tier=spine "
                              "switches=su1-leaf-rail[1-7]\n"));
}

TEST(ExportSlurmTest, NvlinkDomainsBecomeLowestSwitches) {
  absl::StatusOr<std::shared_ptr<const Topology>> m =
      LoadTopologyFile("configs/gb200-nvl72-su.yaml");
  ASSERT_THAT(m, IsOk());
  std::string conf = ExportSlurm(**m).topology_conf;
  // The rack keeps 2 spare trays (configs/gb200-nvl72-su.yaml): only nvlplace reads that here.
  EXPECT_THAT(conf, HasSubstr("# nvlplace: nvlink_domain name=nvl72-rack01 gpus=72 spares=2\n"
                              "SwitchName=nvl72-rack01 Nodes=gb[001-018]\n"
                              "# nvlplace: switch name=leaf-rack01 tier=leaf\n"
                              "SwitchName=leaf-rack01 Switches=nvl72-rack01\n"));
  // What stock topology/tree sees: each rack is a leaf of its own.
  absl::StatusOr<std::shared_ptr<const Topology>> plain =
      Import(WithoutAnnotations(conf), "", Options(4));
  ASSERT_THAT(plain, IsOk());
  const Topology& t = **plain;
  EXPECT_THAT(t.tiers(), ElementsAre("leaf", "spine", "core"));
  EXPECT_EQ(TierOf(t, "nvl72-rack01"), "leaf");
  EXPECT_EQ(TierOf(t, "leaf-rack01"), "spine");
  EXPECT_EQ(t.switches()[t.FindSwitch("nvl72-rack08")].nodes_under.size(), 18u);
  EXPECT_EQ(t.CommonTier(t.FindNode("gb001"), t.FindNode("gb018")), 0);
}

TEST(ExportBlocksTest, BlockPerDomainAndSizesFromTheSmallestLessItsSpares) {
  std::shared_ptr<const Topology> m = FromYaml(kUnevenRacks);
  ASSERT_NE(m, nullptr);
  std::string conf = ExportSlurm(*m).block_conf;
  // What topology/block reads: a block per NVLink domain in the model's order, no switch.
  // Base: the smallest of 6-2, 4-0, 5-1, 1-0, 4-3, 2-0 nodes = 1; 6 blocks: 1, 2, 4 and 8.
  EXPECT_THAT(conf, Not(HasSubstr("SwitchName=")));
  EXPECT_THAT(Lines(conf, "B"),
              ElementsAre("BlockName=rack-1 Nodes=gb[01-06]", "BlockName=rack\\#2 Nodes=gb[07-10]",
                          "BlockName=r3 Nodes=gb[11-15]", "BlockName=r4 Nodes=gb16",
                          "BlockName=r5 Nodes=gb[17-20]", "BlockName=r6 Nodes=gb[21-22]",
                          "BlockSizes=1,2,4,8"));
  // Every block's spares are annotated, 0 too: Slurm's base would say 5 for rack#2 (6 - 1).
  EXPECT_THAT(conf, HasSubstr("# nvlplace: nvlink_domain name=rack#2 gpus=16 spares=0\n"
                              "BlockName=rack\\#2 Nodes=gb[07-10]\n"));
  EXPECT_THAT(conf, HasSubstr("#   1: the planning base size, the smallest NVLink domain's (r4: 1 "
                              "nodes);\n#   2: runs of 2 blocks"));
  EXPECT_THAT(conf, HasSubstr("TopologyPlugin=topology/block"));
  // The fabric for nvlplace: every switch an annotation, rails and speeds included.
  EXPECT_THAT(conf, HasSubstr("# nvlplace: switch name=rail1 tier=leaf rail=1 nodes=gb[01-22]\n"));
  EXPECT_THAT(conf,
              HasSubstr("# nvlplace: switch name=hleaf tier=leaf link_gbps=200 nodes=h[1-2]\n"));
}

// Slurm 23.11 has BlockLevels= (the levels) and no BlockSizes= (24.05): an unknown key makes
// slurmctld exit. Two racks of 4 nodes: levels 0 and 1 (sizes 4 and 8).
TEST(ExportBlocksTest, Slurm2311GetsBlockLevels) {
  std::shared_ptr<const Topology> m = FromYaml(kTwoRacksPerLeaf);
  ASSERT_NE(m, nullptr);
  SlurmExportOptions options;
  options.block_levels = true;
  EXPECT_THAT(CheckSlurmBlockExport(*m, options), IsOk());
  std::string conf = ExportSlurm(*m, options).block_conf;
  EXPECT_THAT(Lines(conf, "B"), ElementsAre("BlockName=rack1 Nodes=gb[01-04]",
                                            "BlockName=rack2 Nodes=gb[05-08]", "BlockLevels=0-1"));
  EXPECT_THAT(conf, HasSubstr("# topology.conf for Slurm 23.11's topology/block"));
  EXPECT_THAT(conf, HasSubstr("#   1: runs of 2 blocks"));
  EXPECT_THAT(ExportSlurm(*m).block_conf, HasSubstr("\nBlockSizes=4,8\n"));  // 24.05 and later
}

// 23.11 needs every block at the first block's node count: racks of 6, 4, 5, ... nodes cannot
// be written for it, and the error says what to do.
TEST(ExportBlocksTest, Slurm2311RefusesBlocksOfDifferentSizes) {
  std::shared_ptr<const Topology> m = FromYaml(kUnevenRacks);
  ASSERT_NE(m, nullptr);
  SlurmExportOptions options;
  options.block_levels = true;
  EXPECT_THAT(CheckSlurmBlockExport(*m, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "NVLink domain 'rack#2' has 4 nodes and 'rack-1' 6: Slurm 23.11's "
                       "topology/block needs every block to have the first block's node count "
                       "(24.05 replaced BlockLevels= with BlockSizes=, which allows this); export "
                       "for 24.05 or later (--slurm-release 24.05), or give the domains equal "
                       "node counts"));
  EXPECT_THAT(CheckSlurmBlockExport(*m, SlurmExportOptions{}), IsOk());  // BlockSizes= can
}

TEST(ExportBlocksTest, Topology25YamlHasBothTopologiesAndThePartitionLines) {
  std::shared_ptr<const Topology> m = FromYaml(kUnevenRacks);
  ASSERT_NE(m, nullptr);
  SlurmExportOptions options;
  options.blocks = SlurmExportOptions::Blocks::kYaml;
  std::string yaml = ExportSlurm(*m, options).topology_yaml;
  EXPECT_THAT(yaml, HasSubstr("#   PartitionName=gpu Nodes=ALL Topology=nvlink\n"));
  EXPECT_THAT(yaml, HasSubstr("---\n- topology: nvlink\n  cluster_default: true\n  block:\n"
                              "    block_sizes: [1, 2, 4, 8]\n    blocks:\n"
                              "      - block: \"rack-1\"\n        nodes: \"gb[01-06]\"\n"));
  // Slurm sees rail 0 of the rails (as in topology.conf) and no NVLink domain in the tree.
  EXPECT_THAT(yaml, HasSubstr("- topology: fabric\n  cluster_default: false\n  tree:\n"
                              "    switches:\n      - switch: \"rail0\"\n"
                              "        nodes: \"gb[01-22]\"\n      - switch: \"hleaf\"\n"
                              "        nodes: \"h[1-2]\"\n      - switch: \"spine\"\n"
                              "        children: \"rail0,hleaf\"\n"));
}

TEST(ExportBlocksTest, OnlyForMultiNodeDomainsAndWhenAsked) {
  absl::StatusOr<std::shared_ptr<const Topology>> lab = LoadTopologyFile("configs/lab-h100.yaml");
  ASSERT_THAT(lab, IsOk());
  SlurmExportOptions yaml;
  yaml.blocks = SlurmExportOptions::Blocks::kYaml;
  EXPECT_EQ(ExportSlurm(**lab).block_conf, "");
  EXPECT_EQ(ExportSlurm(**lab, yaml).topology_yaml, "");
  std::shared_ptr<const Topology> m = FromYaml(kTwoRacksPerLeaf);
  ASSERT_NE(m, nullptr);
  SlurmExportOptions none;
  none.blocks = SlurmExportOptions::Blocks::kNone;
  SlurmFiles files = ExportSlurm(*m, none);
  EXPECT_EQ(files.block_conf, "");
  EXPECT_EQ(files.topology_yaml, "");
  EXPECT_EQ(files.topology_conf, ExportSlurm(*m).topology_conf);  // the tree is the same
  EXPECT_FALSE(SlurmReadsTopologyYaml(24, 11));
  EXPECT_FALSE(SlurmReadsTopologyYaml(25, 4));
  EXPECT_TRUE(SlurmReadsTopologyYaml(25, 5));
  EXPECT_TRUE(SlurmReadsTopologyYaml(26, 5));
}

TEST(ExportSlurmTest, OddShapesAreWrittenHonestly) {
  std::shared_ptr<const Topology> m = FromYaml(kOddCluster);
  ASSERT_NE(m, nullptr);
  SlurmFiles files = ExportSlurm(*m);
  const std::string& conf = files.topology_conf;
  EXPECT_THAT(conf, HasSubstr("# nvlplace: cluster name=\"odd cluster\" tiers=tor,agg,top "
                              "link_gbps=200 nvlink_alpha_us=0.75 net_alpha_us=3.1\n"));
  EXPECT_THAT(conf,
              HasSubstr("# nvlplace: gpu_model name=spare nvlink_gbps=123.456 pcie_gbps=64\n"));
  // rackA spans tor0 and tor1: an annotation with its nodes, not a switch.
  EXPECT_THAT(conf, HasSubstr("# nvlplace: nvlink_domain name=rackA gpus=16 nodes=gb[01-04]\n"));
  EXPECT_THAT(conf, Not(HasSubstr("SwitchName=rackA")));
  // 12.5 Gb/s does not fit LinkSpeed's integer; 800 does.
  EXPECT_THAT(conf, HasSubstr("# nvlplace: switch name=tor0 tier=tor link_gbps=12.5\n"
                              "SwitchName=tor0 Nodes=gb[01-02]\n"));
  EXPECT_THAT(conf, HasSubstr("SwitchName=agg0 Switches=tor[0-2],rail0 LinkSpeed=800\n"));
  EXPECT_THAT(conf, HasSubstr("# nvlplace: switch name=tor2 tier=tor oversubscription=1.5\n"));
  // rail1 and the spine above only it are invisible to Slurm.
  EXPECT_THAT(conf, HasSubstr("# nvlplace: switch name=railspine1 tier=agg switches=rail1\n"));
  EXPECT_THAT(conf, HasSubstr("# nvlplace: switch name=top tier=top switches=railspine1\n"
                              "SwitchName=top Switches=agg0\n"));
  EXPECT_THAT(Lines(conf, "SwitchName="), ::testing::SizeIs(6));  // tor0-2, rail0, agg0, top
  EXPECT_THAT(files.gres_conf, HasSubstr("NodeName=r[1-2] Name=gpu Type=H100 File=/dev/nvidia1 "
                                         "Links=1,-1\n"));
}

TEST(ExportSlurmTest, SeveralDomainsUnderOneLeaf) {
  std::shared_ptr<const Topology> m = FromYaml(kTwoRacksPerLeaf);
  ASSERT_NE(m, nullptr);
  std::string conf = ExportSlurm(*m).topology_conf;
  EXPECT_THAT(
      Lines(conf, "SwitchName="),
      ElementsAre("SwitchName=rack1 Nodes=gb[01-04]", "SwitchName=rack2 Nodes=gb[05-08]",
                  "SwitchName=leaf0 Switches=rack[1-2]", "SwitchName=core0 Switches=leaf0"));
}
// The irregular cluster from contrib/tools/gen_irregular_topology.py (plain Slurm files; its
// import is checked in slurm_import_test.cc).
TEST(RoundTripTest, IrregularCluster) {
  absl::StatusOr<std::string> topology = ReadFileToString("tests/fixtures/irregular/topology.conf");
  absl::StatusOr<std::string> gres = ReadFileToString("tests/fixtures/irregular/gres.conf");
  ASSERT_THAT(topology, IsOk());
  ASSERT_THAT(gres, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Import(*topology, *gres, Options(0));
  ASSERT_THAT(topo, IsOk());
  ExpectRoundTrip(**topo, "irregular");
}

// ---------------------------------------------------------------------------------------
// Bounds.

TEST(ExportLimitTest, GresSizeIsKnownBeforeWriting) {
  for (const std::string& path : testing::ConfigFiles()) {
    absl::StatusOr<std::shared_ptr<const Topology>> m = LoadTopologyFile(path);
    ASSERT_THAT(m, IsOk()) << path;
    EXPECT_EQ(ExportedGresBytes(**m), ExportSlurm(**m).gres_conf.size()) << path;
    SlurmExportOptions no_links{.links = false};
    EXPECT_EQ(ExportedGresBytes(**m, no_links), ExportSlurm(**m, no_links).gres_conf.size())
        << path;
  }
  // 40 nodes of 1,024 GPUs, each with its own two islands: 40 shapes of 1,024 lines of about
  // 2,100 bytes, 86 MB from a model of 40,960 GPUs; counted, not written.
  TopologySpec spec;
  spec.name = "wide";
  spec.gpu_models.push_back(GpuModelSpec{"X", 900, 64, {}});
  SwitchSpec leaf;
  leaf.name = "leaf";
  leaf.tier = "leaf";
  for (int k = 0; k < 40; ++k) {
    NodeGroupSpec g;
    g.names = {absl::StrCat("w", k)};
    g.gpus = 1024;
    g.model = "X";
    g.islands.resize(2);
    for (int i = 0; i < 1024; ++i) g.islands[i <= k ? 0 : 1].push_back(i);
    spec.node_groups.push_back(g);
    leaf.nodes.push_back(g.names[0]);
  }
  spec.switches.push_back(leaf);
  absl::StatusOr<std::shared_ptr<const Topology>> wide = Topology::Create(spec);
  ASSERT_THAT(wide, IsOk());
  EXPECT_GT(ExportedGresBytes(**wide), size_t{64} << 20);
}

}  // namespace
}  // namespace nvlplace
