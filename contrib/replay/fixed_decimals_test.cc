#include "contrib/replay/fixed_decimals.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace nvlplace::replay {
namespace {

std::string Fixed(double v, int decimals) {
  std::string out;
  AppendFixed(&out, v, decimals);
  return out;
}

// What printf writes: the reference for every value.
std::string Printf(double v, int decimals) { return absl::StrFormat("%.*f", decimals, v); }

TEST(FixedDecimalsTest, WritesWhatPrintfWrites) {
  EXPECT_EQ(Fixed(8.8, 3), "8.800");
  EXPECT_EQ(Fixed(904, 3), "904.000");
  EXPECT_EQ(Fixed(-1, 3), "-1.000");
  EXPECT_EQ(Fixed(0, 3), "0.000");
  EXPECT_EQ(Fixed(-0.0, 3), "-0.000");
  EXPECT_EQ(Fixed(0.805126794, 6), "0.805127");
  EXPECT_EQ(Fixed(12.5, 0), "12");  // a tie: to even, as printf
  EXPECT_EQ(Fixed(13.5, 0), "14");
  EXPECT_EQ(Fixed(0.125, 2), "0.12");  // exactly a tie in binary: to even
  EXPECT_EQ(Fixed(0.375, 2), "0.38");
  EXPECT_EQ(Fixed(1.0005, 3), Printf(1.0005, 3));  // near a tie: the exact digits decide
  EXPECT_EQ(Fixed(2.675, 2), "2.67");              // 2.67499999... in binary
  EXPECT_EQ(Fixed(999999999.9995, 3), Printf(999999999.9995, 3));
  EXPECT_EQ(Fixed(1e12, 3), "1000000000000.000");
  EXPECT_EQ(Fixed(1e-9, 3), "0.000");
  EXPECT_EQ(Fixed(1.5e-3, 3), Printf(1.5e-3, 3));
  EXPECT_EQ(Fixed(std::numeric_limits<double>::infinity(), 3), Printf(INFINITY, 3));
  EXPECT_EQ(Fixed(1e300, 2), Printf(1e300, 2));
}

// Values of every kind a replay writes (times, ratios, seconds of communication) and their
// neighbours across ties, each against printf.
TEST(FixedDecimalsTest, AgreesWithPrintfOnManyValues) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> values;
  for (int i = 0; i < 60000; ++i) {
    const double magnitude = std::pow(10.0, static_cast<double>(i % 14) - 5);
    values.push_back(unit(rng) * magnitude);
  }
  for (int64_t whole = 0; whole < 3000; ++whole) {
    for (int d = 0; d <= 6; ++d) {
      // x.5 at the last digit of d decimals, and the doubles on either side of it.
      const double tie = (static_cast<double>(whole) + 0.5) / std::pow(10.0, d);
      values.push_back(tie);
      values.push_back(std::nextafter(tie, 0.0));
      values.push_back(std::nextafter(tie, 1e18));
    }
  }
  int checked = 0;
  for (double v : values) {
    for (int d : {0, 1, 2, 3, 4, 6}) {
      ASSERT_EQ(Fixed(v, d), Printf(v, d)) << absl::StrFormat("%.17g with %d decimals", v, d);
      ++checked;
    }
  }
  EXPECT_GT(checked, 700000);
}

}  // namespace
}  // namespace nvlplace::replay
