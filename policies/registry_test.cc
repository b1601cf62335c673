// Tests for the registry: every name builds what it names; an unknown name lists the valid
// ones (the messages users see in policy files).
#include "policies/registry.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

TEST(RegistryTest, EveryScorerNameBuildsThatScorer) {
  ASSERT_FALSE(ScorerNames().empty());
  for (const std::string& name : ScorerNames()) {
    auto s = MakeScorer(name);
    ASSERT_THAT(s, IsOk()) << name;
    ASSERT_NE(*s, nullptr) << name;
    EXPECT_EQ((*s)->Name(), name);
  }
}

TEST(RegistryTest, EveryGeneratorNameBuildsThatGenerator) {
  ASSERT_FALSE(GeneratorNames().empty());
  for (const std::string& name : GeneratorNames()) {
    auto g = MakeGenerator(name);
    ASSERT_THAT(g, IsOk()) << name;
    ASSERT_NE(*g, nullptr) << name;
    EXPECT_EQ((*g)->Name(), name);
  }
}

TEST(RegistryTest, NamesAreUnique) {
  for (const auto* names : {&ScorerNames(), &GeneratorNames()}) {
    EXPECT_EQ(std::set<std::string>(names->begin(), names->end()).size(), names->size());
  }
}

struct UnknownCase {
  const char* kind;
  absl::Status status;
  const char* message;
};

TEST(RegistryTest, AnUnknownNameListsTheValidOnes) {
  // The lists in the tables' order: this is the text a user reads.
  UnknownCase cases[] = {
      {"scorer", MakeScorer("speed").status(),
       "unknown scorer 'speed'; scorers are nvlink, tier, comm, fragmentation, model, firstfit, "
       "random, balance"},
      {"generator", MakeGenerator("magic").status(),
       "unknown generator 'magic'; generators are hierarchical, firstfit, random"},
      // Names are exact: no case folding, no trimming.
      {"scorer", MakeScorer("NVLink").status(), "unknown scorer 'NVLink'"},
      {"generator", MakeGenerator("").status(), "unknown generator ''"},
  };
  for (const UnknownCase& c : cases) {
    EXPECT_THAT(c.status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.kind;
  }
}

}  // namespace
}  // namespace nvlplace
