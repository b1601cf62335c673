// Tests for Slurm hostlist parsing and printing.
#include "placement/hostlist.h"

#include <random>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct ExpandCase {
  std::string expr;
  std::vector<std::string> hosts;
};

class ExpandTest : public ::testing::TestWithParam<ExpandCase> {};

TEST_P(ExpandTest, Expands) {
  absl::StatusOr<std::vector<std::string>> got = ExpandHostlist(GetParam().expr);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().hosts);
}

INSTANTIATE_TEST_SUITE_P(
    Syntax, ExpandTest,
    ::testing::Values(
        ExpandCase{"node0", {"node0"}},
        ExpandCase{"gpu[001-003]", {"gpu001", "gpu002", "gpu003"}},
        ExpandCase{"n[1-2,5]", {"n1", "n2", "n5"}},
        ExpandCase{"n1, n[3-4]", {"n1", "n3", "n4"}},
        // Several brackets: the leftmost is outermost, 2 x 2 = 4 names.
        ExpandCase{"r[1-2]n[01-02]", {"r1n01", "r1n02", "r2n01", "r2n02"}},
        ExpandCase{"a[9-10]", {"a9", "a10"}},
        ExpandCase{"a[098-100]", {"a098", "a099", "a100"}},
        ExpandCase{"su[01-02]-spine", {"su01-spine", "su02-spine"}},
        ExpandCase{"x[7]", {"x7"}}));

struct BadCase {
  std::string expr;
  std::string message;
};

class ExpandErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ExpandErrorTest, Rejects) {
  EXPECT_THAT(ExpandHostlist(GetParam().expr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Syntax, ExpandErrorTest,
    ::testing::Values(BadCase{"", "empty"}, BadCase{"n[1-3", "without a matching ']'"},
                      BadCase{"n1-3]", "without a matching '['"},
                      BadCase{"n[1-[2]]", "nested"}, BadCase{"n[3-1]", "ends before it starts"},
                      BadCase{"n[a-b]", "not a number"}, BadCase{"n1,,n2", "empty host name"},
                      BadCase{"n[1,]", "empty range"}, BadCase{"n 1", "space inside"},
                      BadCase{"n[0-99999999]", "more than"}));

TEST(ExpandErrorTest, NamesThePosition) {
  // "n[3-1]": the range starts at the third character.
  EXPECT_THAT(ExpandHostlist("n[3-1]"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 HasSubstr("at character 3")));
  // An unclosed bracket is reported where it opens, not at the end.
  EXPECT_THAT(ExpandHostlist("gpu[01-04,n5"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("at character 4: '[' without a matching ']'")));
}

TEST(CompressTest, MergesRuns) {
  EXPECT_EQ(CompressHostlist({"gpu001", "gpu002", "gpu003", "gpu007"}), "gpu[001-003,007]");
  EXPECT_EQ(CompressHostlist({"node0"}), "node0");
  EXPECT_EQ(CompressHostlist({"a9", "a10", "a11"}), "a[9-11]");
  EXPECT_EQ(CompressHostlist({"a098", "a099", "a100"}), "a[098-100]");
  EXPECT_EQ(CompressHostlist({"gpu1", "login", "gpu2"}), "gpu[1-2],login");
  EXPECT_EQ(CompressHostlist({"n3", "n1", "n2", "n1"}), "n[1-3]");
  EXPECT_EQ(CompressHostlist({}), "");
}

TEST(CompressTest, RoundTripsRandomSets) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> hosts;
    int n = 1 + rng() % 40;
    for (int i = 0; i < n; ++i) {
      int prefix = rng() % 3;
      int v = rng() % 120;
      std::string num = std::to_string(v);
      if (prefix == 1 && num.size() < 3) num.insert(0, 3 - num.size(), '0');
      hosts.push_back(std::string(prefix == 2 ? "rack-b" : "gpu") + num);
    }
    std::string expr = CompressHostlist(hosts);
    absl::StatusOr<std::vector<std::string>> back = ExpandHostlist(expr);
    ASSERT_TRUE(back.ok()) << expr << ": " << back.status();
    std::set<std::string> want(hosts.begin(), hosts.end());
    std::set<std::string> got(back->begin(), back->end());
    EXPECT_EQ(got, want) << expr;
    EXPECT_EQ(back->size(), got.size()) << "duplicates in " << expr;
  }
}

TEST(CompressTest, KeepsOrderOfSortedInput) {
  std::vector<std::string> hosts = *ExpandHostlist("dgx[0001-2048]");
  EXPECT_EQ(CompressHostlist(hosts), "dgx[0001-2048]");
  EXPECT_EQ(*ExpandHostlist(CompressHostlist(hosts)), hosts);
}

}  // namespace
}  // namespace nvlplace
