// The view of the GPUs running jobs hold (held_gpus.h): what allocation and fini tell it,
// and its comparison with a node's gres_bit_alloc.
#include "plugin/held_gpus.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

using Held = std::unique_ptr<nvl_held_t, decltype(&nvl_held_free)>;

Held NewHeld() { return Held(nvl_held_new(), &nvl_held_free); }

// (gpu, job) of every GPU held on `node`.
std::vector<std::pair<int, uint32_t>> OnNode(const nvl_held_t* held, int node) {
  const int* gpus = nullptr;
  const uint32_t* jobs = nullptr;
  int n = nvl_held_node(held, node, &gpus, &jobs);
  std::vector<std::pair<int, uint32_t>> out;
  for (int k = 0; k < n; ++k) out.emplace_back(gpus[k], jobs[k]);
  return out;
}

bool Matches(const nvl_held_t* held, int node, const std::vector<int>& alloc) {
  return nvl_held_matches(held, node, alloc.data(), static_cast<int>(alloc.size())) == 1;
}

TEST(HeldGpusTest, BeginAndFiniOfTwoJobsSharingANode) {
  Held held = NewHeld();
  ASSERT_NE(held, nullptr);
  const int a[] = {4, 5, 6, 7};
  const int b[] = {0, 1};
  const int c[] = {0, 1, 2, 3};
  ASSERT_EQ(nvl_held_add(held.get(), 10, 3, a, 4), 0);
  ASSERT_EQ(nvl_held_add(held.get(), 11, 3, b, 2), 0);
  ASSERT_EQ(nvl_held_add(held.get(), 11, 5, c, 4), 0);
  EXPECT_THAT(OnNode(held.get(), 3), ElementsAre(Pair(0, 11u), Pair(1, 11u), Pair(4, 10u),
                                                 Pair(5, 10u), Pair(6, 10u), Pair(7, 10u)));
  EXPECT_EQ(nvl_held_jobs(held.get()), 2);
  EXPECT_TRUE(Matches(held.get(), 3, {0, 1, 4, 5, 6, 7}));
  EXPECT_FALSE(Matches(held.get(), 3, {0, 1, 4, 5, 6}));        // Slurm freed GPU 7
  EXPECT_FALSE(Matches(held.get(), 3, {0, 1, 2, 4, 5, 6, 7}));  // Slurm holds GPU 2 too
  EXPECT_FALSE(Matches(held.get(), 3, {0, 2, 4, 5, 6, 7}));

  nvl_held_drop(held.get(), 11);  // job_fini
  EXPECT_THAT(OnNode(held.get(), 3),
              ElementsAre(Pair(4, 10u), Pair(5, 10u), Pair(6, 10u), Pair(7, 10u)));
  EXPECT_THAT(OnNode(held.get(), 5), IsEmpty());
  EXPECT_TRUE(Matches(held.get(), 5, {}));
  EXPECT_EQ(nvl_held_jobs(held.get()), 1);
  nvl_held_drop(held.get(), 11);  // twice: nothing happens
  nvl_held_drop(held.get(), 99);  // never held anything
  EXPECT_EQ(nvl_held_jobs(held.get()), 1);
}

TEST(HeldGpusTest, AJobAddsGpusOfSeveralEntriesOnOneNode) {
  // A job with a typed and an untyped GPU entry: each entry adds its GPUs of the node.
  Held held = NewHeld();
  const int typed[] = {0, 1};
  const int untyped[] = {3};
  ASSERT_EQ(nvl_held_add(held.get(), 7, 0, typed, 2), 0);
  ASSERT_EQ(nvl_held_add(held.get(), 7, 0, untyped, 1), 0);
  ASSERT_EQ(nvl_held_add(held.get(), 7, 1, nullptr, 0), 0);  // nothing on node 1
  EXPECT_THAT(OnNode(held.get(), 0), ElementsAre(Pair(0, 7u), Pair(1, 7u), Pair(3, 7u)));
  EXPECT_THAT(OnNode(held.get(), 1), IsEmpty());
  EXPECT_EQ(nvl_held_jobs(held.get()), 1);
  nvl_held_drop(held.get(), 7);
  EXPECT_THAT(OnNode(held.get(), 0), IsEmpty());
  EXPECT_EQ(nvl_held_jobs(held.get()), 0);
}

TEST(HeldGpusTest, AGpuHeldByTwoJobsCountsOnceAgainstSlurm) {
  // Shared GPUs (a no_consume gres): the bitmap has one bit, the view two holders.
  Held held = NewHeld();
  const int g[] = {2};
  ASSERT_EQ(nvl_held_add(held.get(), 1, 0, g, 1), 0);
  ASSERT_EQ(nvl_held_add(held.get(), 2, 0, g, 1), 0);
  EXPECT_THAT(OnNode(held.get(), 0), ElementsAre(Pair(2, 1u), Pair(2, 2u)));
  EXPECT_TRUE(Matches(held.get(), 0, {2}));
}

TEST(HeldGpusTest, RepeatedGpusInOneCallAreOne) {
  Held held = NewHeld();
  const int g[] = {3, 1, 3};
  ASSERT_EQ(nvl_held_add(held.get(), 1, 0, g, 3), 0);
  EXPECT_THAT(OnNode(held.get(), 0), ElementsAre(Pair(1, 1u), Pair(3, 1u)));
}

TEST(HeldGpusTest, BadInputClearsTheViewForARebuild) {
  Held held = NewHeld();
  const int g[] = {0};
  ASSERT_EQ(nvl_held_add(held.get(), 1, 0, g, 1), 0);
  EXPECT_EQ(nvl_held_add(held.get(), 2, -1, g, 1), -1);
  EXPECT_EQ(nvl_held_jobs(held.get()), 0);
  EXPECT_EQ(nvl_held_add(held.get(), 2, 0, nullptr, 1), -1);
  EXPECT_EQ(nvl_held_add(nullptr, 2, 0, g, 1), -1);
  // Unknown nodes and a NULL view read as holding nothing.
  EXPECT_THAT(OnNode(held.get(), 1000), IsEmpty());
  EXPECT_THAT(OnNode(nullptr, 0), IsEmpty());
  EXPECT_TRUE(Matches(nullptr, 0, {}));
  EXPECT_FALSE(Matches(nullptr, 0, {1}));
}

TEST(HeldGpusTest, ClearForgetsEveryJob) {
  Held held = NewHeld();
  const int g[] = {0, 1};
  ASSERT_EQ(nvl_held_add(held.get(), 1, 0, g, 2), 0);
  ASSERT_EQ(nvl_held_add(held.get(), 2, 4, g, 2), 0);
  nvl_held_clear(held.get());
  EXPECT_EQ(nvl_held_jobs(held.get()), 0);
  EXPECT_THAT(OnNode(held.get(), 0), IsEmpty());
  EXPECT_THAT(OnNode(held.get(), 4), IsEmpty());
  ASSERT_EQ(nvl_held_add(held.get(), 3, 4, g, 2), 0);  // usable again
  EXPECT_THAT(OnNode(held.get(), 4), ElementsAre(Pair(0, 3u), Pair(1, 3u)));
}

}  // namespace
