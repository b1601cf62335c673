// AdviseHugePages: which ranges the kernel is told to back with huge pages (read back from
// /proc/self/smaps, where such a mapping's VmFlags carry "hg").
#include "contrib/cli/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace nvlplace::cli {
namespace {

// The VmFlags of the mapping that holds `addr`, or "" when none does.
std::string VmFlagsAt(const void* addr) {
  const auto at = reinterpret_cast<std::uintptr_t>(addr);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool HasHugePageFlag(const void* addr) { return VmFlagsAt(addr).find(" hg") != std::string::npos; }

// A fresh private mapping of 16 huge pages, and in it `aligned_`, its first huge page
// boundary, so that the test knows which whole huge pages a block holds.
class FreshMapping : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
      GTEST_SKIP() << "this kernel has no transparent huge pages";
    raw_ = mmap(nullptr, kRaw, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(raw_, MAP_FAILED);
    const std::size_t lead =
        (kHugePageBytes - reinterpret_cast<std::uintptr_t>(raw_) % kHugePageBytes) % kHugePageBytes;
    aligned_ = static_cast<char*>(raw_) + lead;
  }
  void TearDown() override {
    if (raw_ != nullptr && raw_ != MAP_FAILED) munmap(raw_, kRaw);
  }
  static constexpr std::size_t kRaw = 16 * kHugePageBytes;
  void* raw_ = nullptr;
  char* aligned_ = nullptr;  // 15 whole huge pages from here on
};

TEST_F(FreshMapping, ALargeBlockIsAdvisedOnItsWholeHugePagesOnly) {
  // 4 KiB into the first huge page, 3 huge pages long: it holds the 2nd and 3rd whole.
  char* block = aligned_ + 4096;
  ASSERT_TRUE(AdviseHugePages(block, 3 * kHugePageBytes));
  EXPECT_FALSE(HasHugePageFlag(block)) << VmFlagsAt(block);
  EXPECT_TRUE(HasHugePageFlag(aligned_ + kHugePageBytes)) << VmFlagsAt(aligned_ + kHugePageBytes);
  EXPECT_TRUE(HasHugePageFlag(aligned_ + 3 * kHugePageBytes - 1));
  EXPECT_FALSE(HasHugePageFlag(aligned_ + 3 * kHugePageBytes)) << "past the last whole page";
}

TEST_F(FreshMapping, OneAlignedHugePageIsAdvised) {
  ASSERT_TRUE(AdviseHugePages(aligned_, kHugePageBytes));
  EXPECT_TRUE(HasHugePageFlag(aligned_)) << VmFlagsAt(aligned_);
  EXPECT_TRUE(HasHugePageFlag(aligned_ + kHugePageBytes - 1));
  EXPECT_FALSE(HasHugePageFlag(aligned_ + kHugePageBytes)) << "past the block";
}

TEST_F(FreshMapping, ABlockWithoutAWholeHugePageIsLeftAlone) {
  // One huge page long but a byte past a boundary: two partial pages, no whole one.
  EXPECT_FALSE(AdviseHugePages(aligned_ + 1, kHugePageBytes));
  EXPECT_FALSE(HasHugePageFlag(aligned_)) << VmFlagsAt(aligned_);
  EXPECT_FALSE(HasHugePageFlag(aligned_ + kHugePageBytes)) << VmFlagsAt(aligned_ + kHugePageBytes);
  EXPECT_FALSE(AdviseHugePages(aligned_, kHugePageBytes - 1));
  EXPECT_FALSE(HasHugePageFlag(aligned_));
  EXPECT_FALSE(AdviseHugePages(nullptr, 4 * kHugePageBytes));
}

}  // namespace
}  // namespace nvlplace::cli
