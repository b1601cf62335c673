// Tests for nvlplace.yaml: every error names the file, line and YAML path.
#include "plugin/plugin_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/status_matchers.h"

namespace nvlplace::plugin {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::string Root() { return std::filesystem::current_path().string(); }

TEST(PluginConfigTest, ReadsEveryKey) {
  auto c = ParsePluginConfig(
      "topology: cluster.yaml\npolicy: pack\nweights: {nvlink: 5, comm: 2.5}\n"
      "log_level: debug\ncandidates: 5\ndefault_nvl: prefer\ncompare_cons_tres: true\n",
      "/etc/slurm/nvlplace.yaml");
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->topology, "/etc/slurm/cluster.yaml");  // relative to nvlplace.yaml
  EXPECT_EQ(c->policy, "pack");                       // a name stays a name
  EXPECT_EQ(c->log_level, kLogDebug);
  EXPECT_EQ(c->candidates, 5);
  EXPECT_EQ(c->default_nvl, NvlMode::kPrefer);
  EXPECT_TRUE(c->compare_cons_tres);
  ASSERT_EQ(c->weights.size(), 2u);
  EXPECT_EQ(c->weights[0].first, "nvlink");
  EXPECT_EQ(c->weights[0].second, 5);
}

TEST(PluginConfigTest, Defaults) {
  auto c = ParsePluginConfig("topology: /abs/c.yaml\n", "/x/nvlplace.yaml");
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->topology, "/abs/c.yaml");
  EXPECT_EQ(c->policy, "topo");
  EXPECT_EQ(c->log_level, kLogInfo);
  EXPECT_EQ(c->candidates, 3);
  EXPECT_EQ(c->default_nvl, NvlMode::kStrict);
  EXPECT_FALSE(c->compare_cons_tres);
}

TEST(PluginConfigTest, PolicyPathIsResolved) {
  auto c = ParsePluginConfig("topology: c.yaml\npolicy: policies/mine.yaml\n", "/x/n.yaml");
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->policy, "/x/policies/mine.yaml");
}

struct BadCase {
  const char* name;  // the test's name
  const char* text;
  const char* message;
};

// Names the case in test listings (instead of its bytes).
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class PluginConfigBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(PluginConfigBadTest, NamesFileLineAndPath) {
  auto c = ParsePluginConfig(GetParam().text, "/etc/slurm/nvlplace.yaml");
  EXPECT_THAT(c, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, PluginConfigBadTest,
    ::testing::Values(
        BadCase{"EmptyFile", "", "/etc/slurm/nvlplace.yaml: #: empty file"},
        BadCase{"MissingTopology", "policy: topo\n",
                "/etc/slurm/nvlplace.yaml:1:1: #: missing key 'topology'"},
        BadCase{"UnknownKey", "topology: c.yaml\ncolour: red\n",
                "nvlplace.yaml:2:1: #/colour: unknown key 'colour'"},
        BadCase{"BadLogLevel", "topology: c.yaml\nlog_level: loud\n",
                "nvlplace.yaml:2:12: #/log_level: log level 'loud' is not one of error, info, "
                "debug"},
        BadCase{"NegativeWeight", "topology: c.yaml\nweights: {nvlink: -1}\n",
                "nvlplace.yaml:2:19: #/weights/nvlink: a weight must be a positive number"},
        BadCase{"UnknownScorer", "topology: c.yaml\nweights: {speed: 1}\n",
                "nvlplace.yaml:2:11: #/weights/speed: unknown key 'speed'"},
        BadCase{"ZeroCandidates", "topology: c.yaml\ncandidates: 0\n",
                "nvlplace.yaml:2:13: #/candidates: candidates must be a whole number from 1 "
                "to 16"},
        BadCase{"BadDefaultNvl", "topology: c.yaml\ndefault_nvl: maybe\n",
                "nvlplace.yaml:2:14: #/default_nvl: NVLink mode 'maybe' is not one of strict"},
        BadCase{"BadCompare", "topology: c.yaml\ncompare_cons_tres: yes\n",
                "nvlplace.yaml:2:20: #/compare_cons_tres: compare_cons_tres must be true or false"},
        BadCase{"BadYaml", "topology: [a, b\n", "nvlplace.yaml:2:1: bad YAML"},
        BadCase{"DuplicateKey", "topology: c.yaml\ntopology: d.yaml\n",
                "nvlplace.yaml:2:1: #/topology: duplicate key 'topology' (first on line 1)"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

class LoadPluginConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nvlplace-config-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& text) {
    std::string path = (dir_ / "nvlplace.yaml").string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(LoadPluginConfigTest, LoadsTopologyAndPolicy) {
  auto loaded =
      LoadPluginConfig(Write("topology: " + Root() + "/configs/lab-islands.yaml\npolicy: topo\n"));
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ((*loaded)->topology->num_nodes(), 16);
  EXPECT_EQ((*loaded)->policy->name, "topo");
  ASSERT_NE((*loaded)->engine, nullptr);
}

TEST_F(LoadPluginConfigTest, WeightsOverrideThePolicy) {
  auto loaded = LoadPluginConfig(
      Write("topology: " + Root() + "/configs/lab-h100.yaml\nweights: {fragmentation: 7}\n"));
  ASSERT_THAT(loaded, IsOk());
  // The default policy, topo, with fragmentation 2 -> 7 and the rest as it was.
  const Policy& p = *(*loaded)->policy;
  EXPECT_EQ(p.name, "topo+weights");
  std::vector<std::pair<std::string, double>> weights;
  for (const auto& w : p.scorers) weights.emplace_back(w.scorer->Name(), w.weight);
  EXPECT_THAT(weights, ElementsAre(Pair("nvlink", 100), Pair("tier", 10), Pair("comm", 50),
                                   Pair("fragmentation", 7), Pair("model", 10), Pair("spread", 5)));
  std::vector<std::string> generators;
  for (const auto& g : p.generators) generators.emplace_back(g->Name());
  EXPECT_THAT(generators, ElementsAre("hierarchical", "firstfit"));
  EXPECT_EQ(&(*loaded)->engine->policy(), &p);
}

TEST_F(LoadPluginConfigTest, MissingTopologyNamesTheConfigLine) {
  std::string path = Write("log_level: info\ntopology: nowhere.yaml\n");
  auto loaded = LoadPluginConfig(path);
  EXPECT_THAT(loaded, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr(path + ":2:11: #/topology: cannot use topology " +
                                         (dir_ / "nowhere.yaml").string())));
}

TEST_F(LoadPluginConfigTest, BadPolicyNamesTheConfigLine) {
  std::string path =
      Write("topology: " + Root() + "/configs/lab-h100.yaml\npolicy: no-such-policy\n");
  EXPECT_THAT(LoadPluginConfig(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(path + ":2:9: #/policy: cannot use policy no-such-policy")));
}

TEST_F(LoadPluginConfigTest, MissingFileNamesIt) {
  std::string path = (dir_ / "absent.yaml").string();
  auto loaded = LoadPluginConfig(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(path));
}

}  // namespace
}  // namespace nvlplace::plugin
