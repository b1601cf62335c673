// Tests for the cluster YAML reader and writer: error positions and round trips.
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/topology_yaml.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every file in tests/fixtures/bad/ holds one broken config and, on a line of its own,
// "# expect: <the error message after the file name>" (line:col: path: message).
std::vector<std::string> BadFixtures() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("tests/fixtures/bad")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ExpectedError(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# expect: ", 0) == 0) return line.substr(10);
  }
  return "";
}

TEST(BadFixtureTest, EachFixtureFailsWithItsMessage) {
  std::vector<std::string> files = BadFixtures();
  ASSERT_GE(files.size(), 10u) << "fixtures missing: run from the source root";
  for (const std::string& file : files) {
    std::string want = ExpectedError(file);
    if (want.empty()) {
      ADD_FAILURE() << file << " has no '# expect: ' line; it fails with: "
                    << LoadTopologyFile(file).status();
      continue;
    }
    EXPECT_THAT(LoadTopologyFile(file),
                StatusIs(absl::StatusCode::kInvalidArgument, file + ":" + want))
        << file;
  }
}

TEST(ParseTest, ReadsEveryField) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(R"(name: x
tiers: [leaf, spine, core]
link_gbps: 200
latency: {nvlink_alpha_us: 1.5, net_alpha_us: 4}
gpu_models:
  - {name: GB200, nvlink_gbps: 1800}
nodes:
  - {names: "gb[01-02]", gpus: 4, model: GB200, islands: [[0, 1], [2, 3]]}
switches:
  - {name: l0, tier: leaf, nodes: "gb[01-02]", rail: 1, link_gbps: 100, oversubscription: 2}
)", "x.yaml");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->name, "x");
  EXPECT_EQ(spec->tiers.size(), 3u);
  EXPECT_EQ(spec->link_gbps, 200);
  EXPECT_EQ(spec->nvlink_alpha_us, 1.5);
  EXPECT_EQ(spec->net_alpha_us, 4);
  EXPECT_EQ(spec->gpu_models[0].nvlink_gbps, 1800);
  EXPECT_EQ(spec->node_groups[0].names, (std::vector<std::string>{"gb01", "gb02"}));
  EXPECT_EQ(spec->node_groups[0].islands.size(), 2u);
  EXPECT_EQ(spec->switches[0].rail, 1);
  EXPECT_EQ(spec->switches[0].link_gbps, 100);
  EXPECT_EQ(spec->switches[0].oversubscription, 2);
  // Locations are 1-based: the switch map starts on line 10, column 5.
  EXPECT_EQ(spec->switches[0].loc.line, 10);
  EXPECT_EQ(spec->switches[0].loc.col, 5);
  EXPECT_EQ(spec->switches[0].loc.path, "#/switches/0");
}

TEST(ParseTest, EmptyDocumentNamesTheFile) {
  EXPECT_THAT(ParseTopologyYaml("", "empty.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("empty.yaml")));
  EXPECT_THAT(ParseTopologyYaml("[1, 2]", "list.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("list.yaml:1:1")));
}

TEST(LoadTest, MissingFileIsNotFound) {
  EXPECT_THAT(LoadTopologyFile("tests/fixtures/no-such-file.yaml"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no-such-file.yaml")));
}

TEST(WriteTest, RoundTripsEveryConfig) {
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator("configs")) {
    if (e.path().extension() != ".yaml") continue;
    ++seen;
    absl::StatusOr<std::shared_ptr<const Topology>> topo = LoadTopologyFile(e.path().string());
    ASSERT_THAT(topo, IsOk());
    std::string text = WriteTopologyYaml(**topo);
    absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(text, "written.yaml");
    ASSERT_THAT(spec, IsOk()) << text;
    absl::StatusOr<std::shared_ptr<const Topology>> back = Topology::Create(*spec);
    ASSERT_THAT(back, IsOk());
    EXPECT_THAT(CompareTopologies(**topo, **back), IsOk()) << e.path();
    // Writing is canonical: writing the copy again gives the same text.
    EXPECT_EQ(WriteTopologyYaml(**back), text) << e.path();
  }
  EXPECT_GE(seen, 4) << "configs/ should ship at least four clusters";
}

}  // namespace
}  // namespace nvlplace
