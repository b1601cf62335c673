// IdBits::SortDistinct against std::sort and std::unique: few and many ids, small and large
// bounds (both of its ways), duplicates, and a bitmap left clear for the next call.
#include "placement/engine/sorted_ids.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace nvlplace {
namespace {

std::vector<int> SortedUnique(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

TEST(IdBitsTest, SortsAndDropsDuplicatesAsStdSortAndUnique) {
  std::mt19937 rng(7);
  IdBits bits;  // one for every case: each call must leave it clear
  for (int bound : {1, 63, 64, 65, 4096, 40000, 1 << 20}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, size_t{600}, size_t{5000}}) {
      std::uniform_int_distribution<int> id(0, bound - 1);
      std::vector<int> ids(n);
      for (int& x : ids) x = id(rng);
      std::vector<int> expected = SortedUnique(ids);
      bits.SortDistinct(&ids, bound);
      EXPECT_EQ(ids, expected) << "bound " << bound << ", " << n << " ids";
    }
  }
}

TEST(IdBitsTest, IdsAtTheEdgesOfTheBound) {
  IdBits bits;
  std::vector<int> ids(40);
  for (int i = 0; i < 40; ++i) ids[i] = i % 2 == 0 ? 4095 - i : i;
  ids.push_back(0);
  ids.push_back(4095);
  std::vector<int> expected = SortedUnique(ids);
  bits.SortDistinct(&ids, 4096);
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(ids.back(), 4095);
}

}  // namespace
}  // namespace nvlplace
