// Tests for the YAML presets (every error is caught at load time) and for adjusted copies of
// a policy: WithWeights and Policy::WithSeed.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/engine/engine.h"
#include "placement/formats/busy_list.h"
#include "placement/formats/topology_yaml.h"
#include "policies/policy_loader.h"
#include "policies/registry.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

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

TEST(PolicyTest, WeightKeysAreTheRegistrysScorers) {
  // Every scorer of the registry is a weight key, kept in the registry's order.
  std::string text = "name: all\ngenerators: [hierarchical]\nweights:\n";
  for (const std::string& name : ScorerNames()) absl::StrAppend(&text, "  ", name, ": 1\n");
  auto p = ParsePolicyYaml(text, "all.yaml");
  ASSERT_THAT(p, IsOk());
  std::vector<std::string> names;
  for (const Policy::Weighted& w : (*p)->scorers) names.emplace_back(w.scorer->Name());
  EXPECT_EQ(names, ScorerNames());
  // Any other key is refused with the registry's list.
  EXPECT_THAT(
      ParsePolicyYaml("name: p\ngenerators: [hierarchical]\nweights: {speed: 1}\n", "p"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr(absl::StrCat("allowed here: ", absl::StrJoin(ScorerNames(), ", ")))));
}

TEST(PolicyTest, MixModelsIsOffUnlessSaid) {
  auto off = ParsePolicyYaml("name: p\ngenerators: [hierarchical]\nweights: {tier: 1}\n", "p");
  ASSERT_THAT(off, IsOk());
  EXPECT_FALSE((*off)->mix_models);
  auto on = ParsePolicyYaml(
      "name: p\ngenerators: [hierarchical]\nweights: {tier: 1}\nmix_models: true\n", "p");
  ASSERT_THAT(on, IsOk());
  EXPECT_TRUE((*on)->mix_models);
}

TEST(PolicyTest, CandidateGpusIs2048UnlessSaid) {
  auto p = ParsePolicyYaml("name: p\ngenerators: [hierarchical]\nweights: {tier: 1}\n", "p");
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ((*p)->candidate_gpus, 2048);
  auto q = ParsePolicyYaml(
      "name: p\ngenerators: [hierarchical]\nweights: {tier: 1}\ncandidate_gpus: 64\n", "p");
  ASSERT_THAT(q, IsOk());
  EXPECT_EQ((*q)->candidate_gpus, 64);
}

