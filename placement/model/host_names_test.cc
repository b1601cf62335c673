// Tests for HostNames: names kept as runs read back as the names, in order.
#include "placement/model/host_names.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/model/hostlist.h"

namespace nvlplace {
namespace {

using ::testing::ElementsAre;

TEST(HostNamesTest, ConsecutiveNumberedNamesMakeOneRun) {
  HostNames names;
  for (int i = 1; i <= 18; ++i) names.push_back(absl::StrCat("gb", i < 10 ? "00" : "0", i));
  EXPECT_EQ(names.size(), 18u);
  ASSERT_EQ(names.runs().size(), 1u);
  EXPECT_EQ(names.front(), "gb001");
  EXPECT_EQ(names[9], "gb010");
  EXPECT_EQ(names.back(), "gb018");
  EXPECT_EQ(names.Hostlist(), "gb[001-018]");
}

// A name continues the last run only when that run writes its number the same way.
TEST(HostNamesTest, ANameJoinsTheLastRunOnlyWhenWrittenAsTheRunWritesIt) {
  HostNames unpadded{"n9", "n10", "n11"};  // width 1: 10 and 11 are written in full
  EXPECT_EQ(unpadded.runs().size(), 1u);
  HostNames padded{"n098", "n099", "n100"};
  EXPECT_EQ(padded.runs().size(), 1u);
  HostNames repadded{"n99", "n0100"};  // 100 at width 2 is "100", not "0100"
  EXPECT_EQ(repadded.runs().size(), 2u);
  HostNames gap{"n1", "n3", "m4", "n4"};
  EXPECT_EQ(gap.runs().size(), 4u);
  HostNames literal{"login", "login", "x1y", "x1y"};  // no trailing number: each its own name
  EXPECT_EQ(literal.runs().size(), 4u);
  HostNames long_digits{"n1234567890123456789", "n1234567890123456790"};  // 19 digits: literal
  EXPECT_EQ(long_digits.runs().size(), 2u);
  for (const HostNames* h : {&unpadded, &padded, &repadded, &gap, &literal, &long_digits}) {
    std::vector<std::string> read(h->begin(), h->end());
    EXPECT_EQ(read, h->Expand());
    EXPECT_EQ(HostNames(read), *h);
  }
  EXPECT_THAT(repadded, ElementsAre("n99", "n0100"));
  EXPECT_THAT(literal, ElementsAre("login", "login", "x1y", "x1y"));
  EXPECT_THAT(long_digits, ElementsAre("n1234567890123456789", "n1234567890123456790"));
}

// A hostlist's last bracket gives the runs; the brackets before it and the text after it
// give each run's head and tail, so "a[1-2]b[3-4]c" is two runs of two.
TEST(HostNamesTest, AHostlistIsReadIntoRunsWithoutExpanding) {
  absl::StatusOr<HostNames> rack = ParseHostlist("n[00001-32832]");
  ASSERT_TRUE(rack.ok()) << rack.status();
  EXPECT_EQ(rack->size(), 32832u);
  EXPECT_EQ(rack->runs().size(), 1u);
  EXPECT_EQ((*rack)[32831], "n32832");

  absl::StatusOr<HostNames> product = ParseHostlist("a[1-2]b[3-4]c, x, y[7,09-10]");
  ASSERT_TRUE(product.ok()) << product.status();
  EXPECT_EQ(product->runs().size(), 5u);
  EXPECT_THAT(*product, ElementsAre("a1b3c", "a1b4c", "a2b3c", "a2b4c", "x", "y7", "y09", "y10"));

  // Ranges that continue each other are one run: "n[1-3],n[4-6]" reads as n[1-6].
  absl::StatusOr<HostNames> split = ParseHostlist("n[1-3],n[4-6]");
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->runs().size(), 1u);
  EXPECT_EQ(*split, HostNames({"n1", "n2", "n3", "n4", "n5", "n6"}));

  EXPECT_FALSE(ParseHostlist("n[3-1]").ok());
}

TEST(HostNamesTest, EqualityIsOfTheNamesHoweverCut) {
  HostNames one;
  one.AddRun({"n", "", 1, 4, 1});
  HostNames two;
  two.AddRun({"n", "", 1, 2, 1});
  two.AddRun({"n", "", 3, 0, 1});  // no names: nothing added
  two.push_back("n3");
  two.push_back("n4");
  EXPECT_EQ(one, two);
  EXPECT_EQ(two.size(), 4u);
  two.push_back("n6");
  EXPECT_NE(one, two);
  HostNames three{"n1", "n2"};
  three.Append(HostNames{"n3", "n4"});
  EXPECT_EQ(three.runs().size(), 1u);
  EXPECT_EQ(three, one);
  three.clear();
  EXPECT_TRUE(three.empty());
  EXPECT_EQ(three.begin(), three.end());
}

}  // namespace
}  // namespace nvlplace
