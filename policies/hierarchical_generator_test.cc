// Tests for the hierarchical generator: best fit and fewest hosts from the lowest level of
// the fabric that holds the job, tightest first, within the policy's candidate limit.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/generator_testing.h"
#include "policies/generators.h"

namespace nvlplace {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// leaf0 free: node0 2, node1 5, node2 1, node3 6 = 14; leaf1 free: node4 6, node5 3 = 9.
constexpr char kBusy[] =
    "node0:0-5\nnode1:0-2\nnode2:0-6\nnode3:0-1\nnode4:0-1\nnode5:0-4\nnode[6-7]\n";

std::vector<std::string> Origins(const std::vector<Candidate>& c) {
  std::vector<std::string> out;
  for (const Candidate& x : c) out.push_back(x.origin.Text());
  return out;
}

TEST(HierarchicalGeneratorTest, BestFitAndFewestHostsFromTheLowestLevelThatHolds) {
  testing::GeneratorWorld w({.gpus = 8}, kBusy);
  std::vector<Candidate> c = MakeHierarchicalGenerator()->Generate(*w.search, 8, {});
  for (const Candidate& x : c) EXPECT_EQ(x.ranks.size(), 8u);
  // Leaves first, tightest (leaf1, 9 free) first; then the spine above them, whose best fit
  // starts at its tightest child that holds the job, leaf1, as leaf1's did: the same GPUs,
  // not offered again.
  EXPECT_THAT(Origins(c), ElementsAre("best fit under leaf1", "fewest hosts under leaf1",
                                      "best fit under leaf0", "fewest hosts under leaf0",
                                      "fewest hosts under spine0"));
  // leaf1: best fit 6 + 2 leaves node5 one GPU; fewest hosts is also two nodes, as even as
  // node5's 3 free GPUs allow: 5 + 3.
  EXPECT_THAT(w.PerNode(c[0].ranks), ElementsAre(Pair("node4", 6), Pair("node5", 2)));
  EXPECT_THAT(w.PerNode(c[1].ranks), ElementsAre(Pair("node4", 5), Pair("node5", 3)));
  // The spine: the two roomiest nodes of the cluster, node3 and node4 (6 each), 4 + 4.
  ASSERT_EQ(c.size(), 5u);
  EXPECT_THAT(w.PerNode(c[4].ranks), ElementsAre(Pair("node3", 4), Pair("node4", 4)));
}

struct LimitCase {
  int candidates;
  std::vector<std::string> origins;
};

TEST(HierarchicalGeneratorTest, TheCandidateLimitBoundsEachLevel) {
  testing::GeneratorWorld w({.gpus = 8}, kBusy);
  std::vector<LimitCase> cases = {
      // One per level: the tightest leaf (leaf1), then max(1, 1 / 4) = 1 above it (the
      // spine's best fit is leaf1's again: only its fewest-hosts take).
      {1, {"best fit under leaf1", "fewest hosts under leaf1", "fewest hosts under spine0"}},
      // Both leaves; the spine level gets max(1, 2 / 4) = 1.
      {2,
       {"best fit under leaf1", "fewest hosts under leaf1", "best fit under leaf0",
        "fewest hosts under leaf0", "fewest hosts under spine0"}},
  };
  for (const LimitCase& c : cases) {
    GenerateContext ctx;
    ctx.candidates = c.candidates;
    EXPECT_EQ(Origins(MakeHierarchicalGenerator()->Generate(*w.search, 8, ctx)), c.origins)
        << "candidates " << c.candidates;
  }
}

TEST(HierarchicalGeneratorTest, LargeJobsGetFewerCandidatesPerLevel) {
  // Three GPUs fit on four nodes (node5 3 free, node1 5, node3 and node4 6) and both leaves.
  testing::GeneratorWorld w({.gpus = 3}, kBusy);
  std::vector<LimitCase> cases = {
      // candidate_gpus 12: 12 / 3 = 4 per level, as many as there are: unchanged. (Each
      // leaf's best fit is its tightest node that holds the job, node5 and node1, taken
      // already: not offered again.)
      {12,
       {"best fit under node5", "best fit under node1", "best fit under node3",
        "best fit under node4"}},
      // 9: 9 / 3 = 3 hosts.
      {9, {"best fit under node5", "best fit under node1", "best fit under node3"}},
      // 1: 1 / 3 = 0, but never fewer than 2 per level.
      {1, {"best fit under node5", "best fit under node1"}},
  };
  for (const LimitCase& c : cases) {
    GenerateContext ctx;
    ctx.candidate_gpus = c.candidates;
    EXPECT_EQ(Origins(MakeHierarchicalGenerator()->Generate(*w.search, 3, ctx)), c.origins)
        << "candidate_gpus " << c.candidates;
  }
}

TEST(HierarchicalGeneratorTest, OneHostGivesOnlyItsBestFit) {
  // Three GPUs fit on one node: node5 (3 free), node1 (5), node3 and node4 (6 each). Hosts
  // are the lowest level, tightest first, best fit only (one host has nothing to even out).
  // Above them the leaves: leaf1 (9 free) and leaf0 (14), each with no fewest-hosts
  // candidate, as one node of each (node4, node3) holds the job alone, and no best fit: a
  // leaf's starts at its tightest node that holds the job (node5, node1), taken already, and
  // would take the same GPUs again.
  testing::GeneratorWorld w({.gpus = 3}, kBusy);
  std::vector<Candidate> c = MakeHierarchicalGenerator()->Generate(*w.search, 3, {});
  EXPECT_THAT(Origins(c), ElementsAre("best fit under node5", "best fit under node1",
                                      "best fit under node3", "best fit under node4"));
  for (const Candidate& x : c) EXPECT_EQ(x.ranks.size(), 3u);
}

TEST(HierarchicalGeneratorTest, APartThatHoldsJustTheJobHasNoFewestHostsTake) {
  // leaf1 holds 9 free GPUs (node4 6, node5 3): a job of 9 takes all of them whichever way,
  // so only the best fit is offered from it; leaf0 (14) also gets its fewest-hosts take.
  testing::GeneratorWorld w({.gpus = 9}, kBusy);
  std::vector<Candidate> c = MakeHierarchicalGenerator()->Generate(*w.search, 9, {});
  EXPECT_THAT(Origins(c), ElementsAre("best fit under leaf1", "best fit under leaf0",
                                      "fewest hosts under leaf0", "fewest hosts under spine0"));
  EXPECT_THAT(w.PerNode(c[0].ranks), ElementsAre(Pair("node4", 6), Pair("node5", 3)));
}

TEST(HierarchicalGeneratorTest, NoRoomNoCandidate) {
  testing::GeneratorWorld w({.gpus = 8}, kBusy);
  EXPECT_TRUE(MakeHierarchicalGenerator()->Generate(*w.search, 100, {}).empty());  // 23 free
  EXPECT_EQ(MakeHierarchicalGenerator()->Name(), "hierarchical");
}

}  // namespace
}  // namespace nvlplace
