// Tests for importing Slurm's topology.conf and gres.conf (ImportSlurm): plain files,
// annotations, gres.conf shapes, and every error at its line.
#include "placement/formats/slurm_import.h"

#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/read_file.h"
#include "placement/formats/slurm_testing.h"
#include "placement/model/hostlist.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::Import;
using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::Options;
using ::nvlplace::testing::StatusIs;
using ::nvlplace::testing::TierOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char kFixtures[] = "tests/fixtures/slurm/";

std::string Fixture(const std::string& name) {
  if (name.empty()) return "";
  absl::StatusOr<std::string> text = ReadFileToString(kFixtures + name);
  EXPECT_THAT(text, IsOk());
  return text.ok() ? *text : "";
}

std::vector<std::string> SwitchNames(const Topology& t, const std::vector<SwitchId>& ids) {
  std::vector<std::string> names;
  for (SwitchId s : ids) names.push_back(t.switches()[s].name);
  return names;
}

// ---------------------------------------------------------------------------------------
// Plain Slurm files.

TEST(ImportSlurmTest, ReadsManPageStyleTree) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Import(Fixture("manpage-tree.conf"), "", Options(4));
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_EQ(t.name(), "imported");
  EXPECT_THAT(t.tiers(), ElementsAre("leaf", "spine"));  // heights 0 and 1
  EXPECT_EQ(t.num_nodes(), 18);
  EXPECT_EQ(t.num_gpus(), 72);  // 18 nodes x 4 GPUs per node (the option)
  EXPECT_EQ(t.gpu_models()[0].name, "H100");
  EXPECT_EQ(TierOf(t, "s0"), "leaf");
  EXPECT_EQ(TierOf(t, "s3"), "spine");
  EXPECT_THAT(SwitchNames(t, t.switches()[t.FindSwitch("s3")].children),
              ElementsAre("s0", "s1", "s2"));
  EXPECT_EQ(t.CommonTier(t.FindNode("dev0"), t.FindNode("dev5")), 0);
  EXPECT_EQ(t.CommonTier(t.FindNode("dev0"), t.FindNode("dev17")), 1);
  EXPECT_EQ(t.switches()[0].link_gbps, 400);  // no LinkSpeed: the default
}

TEST(ImportSlurmTest, ReadsPlainTreeWithGres) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Import(Fixture("plain-tree.conf"), Fixture("plain-gres.conf"), Options(0));
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_THAT(t.tiers(), ElementsAre("leaf", "spine", "core"));
  EXPECT_EQ(TierOf(t, "core"), "core");
  EXPECT_EQ(TierOf(t, "spine1"), "spine");
  // Lower-case keys and the continued line.
  EXPECT_EQ(t.switches()[t.FindSwitch("leaf0")].link_gbps, 200);
  EXPECT_EQ(t.switches()[t.FindSwitch("leaf1")].link_gbps, 200);
  EXPECT_EQ(t.switches()[t.FindSwitch("spine1")].link_gbps, 800);
  EXPECT_EQ(t.switches()[t.FindSwitch("leaf2")].nodes.size(), 2u);
  // Both spines reach every leaf.
  EXPECT_THAT(SwitchNames(t, t.switches()[t.FindSwitch("leaf3")].parents),
              ElementsAre("spine0", "spine1"));
  // gpu[01-04]: 8 H100 in one island; pcie[1-2]: two islands of 2 from Links=; old[1-2]:
  // Count=2 of the default model. 4*8 + 2*4 + 2*2 = 44 GPUs.
  EXPECT_EQ(t.num_nodes(), 8);
  EXPECT_EQ(t.num_gpus(), 44);
  const Node& pcie = t.nodes()[t.FindNode("pcie2")];
  ASSERT_EQ(pcie.domains.size(), 2u);
  EXPECT_EQ(t.domains()[pcie.domains[1]].name, "pcie2:nvl1");
  EXPECT_EQ(t.domains()[pcie.domains[1]].gpus, (std::vector<GpuId>{pcie.gpus[2], pcie.gpus[3]}));
  EXPECT_EQ(t.gpu_models()[pcie.model].name, "A100-PCIe");
  EXPECT_EQ(t.nodes()[t.FindNode("gpu03")].domains.size(), 1u);
  EXPECT_EQ(t.gpu_models()[t.nodes()[t.FindNode("old1")].model].name, "H100");
  EXPECT_EQ(t.nodes()[t.FindNode("old1")].gpus.size(), 2u);
  EXPECT_EQ(t.CommonTier(t.FindNode("gpu01"), t.FindNode("old2")), 1);
}

TEST(ImportSlurmTest, UsesOptionsForUndescribedNodes) {
  SlurmImportOptions options = Options(2);
  options.name = "lab";
  options.gpu_model = "L40S";
  options.nvlink_gbps = 0.5;
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Import("SwitchName=s0 Nodes=a[1-3]\n", "", options);
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ((*topo)->name(), "lab");
  EXPECT_EQ((*topo)->num_gpus(), 6);
  ASSERT_EQ((*topo)->gpu_models().size(), 1u);
  EXPECT_EQ((*topo)->gpu_models()[0].name, "L40S");
  EXPECT_EQ((*topo)->gpu_models()[0].nvlink_gbps, 0.5);
}

TEST(ImportSlurmTest, TypedGresTakesEachModelsFiguresFromTheTable) {
  absl::StatusOr<SlurmImport> imported =
      ImportSlurmWithNotes(Fixture("mixed-tree.conf"), "mixed-tree.conf",
                           Fixture("mixed-gres.conf"), "mixed-gres.conf", Options(0));
  ASSERT_THAT(imported, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(imported->spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  auto model = [&](const char* node) { return *t.ModelOf(t.FindNode(node)); };
  // Type= as written, the figures of the table (GB/s per GPU, both directions).
  EXPECT_EQ(model("hgx0").name, "h100");
  EXPECT_EQ(model("hgx0").nvlink_gbps, 900);
  EXPECT_EQ(model("hgx0").pcie_gbps, 128);
  EXPECT_EQ(model("amp1").name, "a100");
  EXPECT_EQ(model("amp1").nvlink_gbps, 600);
  EXPECT_EQ(model("amp1").pcie_gbps, 64);
  EXPECT_EQ(model("l40s0").nvlink_gbps, 0);  // no NVLink: four islands of one GPU
  EXPECT_EQ(t.nodes()[t.FindNode("l40s0")].domains.size(), 4u);
  // cpu[0-1] are in topology.conf and not in gres.conf: CPU-only, said once.
  NodeId cpu1 = t.FindNode("cpu1");
  ASSERT_GE(cpu1, 0);
  EXPECT_TRUE(t.nodes()[cpu1].gpus.empty());
  EXPECT_EQ(t.ModelOf(cpu1), nullptr);
  EXPECT_EQ(t.CommonTier(cpu1, t.FindNode("amp0")), 0);
  EXPECT_EQ(t.num_gpus(), 2 * 8 + 2 * 4 + 2 * 4);
  EXPECT_THAT(imported->notes,
              ElementsAre("note: 2 nodes of topology.conf not in mixed-gres.conf imported "
                          "without GPUs (gpus: 0): cpu[0-1]"));
}

TEST(ImportSlurmTest, UnknownTypeNamesItsLineAndTheOption) {
  absl::StatusOr<TopologySpec> spec =
      ImportSlurm(Fixture("mixed-tree.conf"), "mixed-tree.conf", Fixture("unknown-type.gres"),
                  "unknown-type.gres", Options(0));
  EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument,
                             HasSubstr("unknown-type.gres:3: Type: GPU type 'x100' is not in "
                                       "nvlplace's table of known models; declare it with "
                                       "--model x100=NVLINK_GBPS,PCIE_GBPS")));
  // Declared: its figures are used, and --model wins over the table for a known name too.
  SlurmImportOptions options = Options(0);
  options.models.push_back(*ParseModelOption("X100=450,64"));
  options.models.push_back(*ParseModelOption("H100=800,128"));
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Import(Fixture("mixed-tree.conf"), Fixture("unknown-type.gres"), options);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_EQ(t.ModelOf(t.FindNode("amp0"))->nvlink_gbps, 450);
  EXPECT_EQ(t.ModelOf(t.FindNode("amp0"))->pcie_gbps, 64);
  EXPECT_EQ(t.ModelOf(t.FindNode("hgx0"))->nvlink_gbps, 800);
}

