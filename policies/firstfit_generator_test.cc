// Tests for the firstfit generator: hosts in index order, lowest GPU indexes first.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/generator_testing.h"
#include "policies/generators.h"

namespace nvlplace {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(FirstFitGeneratorTest, HostsInIndexOrder) {
  testing::GeneratorWorld w({.gpus = 4}, "node0:0-5\n");
  std::vector<Candidate> c = MakeFirstFitGenerator()->Generate(*w.search, 4, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].origin.Text(), "first fit");
  // node0's 2 free GPUs (6 and 7), then the lowest 2 of node1 (ids 8 and 9).
  EXPECT_THAT(w.PerNode(c[0].ranks), ElementsAre(Pair("node0", 2), Pair("node1", 2)));
  EXPECT_THAT(c[0].ranks, ElementsAre(6, 7, 8, 9));
}

TEST(FirstFitGeneratorTest, NoRoomNoCandidate) {
  testing::GeneratorWorld w({.gpus = 4}, "node0:0-5\n");
  EXPECT_TRUE(MakeFirstFitGenerator()->Generate(*w.search, 100, {}).empty());  // 58 free
  EXPECT_EQ(MakeFirstFitGenerator()->Name(), "firstfit");
}

}  // namespace
}  // namespace nvlplace
