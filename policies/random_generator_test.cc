// Tests for the random generator: hosts in an order shuffled by the context's seed.
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/generator_testing.h"
#include "policies/generators.h"

namespace nvlplace {
namespace {

GenerateContext Seeded(uint64_t seed) {
  GenerateContext ctx;
  ctx.seed = seed;
  return ctx;
}

TEST(RandomGeneratorTest, TheSeedOfTheContextDecides) {
  testing::GeneratorWorld w({.gpus = 4}, "node0:0-5\n");
  auto gen = MakeRandomGenerator();
  std::vector<Candidate> a = gen->Generate(*w.search, 4, Seeded(42));
  std::vector<Candidate> b = MakeRandomGenerator()->Generate(*w.search, 4, Seeded(42));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].ranks, b[0].ranks);  // same seed, same candidate, whichever instance
  EXPECT_EQ(a[0].origin.Text(), "random (seed 42)");
  EXPECT_EQ(a[0].ranks.size(), 4u);
  // Seeds 1..20 shuffle 8 hosts: more than one first host among them (a generator that
  // ignored the seed would give one).
  std::set<NodeId> first;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    first.insert(w.topo->gpus()[gen->Generate(*w.search, 4, Seeded(seed))[0].ranks[0]].node);
  }
  EXPECT_GT(first.size(), 1u);
}

TEST(RandomGeneratorTest, EachDecisionDrawsAfresh) {
  testing::GeneratorWorld w({.gpus = 4}, "node0:0-5\n");
  auto gen = MakeRandomGenerator();
  // One seed, decisions 1..20: more than one first host (one draw per seed would give one).
  std::set<NodeId> first;
  GenerateContext ctx = Seeded(42);
  for (uint64_t d = 1; d <= 20; ++d) {
    ctx.decision = d;
    first.insert(w.topo->gpus()[gen->Generate(*w.search, 4, ctx)[0].ranks[0]].node);
  }
  EXPECT_GT(first.size(), 1u);
  ctx.decision = 7;
  EXPECT_EQ(gen->Generate(*w.search, 4, ctx)[0].ranks, gen->Generate(*w.search, 4, ctx)[0].ranks);
}

// The shuffle works on an order kept per thread and put back after each draw: a draw that
// shuffled every host leaves the next draw as it would be in a fresh thread.
TEST(RandomGeneratorTest, ADrawLeavesNoTraceForTheNext) {
  testing::GeneratorWorld w({.gpus = 4}, "node0:0-5\n");
  auto gen = MakeRandomGenerator();
  GenerateContext ctx = Seeded(42);
  ctx.decision = 7;
  const std::vector<GpuId> before = gen->Generate(*w.search, 4, ctx)[0].ranks;
  for (uint64_t d = 1; d <= 5; ++d) {
    GenerateContext all = Seeded(d);
    ASSERT_EQ(gen->Generate(*w.search, 58, all)[0].ranks.size(), 58u);  // every free GPU
  }
  EXPECT_EQ(gen->Generate(*w.search, 4, ctx)[0].ranks, before);
  std::vector<GpuId> elsewhere;
  std::thread([&] { elsewhere = gen->Generate(*w.search, 4, ctx)[0].ranks; }).join();
  EXPECT_EQ(elsewhere, before);
}

// Every host with room comes first for some seed, and a full host never gives a GPU: the
// shuffle that stops early still draws from every host.
TEST(RandomGeneratorTest, EveryHostWithRoomMayComeFirst) {
  testing::GeneratorWorld w({.gpus = 4}, "node0:0-7\n");
  auto gen = MakeRandomGenerator();
  std::set<NodeId> first;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::vector<Candidate> c = gen->Generate(*w.search, 4, Seeded(seed));
    ASSERT_EQ(c.size(), 1u);
    ASSERT_EQ(c[0].ranks.size(), 4u);
    for (GpuId g : c[0].ranks) EXPECT_NE(w.topo->gpus()[g].node, 0);  // node0 is full
    first.insert(w.topo->gpus()[c[0].ranks[0]].node);
  }
  EXPECT_EQ(first.size(), static_cast<size_t>(w.topo->num_nodes() - 1));
}

TEST(RandomGeneratorTest, NoRoomNoCandidate) {
  testing::GeneratorWorld w({.gpus = 4}, "node0:0-5\n");
  EXPECT_TRUE(MakeRandomGenerator()->Generate(*w.search, 100, Seeded(1)).empty());  // 58 free
  EXPECT_EQ(MakeRandomGenerator()->Name(), "random");
}

}  // namespace
}  // namespace nvlplace