TEST(ImportSlurmTest, ModelOptionIsCheckedLikeAFileValue) {
  absl::StatusOr<GpuModelSpec> m = ParseModelOption("L40X=0,64");
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(m->name, "L40X");
  EXPECT_EQ(m->nvlink_gbps, 0);
  EXPECT_EQ(m->pcie_gbps, 64);
  for (const char* bad : {"X100", "X100=900", "X100=900,x", "=900,64", "X100=-1,64", "X100=900,0",
                          "X100=nan,64", "X100=900,64,1"}) {
    EXPECT_THAT(ParseModelOption(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                                HasSubstr("write NAME=NVLINK_GBPS,PCIE_GBPS")))
        << bad;
  }
}

TEST(ImportSlurmTest, ReadsQuotedValuesAndEscapedHash) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Import(
      "SwitchName=rack\\#1 Nodes=\"n[1-2]\"  # \\# escapes a hash, as in Slurm\n", "", Options(1));
  ASSERT_THAT(topo, IsOk());
  ASSERT_EQ((*topo)->num_switches(), 1);
  EXPECT_EQ((*topo)->switches()[0].name, "rack#1");
  EXPECT_EQ((*topo)->num_nodes(), 2);
}

TEST(ImportSlurmTest, InfersTiersBeyondCore) {
  // Heights 0..4: leaf, spine, core, tier3, tier4.
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Import(
      "SwitchName=a Nodes=n1\nSwitchName=b Switches=a\nSwitchName=c Switches=b\n"
      "SwitchName=d Switches=c\nSwitchName=e Switches=d,a\n",
      "", Options(1));
  ASSERT_THAT(topo, IsOk());
  EXPECT_THAT((*topo)->tiers(), ElementsAre("leaf", "spine", "core", "tier3", "tier4"));
  EXPECT_EQ(TierOf(**topo, "e"), "tier4");  // 1 + max(height(d) = 3, height(a) = 0)
}

