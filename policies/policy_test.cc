// Tests for the policy registry and the YAML presets: every error is caught at load time.
#include <cstdlib>
#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/policy_loader.h"
#include "policies/registry.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

TEST(PolicyTest, ShippedPresetsLoad) {
  for (const char* name : {"topo", "pack", "firstfit", "random"}) {
    auto p = LoadPolicy(std::string("configs/policies/") + name + ".yaml");
    ASSERT_THAT(p, IsOk()) << name;
    EXPECT_EQ((*p)->name, name);
    EXPECT_FALSE((*p)->scorers.empty());
  }
}

TEST(PolicyTest, ParsesWeightsInOrderOfTheRegistry) {
  auto p = ParsePolicyYaml(
      "name: mine\ngenerators: [hierarchical]\nweights: {tier: 3, nvlink: 2}\nseed: 5\n"
      "candidates: 4\n",
      "mine.yaml");
  ASSERT_THAT(p, IsOk());
  ASSERT_EQ((*p)->scorers.size(), 2u);
  EXPECT_EQ((*p)->scorers[0].scorer->Name(), "nvlink");
  EXPECT_EQ((*p)->scorers[0].weight, 2);
  EXPECT_EQ((*p)->scorers[1].scorer->Name(), "tier");
  EXPECT_EQ((*p)->seed, 5u);
  EXPECT_EQ((*p)->candidates, 4);
}

TEST(PolicyTest, MakeScorerListsTheValidNames) {
  EXPECT_THAT(MakeScorer("speed"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown scorer 'speed'; scorers are nvlink, tier, comm, "
                                 "fragmentation, firstfit, random")));
  for (const std::string& name : ScorerNames()) {
    auto s = MakeScorer(name);
    ASSERT_THAT(s, IsOk());
    EXPECT_EQ((*s)->Name(), name);
  }
}

struct BadPolicy {
  const char* name;
  const char* text;
  const char* message;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const BadPolicy& c, std::ostream* os) { *os << c.name; }

class PolicyBadTest : public ::testing::TestWithParam<BadPolicy> {};

TEST_P(PolicyBadTest, RefusedAtLoadWithFileAndLine) {
  EXPECT_THAT(ParsePolicyYaml(GetParam().text, "p.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, PolicyBadTest,
    ::testing::Values(
        BadPolicy{"UnknownScorer", "name: p\ngenerators: [hierarchical]\nweights: {speed: 1}\n",
                  "p.yaml:3:11: #/weights/speed: unknown key 'speed'"},
        BadPolicy{"UnknownGenerator", "name: p\ngenerators: [magic]\nweights: {nvlink: 1}\n",
                  "p.yaml:2:13: #/generators: unknown generator 'magic'; generators are "
                  "hierarchical, firstfit, random"},
        BadPolicy{"ZeroWeight", "name: p\ngenerators: [firstfit]\nweights: {nvlink: 0}\n",
                  "p.yaml:3:19: #/weights/nvlink: a weight must be a positive number up to 1e6"},
        BadPolicy{"NegativeWeight", "name: p\ngenerators: [firstfit]\nweights: {tier: -2}\n",
                  "#/weights/tier: a weight must be a positive number"},
        BadPolicy{"HugeWeight", "name: p\ngenerators: [firstfit]\nweights: {comm: 1e7}\n",
                  "#/weights/comm: a weight must be a positive number up to 1e6"},
        BadPolicy{"NoWeights", "name: p\ngenerators: [firstfit]\nweights: {}\n",
                  "p.yaml:3:10: #/weights: at least one scorer needs a weight"},
        BadPolicy{"NoGenerators", "name: p\ngenerators: []\nweights: {nvlink: 1}\n",
                  "#/generators: at least one generator is needed"},
        BadPolicy{"MissingName", "generators: [firstfit]\nweights: {nvlink: 1}\n",
                  "missing key 'name'"},
        BadPolicy{"BadCandidates",
                  "name: p\ngenerators: [firstfit]\nweights: {nvlink: 1}\ncandidates: 0\n",
                  "p.yaml:4:13: #/candidates: candidates must be between 1 and 1024"},
        BadPolicy{"DuplicateKey", "name: p\nname: q\ngenerators: [firstfit]\nweights: {tier: 1}\n",
                  "duplicate key 'name'"}),
    [](const ::testing::TestParamInfo<BadPolicy>& info) { return std::string(info.param.name); });

TEST(PolicyTest, UnknownNameListsWhereItLooked) {
  ::setenv("NVLPLACE_POLICY_DIR", "/nonexistent-policies", 1);
  auto p = LoadPolicy("nosuch");
  ::unsetenv("NVLPLACE_POLICY_DIR");
  EXPECT_THAT(p, StatusIs(absl::StatusCode::kNotFound,
                          HasSubstr("no policy named 'nosuch' in /nonexistent-policies, ")));
}

TEST(PolicyTest, NameFoundInPolicyDir) {
  ::setenv("NVLPLACE_POLICY_DIR", "configs/policies", 1);
  auto p = LoadPolicy("pack");
  ::unsetenv("NVLPLACE_POLICY_DIR");
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ((*p)->name, "pack");
}

}  // namespace
}  // namespace nvlplace