TEST(PolicyTest, GeneratorsInTheOrderWritten) {
  auto p = ParsePolicyYaml(
      "name: g\ngenerators: [random, firstfit, hierarchical]\nweights: {tier: 1}\n", "g.yaml");
  ASSERT_THAT(p, IsOk());
  std::vector<std::string> names;
  for (const auto& g : (*p)->generators) names.emplace_back(g->Name());
  EXPECT_THAT(names, ElementsAre("random", "firstfit", "hierarchical"));
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
        BadPolicy{"BadCandidateGpus",
                  "name: p\ngenerators: [firstfit]\nweights: {nvlink: 1}\ncandidate_gpus: 0\n",
                  "p.yaml:4:17: #/candidate_gpus: candidate_gpus must be between 1 and 16777216"},
        BadPolicy{"MixModelsNotABool",
                  "name: p\ngenerators: [firstfit]\nweights: {nvlink: 1}\nmix_models: yes\n",
                  "p.yaml:4:13: #/mix_models: expected true or false, not 'yes'"},
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

std::shared_ptr<const Policy> Preset(const std::string& name) {
  auto p = LoadPolicy("configs/policies/" + name + ".yaml");
  EXPECT_THAT(p, IsOk()) << name;
  return *p;
}

std::vector<std::pair<std::string, double>> Weights(const Policy& p) {
  std::vector<std::pair<std::string, double>> out;
  for (const Policy::Weighted& w : p.scorers) out.emplace_back(w.scorer->Name(), w.weight);
  return out;
}

std::vector<std::string> Generators(const Policy& p) {
  std::vector<std::string> out;
  for (const auto& g : p.generators) out.emplace_back(g->Name());
  return out;
}

TEST(PolicyValueTest, WithSeedChangesTheCopyOnly) {
  std::shared_ptr<const Policy> random = Preset("random");  // seed: 42
  Policy copy = random->WithSeed(7);
  EXPECT_EQ(copy.seed, 7u);
  EXPECT_EQ(random->seed, 42u);
  // Everything else is the same, the stateless parts shared.
  EXPECT_EQ(copy.name, random->name);
  EXPECT_EQ(copy.candidates, random->candidates);
  EXPECT_EQ(Weights(copy), Weights(*random));
  ASSERT_EQ(copy.generators.size(), 1u);
  EXPECT_EQ(copy.generators[0], random->generators[0]);
  EXPECT_EQ(copy.scorers[0].scorer, random->scorers[0].scorer);
}

TEST(PolicyValueTest, WithWeightsChangesTheCopyOnly) {
  std::shared_ptr<const Policy> topo = Preset("topo");
  auto copy = WithWeights(*topo, {{"fragmentation", 7}, {"random", 0.5}});
  ASSERT_THAT(copy, IsOk());
  EXPECT_EQ(copy->name, "topo+weights");
  // fragmentation 2 -> 7; random added, in the registry's order (after model, before spread).
  EXPECT_THAT(Weights(*copy), ElementsAre(Pair("nvlink", 100), Pair("tier", 10), Pair("comm", 50),
                                          Pair("fragmentation", 7), Pair("model", 10),
                                          Pair("random", 0.5), Pair("spread", 5)));
  EXPECT_THAT(Weights(*topo),
              ElementsAre(Pair("nvlink", 100), Pair("tier", 10), Pair("comm", 50),
                          Pair("fragmentation", 2), Pair("model", 10), Pair("spread", 5)));
  EXPECT_EQ(topo->name, "topo");
  EXPECT_EQ(copy->scorers[0].scorer, topo->scorers[0].scorer);  // shared, not rebuilt
  EXPECT_EQ(Generators(*copy), Generators(*topo));
  EXPECT_EQ(copy->seed, topo->seed);
  EXPECT_EQ(copy->candidates, topo->candidates);
  EXPECT_EQ(copy->mix_models, topo->mix_models);
}

TEST(PolicyValueTest, WithWeightsIsThePolicyFileWithThoseWeights) {
  std::shared_ptr<const Policy> pack = Preset("pack");
  auto copy = WithWeights(*pack, {{"random", 3}, {"nvlink", 0.25}});
  ASSERT_THAT(copy, IsOk());
  auto file = ParsePolicyYaml(
      "name: pack+weights\ngenerators: [hierarchical]\n"
      "weights: {random: 3, fragmentation: 1, nvlink: 0.25}\n",
      "pack-weights.yaml");
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(copy->name, (*file)->name);
  EXPECT_EQ(Weights(*copy), Weights(**file));  // nvlink, fragmentation, random
  EXPECT_EQ(Generators(*copy), Generators(**file));
  EXPECT_EQ(copy->seed, (*file)->seed);
  EXPECT_EQ(copy->candidates, (*file)->candidates);
}

struct BadWeight {
  const char* name;
  std::pair<std::string, double> weight;
  const char* message;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const BadWeight& c, std::ostream* os) { *os << c.name; }

class WithWeightsBadTest : public ::testing::TestWithParam<BadWeight> {};

TEST_P(WithWeightsBadTest, RefusedAsTheLoaderRefuses) {
  std::shared_ptr<const Policy> topo = Preset("topo");
  EXPECT_THAT(WithWeights(*topo, {{"nvlink", 1}, GetParam().weight}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
  EXPECT_EQ(topo->scorers[0].weight, 100);  // untouched
}

INSTANTIATE_TEST_SUITE_P(
    Errors, WithWeightsBadTest,
    ::testing::Values(
        BadWeight{
            "Zero", {"tier", 0}, "weight of 'tier': a weight must be a positive number up to 1e6"},
        BadWeight{"Negative", {"comm", -1}, "weight of 'comm': a weight must be a positive"},
        BadWeight{"AboveTheMax", {"comm", 1e6 + 1}, "weight of 'comm': a weight must be"},
        BadWeight{"Infinite", {"tier", HUGE_VAL}, "weight of 'tier': a weight must be"},
        BadWeight{"NaN", {"tier", std::nan("")}, "weight of 'tier': a weight must be"},
        BadWeight{"UnknownScorer",
                  {"speed", 1},
                  "unknown scorer 'speed'; scorers are nvlink, tier, comm, fragmentation, "
                  "model, firstfit, random"}),
    [](const ::testing::TestParamInfo<BadWeight>& info) { return std::string(info.param.name); });

TEST(PolicyValueTest, TheLargestWeightIsAccepted) {
  auto copy = WithWeights(*Preset("topo"), {{"tier", 1e6}});  // 1e6 itself: the limit
  ASSERT_THAT(copy, IsOk());
  EXPECT_EQ(copy->scorers[1].weight, 1e6);  // nvlink, tier, ...
}

// The decisions of two policies on the lab cluster, a quarter busy, over requests of every
// kind: the same or not, bit for bit (ranks, origin, every score and the total).
class SameDecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = ParseTopologyYaml(testing::kLabYaml, "lab.yaml");
    ASSERT_THAT(spec, IsOk());
    auto topo = Topology::Create(*spec);
    ASSERT_THAT(topo, IsOk());
    topo_ = *topo;
    state_ = std::make_unique<ClusterState>(topo_);
    ASSERT_THAT(LoadBusyList("node0:0-5\nnode2:0-2\nnode5:0-6\nnode7:4-7\n", "busy", state_.get()),
                IsOk());
  }

  // How many requests the two policies decide differently.
  int Differences(std::shared_ptr<const Policy> a, std::shared_ptr<const Policy> b) {
    Engine ea(topo_, std::move(a)), eb(topo_, std::move(b));
    int differ = 0;
    for (RequestSpec spec : std::vector<RequestSpec>{{.gpus = 1},
                                                     {.gpus = 3},
                                                     {.gpus = 8},
                                                     {.gpus = 12},
                                                     {.gpus = 16, .tp = 4},
                                                     {.gpus = 16, .tp = 8, .pp = 2},
                                                     {.gpus = 24, .tp = 2}}) {
      auto r = ResolveRequest(spec, *topo_);
      EXPECT_THAT(r, IsOk());
      PlacementResult x = ea.Place(*state_, *r), y = eb.Place(*state_, *r);
      EXPECT_TRUE(x.placed && y.placed) << x.reason << y.reason;
      std::vector<double> xs, ys;
      for (const ScoreLine& l : x.scores) xs.push_back(l.score);
      for (const ScoreLine& l : y.scores) ys.push_back(l.score);
      differ += x.ranks != y.ranks || x.origin != y.origin || xs != ys || x.total != y.total;
    }
    return differ;
  }

  std::shared_ptr<const Topology> topo_;
  std::unique_ptr<ClusterState> state_;
};

TEST_F(SameDecisionsTest, ThePolicyWithSeedSIsWithSeedSOfAnother) {
  // The random scorer and the random generator, beside the others, with the seed of the file
  // or of WithSeed.
  auto with_seed = [](int seed) {
    auto p =
        ParsePolicyYaml(absl::StrCat("name: r\ngenerators: [random, hierarchical]\nseed: ", seed,
                                     "\nweights: {random: 1, tier: 0.5}\n"),
                        "r.yaml");
    EXPECT_THAT(p, IsOk());
    return *p;
  };
  std::shared_ptr<const Policy> s7 = with_seed(7), s42 = with_seed(42);
  EXPECT_EQ(Differences(s7, std::make_shared<const Policy>(s42->WithSeed(7))), 0);
  EXPECT_EQ(Differences(s42, std::make_shared<const Policy>(s7->WithSeed(42))), 0);
  // Not vacuous: the seed decides some of these.
  EXPECT_GT(Differences(s7, s42), 0);
}

TEST_F(SameDecisionsTest, WithWeightsDecidesAsThePolicyFile) {
  auto file = ParsePolicyYaml(
      "name: topo+weights\ngenerators: [hierarchical, firstfit]\n"
      "weights: {nvlink: 100, comm: 50, tier: 10, spread: 5, fragmentation: 7, model: 10, "
      "random: 0.5}\n",
      "topo-weights.yaml");
  ASSERT_THAT(file, IsOk());
  auto copy = WithWeights(*Preset("topo"), {{"fragmentation", 7}, {"random", 0.5}});
  ASSERT_THAT(copy, IsOk());
  EXPECT_EQ(Differences(*file, std::make_shared<const Policy>(*std::move(copy))), 0);
}

}  // namespace
// A policy kept beside a configuration snapshot reads back as the same policy: every preset,
// and one with weights overridden (nvlplace.yaml weights:) and its limits changed.
TEST(PolicyTest, WrittenPoliciesReadBackTheSame) {
  std::vector<Policy> policies;
  for (const char* name : {"topo", "pack", "firstfit", "random", "balanced"}) {
    auto p = LoadPolicy(name);
    ASSERT_THAT(p, IsOk()) << name;
    policies.push_back(**p);
  }
  auto topo = LoadPolicy("topo");
  ASSERT_THAT(topo, IsOk());
  auto weighted = WithWeights(**topo, {{"fragmentation", 0.125}, {"balance", 7}});
  ASSERT_THAT(weighted, IsOk());
  weighted->seed = 99;
  weighted->candidates = 5;
  weighted->use_spares = true;
  weighted->max_comm_ratio = 2.5;
  policies.push_back(*weighted);
  for (const Policy& p : policies) {
    auto back = ParsePolicyYaml(WritePolicyYaml(p), "written.yaml");
    ASSERT_THAT(back, IsOk()) << p.name << ":\n" << WritePolicyYaml(p);
    const Policy& b = **back;
    EXPECT_EQ(b.name, p.name);
    ASSERT_EQ(b.generators.size(), p.generators.size()) << p.name;
    for (size_t i = 0; i < p.generators.size(); ++i) {
      EXPECT_EQ(b.generators[i]->Name(), p.generators[i]->Name());
    }
    ASSERT_EQ(b.scorers.size(), p.scorers.size()) << p.name;
    for (size_t i = 0; i < p.scorers.size(); ++i) {
      EXPECT_EQ(b.scorers[i].scorer->Name(), p.scorers[i].scorer->Name());
      EXPECT_EQ(b.scorers[i].weight, p.scorers[i].weight) << p.name;  // exactly: %.17g
    }
    EXPECT_EQ(b.seed, p.seed);
    EXPECT_EQ(b.candidates, p.candidates);
    EXPECT_EQ(b.candidate_gpus, p.candidate_gpus);
    EXPECT_EQ(b.mix_models, p.mix_models);
    EXPECT_EQ(b.use_spares, p.use_spares);
    EXPECT_EQ(b.max_comm_ratio, p.max_comm_ratio);
  }
}

TEST(PolicyYamlTest, MaxCommRatioIsOffOrAtLeastOne) {
  const std::string head =
      "name: t\ngenerators: [firstfit]\nweights: {firstfit: 1}\nmax_comm_ratio: ";
  auto three = ParsePolicyYaml(head + "3\n", "p.yaml");
  ASSERT_THAT(three, IsOk());
  EXPECT_EQ((*three)->max_comm_ratio, 3);
  for (const char* bad : {"0.5", "-1", ".nan", ".inf", "many"}) {
    auto p = ParsePolicyYaml(head + bad + "\n", "p.yaml");
    EXPECT_FALSE(p.ok()) << bad;
    EXPECT_THAT(p.status().message(), HasSubstr("p.yaml:4")) << bad;
  }
}

}  // namespace nvlplace