TEST(ImportSlurmTest, LeavesSemanticErrorsToCreate) {
  // A cycle: the import succeeds and Topology::Create names the line.
  absl::StatusOr<TopologySpec> spec =
      ImportSlurm("SwitchName=l Nodes=n1\nSwitchName=a Switches=b,l\nSwitchName=b Switches=a\n",
                  "cycle.conf", "", "", Options(1));
  ASSERT_THAT(spec, IsOk());
  EXPECT_THAT(Topology::Create(*spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("switch cycle")));
  // A node under two plain leaves.
  EXPECT_THAT(Import("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n", "", Options(1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node 'n2' is under several leaf switches")));
}

TEST(ImportSlurmTest, GresAgreeingWithAnnotationIsAccepted) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Import(Fixture("annotated-base.conf"), "NodeName=n[0-1] Name=gpu File=/dev/nvidia[0-7]\n",
             Options(0));
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ((*topo)->name(), "small");
  EXPECT_EQ((*topo)->num_gpus(), 16);
  EXPECT_EQ((*topo)->gpu_models()[0].name, "H100");  // from the annotation: gres gives no Type
}

struct BadImport {
  std::string topology;  // fixture
  std::string gres;      // fixture or ""
  std::string message;
  int gpus_per_node = 8;
};

void PrintTo(const BadImport& c, std::ostream* os) { *os << c.topology << " " << c.gres; }

class ImportErrorTest : public ::testing::TestWithParam<BadImport> {};

TEST_P(ImportErrorTest, Rejects) {
  const BadImport& c = GetParam();
  absl::StatusOr<TopologySpec> spec = ImportSlurm(Fixture(c.topology), c.topology, Fixture(c.gres),
                                                  c.gres, Options(c.gpus_per_node));
  EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
}

INSTANTIATE_TEST_SUITE_P(
    TopologyConf, ImportErrorTest,
    ::testing::Values(
        BadImport{"bad-unknown-key.conf", "",
                  "bad-unknown-key.conf:2: Speed: unknown key; topology.conf keys are "
                  "SwitchName, Switches, Nodes, LinkSpeed"},
        BadImport{
            "bad-hostlist.conf", "",
            "bad-hostlist.conf:2: Nodes: bad hostlist \"n[0-3\" at character 2: '[' without a "
            "matching ']'"},
        BadImport{"bad-switch-twice.conf", "",
                  "bad-switch-twice.conf:3: SwitchName: switch 's0' is defined twice (first on "
                  "line 2)"},
        BadImport{"bad-unknown-child.conf", "",
                  "bad-unknown-child.conf:3: Switches: unknown switch 's9'"},
        BadImport{"bad-no-switchname.conf", "",
                  "bad-no-switchname.conf:2: Nodes: a line must start with SwitchName="},
        BadImport{"bad-linkspeed.conf", "",
                  "bad-linkspeed.conf:2: LinkSpeed: 'fast' is not a whole number; Slurm reads "
                  "LinkSpeed as an unsigned integer: write e.g. LinkSpeed=400"},
        BadImport{"bad-not-key-value.conf", "",
                  "bad-not-key-value.conf:2: Nodes: expected key=value"},
        BadImport{"bad-key-twice.conf", "", "bad-key-twice.conf:2: Nodes: given twice"},
        BadImport{"bad-no-gpus.conf", "",
                  "bad-no-gpus.conf:2: Nodes: node 'n0' has no GPU count: give gres.conf, or a "
                  "default GPU count per node",
                  0}));

INSTANTIATE_TEST_SUITE_P(
    Annotations, ImportErrorTest,
    ::testing::Values(
        BadImport{"bad-annotation-kind.conf", "",
                  "bad-annotation-kind.conf:1: nvlplace: unknown annotation 'rack'"},
        BadImport{"bad-annotation-key.conf", "",
                  "bad-annotation-key.conf:1: speed: unknown key; nvlplace switch keys are name, "
                  "tier, rail"},
        BadImport{"bad-annotation-rail.conf", "",
                  "bad-annotation-rail.conf:1: rail: 'first' is not an integer"},
        BadImport{"bad-annotation-islands.conf", "",
                  "bad-annotation-islands.conf:1: islands: 'x' is not a GPU index"},
        BadImport{"bad-annotation-no-name.conf", "",
                  "bad-annotation-no-name.conf:1: name: required"},
        BadImport{"bad-annotation-number.conf", "",
                  "bad-annotation-number.conf:1: link_gbps: 'fast' is not a number"},
        BadImport{"bad-cluster-twice.conf", "",
                  "bad-cluster-twice.conf:2: cluster: the cluster annotation is given twice"},
        BadImport{"bad-node-annotated-twice.conf", "",
                  "bad-node-annotated-twice.conf:2: names: node 'n3' is in two nodes "
                  "annotations (first on line 1)"},
        BadImport{"bad-switch-annotated-twice.conf", "",
                  "bad-switch-annotated-twice.conf:2: name: switch 's0' is annotated twice"},
        BadImport{"bad-domain-twice.conf", "",
                  "bad-domain-twice.conf:2: name: NVLink domain 'd0' is annotated twice (first "
                  "on line 1)"},
        BadImport{"bad-domain-with-switches.conf", "",
                  "bad-domain-with-switches.conf:2: Switches: NVLink domain 'd0' lists "
                  "Switches="},
        BadImport{"bad-domain-and-switch.conf", "",
                  "bad-domain-and-switch.conf:3: switch: 'd0' is annotated both as a switch and "
                  "as an NVLink domain (line 1)"},
        BadImport{"bad-hidden-unknown-child.conf", "",
                  "bad-hidden-unknown-child.conf:2: switches: unknown switch 's7'"}));

INSTANTIATE_TEST_SUITE_P(
    GresConf, ImportErrorTest,
    ::testing::Values(
        BadImport{"gres-base.conf", "bad-gres-unknown-key.gres",
                  "bad-gres-unknown-key.gres:1: Speed: unknown key; gres.conf keys are NodeName"},
        BadImport{"gres-base.conf", "bad-gres-links-length.gres",
                  "bad-gres-links-length.gres:2: Links: the row has 3 entries but node 'n0' has "
                  "4 GPUs"},
        BadImport{"gres-base.conf", "bad-gres-links-self.gres",
                  "bad-gres-links-self.gres:1: Links: entry 0 is 1; -1 marks the GPU itself "
                  "(entry 0) and only it"},
        BadImport{"gres-base.conf", "bad-gres-links-asymmetric.gres",
                  "bad-gres-links-asymmetric.gres:1: Links: node 'n0': GPU 0 and GPU 1 disagree "
                  "on whether they share an NVLink"},
        BadImport{"gres-base.conf", "bad-gres-links-some.gres",
                  "bad-gres-links-some.gres:3: Links: node 'n0' gives Links= for some GPUs but "
                  "not for /dev/nvidia2"},
        BadImport{"gres-base.conf", "bad-gres-links-multifile.gres",
                  "bad-gres-links-multifile.gres:1: Links: Links= needs exactly one device"},
        BadImport{"gres-base.conf", "bad-gres-links-value.gres",
                  "bad-gres-links-value.gres:1: Links: 'x' is not a link count"},
        BadImport{"gres-base.conf", "bad-gres-file.gres",
                  "bad-gres-file.gres:1: File: '/dev/sda' is not /dev/nvidiaN"},
        BadImport{"gres-base.conf", "bad-gres-gap.gres",
                  "bad-gres-gap.gres:1: File: node 'n0' has no /dev/nvidia2; GPUs must be "
                  "numbered 0..2"},
        BadImport{"gres-base.conf", "bad-gres-duplicate.gres",
                  "bad-gres-duplicate.gres:2: File: /dev/nvidia1 of node 'n1' is listed twice "
                  "(also on line 1)"},
        BadImport{"gres-base.conf", "bad-gres-mixed-type.gres",
                  "bad-gres-mixed-type.gres:2: Type: node 'n0' mixes GPU types 'H100' and "
                  "'A100'"},
        BadImport{"gres-base.conf", "bad-gres-no-nodename.gres",
                  "bad-gres-no-nodename.gres:2: NodeName: a GPU line needs NodeName="},
        BadImport{"gres-base.conf", "bad-gres-count.gres",
                  "bad-gres-count.gres:1: Count: Count=3 but File= names 4 devices"},
        BadImport{"gres-base.conf", "bad-gres-count-mixed.gres",
                  "bad-gres-count-mixed.gres:1: File: node 'n0' mixes Count= lines without "
                  "File= and File= lines"},
        BadImport{"gres-base.conf", "bad-gres-no-file.gres",
                  "bad-gres-no-file.gres:1: File: a GPU line needs File=/dev/nvidiaN or Count="},
        BadImport{"gres-base.conf", "bad-gres-bad-nodename.gres",
                  "bad-gres-bad-nodename.gres:1: NodeName: bad hostlist"},
        BadImport{"annotated-base.conf", "bad-gres-disagrees.gres",
                  "bad-gres-disagrees.gres:2: NodeName: node 'n0': the GPU count differs from "
                  "the nvlplace annotation on annotated-base.conf:3"},
        BadImport{"annotated-base.conf", "bad-gres-disagrees-islands.gres",
                  "bad-gres-disagrees-islands.gres:2: NodeName: node 'n0': the NVLink islands "
                  "differ"}));

// ---------------------------------------------------------------------------------------
// topology/block: BlockName= lines and BlockSizes, topology.yaml (issue 25).

std::vector<std::string> NodeNames(const Topology& t, absl::Span<const NodeId> ids) {
  std::vector<std::string> names;
  for (NodeId n : ids) names.push_back(t.nodes()[n].name);
  return names;
}

const NvlDomain& DomainNamed(const Topology& t, absl::string_view name) {
  return t.domains()[t.FindDomain(name)];
}

absl::StatusOr<SlurmImport> ImportBlocks(const std::string& conf, const std::string& gres,
                                         SlurmImportOptions options = Options(4)) {
  return ImportSlurmWithNotes(conf, "t.conf", gres, "g.conf", options);
}

absl::StatusOr<std::shared_ptr<const Topology>> Built(absl::StatusOr<SlurmImport> imported) {
  if (!imported.ok()) return imported.status();
  return Topology::Create(imported->spec);
}

TEST(ImportBlockTest, RacksBecomeNvlinkDomainsWithSparesAndTheFabric) {
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Import(Fixture("block-racks.conf"), Fixture("block-gres.conf"), Options(0));
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_EQ(t.num_gpus(), 72 * 4);  // gb[001-072] x 4 GPUs (Type=GB200)
  EXPECT_EQ(t.gpu_models()[0].name, "GB200");
  // Each rack is one NVLink domain; 18 nodes over the base size 16: 2 spares.
  const NvlDomain& rack3 = DomainNamed(t, "rack3");
  EXPECT_TRUE(rack3.multi_node);
  EXPECT_EQ(rack3.gpus.size(), 72u);
  EXPECT_EQ(rack3.spares, 2);
  EXPECT_EQ(CompressHostlist(NodeNames(t, rack3.nodes)), "gb[037-054]");
  EXPECT_EQ(DomainNamed(t, "rack4").spares, 2);  // Nodes="..." read as a hostlist
  // Nothing else describes the fabric: the blocks and their levels do. 16,32,64 with 4 blocks:
  // levels 0, 1 (pairs 1+2, 3+4) and 2 (all four).
  EXPECT_THAT(t.tiers(), ElementsAre("block", "block2", "block4"));
  EXPECT_EQ(TierOf(t, "rack1"), "block");
  EXPECT_THAT(SwitchNames(t, t.switches()[t.FindSwitch("block2-1")].children),
              ElementsAre("rack3", "rack4"));
  EXPECT_THAT(SwitchNames(t, t.switches()[t.FindSwitch("block4-0")].children),
              ElementsAre("block2-0", "block2-1"));
  EXPECT_EQ(t.CommonTier(t.FindNode("gb001"), t.FindNode("gb036")), 1);  // racks 1 and 2
  EXPECT_EQ(t.CommonTier(t.FindNode("gb036"), t.FindNode("gb037")), 2);  // racks 2 and 3
}

TEST(ImportBlockTest, FabricBlocksAreSwitchesOnly) {
  SlurmImportOptions options = Options(0);
  options.blocks = SlurmImportOptions::Blocks::kFabric;
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Import(Fixture("block-racks.conf"), Fixture("block-gres.conf"), options);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  // No multi-node domain: a domain per node (one island of 4 GPUs).
  EXPECT_EQ(t.num_domains(), 72);
  EXPECT_FALSE(t.domains()[0].multi_node);
  EXPECT_THAT(t.tiers(), ElementsAre("block", "block2", "block4"));
  EXPECT_EQ(t.num_switches(), 4 + 2 + 1);
}

TEST(ImportBlockTest, WithoutBlockSizesTheFirstBlockIsTheBase) {
  // Slurm's default: levels 0 to 4 and the first block's 16 nodes as the base; 3 blocks need
  // levels 1 (pairs: {a, b}, {c}) and 2 (all).
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Built(ImportBlocks(
      "BlockName=a Nodes=n[01-16]\nBlockName=b Nodes=n[17-34]\nBlockName=c Nodes=n[35-50]\n", ""));
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_EQ(DomainNamed(t, "a").spares, 0);
  EXPECT_EQ(DomainNamed(t, "b").spares, 2);  // 18 - 16
  EXPECT_THAT(t.tiers(), ElementsAre("block", "block2", "block4"));
  EXPECT_THAT(SwitchNames(t, t.switches()[t.FindSwitch("block2-1")].children), ElementsAre("c"));
  EXPECT_THAT(SwitchNames(t, t.switches()[t.FindSwitch("block4-0")].children),
              ElementsAre("block2-0", "block2-1"));
}

TEST(ImportBlockTest, SkippedLevelGroupsFourBlocks) {
  // BlockSizes=2,8: levels 0 and 2 (the man page's 30,120 pattern): runs of 4 blocks.
  std::string conf;
  for (int b = 0; b < 8; ++b) {
    absl::StrAppend(&conf, "BlockName=b", b, " Nodes=n[", 2 * b, "-", 2 * b + 1, "]\n");
  }
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      Built(ImportBlocks(conf + "BlockSizes=2,8\n", ""));
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_THAT(t.tiers(), ElementsAre("block", "block4"));
  EXPECT_THAT(SwitchNames(t, t.switches()[t.FindSwitch("block4-1")].children),
              ElementsAre("b4", "b5", "b6", "b7"));
  // The two runs of four share no switch: Slurm plans nothing wider than 8 nodes either.
  EXPECT_EQ(t.CommonTier(t.FindNode("n0"), t.FindNode("n15")), Topology::kDisconnected);
}

TEST(ImportBlockTest, AnnotationsGiveTheFabricAndExactSpares) {
  // What `nvlplace export slurm` writes: the switches as annotations, each block's spares.
  absl::StatusOr<SlurmImport> imported = ImportBlocks(
      "# nvlplace: switch name=leaf tier=leaf nodes=n[1-8]\n"
      "# nvlplace: nvlink_domain name=r1 gpus=16 spares=0\n"
      "BlockName=r1 Nodes=n[1-4]\n"
      "BlockName=r2 Nodes=n[5-8]\n"
      "BlockSizes=3\n",
      "");
  ASSERT_THAT(imported, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(imported->spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_EQ(DomainNamed(t, "r1").spares, 0);  // the annotation's, not 4 - 3
  EXPECT_EQ(DomainNamed(t, "r2").spares, 1);  // 4 - 3
  EXPECT_EQ(t.num_switches(), 1);             // the annotated leaf only
  EXPECT_THAT(t.tiers(), ElementsAre("leaf"));
  EXPECT_THAT(imported->notes, ElementsAre());
}

TEST(ImportBlockTest, EmptyAndSmallBlocksAreNoted) {
  absl::StatusOr<SlurmImport> imported = ImportBlocks(
      "BlockName=r1 Nodes=n[1-4]\nBlockName=r0\nBlockName=r2 Nodes=n[5-6]\nBlockSizes=4,8\n", "");
  ASSERT_THAT(imported, IsOk());
  EXPECT_THAT(imported->notes,
              ElementsAre("note: t.conf:2: BlockName: block 'r0' has no nodes: no NVLink domain",
                          "note: t.conf:3: BlockName: block 'r2' has 2 nodes, fewer than the "
                          "planning base size 4: Slurm before 25.05 refuses such a block"));
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(imported->spec);
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ(DomainNamed(**topo, "r2").spares, 0);
  // r0 still counts for the pairs: {r1, r0} and {r2}.
  EXPECT_THAT(SwitchNames(**topo, (*topo)->switches()[(*topo)->FindSwitch("block2-0")].children),
              ElementsAre("r1"));
}

// Without BlockSizes Slurm's base is the first block with nodes (block_record.c), not the
// first block: b1's 4 nodes, so b2 keeps 5 - 4 = 1 spare (with an empty b0's 0, none).
TEST(ImportBlockTest, DefaultBaseIsTheFirstBlockWithNodes) {
  absl::StatusOr<SlurmImport> imported =
      ImportBlocks("BlockName=b0\nBlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-9]\n", "");
  ASSERT_THAT(imported, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(imported->spec);
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ(DomainNamed(**topo, "b1").spares, 0);
  EXPECT_EQ(DomainNamed(**topo, "b2").spares, 1);
  EXPECT_THAT(imported->notes,
              ElementsAre("note: t.conf:1: BlockName: block 'b0' has no nodes: no NVLink domain"));
}

TEST(ImportBlockTest, TopologyYamlTreeGivesSwitchesBlockGivesDomains) {
  absl::StatusOr<std::string> text = ReadFileToString("tests/fixtures/slurm/topology-racks.yaml");
  ASSERT_THAT(text, IsOk());
  absl::StatusOr<SlurmImport> imported = ImportSlurmTopologyYaml(
      *text, "topology-racks.yaml", Fixture("block-gres.conf"), "block-gres.conf", Options(0));
  ASSERT_THAT(imported, IsOk());
  EXPECT_THAT(imported->notes,
              ElementsAre("note: topology-racks.yaml: topology 'loop' (ring) is not imported: "
                          "nvlplace reads tree and block topologies"));
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(imported->spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_THAT(t.tiers(), ElementsAre("leaf", "spine"));  // from the tree's heights
  EXPECT_EQ(t.num_switches(), 5);
  EXPECT_EQ(DomainNamed(t, "rack2").spares, 2);  // 18 - 16
  EXPECT_EQ(t.CommonTier(t.FindNode("gb001"), t.FindNode("gb072")), 1);
  // The nodes in block order, as Slurm's BlockAsNodeRank would rank them.
  EXPECT_EQ(t.nodes()[0].name, "gb001");
}

struct BadBlocks {
  std::string name;
  std::string topology;  // fixture
  std::string gres;      // fixture or ""
  std::string message;   // the whole message
  bool yaml = false;
  SlurmImportOptions::Blocks blocks = SlurmImportOptions::Blocks::kNvlink;
};

class BlockErrorTest : public ::testing::TestWithParam<BadBlocks> {};

TEST_P(BlockErrorTest, RefusesAtItsLineSayingWhatToDo) {
  const BadBlocks& c = GetParam();
  SlurmImportOptions options = Options(4);
  options.blocks = c.blocks;
  std::string file = kFixtures + c.topology;
  std::string gres_file = c.gres.empty() ? "" : kFixtures + c.gres;
  absl::StatusOr<SlurmImport> imported =
      c.yaml
          ? ImportSlurmTopologyYaml(Fixture(c.topology), file, Fixture(c.gres), gres_file, options)
          : ImportSlurmWithNotes(Fixture(c.topology), file, Fixture(c.gres), gres_file, options);
  EXPECT_THAT(imported, StatusIs(absl::StatusCode::kInvalidArgument, c.message));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BlockErrorTest,
    ::testing::Values(
        BadBlocks{"SizesNotAMultiple", "bad-block-sizes-multiple.conf", "",
                  "tests/fixtures/slurm/bad-block-sizes-multiple.conf:4: BlockSizes: 40 is not a "
                  "multiple of the planning base size 18 (the first size); each size is the base "
                  "times a power of two, e.g. 18,36,72,144"},
        BadBlocks{"SizesNotAPowerOfTwo", "bad-block-sizes-ratio.conf", "",
                  "tests/fixtures/slurm/bad-block-sizes-ratio.conf:4: BlockSizes: 54 is 3 times "
                  "the planning base size 18, not a power of two times it; each size is the base "
                  "times 1, 2, 4, 8, ..., e.g. 18,36,72,144"},
        BadBlocks{"NodeInTwoBlocks", "bad-block-node-twice.conf", "",
                  "tests/fixtures/slurm/bad-block-node-twice.conf:3: Nodes: node 'gb018' is in "
                  "block 'rack1' (line 2) and in block 'rack2'; a node belongs to one block: "
                  "remove it from one of them"},
        BadBlocks{"UnknownNode", "bad-block-unknown-node.conf", "block-gres.conf",
                  "tests/fixtures/slurm/bad-block-unknown-node.conf:3: Nodes: block 'rack2' lists "
                  "node 'gb099', which tests/fixtures/slurm/block-gres.conf does not list: the "
                  "nodes of an NVLink domain need GPUs; add its GPUs to gres.conf, remove it "
                  "from the block, or give --blocks fabric if the blocks are not NVLink "
                  "domains"},
        BadBlocks{"TreeAndBlockLines", "bad-block-and-switch.conf", "",
                  "tests/fixtures/slurm/bad-block-and-switch.conf:3: BlockName: this file has "
                  "SwitchName= lines (topology/tree, line 2) and BlockName= or BlockSizes= lines "
                  "(topology/block, line 3); Slurm reads one kind per topology.conf: import the "
                  "block lines as a file of their own, or write both topologies in a "
                  "topology.yaml (Slurm 25.05+, --topology-yaml)"},
        BadBlocks{"SizesTwice", "bad-block-sizes-twice.conf", "",
                  "tests/fixtures/slurm/bad-block-sizes-twice.conf:4: BlockSizes: given twice "
                  "(first on line 3); give one BlockSizes line (Slurm 23.11 reads only "
                  "BlockLevels=, 24.05 and later only BlockSizes=)"},
        BadBlocks{"BlockTwice", "bad-block-twice.conf", "",
                  "tests/fixtures/slurm/bad-block-twice.conf:3: BlockName: block 'rack1' is "
                  "defined twice (first on line 2)"},
        BadBlocks{"UnknownKey", "bad-block-unknown-key.conf", "",
                  "tests/fixtures/slurm/bad-block-unknown-key.conf:2: LinkSpeed: unknown key; "
                  "topology.conf block keys are BlockName, Nodes"},
        BadBlocks{"YamlTwoBlockTopologies", "bad-topology-two-blocks.yaml", "",
                  "tests/fixtures/slurm/bad-topology-two-blocks.yaml:7:3: #/1: two block "
                  "topologies, 'racks' (line 2) and 'pairs'; give --topology-name with the one "
                  "to import (block topologies here: racks, pairs)",
                  true},
        BadBlocks{"YamlSyntax", "bad-topology-syntax.yaml", "",
                  "tests/fixtures/slurm/bad-topology-syntax.yaml:6:7: bad YAML: did not find "
                  "expected ',' or '}' (while parsing a flow mapping at line 5); topology.yaml "
                  "is YAML: check the brackets, quotes and indentation here "
                  "and on the lines above",
                  true},
        BadBlocks{"YamlNodeNotInTheTree", "bad-topology-node-not-in-tree.yaml", "",
                  "tests/fixtures/slurm/bad-topology-node-not-in-tree.yaml:6:31: "
                  "#/0/block/blocks/1/nodes: block 'rack2' lists node 'gb037', which no switch of "
                  "tree topology 'fabric' lists; add the node under a leaf switch there, or "
                  "remove it from the block",
                  true},
        BadBlocks{"YamlTwoKinds", "bad-topology-two-kinds.yaml", "",
                  "tests/fixtures/slurm/bad-topology-two-kinds.yaml:4:5: #/0/tree: topology "
                  "'both' is both block and tree; a topology has one kind: write two topologies",
                  true},
        BadBlocks{"FabricBlocksUnderATree", "topology-racks.yaml", "",
                  "tests/fixtures/slurm/topology-racks.yaml:9:9: #/0/block/blocks/0: --blocks "
                  "fabric makes the blocks the fabric, but tree topology 'fabric' describes it "
                  "already; read the blocks as NVLink domains in that fabric (--blocks nvlink, "
                  "the default)",
                  true, SlurmImportOptions::Blocks::kFabric}),
    [](const auto& info) { return info.param.name; });

TEST(ImportBlockTest, BlockNamedLikeAnAggregateIsRefused) {
  EXPECT_THAT(
      ImportBlocks("BlockName=r1 Nodes=n1\nBlockName=block2-0 Nodes=n2\nBlockName=r3 Nodes=n3\n",
                   ""),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "t.conf:2: BlockName: block name 'block2-0' is the name nvlplace gives aggregated "
               "block 0 of level 1 when blocks are the fabric; rename the block"));
}

TEST(ImportBlockTest, TopologyNameIsForTopologyYaml) {
  SlurmImportOptions options = Options(4);
  options.topology_names = {"nvl"};
  EXPECT_THAT(ImportBlocks("BlockName=r1 Nodes=n1\n", "", options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.conf: --topology-name picks a topology of a topology.yaml; a "
                       "topology.conf holds one: leave it out"));
}

// ---------------------------------------------------------------------------------------
// The irregular cluster from contrib/tools/gen_irregular_topology.py (plain Slurm files).

TEST(ImportSlurmTest, ImportsIrregularCluster) {
  absl::StatusOr<std::string> topology = ReadFileToString("tests/fixtures/irregular/topology.conf");
  absl::StatusOr<std::string> gres = ReadFileToString("tests/fixtures/irregular/gres.conf");
  ASSERT_THAT(topology, IsOk());
  ASSERT_THAT(gres, IsOk());
  absl::StatusOr<TopologySpec> spec =
      ImportSlurm(*topology, "irregular/topology.conf", *gres, "irregular/gres.conf", Options(0));
  ASSERT_THAT(spec, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  // The generator states its counts in the header: "# 304 nodes, 1964 GPUs, 68 leaves, ...".
  int nodes = 0, gpus = 0, leaves = 0, spines = 0, cores = 0;
  for (absl::string_view line : absl::StrSplit(*topology, '\n')) {
    if (std::sscanf(std::string(line).c_str(), "# %d nodes, %d GPUs, %d leaves, %d spines, %d core",
                    &nodes, &gpus, &leaves, &spines, &cores) == 5) {
      break;
    }
  }
  ASSERT_GE(nodes, 100) << "the fixture's header line with its counts is missing";
  EXPECT_EQ(t.num_nodes(), nodes);
  EXPECT_EQ(t.num_gpus(), gpus);
  EXPECT_THAT(t.tiers(), ElementsAre("leaf", "spine", "core"));
  std::vector<int> per_tier(3, 0);
  for (const Switch& sw : t.switches()) ++per_tier[sw.tier];
  EXPECT_THAT(per_tier, ElementsAre(leaves, spines, cores));
}

// ---------------------------------------------------------------------------------------
// Bounds: no input crashes, hangs or exhausts memory, and each error names its line.

TEST(ImportLimitTest, DeepSwitchChainIsRefusedNamingIt) {
  // 40,000 levels in 1.3 MB: the recursive height computation overflowed the stack.
  std::string conf = "SwitchName=s0 Nodes=n0\n";
  for (int i = 1; i < 40000; ++i)
    absl::StrAppend(&conf, "SwitchName=s", i, " Switches=s", i - 1, "\n");
  EXPECT_THAT(ImportSlurm(conf, "chain.conf", "", "", Options(1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "chain.conf:17: Switches: switch 's16' is 17 levels of switches high (s16 "
                       "-> s15 -> s14 -> s13 -> s12 -> s11 -> s10 -> s9 -> s8 -> s7 -> s6 -> s5 "
                       "-> s4 -> s3 -> s2 -> s1 -> s0); nvlplace models at most 16 tiers: is a "
                       "Switches= list wrong?"));
  // 16 levels are fine: tiers leaf, spine, core, tier3 ... tier15.
  std::string sixteen = "SwitchName=s0 Nodes=n0\n";
  for (int i = 1; i < 16; ++i)
    absl::StrAppend(&sixteen, "SwitchName=s", i, " Switches=s", i - 1, "\n");
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Import(sixteen, "", Options(1));
  ASSERT_THAT(topo, IsOk());
  EXPECT_EQ((*topo)->tiers().size(), 16u);
  EXPECT_EQ(TierOf(**topo, "s15"), "tier15");
}

TEST(ImportLimitTest, MaxGpusIsCheckedBeforeNodesAreBuilt) {
  // gres.conf: 2 nodes x 8 GPUs = 16 GPUs against a limit of 15.
  EXPECT_THAT(
      ImportSlurm("SwitchName=s0 Nodes=n[0-1]\n", "t.conf", "NodeName=n[0-1] Name=gpu Count=8\n",
                  "g.conf", Options(0), TopologyLimits{15}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "g.conf:1: NodeName: these 2 nodes of 8 GPUs bring gres.conf to 16 GPUs, "
               "more than the limit of 15 GPUs; raise it (--max-gpus) if the cluster is "
               "really that large"));
  // Nodes that only topology.conf names get the default count: 3 x 8 = 24 > 20.
  EXPECT_THAT(
      ImportSlurm("SwitchName=s0 Nodes=n[0-2]\n", "t.conf", "", "", Options(8), TopologyLimits{20}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "t.conf:1: Nodes: node 'n2' brings the cluster past 20 GPUs, the limit; "
               "raise it (--max-gpus) if the cluster is really that large"));
  // A nodes annotation: counted from its hostlist before it is expanded.
  EXPECT_THAT(ImportSlurm("# nvlplace: nodes names=n[0000000-1048575] gpus=1024 model=H\n",
                          "a.conf", "", "", Options(0)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a.conf:1: names: these 1048576 nodes of 1024 GPUs bring the "
                                 "cluster to 1073741824 GPUs, more than the limit of 4194304")));
}

TEST(ImportLimitTest, MaxNamesBoundsCpuOnlyNodes) {
  // The nodes a gres.conf that lists GPUs leaves out have none: the GPU limit does not bound
  // them, the names limit does (150 bytes of topology.conf could otherwise name 4,194,304).
  const std::string gres = "NodeName=n0 Name=gpu File=/dev/nvidia0\n";
  TopologyLimits limits;
  limits.max_names = 10;  // per file: n[0-9] fits in topology.conf, n[0-10] does not
  EXPECT_THAT(
      ImportSlurm("SwitchName=s0 Nodes=n[0-9]\n", "t.conf", gres, "g.conf", Options(8), limits),
      IsOk());
  EXPECT_THAT(
      ImportSlurm("SwitchName=s0 Nodes=n[0-10]\n", "t.conf", gres, "g.conf", Options(8), limits),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "t.conf:1: Nodes: the hostlists of this file expand to more than 10 names "
               "(this one to 11)"));
}

struct BadText {
  std::string name;
  std::string topology;  // text of topology.conf
  std::string gres;      // text of gres.conf
  std::string message;   // the whole message
};

class BadTextTest : public ::testing::TestWithParam<BadText> {};

TEST_P(BadTextTest, IsRefusedAtItsLine) {
  const BadText& c = GetParam();
  absl::StatusOr<TopologySpec> spec =
      ImportSlurm(c.topology, "t.conf", c.gres, "g.conf", Options(8));
  EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument, c.message));
  for (char ch : std::string(spec.status().message())) {
    EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20) << "raw control byte in the message";
  }
}

const char kBase[] = "SwitchName=s0 Nodes=n[0-1]\n";

INSTANTIATE_TEST_SUITE_P(
    TopologyConf, BadTextTest,
    ::testing::Values(
        BadText{"UnterminatedQuote", "SwitchName=s0 Nodes=n0\nSwitchName=\"s1 Switches=s0\n", "",
                "t.conf:2: a quote is opened but never closed: \"s1 Switches=s0; close it on "
                "the same line"},
        BadText{"UnterminatedQuoteInAnnotation",
                "# nvlplace: cluster name=\"lab\n" + std::string(kBase), "",
                "t.conf:1: a quote is opened but never closed: \"lab; close it on the same "
                "line"},
        BadText{"BadUtf8SwitchName", "SwitchName=s\xff Nodes=n0\nSwitchName=t Switches=s\xff\n", "",
                "t.conf:1: SwitchName: switch name 's\\xff': byte \\xff is not valid UTF-8 (byte "
                "2); names are printable UTF-8"},
        BadText{"ControlInKey",
                "SwitchName=s0 No\x01"
                "des=n0\n",
                "",
                "t.conf:1: No\\x01des: unknown key; topology.conf keys are SwitchName, Switches, "
                "Nodes, LinkSpeed"},
        BadText{"HugeLinkSpeed", "SwitchName=s0 Nodes=n0 LinkSpeed=10000000\n", "",
                "t.conf:1: LinkSpeed: '10000000' is not a positive number of Gb/s up to 1000000 "
                "(LinkSpeed is read as Gb/s)"},
        BadText{"ZeroLinkSpeed", "SwitchName=s0 Nodes=n0 LinkSpeed=0\n", "",
                "t.conf:1: LinkSpeed: '0' is not a positive number of Gb/s up to 1000000 "
                "(LinkSpeed is read as Gb/s)"},
        // Slurm's LinkSpeed is an unsigned integer (S_P_UINT32): none of these loads there.
        BadText{"FractionalLinkSpeed", "SwitchName=s0 Nodes=n0 LinkSpeed=12.5\n", "",
                "t.conf:1: LinkSpeed: '12.5' is not a whole number; Slurm reads LinkSpeed as an "
                "unsigned integer: write e.g. LinkSpeed=400"},
        BadText{"ExponentLinkSpeed", "SwitchName=s0 Nodes=n0 LinkSpeed=1e3\n", "",
                "t.conf:1: LinkSpeed: '1e3' is not a whole number; Slurm reads LinkSpeed as an "
                "unsigned integer: write e.g. LinkSpeed=400"},
        BadText{"NegativeLinkSpeed", "SwitchName=s0 Nodes=n0 LinkSpeed=-5\n", "",
                "t.conf:1: LinkSpeed: '-5' is not a whole number; Slurm reads LinkSpeed as an "
                "unsigned integer: write e.g. LinkSpeed=400"},
        BadText{"InfLinkGbps", "# nvlplace: cluster link_gbps=inf\n" + std::string(kBase), "",
                "t.conf:1: link_gbps: 'inf' is not a number"},
        BadText{"NanLatency", "# nvlplace: cluster nvlink_alpha_us=nan\n" + std::string(kBase), "",
                "t.conf:1: nvlink_alpha_us: 'nan' is not a number"},
        BadText{"NegativeLatency", "# nvlplace: cluster net_alpha_us=-1\n" + std::string(kBase), "",
                "t.conf:1: net_alpha_us: '-1' is not a number of microseconds from 0 to 1000000"},
        BadText{"HugeNvlink",
                "# nvlplace: gpu_model name=H nvlink_gbps=1e300\n" + std::string(kBase), "",
                "t.conf:1: nvlink_gbps: '1e300' is not a number of GB/s from 0 (no NVLink) up to "
                "1000000"},
        BadText{"LowOversubscription",
                "# nvlplace: switch name=s0 oversubscription=0.5\n" + std::string(kBase), "",
                "t.conf:1: oversubscription: '0.5' is not a downlink:uplink ratio from 1 to 1000"},
        BadText{"TooManyGpusPerNode",
                "# nvlplace: nodes names=n[0-1] gpus=2000 model=H\n" + std::string(kBase), "",
                "t.conf:1: gpus: '2000' is not a whole number from 0 to 1024"},
        BadText{"NulInModel", std::string("# nvlplace: gpu_model name=H\0x\n", 31) + kBase, "",
                "t.conf:1: name: GPU model name 'H\\x00x': control character \\x00 is not "
                "allowed (byte 2); names are printable UTF-8"},
        BadText{
            "SeventeenTiers",
            "# nvlplace: cluster tiers=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q\n" + std::string(kBase),
            "", "t.conf:1: tiers: 17 tiers; at most 16 are allowed"}),
    [](const ::testing::TestParamInfo<BadText>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    GresConf, BadTextTest,
    ::testing::Values(
        // 40 bytes that asked for 30,000,000 GPUs (7 GB), or 2,000,000,000 (std::bad_alloc).
        BadText{"HugeCount", kBase, "NodeName=n0 Name=gpu Count=30000000\n",
                "g.conf:1: Count: '30000000' is not a whole number from 1 to 1024"},
        BadText{"HugerCount", kBase, "NodeName=n0 Name=gpu Count=2000000000\n",
                "g.conf:1: Count: '2000000000' is not a whole number from 1 to 1024"},
        BadText{"PlusInDevice", kBase, "NodeName=n0 Name=gpu File=/dev/nvidia+0\n",
                "g.conf:1: File: '/dev/nvidia+0' is not /dev/nvidiaN (N a GPU number, or a "
                "bracket range such as /dev/nvidia[0-7])"},
        BadText{"HugeDeviceRange", kBase, "NodeName=n0 Name=gpu File=/dev/nvidia[0-99999999]\n",
                "g.conf:1: File: bad hostlist \"/dev/nvidia[0-99999999]\" at character 13: "
                "more than 1048576 hosts"},
        BadText{"ManyDevices", kBase, "NodeName=n0 Name=gpu File=/dev/nvidia[0-2047]\n",
                "g.conf:1: File: File= names 2048 devices; a node has at most 1024 GPUs"},
        BadText{"DeviceTooHigh", kBase, "NodeName=n0 Name=gpu File=/dev/nvidia1024\n",
                "g.conf:1: File: /dev/nvidia1024: a node has at most 1024 GPUs, numbered from 0"},
        BadText{"TooManyGpusOnANode", kBase,
                "NodeName=n0 Name=gpu Count=1000\nNodeName=n[0-1] Name=gpu Count=1000\n",
                "g.conf:2: NodeName: node 'n0' has more than 1024 GPUs in gres.conf"},
        // Slurm numbers GPUs in File= order (gres.c; only AutoDetect sorts): nvidia4 would
        // be its GPU 0 and nvidia0 its GPU 4.
        BadText{"FilesOutOfOrder", kBase,
                "NodeName=n0 Name=gpu File=/dev/nvidia[4-7]\n"
                "NodeName=n0 Name=gpu File=/dev/nvidia[0-3]\n"
                "NodeName=n1 Name=gpu File=/dev/nvidia[0-7]\n",
                "g.conf:2: File: node 'n0' lists /dev/nvidia0 after /dev/nvidia7 (line 1); "
                "Slurm numbers a node's GPUs in the order of its File= entries, nvlplace by "
                "device number, and the two would disagree: list the files in ascending order "
                "(File=/dev/nvidia[0-7])"},
        // Slurm would find n1's GPUs at run time; nvlplace must not take it as CPU-only.
        BadText{"AutoDetectNodeWithoutGpuLines", kBase,
                "NodeName=n1 AutoDetect=nvml\nNodeName=n0 Name=gpu Type=H100 "
                "File=/dev/nvidia[0-7]\n",
                "g.conf:1: AutoDetect: node 'n1' has AutoDetect and no Name=gpu line: Slurm "
                "finds its GPUs when slurmd starts, nvlplace cannot; give its Name=gpu Type= "
                "File= lines, or build its model with `nvlplace import nvidia-smi`"},
        BadText{"BadUtf8Type", kBase, "NodeName=n0 Name=gpu Type=H\xc3 Count=1\n",
                "g.conf:1: Type: GPU type 'H\\xc3': byte \\xc3 is not valid UTF-8 (byte 2); "
                "names are printable UTF-8"}),
    [](const ::testing::TestParamInfo<BadText>& info) { return info.param.name; });

// What gres.conf leaves to assumption is said on stderr (SlurmImport::notes).
TEST(ImportGresNotesTest, AssumptionsAreNoted) {
  struct Case {
    std::string gres;
    std::vector<std::string> notes;
  };
  const std::vector<Case> cases = {
      // File= lines for the nodes AutoDetect names: the model is theirs, nothing to say.
      {"NodeName=n[0-1] AutoDetect=nvml\n"
       "NodeName=n[0-1] Name=gpu Type=H100 File=/dev/nvidia[0-7]\n",
       {}},
      // AutoDetect=off: n1 has no GPUs, as before.
      {"NodeName=n1 AutoDetect=off\nNodeName=n0 Name=gpu Type=H100 File=/dev/nvidia[0-7]\n",
       {"note: 1 node of topology.conf not in g.conf imported without GPUs (gpus: 0): n1"}},
      // A global AutoDetect may cover CPU-only nodes too: a note that says what to check.
      {"AutoDetect=nvml\nNodeName=n0 Name=gpu Type=H100 File=/dev/nvidia[0-7]\n",
       {"note: 1 node of topology.conf not in g.conf imported without GPUs (gpus: 0): n1; "
        "g.conf:1 has AutoDetect: if they have GPUs, Slurm finds them and nvlplace does not: "
        "give their Name=gpu File= lines"}},
      // No Type=: the --gpu-model default, said.
      {"NodeName=n[0-1] Name=gpu File=/dev/nvidia[0-3]\n",
       {"note: g.conf gives no Type= for 2 nodes (n[0-1]): modelled as H100 (--gpu-model); give "
        "Type= in gres.conf, or --gpu-model with their model"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.gres);
    absl::StatusOr<SlurmImport> imported =
        ImportSlurmWithNotes(kBase, "t.conf", c.gres, "g.conf", Options(8));
    ASSERT_THAT(imported, IsOk());
    EXPECT_EQ(imported->notes, c.notes);
  }
}

// ---------------------------------------------------------------------------------------
// Include lines (slurm_lexer.h ReadConfLines).

// Without a way to read files, an Include line was read as a key=value line ("Include:
// expected key=value"); it is an error that says why the file cannot be read.
TEST(ImportIncludeTest, IncludeInTextWithoutAReaderIsAnErrorAtItsLine) {
  EXPECT_THAT(
      ImportSlurm("SwitchName=s1 Nodes=n1\nInclude leaves.conf\n", "t.conf", "", "", Options(8)),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "t.conf:2: Include: 'leaves.conf': nvlplace was given this file's text, not "
               "its path, and cannot read the file it includes; give the file itself "
               "(nvlplace import slurm --topology, --gres)"));
  EXPECT_THAT(ImportSlurm("SwitchName=s1 Nodes=n1\n", "t.conf", "include gres.d/a.conf\n", "g.conf",
                          Options(8)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("g.conf:1: Include: ")));
}

TEST(ImportIncludeTest, TopologyAndGresIncludesAreReadInPlace) {
  testing::MemoryFiles m;
  m.files["topology.d/leaves.conf"] =
      "# nvlplace: switch name=s2 oversubscription=2\n"
      "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\n";
  m.files["gres.d/h100.conf"] = "NodeName=n[1-2] Name=gpu Type=H100 File=/dev/nvidia[0-7]\n";
  SlurmImportOptions options = Options(0);
  options.includes = m.Includes();
  absl::StatusOr<TopologySpec> spec = ImportSlurm(
      "# nvlplace: cluster name=inc\nSwitchName=top Switches=s[1-2]\n"
      "Include topology.d/leaves.conf\n",
      "topology.conf",
      "Include gres.d/h100.conf\nNodeName=n[3-4] Name=gpu Type=A100 File=/dev/nvidia[0-3]\n",
      "gres.conf", options);
  ASSERT_THAT(spec, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_EQ(t.name(), "inc");
  EXPECT_EQ(t.num_nodes(), 4);
  EXPECT_EQ(t.num_gpus(), 24);  // n[1-2] x 8 H100 + n[3-4] x 4 A100
  EXPECT_EQ(TierOf(t, "s1"), "leaf");
  EXPECT_EQ(TierOf(t, "top"), "spine");
  EXPECT_EQ(t.switches()[t.FindSwitch("s2")].oversubscription, 2);  // the included annotation
  EXPECT_THAT(m.asked, ElementsAre("topology.d/leaves.conf", "gres.d/h100.conf"));
}

// Each error is at the line where it is, in the included file; a line it refers to in another
// file is named with its file.
TEST(ImportIncludeTest, ErrorsNameTheIncludedFileAndLine) {
  struct Case {
    std::string topology, gres;
    std::map<std::string, std::string> files;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"SwitchName=s1 Nodes=n1\nInclude more.conf\n",
       "",
       {{"more.conf", "SwitchName=s1 Nodes=n2\n"}},
       "more.conf:1: SwitchName: switch 's1' is defined twice (first on topology.conf:1)"},
      {"SwitchName=s1 Nodes=n1\n",
       "Include gres.d/a.conf\n",
       {{"gres.d/a.conf", "\nNodeName=n1 Name=gpu Type=H100 File=/dev/nvidia0 Links=-1,1\n"}},
       "gres.d/a.conf:2: Links: the row has 2 entries but node 'n1' has 1 GPUs"},
      {"SwitchName=s1 Nodes=n1\n",
       "NodeName=n1 Name=gpu Type=H100 File=/dev/nvidia1\nInclude g2.conf\n",
       {{"g2.conf", "NodeName=n1 Name=gpu Type=H100 File=/dev/nvidia0\n"}},
       "g2.conf:1: File: node 'n1' lists /dev/nvidia0 after /dev/nvidia1 (gres.conf:1); Slurm "
       "numbers a node's GPUs in the order of its File= entries, nvlplace by device number, and "
       "the two would disagree: list the files in ascending order (File=/dev/nvidia[0-7])"},
      {"SwitchName=s1 Nodes=n[1-2]\n",
       "Include auto.conf\nNodeName=n1 Name=gpu Type=H100 File=/dev/nvidia0\n",
       {{"auto.conf", "NodeName=n2 AutoDetect=nvml\n"}},
       "auto.conf:1: AutoDetect: node 'n2' has AutoDetect and no Name=gpu line"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    testing::MemoryFiles m;
    m.files = c.files;
    SlurmImportOptions options = Options(0);
    options.includes = m.Includes();
    EXPECT_THAT(ImportSlurm(c.topology, "topology.conf", c.gres, "gres.conf", options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)));
  }
}

TEST(ImportLimitTest, LongLinksRowIsRefused) {
  std::string row = "-1";
  for (int i = 0; i < 1100; ++i) row += ",1";
  EXPECT_THAT(
      ImportSlurm(kBase, "t.conf", "NodeName=n0 Name=gpu File=/dev/nvidia0 Links=" + row + "\n",
                  "g.conf", Options(8)),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "g.conf:1: Links: more than 1024 entries; a node has at most that many "
               "GPUs"));
}

TEST(ImportLimitTest, OptionsAreCheckedLikeFileValues) {
  SlurmImportOptions options = Options(5000);
  EXPECT_THAT(ImportSlurm(kBase, "t.conf", "", "", options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the default GPU count per node must be from 1 to 1024")));
  options = Options(8);
  options.nvlink_gbps = std::numeric_limits<double>::infinity();
  EXPECT_THAT(ImportSlurm(kBase, "t.conf", "", "", options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the default NVLink bandwidth must be")));
  options = Options(8);
  options.gpu_model = "H\t100";
  EXPECT_THAT(ImportSlurm(kBase, "t.conf", "", "", options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("control character \\x09")));
}

}  // namespace
}  // namespace nvlplace
