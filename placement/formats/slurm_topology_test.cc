// Tests for reading Slurm's topology files as written: BlockSizes rules, block levels, and
// the choice of topologies in a topology.yaml and the spellings Slurm reads there.
#include "placement/formats/slurm_topology.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/slurm_testing.h"
#include "tests/status_matchers.h"

namespace nvlplace::slurm {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<SourceLoc> Locs(size_t n) {
  return std::vector<SourceLoc>(n, SourceLoc{"t.conf", 7, 0, "BlockSizes"});
}

// ---- BlockSizes ---------------------------------------------------------------------------

struct SizesCase {
  std::string name;
  std::vector<int64_t> sizes;
  int64_t base;             // 0: an error is expected
  std::vector<int> levels;  // or the error
  std::string error;
};

class BlockSizesTest : public ::testing::TestWithParam<SizesCase> {};

TEST_P(BlockSizesTest, LevelsOrError) {
  const SizesCase& c = GetParam();
  absl::StatusOr<BlockLevels> levels = CheckBlockSizes(c.sizes, Locs(c.sizes.size()));
  if (c.base == 0) {
    EXPECT_THAT(levels, StatusIs(absl::StatusCode::kInvalidArgument, c.error));
    return;
  }
  ASSERT_THAT(levels, IsOk());
  EXPECT_EQ(levels->base, c.base);
  EXPECT_EQ(levels->levels, c.levels);
  EXPECT_TRUE(levels->given);
  EXPECT_EQ(levels->loc.line, 7);
}

INSTANTIATE_TEST_SUITE_P(
    Slurm, BlockSizesTest,
    ::testing::Values(
        // 18 x 1, 2, 4, 8: levels 0 to 3.
        SizesCase{"Rack", {18, 36, 72, 144}, 18, {0, 1, 2, 3}, ""},
        // The man page's 30,120: 120 / 30 = 4 = 2^2, level 1 skipped.
        SizesCase{"SkipsALevel", {30, 120}, 30, {0, 2}, ""},
        // Spares: 16-node planning blocks in 18-node racks; order and repeats do not matter.
        SizesCase{"SparesAnyOrder", {16, 64, 32, 64}, 16, {0, 1, 2}, ""},
        // 2^15 times the base is the last of Slurm's 16 levels.
        SizesCase{"LastLevel", {1, 32768}, 1, {0, 15}, ""},
        SizesCase{"PastLastLevel",
                  {1, 65536},
                  0,
                  {},
                  "t.conf:7: BlockSizes: 65536 is 65536 times the planning base size 1; Slurm "
                  "plans at most 16 levels (up to 32768 times it)"},
        SizesCase{"NotAMultiple",
                  {18, 40},
                  0,
                  {},
                  "t.conf:7: BlockSizes: 40 is not a multiple of the planning base size 18 (the "
                  "first size); each size is the base times a power of two, e.g. 18,36,72,144"},
        // Smaller than the base: 18 % 36 != 0.
        SizesCase{"BelowTheBase",
                  {36, 18},
                  0,
                  {},
                  "t.conf:7: BlockSizes: 18 is not a multiple of the planning base size 36 (the "
                  "first size); each size is the base times a power of two, e.g. 36,72,144,288"},
        // 54 / 18 = 3.
        SizesCase{"NotAPowerOfTwo",
                  {18, 54},
                  0,
                  {},
                  "t.conf:7: BlockSizes: 54 is 3 times the planning base size 18, not a power "
                  "of two times it; each size is the base times 1, 2, 4, 8, ..., e.g. "
                  "18,36,72,144"},
        SizesCase{"Zero",
                  {0, 18},
                  0,
                  {},
                  "t.conf:7: BlockSizes: 0 is not a block size: a size is a number of nodes "
                  "from 1 to 1048576, the first the planning base size"},
        SizesCase{"Seventeen",
                  {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                  0,
                  {},
                  "t.conf:7: BlockSizes: more than 16 block sizes; Slurm plans at most 16 levels "
                  "(the base size times 1, 2, 4, ... 32768)"}),
    [](const auto& info) { return info.param.name; });

TEST(BlockLevelsTest, DefaultIsFiveLevelsOfTheFirstBlock) {
  BlockLevels levels = DefaultBlockLevels(18);
  EXPECT_EQ(levels.base, 18);
  EXPECT_THAT(levels.levels, ElementsAre(0, 1, 2, 3, 4));  // 1, 2, 4, 8, 16 blocks
  EXPECT_FALSE(levels.given);
}

TEST(BlockLevelsTest, LevelsAboveStopAtTheFirstThatHoldsEveryBlock) {
  BlockLevels levels = DefaultBlockLevels(18);
  EXPECT_THAT(LevelsAbove(levels, 1), IsEmpty());                  // one block: nothing above it
  EXPECT_THAT(LevelsAbove(levels, 2), ElementsAre(1));             // 2 >= 2
  EXPECT_THAT(LevelsAbove(levels, 3), ElementsAre(1, 2));          // 2 < 3 <= 4
  EXPECT_THAT(LevelsAbove(levels, 8), ElementsAre(1, 2, 3));       // 8 >= 8
  EXPECT_THAT(LevelsAbove(levels, 100), ElementsAre(1, 2, 3, 4));  // 16 < 100: all there are
  BlockLevels skip = *CheckBlockSizes({30, 120, 480}, Locs(3));
  EXPECT_THAT(LevelsAbove(skip, 5), ElementsAre(2, 4));  // 4 < 5 <= 16
}

TEST(BlockLevelsTest, ExportedSizesReachEveryBlock) {
  EXPECT_THAT(BlockSizesFor(16, 1), ElementsAre(16));
  EXPECT_THAT(BlockSizesFor(16, 2), ElementsAre(16, 32));
  EXPECT_THAT(BlockSizesFor(16, 8), ElementsAre(16, 32, 64, 128));        // 8 racks: 2^3
  EXPECT_THAT(BlockSizesFor(16, 6), ElementsAre(16, 32, 64, 128));        // 6 <= 8
  EXPECT_THAT(BlockSizesFor(18, 16), ElementsAre(18, 36, 72, 144, 288));  // 16 racks: 2^4
  EXPECT_EQ(BlockSizesFor(1, size_t{1} << 20).size(), 16u);  // Slurm's 16 levels at most
}

TEST(BlockLevelsTest, NamesOfLevelsAndAggregates) {
  EXPECT_EQ(BlockLevelTier(0), "block");
  EXPECT_EQ(BlockLevelTier(1), "block2");
  EXPECT_EQ(BlockLevelTier(3), "block8");
  EXPECT_EQ(AggregatedBlockName(2, 1), "block4-1");  // blocks 4 to 7
}

// ---- topology.conf ------------------------------------------------------------------------

TEST(ReadTopologyConfTest, BlocksInFileOrderWithTheirLines) {
  NameBudget budget;
  absl::StatusOr<TopologyFile> file = ReadTopologyConf(
      "# nvlplace: cluster name=x\nBlockName=b1 Nodes=n[1-2]\nBLOCKNAME=b0 NODES=n3\n"
      "BlockName=empty\nBlockSizes=2,4\n",
      "t.conf", &budget);
  ASSERT_THAT(file, IsOk());
  ASSERT_EQ(file->blocks.size(), 3u);
  EXPECT_EQ(file->blocks[1].name, "b0");
  EXPECT_THAT(file->blocks[1].nodes, ElementsAre("n3"));
  EXPECT_EQ(file->blocks[1].loc.line, 3);
  EXPECT_THAT(file->blocks[2].nodes, IsEmpty());  // 26.05 allows it
  EXPECT_EQ(file->block_levels.base, 2);
  EXPECT_EQ(file->block_levels.loc.line, 5);
  EXPECT_EQ(file->annotations.size(), 1u);
  EXPECT_TRUE(file->switches.empty());
  EXPECT_EQ(budget.names, 3u);  // n1, n2, n3
}

// Slurm 23.11's BlockLevels= (topology_block.c): levels as a bitmap list; the base is every
// block's node count.
TEST(ReadTopologyConfTest, BlockLevelsOfSlurm2311) {
  NameBudget budget;
  absl::StatusOr<TopologyFile> file =
      ReadTopologyConf("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nblocklevels=1,3-4\n",
                       "t.conf", &budget);
  ASSERT_THAT(file, IsOk());
  EXPECT_TRUE(file->block_levels.given);
  EXPECT_TRUE(file->block_levels.from_levels);
  EXPECT_EQ(file->block_levels.base, 2);                            // b1's 2 nodes
  EXPECT_THAT(file->block_levels.levels, ElementsAre(0, 1, 3, 4));  // 0 is always planned
  EXPECT_EQ(file->block_levels.loc.line, 3);
}

struct ConfErrorCase {
  std::string name;
  std::string text;
  std::string message;  // the whole message
};

class ReadTopologyConfErrorTest : public ::testing::TestWithParam<ConfErrorCase> {};

TEST_P(ReadTopologyConfErrorTest, Refuses) {
  NameBudget budget;
  EXPECT_THAT(ReadTopologyConf(GetParam().text, "t.conf", &budget),
              StatusIs(absl::StatusCode::kInvalidArgument, GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    BlockLevels, ReadTopologyConfErrorTest,
    ::testing::Values(
        ConfErrorCase{"UnequalBlocks",
                      "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-9]\nBlockLevels=0-1\n",
                      "t.conf:2: BlockName: block 'b2' has 5 nodes and block 'b1' (line 1) 4; "
                      "Slurm 23.11 (BlockLevels=, line 3) needs every block to have the first "
                      "block's node count: make them equal, or write BlockSizes= for Slurm 24.05 "
                      "and later"},
        ConfErrorCase{"EmptyBlock", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2\nBlockLevels=0\n",
                      "t.conf:2: BlockName: block 'b2' has no nodes, which Slurm 23.11 "
                      "(BlockLevels=, line 3) refuses; give its Nodes=, or remove the block"},
        ConfErrorCase{"LevelTooHigh", "BlockName=b1 Nodes=n1\nBlockLevels=0-16\n",
                      "t.conf:2: BlockLevels: '0-16' is not a level or a range of levels from 0 "
                      "to 15; level L groups 2^L blocks: write e.g. BlockLevels=0-4"},
        ConfErrorCase{"NotALevel", "BlockName=b1 Nodes=n1\nBlockLevels=0,x\n",
                      "t.conf:2: BlockLevels: 'x' is not a level or a range of levels from 0 to "
                      "15; level L groups 2^L blocks: write e.g. BlockLevels=0-4"},
        ConfErrorCase{"BackwardRange", "BlockName=b1 Nodes=n1\nBlockLevels=3-1\n",
                      "t.conf:2: BlockLevels: '3-1' is not a level or a range of levels from 0 "
                      "to 15; level L groups 2^L blocks: write e.g. BlockLevels=0-4"},
        ConfErrorCase{"SizesAndLevels", "BlockName=b1 Nodes=n1\nBlockLevels=0-1\nBlockSizes=1,2\n",
                      "t.conf:3: BlockSizes: BlockLevels is given too (on line 2); give one "
                      "BlockSizes line (Slurm 23.11 reads only BlockLevels=, 24.05 and later only "
                      "BlockSizes=)"},
        ConfErrorCase{"LevelsAndSizes", "BlockName=b1 Nodes=n1\nBlockSizes=1,2\nBlockLevels=0-1\n",
                      "t.conf:3: BlockLevels: BlockSizes or BlockLevels is given twice (first on "
                      "line 2); give one: BlockSizes= from Slurm 24.05 on, BlockLevels= for "
                      "23.11"},
        ConfErrorCase{"LevelsAndSwitches", "SwitchName=s1 Nodes=n1\nBlockLevels=0-1\n",
                      "t.conf:2: BlockLevels: this file has SwitchName= lines (topology/tree, "
                      "line 1) and BlockName= or BlockSizes= lines (topology/block, line 2); "
                      "Slurm reads one kind per topology.conf: import the block lines as a file "
                      "of their own, or write both topologies in a topology.yaml (Slurm 25.05+, "
                      "--topology-yaml)"}),
    [](const ::testing::TestParamInfo<ConfErrorCase>& info) { return info.param.name; });

// ---- Include ------------------------------------------------------------------------------

TEST(ReadTopologyConfTest, IncludedLinesAreReadWhereTheyAre) {
  ::nvlplace::testing::MemoryFiles m;
  m.files["racks.conf"] = "BlockName=r2 Nodes=n[3-4]\nBlockSizes=2,4\n";
  NameBudget budget;
  absl::StatusOr<TopologyFile> file =
      ReadTopologyConf("BlockName=r1 Nodes=n[1-2]\nInclude racks.conf\nBlockName=r3 Nodes=n[5-6]\n",
                       "t.conf", &budget, m.Includes());
  ASSERT_THAT(file, IsOk());
  ASSERT_EQ(file->blocks.size(), 3u);
  EXPECT_EQ(file->blocks[1].name, "r2");
  EXPECT_EQ(FormatAt(file->blocks[1].loc, "x"), "racks.conf:1: BlockName: x");
  EXPECT_EQ(FormatAt(file->blocks[2].loc, "x"), "t.conf:3: BlockName: x");
  EXPECT_EQ(FormatAt(file->block_levels.loc, "x"), "racks.conf:2: BlockSizes: x");
  EXPECT_EQ(file->block_levels.base, 2);
  EXPECT_THAT(file->files, ElementsAre("t.conf", "racks.conf"));
}

// An error in an included file is at its line there; a line it points to in another file is
// named with that file.
TEST(ReadTopologyConfTest, ErrorsInIncludedFilesNameThem) {
  struct Case {
    std::string text;
    std::map<std::string, std::string> files;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"SwitchName=s1 Nodes=n1\nInclude more.conf\n",
       {{"more.conf", "SwitchName=s2 Nodes=n2\nSwitchName=s3 Bogus=1\n"}},
       "more.conf:2: Bogus: unknown key; topology.conf keys are SwitchName, Switches, Nodes, "
       "LinkSpeed"},
      {"SwitchName=s1 Nodes=n1\nInclude blocks.conf\n",
       {{"blocks.conf", "BlockName=b1 Nodes=n1\n"}},
       "blocks.conf:1: BlockName: this file has SwitchName= lines (topology/tree, t.conf:1) and "
       "BlockName= or BlockSizes= lines (topology/block, line 1); Slurm reads one kind per "
       "topology.conf: import the block lines as a file of their own, or write both topologies "
       "in a topology.yaml (Slurm 25.05+, --topology-yaml)"},
      {"BlockName=b1 Nodes=n1\nInclude b.conf\n",
       {{"b.conf", "BlockName=b1 Nodes=n2\n"}},
       "b.conf:1: BlockName: block 'b1' is defined twice (first on t.conf:1)"},
      {"BlockSizes=2,4\nInclude b.conf\n",
       {{"b.conf", "BlockName=b1 Nodes=n[1-2]\nBlockSizes=2\n"}},
       "b.conf:2: BlockSizes: given twice (first on t.conf:1); give one BlockSizes line (Slurm "
       "23.11 reads only BlockLevels=, 24.05 and later only BlockSizes=)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    ::nvlplace::testing::MemoryFiles m;
    m.files = c.files;
    NameBudget budget;
    EXPECT_THAT(ReadTopologyConf(c.text, "t.conf", &budget, m.Includes()),
                StatusIs(absl::StatusCode::kInvalidArgument, c.error));
  }
}

// ---- topology.yaml ------------------------------------------------------------------------

const char kTwoTrees[] = R"(
- topology: small
  tree:
    switches: [{switch: s0, nodes: "n[1-4]"}]
- topology: big
  cluster_default: true
  tree:
    switches:
      - {switch: l0, nodes: "n[1-2]"}
      - {switch: l1, nodes: "n[3-4]"}
      - {switch: top, children: "l[0-1]"}
- topology: racks
  block: {block_sizes: [2], blocks: [{block: r0, nodes: "n[1-2]"}, {block: r1, nodes: "n[3-4]"}]}
- topology: flat
  flat: {alpha_step_rank: true}
)";

TEST(ReadTopologyYamlTest, NamePicksOneOfTwoTrees) {
  NameBudget budget;
  absl::StatusOr<TopologyFile> file = ReadTopologyYaml(kTwoTrees, "t.yaml", {"big"}, &budget);
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->tree_topology, "big");
  EXPECT_EQ(file->block_topology, "racks");  // the only block topology
  ASSERT_EQ(file->switches.size(), 3u);
  EXPECT_EQ(file->switches[2].name, "top");
  EXPECT_THAT(file->switches[2].children, ElementsAre("l0", "l1"));
  EXPECT_EQ(file->switches[2].children_loc.path, "#/1/tree/switches/2/children");
  EXPECT_EQ(file->switches[2].loc.line, 11);
  ASSERT_EQ(file->blocks.size(), 2u);
  EXPECT_EQ(file->block_levels.base, 2);
  EXPECT_EQ(file->block_levels.loc.path, "#/2/block/block_sizes/0");
}

// What Slurm's data_parser reads (25.11's v0.0.44 and 26.05's v0.0.45 parsers.c) that
// nvlplace refused: a topology as a mapping, not in a list; one switch or block as a mapping;
// one block size as a scalar, quoted, with leading zeros or in hex; `flat: false` or an
// empty `tree: {}` beside a block topology; booleans spelled as Slurm's data.c reads them.
struct AcceptCase {
  std::string name;
  std::string text;
  std::string tree, block;  // the topologies read
  size_t switches, blocks;
  int64_t base;             // BlockSizes base; 0: not given
  std::string blocks_path;  // the YAML path of the first block
};

class ReadTopologyYamlAcceptTest : public ::testing::TestWithParam<AcceptCase> {};

TEST_P(ReadTopologyYamlAcceptTest, ReadsWhatSlurmReads) {
  const AcceptCase& c = GetParam();
  NameBudget budget;
  absl::StatusOr<TopologyFile> file = ReadTopologyYaml(c.text, "t.yaml", {}, &budget);
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->tree_topology, c.tree);
  EXPECT_EQ(file->block_topology, c.block);
  EXPECT_EQ(file->switches.size(), c.switches);
  ASSERT_EQ(file->blocks.size(), c.blocks);
  EXPECT_EQ(file->block_levels.base, c.base);
  if (!c.blocks_path.empty()) {
    EXPECT_EQ(file->blocks[0].loc.path, c.blocks_path);
  }
}

const char kOneBlock[] = "  block:\n    blocks: [{block: r0, nodes: \"n[1-2]\"}]\n";

INSTANTIATE_TEST_SUITE_P(
    Spellings, ReadTopologyYamlAcceptTest,
    ::testing::Values(
        AcceptCase{"TopologyAsAMapping",
                   "topology: t\ntree:\n  switches: [{switch: s0, nodes: \"n[1-2]\"}]\n", "t", "",
                   1, 0, 0, ""},
        AcceptCase{"OneSwitchAsAMapping",
                   "- topology: t\n  tree:\n    switches: {switch: s0, nodes: \"n[1-2]\"}\n", "t",
                   "", 1, 0, 0, ""},
        AcceptCase{"OneBlockAsAMapping",
                   "- topology: b\n  block:\n    blocks:\n      block: r0\n      nodes: n1\n", "",
                   "b", 0, 1, 0, "#/0/block/blocks"},
        AcceptCase{"OneBlockSizeAsAScalar",
                   "- topology: b\n  block:\n    block_sizes: 2\n"
                   "    blocks: [{block: r0, nodes: \"n[1-2]\"}]\n",
                   "", "b", 0, 1, 2, ""},
        // "08" is 8 to Slurm (decimal digits, leading zeros allowed; yaml-cpp: a bad octal),
        // 0x10 is 16.
        AcceptCase{"BlockSizesQuotedLeadingZeroAndHex",
                   "- topology: b\n  block:\n    block_sizes: [\"08\", 0x10]\n"
                   "    blocks: [{block: r0, nodes: \"n[1-8]\"}]\n",
                   "", "b", 0, 1, 8, ""},
        AcceptCase{"FlatFalseBesideBlock",
                   std::string("- topology: b\n  flat: false\n") + kOneBlock, "", "b", 0, 1, 0, ""},
        AcceptCase{"EmptyTreeBesideBlock", std::string("- topology: b\n  tree: {}\n") + kOneBlock,
                   "", "b", 0, 1, 0, ""},
        AcceptCase{"BooleansAsSlurmSpellsThem",
                   std::string("- topology: b\n  cluster_default: Yes\n") + kOneBlock +
                       "- topology: f\n  cluster_default: off\n  flat: T\n"
                       "- topology: g\n  flat: {alpha_step_rank: n}\n",
                   "", "b", 0, 1, 0, ""}),
    [](const auto& info) { return info.param.name; });

struct YamlCase {
  std::string name;
  std::string text;
  std::vector<std::string> names;
  std::string error;
};

class ReadTopologyYamlErrorTest : public ::testing::TestWithParam<YamlCase> {};

TEST_P(ReadTopologyYamlErrorTest, Refuses) {
  const YamlCase& c = GetParam();
  NameBudget budget;
  EXPECT_THAT(ReadTopologyYaml(c.text, "t.yaml", c.names, &budget),
              StatusIs(absl::StatusCode::kInvalidArgument, c.error));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ReadTopologyYamlErrorTest,
    ::testing::Values(
        YamlCase{"TwoTreesWithoutAName",
                 kTwoTrees,
                 {},
                 "t.yaml:5:3: #/1: two tree topologies, 'small' (line 2) and 'big'; give "
                 "--topology-name with the one to import (tree topologies here: small, big)"},
        YamlCase{"NameNotInTheFile",
                 kTwoTrees,
                 {"bigger"},
                 "t.yaml: --topology-name bigger: no such topology; the file has small (tree, "
                 "line 2), big (tree, line 5), racks (block, line 12), flat (flat, line 14)"},
        YamlCase{"NameOfAFlatTopology",
                 kTwoTrees,
                 {"big", "flat"},
                 "t.yaml:14:3: #/3: --topology-name flat names a flat topology, which holds no "
                 "switches or blocks; name a tree or block topology (small (tree, line 2), big "
                 "(tree, line 5), racks (block, line 12), flat (flat, line 14))"},
        YamlCase{"TwoNamesOfOneKind",
                 kTwoTrees,
                 {"big", "small"},
                 "t.yaml:2:3: #/0: --topology-name picks two tree topologies, 'big' and "
                 "'small'; give one name per kind"},
        YamlCase{"Empty",
                 "# nothing\n",
                 {},
                 "t.yaml:1:1: #: the file is empty; topology.yaml is a list of topologies, e.g. "
                 "- topology: nvl"},
        YamlCase{"NotAListOrAMapping",
                 "just text\n",
                 {},
                 "t.yaml:1:1: #: expected a list of topologies, each `- topology: NAME` with one "
                 "of block, flat, ring, torus3d, tree, or one topology as a mapping"},
        // Slurm reads an empty mapping as no plugin, and then has none to load.
        YamlCase{"EmptyTreeAlone",
                 "topology: x\ntree: {}\nflat: no\n",
                 {},
                 "t.yaml:1:1: #: topology 'x' needs one of block, flat, ring, torus3d, tree "
                 "(Slurm reads flat: false and tree: {} as none of them)"},
        // PARSE_FUNC(TOPOLOGY_FLAT): "Field flat is mutually exclusive with other plugins".
        YamlCase{"FlatTrueBesideBlock",
                 std::string("- topology: b\n  flat: true\n") + kOneBlock,
                 {},
                 "t.yaml:2:9: #/0/flat: topology 'b' is both block and flat; a topology has one "
                 "kind: write two topologies"},
        YamlCase{"TreeAsAList",
                 "- topology: t\n  tree: []\n",
                 {},
                 "t.yaml:2:9: #/0/tree: expected a mapping: tree: {...}; Slurm refuses a list "
                 "here"},
        YamlCase{"OneBooleanSlurmDoesNotRead",
                 "- topology: f\n  flat: 1\n",
                 {},
                 "t.yaml:2:9: #/0/flat: expected true or false (Slurm also reads yes, no, on, "
                 "off, y, n, t and f, in any case), not '1'"},
        // Slurm does not split one value at commas: its INT32 parser refuses '18,36'.
        YamlCase{"BlockSizesInOneString",
                 "- topology: b\n  block:\n    block_sizes: \"18,36\"\n    blocks: []\n",
                 {},
                 "t.yaml:3:18: #/0/block/block_sizes: '18,36' is not a whole number but several "
                 "in one value, which Slurm does not split; write whole numbers of nodes, e.g. "
                 "block_sizes: [18, 36]"},
        // data.c reads digits only: '+4' was read as 4 by yaml-cpp.
        YamlCase{"SignedBlockSize",
                 "- topology: b\n  block:\n    block_sizes: [+4]\n    blocks: []\n",
                 {},
                 "t.yaml:3:19: #/0/block/block_sizes/0: '+4' is not a whole number; write whole "
                 "numbers of nodes, e.g. block_sizes: [18, 36]"},
        // serializer_yaml.c: "YAML parser does not support aliases".
        YamlCase{"Alias",
                 "- topology: t\n  cluster_default: &yes true\n  flat: true\n"
                 "- topology: f\n  cluster_default: *yes\n  flat: true\n",
                 {},
                 "t.yaml:5:20: an alias (*name), which Slurm's YAML parser refuses (\"does not "
                 "support aliases\"); write the value out in full"},
        YamlCase{"NoKind",
                 "- topology: x\n",
                 {},
                 "t.yaml:1:3: #/0: topology 'x' needs one of block, flat, ring, torus3d, tree"},
        YamlCase{"UnknownKey",
                 "- topology: x\n  flat: true\n  weight: 3\n",
                 {},
                 "t.yaml:3:3: #/0/weight: unknown key 'weight'; allowed here: topology, "
                 "cluster_default, block, flat, ring, torus3d, tree"},
        YamlCase{"LinkSpeedIsNotInYaml",
                 "- topology: t\n  tree:\n    switches: [{switch: s, nodes: n1, link_speed: 1}]\n",
                 {},
                 "t.yaml:3:39: #/0/tree/switches/0/link_speed: unknown key 'link_speed'; allowed "
                 "here: switch, children, nodes"},
        YamlCase{"TopologyTwice",
                 "- {topology: x, flat: true}\n- {topology: x, flat: true}\n",
                 {},
                 "t.yaml:2:3: #/1: topology 'x' is defined twice (first on line 1)"},
        YamlCase{"BlockSizesRule",
                 "- topology: b\n  block:\n    block_sizes: [18, 27]\n    blocks: []\n",
                 {},
                 "t.yaml:3:23: #/0/block/block_sizes/1: 27 is not a multiple of the planning "
                 "base size 18 (the first size); each size is the base times a power of two, "
                 "e.g. 18,36,72,144"},
        YamlCase{"NodeInTwoBlocks",
                 "- topology: b\n  block:\n    blocks:\n      - {block: r0, nodes: \"n[1-2]\"}\n"
                 "      - {block: r1, nodes: \"n[2-3]\"}\n",
                 {},
                 "t.yaml:5:28: #/0/block/blocks/1/nodes: node 'n2' is in block 'r0' (line 4) "
                 "and in block 'r1'; a node belongs to one block: remove it from one of them"},
        // Fuzz finding (tests/fuzz/findings/slurm_topology_yaml/crash-check-topology.conf-
        // does-not-import-0ebb6812): a block named '\\' was read, then exported into a
        // topology.conf line that continues onto the next.
        YamlCase{"BackslashInABlockName",
                 "- topology: b\n  block:\n    blocks:\n      - block: \\\n        nodes: n1\n",
                 {},
                 "t.yaml:4:16: #/0/block/blocks/0/block: block '\\' has a backslash, which "
                 "Slurm's files read as an escape or a line continuation; rename it"},
        YamlCase{"BackslashInASwitchName",
                 "- topology: t\n  tree:\n    switches: [{switch: 's\\x', nodes: n1}]\n",
                 {},
                 "t.yaml:3:25: #/0/tree/switches/0/switch: switch 's\\x' has a backslash, "
                 "which Slurm's files read as an escape or a line continuation; rename it"},
        YamlCase{"BackslashAtTheEndOfANodeList",
                 "- topology: b\n  block:\n    blocks: [{block: r0, nodes: 'n[1-2],m\\'}]\n",
                 {},
                 "t.yaml:3:33: #/0/block/blocks/0/nodes: 'n[1-2],m\\' has a backslash, which "
                 "Slurm's files read as an escape or a line continuation; rename it"},
        YamlCase{"NoTreeNoBlock",
                 "- {topology: x, flat: true}\n",
                 {},
                 "t.yaml:1:1: #: no tree or block topology to import; the file has x (flat, line "
                 "1)"},
        YamlCase{"SyntaxSaysWhatToCheck",
                 "- topology: x\n  tree: {switches: [\n",
                 {},
                 "t.yaml:3:1: bad YAML: did not find expected node content (while parsing a "
                 "flow node at line 3); topology.yaml is YAML: "
                 "check the brackets, quotes and indentation here and on the lines above"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace nvlplace::slurm
