// Tests for NameIndex: ids found by the names in their records.
#include "placement/model/name_index.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace nvlplace {
namespace {

struct Named {
  std::string name;
  int payload = 0;
};

TEST(NameIndexTest, FindsEachRecordAndRefusesANameTwice) {
  std::vector<Named> records;
  NameIndex<Named> index(&records);
  for (const char* name : {"gb001", "gb002", "a-rather-long-node-name-past-the-inline-size", ""}) {
    records.push_back({name});
    EXPECT_EQ(index.Insert(static_cast<int32_t>(records.size() - 1)), -1) << name;
  }
  EXPECT_EQ(index.size(), 4u);
  EXPECT_EQ(index.Find("gb001"), 0);
  EXPECT_EQ(index.Find("gb002"), 1);
  EXPECT_EQ(index.Find("a-rather-long-node-name-past-the-inline-size"), 2);
  EXPECT_EQ(index.Find(""), 3);
  EXPECT_EQ(index.Find("gb003"), -1);
  EXPECT_EQ(index.Find("gb00"), -1);

  // A second record with a taken name: the first one's id, and the new one is not indexed.
  records.push_back({"gb002"});
  EXPECT_EQ(index.Insert(4), 1);
  EXPECT_EQ(index.size(), 4u);
  EXPECT_EQ(index.Find("gb002"), 1);
}

// Without a reserve, the set grows (rehashing reads every name again) and the vector moves
// its records many times: every name is still found, and only its own.
TEST(NameIndexTest, FindsAfterTheRecordsAndTheSetGrow) {
  std::vector<Named> records;
  NameIndex<Named> index(&records);
  constexpr int kRecords = 5000;
  for (int i = 0; i < kRecords; ++i) {
    records.push_back({absl::StrCat("node", i), i});
    ASSERT_EQ(index.Insert(i), -1) << i;
  }
  for (int i = 0; i < kRecords; ++i) {
    int32_t id = index.Find(absl::StrCat("node", i));
    ASSERT_EQ(id, i);
    EXPECT_EQ(records[id].payload, i);
  }
  EXPECT_EQ(index.Find(absl::StrCat("node", kRecords)), -1);
  EXPECT_EQ(index.Insert(kRecords - 1), kRecords - 1);  // the same id again: already there
}

}  // namespace
}  // namespace nvlplace
