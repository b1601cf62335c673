// The table of known GPU models: figures per model, case-insensitive lookup, names for messages.
#include "placement/model/gpu_models.h"

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nvlplace {
namespace {

using ::testing::HasSubstr;

struct Figures {
  const char* name;
  double nvlink_gbps;
  double pcie_gbps;
};

class KnownFigures : public ::testing::TestWithParam<Figures> {};

TEST_P(KnownFigures, AsPublished) {
  const KnownGpuModel* m = FindKnownGpuModel(GetParam().name);
  ASSERT_NE(m, nullptr) << GetParam().name;
  EXPECT_EQ(m->nvlink_gbps, GetParam().nvlink_gbps);
  EXPECT_EQ(m->pcie_gbps, GetParam().pcie_gbps);
}

// GB/s per GPU, both directions. PCIe: Gen5 x16 128, Gen4 x16 64, Gen3 x16 32.
INSTANTIATE_TEST_SUITE_P(
    Table, KnownFigures,
    ::testing::Values(Figures{"H100", 900, 128}, Figures{"H100-SXM", 900, 128},
                      Figures{"H200", 900, 128}, Figures{"H800", 400, 128},
                      Figures{"H100-PCIe", 600, 128},  // NVLink bridge
                      Figures{"A100", 600, 64}, Figures{"A100-SXM", 600, 64},
                      Figures{"A800", 400, 64}, Figures{"A100-PCIe", 600, 64},  // bridge
                      Figures{"V100", 300, 32}, Figures{"B200", 1800, 128},
                      Figures{"GB200", 1800, 128}, Figures{"B100", 1800, 128},
                      Figures{"A30", 200, 64},  // has an NVLink bridge, unlike the A10
                      Figures{"T4", 0, 32}, Figures{"L4", 0, 64}, Figures{"L40", 0, 64},
                      Figures{"L40S", 0, 64}, Figures{"A10", 0, 64}));

TEST(GpuModels, LookupIgnoresCase) {
  const KnownGpuModel* m = FindKnownGpuModel("h100-pcie");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name, "H100-PCIe");
  EXPECT_EQ(FindKnownGpuModel("a100"), FindKnownGpuModel("A100"));
}

TEST(GpuModels, UnknownIsNull) {
  EXPECT_EQ(FindKnownGpuModel("X100"), nullptr);
  EXPECT_EQ(FindKnownGpuModel(""), nullptr);
  EXPECT_EQ(FindKnownGpuModel("H100 "), nullptr);  // no trimming: names are exact but for case
}

TEST(GpuModels, NamesAreUniqueWithoutCaseAndFiguresInRange) {
  std::set<std::string> seen;
  for (const KnownGpuModel& m : KnownGpuModels()) {
    EXPECT_TRUE(seen.insert(absl::AsciiStrToLower(m.name)).second) << m.name;
    EXPECT_GE(m.nvlink_gbps, 0) << m.name;
    EXPECT_THAT((std::set<double>{32, 64, 128}), ::testing::Contains(m.pcie_gbps)) << m.name;
  }
}

TEST(GpuModels, NamesForMessages) {
  EXPECT_THAT(KnownGpuModelNames(), HasSubstr("H100, H100-SXM"));
  EXPECT_THAT(KnownGpuModelNames(), HasSubstr("T4"));
}

}  // namespace
}  // namespace nvlplace
