// Tests for reading NVLink islands from `nvidia-smi topo -m`.
#include "placement/formats/nvidia_smi.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Islands = std::vector<std::vector<int>>;

const char kFixtures[] = "tests/fixtures/nvidia-smi/";

std::string Fixture(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFileToString(kFixtures + name);
  EXPECT_THAT(text, IsOk());
  return text.ok() ? *text : "";
}

struct GoodCase {
  std::string file;
  Islands islands;
};

void PrintTo(const GoodCase& c, std::ostream* os) { *os << c.file; }

class ParseFixtureTest : public ::testing::TestWithParam<GoodCase> {};

TEST_P(ParseFixtureTest, FindsIslands) {
  absl::StatusOr<Islands> islands = ParseNvidiaSmiTopo(Fixture(GetParam().file), GetParam().file);
  ASSERT_THAT(islands, IsOk());
  EXPECT_EQ(*islands, GetParam().islands);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ParseFixtureTest,
    ::testing::Values(
        // NVSwitch: every pair NV18, one island; the 10 NIC columns and rows are ignored.
        GoodCase{"dgx-h100.txt", {{0, 1, 2, 3, 4, 5, 6, 7}}},
        // Bridges chain 0-1-2-3 and 4-5-6-7: GPU0 and GPU3 share no bridge but one island.
        GoodCase{"nvlink-bridge-2x4.txt", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
        // PIX and SYS only (spaces, mlx5_0 column): one island per GPU.
        GoodCase{"pcie-only.txt", {{0}, {1}, {2}, {3}}}));

struct BadCase {
  std::string file;
  std::string message;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class ParseErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseErrorTest, Rejects) {
  EXPECT_THAT(ParseNvidiaSmiTopo(Fixture(GetParam().file), GetParam().file),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ParseErrorTest,
    ::testing::Values(
        BadCase{"bad-ragged-row.txt",
                "bad-ragged-row.txt:4: GPU2: the row has 3 entries but the header has 4 devices"},
        BadCase{"bad-unknown-token.txt",
                "bad-unknown-token.txt:3: GPU1: unknown entry 'NVL' in column 3"},
        BadCase{"bad-self-not-x.txt",
                "bad-self-not-x.txt:3: GPU1: its own column holds 'NV12'; expected X"},
        BadCase{"bad-missing-row.txt", "bad-missing-row.txt:5: no row for GPU3"},
        BadCase{"bad-no-header.txt", "bad-no-header.txt:1: expected the header"}));

TEST(ParseNvidiaSmiTopoTest, DropsAnsiCodesAndCarriageReturns) {
  std::string text =
      "\x1b[4m\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\x1b[0m\r\n"
      "GPU0\t X \tNV2\t0-7\t0\r\n"
      "GPU1\tNV2\t X \t0-7\t0\r\n";
  absl::StatusOr<Islands> islands = ParseNvidiaSmiTopo(text, "ansi");
  ASSERT_THAT(islands, IsOk());
  EXPECT_EQ(*islands, (Islands{{0, 1}}));
}

TEST(ParseNvidiaSmiTopoTest, AcceptsOldSocName) {
  std::string text = "GPU0 GPU1 CPU Affinity\nGPU0 X SOC 0-7\nGPU1 SOC X 8-15\n";
  absl::StatusOr<Islands> islands = ParseNvidiaSmiTopo(text, "old");
  ASSERT_THAT(islands, IsOk());
  EXPECT_EQ(*islands, (Islands{{0}, {1}}));
}

TEST(ParseNvidiaSmiTopoTest, RejectsRepeatedRow) {
  std::string text = "GPU0 GPU1\nGPU0 X NV1\nGPU1 NV1 X\nGPU1 NV1 X\n";
  EXPECT_THAT(ParseNvidiaSmiTopo(text, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t:4: GPU1: the row is repeated (first on line 3)")));
}

TEST(ParseNvidiaSmiTopoTest, RejectsGpuColumnsOutOfOrder) {
  std::string text = "GPU1 GPU0\nGPU0 X NV1\nGPU1 NV1 X\n";
  EXPECT_THAT(ParseNvidiaSmiTopo(text, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t:1: header column 'GPU1' is out of order; expected GPU0")));
}

TEST(ParseNvidiaSmiTopoTest, RejectsRowOfUnknownGpu) {
  std::string text = "GPU0\nGPU0 X\nGPU1 X\n";
  EXPECT_THAT(
      ParseNvidiaSmiTopo(text, "t"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("t:3: GPU1: the header has 1 GPUs")));
}

TEST(ParseNvidiaSmiTopoTest, RejectsXOffTheDiagonal) {
  std::string text = "GPU0 GPU1\nGPU0 X X\nGPU1 NV1 X\n";
  EXPECT_THAT(ParseNvidiaSmiTopo(text, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t:2: GPU0: X in column 2 is not its own")));
}

TEST(ParseNvidiaSmiTopoTest, RejectsEmptyText) {
  EXPECT_THAT(ParseNvidiaSmiTopo("\n \n", "empty"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty: no `nvidia-smi")));
}

TEST(NvlinkIslandsTest, JoinsTransitivelyAndEitherDirection) {
  // 0-2 only in row 2 (one direction), 2-3 in both: {0,2,3}; 1 alone.
  EXPECT_THAT(NvlinkIslands({{-1, 0, 0, 0}, {0, -1, 0, 0}, {4, 0, -1, 2}, {0, 0, 2, -1}}),
              ElementsAre(ElementsAre(0, 2, 3), ElementsAre(1)));
  EXPECT_THAT(NvlinkIslands({}), ::testing::IsEmpty());
  EXPECT_THAT(NvlinkIslands({{-1}}), ElementsAre(ElementsAre(0)));
}

TEST(ImportNvidiaSmiTest, BuildsOneNodeCluster) {
  absl::StatusOr<TopologySpec> spec =
      ImportNvidiaSmi(Fixture("nvlink-bridge-2x4.txt"), "box", "box01", "A100-PCIe");
  ASSERT_THAT(spec, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_EQ(t.name(), "box01");
  EXPECT_EQ(t.num_nodes(), 1);
  EXPECT_EQ(t.num_gpus(), 8);
  ASSERT_EQ(t.num_domains(), 2);  // box01:nvl0 = GPUs 0-3, box01:nvl1 = GPUs 4-7
  EXPECT_EQ(t.domains()[t.FindDomain("box01:nvl1")].gpus, (std::vector<GpuId>{4, 5, 6, 7}));
  EXPECT_EQ(t.gpu_models()[0].name, "A100-PCIe");
  ASSERT_EQ(t.num_switches(), 1);
  EXPECT_EQ(t.switches()[0].name, "leaf0");
  EXPECT_EQ(t.nodes()[0].leaves, (NodeLeaves{0}));
}

TEST(ImportNvidiaSmiTest, OneIslandNodeHasWholeNodeDomain) {
  absl::StatusOr<TopologySpec> spec =
      ImportNvidiaSmi(Fixture("dgx-h100.txt"), "dgx", "dgx01", "H100");
  ASSERT_THAT(spec, IsOk());
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  ASSERT_EQ((*topo)->num_domains(), 1);
  EXPECT_EQ((*topo)->domains()[0].name, "dgx01");
  EXPECT_EQ((*topo)->domains()[0].gpus.size(), 8u);
}

TEST(ImportNvidiaSmiTest, PassesParseErrorsOn) {
  EXPECT_THAT(ImportNvidiaSmi(Fixture("bad-unknown-token.txt"), "bad.txt", "n0", "H100"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad.txt:3: GPU1")));
}

TEST(NvidiaSmiLimitTest, RefusesMoreGpusThanANodeHas) {
  // 1,025 GPU columns: the matrix (and the island search over it) grows with their square.
  std::string header;
  for (int i = 0; i < 1025; ++i) header += " GPU" + std::to_string(i);
  EXPECT_THAT(ParseNvidiaSmiTopo(header + "\n", "wide.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "wide.txt:1: more than 1024 GPU columns; a node has at most that many "
                       "GPUs"));
}

TEST(NvidiaSmiLimitTest, EscapesControlBytesAndChecksNames) {
  std::string text = std::string("GPU0 GPU1\nGPU0 X NV\x01\nGPU1 NV1 X\n");
  EXPECT_THAT(ParseNvidiaSmiTopo(text, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t:2: GPU0: unknown entry 'NV\\x01' in column 2")));
  std::string good = Fixture("dgx-h100.txt");
  EXPECT_THAT(ImportNvidiaSmi(good, "dgx",
                              std::string("dgx\0"
                                          "01",
                                          6),
                              "H100"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node name 'dgx\\x0001': control character \\x00")));
  EXPECT_THAT(ImportNvidiaSmi(good, "dgx", "dgx01", "H\xff"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("GPU model name 'H\\xff': byte \\xff is not valid UTF-8")));
  EXPECT_THAT(ImportNvidiaSmi(good, "dgx", "dgx01", "H100", TopologyLimits{4}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "dgx: the node has 8 GPUs, more than the limit of 4 GPUs"));
}

}  // namespace
}  // namespace nvlplace
