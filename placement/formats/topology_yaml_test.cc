// Tests for the cluster YAML reader and writer: error positions, limits and round trips.
#include "placement/formats/topology_yaml.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/heap_probe.h"
#include "tests/status_matchers.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::AllocationFailed;
using ::nvlplace::testing::FailAllocationIn;
using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::PeakHeapOf;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
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
)",
                                                        "x.yaml");
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

// An NVL72-style domain keeps spare trays: read, carried into the model, written back only
// where it is not 0.
TEST(ParseTest, DomainSparesRoundTrip) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(R"(name: x
gpu_models: [{name: GB200}]
nodes: [{names: "gb[01-06]", gpus: 4, model: GB200}]
nvlink_domains:
  - {name: rack1, nodes: "gb[01-03]", spares: 2}
  - {name: rack2, nodes: "gb[04-06]"}
switches: [{name: l0, tier: leaf, nodes: "gb[01-06]"}]
)",
                                                        "x.yaml");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->domains[0].spares, 2);  // the most 3 nodes allow
  EXPECT_EQ(spec->domains[0].spares_loc.line, 5);
  EXPECT_EQ(spec->domains[0].spares_loc.path, "#/nvlink_domains/0/spares");
  EXPECT_EQ(spec->domains[1].spares, 0);  // the default
  absl::StatusOr<std::shared_ptr<const Topology>> topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  std::string text = WriteTopologyYaml(**topo);
  EXPECT_THAT(text,
              HasSubstr("  - name: rack1\n    nodes: gb[01-03]\n    gpus: 12\n    spares: 2\n"));
  EXPECT_THAT(text, HasSubstr("  - name: rack2\n    nodes: gb[04-06]\n    gpus: 12\nswitches:"));
  absl::StatusOr<TopologySpec> back = ParseTopologyYaml(text, "written.yaml");
  ASSERT_THAT(back, IsOk()) << text;
  absl::StatusOr<std::shared_ptr<const Topology>> again = Topology::Create(*back);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT(CompareTopologies(**topo, **again), IsOk());
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

TEST(TopologyYamlTest, WritesCpuOnlyAndUnplacedNodesAndModelFigures) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(R"(name: m
tiers: [leaf]
gpu_models: [{name: h100}, {name: X, nvlink_gbps: 0, pcie_gbps: 16}]
nodes:
  - {names: "g0", gpus: 8, model: h100}
  - {names: "k0", gpus: 2, model: X, placed: false}
  - {names: "c[0-1]", gpus: 0, placed: true}
switches: [{name: l, tier: leaf, nodes: "g0,k0,c[0-1]"}]
)",
                                                        "m.yaml");
  ASSERT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  std::string text = WriteTopologyYaml(**topo);
  // h100 is found in the table without regard to case and keeps its spelling.
  EXPECT_THAT(text, HasSubstr("  - name: h100\n    nvlink_gbps: 900\n    pcie_gbps: 128\n"));
  EXPECT_THAT(text, HasSubstr("  - name: X\n    nvlink_gbps: 0\n    pcie_gbps: 16\n"));
  EXPECT_THAT(text, HasSubstr("  - names: k0\n    gpus: 2\n    model: X\n    placed: false\n    "
                              "islands: [[0], [1]]\n"));
  EXPECT_THAT(text, HasSubstr("  - names: c[0-1]\n    gpus: 0\nswitches:"));  // no model
  absl::StatusOr<TopologySpec> again = ParseTopologyYaml(text, "written.yaml");
  ASSERT_THAT(again, IsOk()) << text;
  auto back = Topology::Create(*again);
  ASSERT_THAT(back, IsOk());
  EXPECT_THAT(CompareTopologies(**topo, **back), IsOk());
}

TEST(TopologyYamlTest, NicsDefaultToOnePerGpuAndAreWrittenOnlyWhenNot) {
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(R"(name: m
tiers: [leaf]
gpu_models: [{name: H100}]
nodes:
  - {names: "g0", gpus: 8, model: H100}
  - {names: "f0", gpus: 8, model: H100, nics: 2}
  - {names: "e0", gpus: 8, model: H100, nics: 8}
  - {names: "c0", gpus: 0, nics: 0}
  - {names: "c1", gpus: 0, nics: 1}
  - {names: "c2", gpus: 0}
switches: [{name: l, tier: leaf, nodes: "g0,f0,e0,c[0-2]"}]
)",
                                                        "m.yaml");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->node_groups[0].nics, kDefaultNics);
  EXPECT_EQ(spec->node_groups[1].nics, 2);
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  auto nics = [&](const char* node) { return (*topo)->nodes()[(*topo)->FindNode(node)].nics; };
  EXPECT_EQ(nics("g0"), 8);  // one per GPU
  EXPECT_EQ(nics("f0"), 2);
  EXPECT_EQ(nics("e0"), 8);
  EXPECT_EQ(nics("c0"), 0);
  EXPECT_EQ(nics("c1"), 1);
  EXPECT_EQ(nics("c2"), 0);  // one per GPU, of none
  std::string text = WriteTopologyYaml(**topo);
  // Only where it is not the default (e0's 8 is one per GPU).
  EXPECT_THAT(text, HasSubstr("  - names: f0\n    gpus: 8\n    model: H100\n    nics: 2\n"
                              "  - names: e0\n    gpus: 8\n    model: H100\n  - names: c0\n"
                              "    gpus: 0\n  - names: c1\n    gpus: 0\n    nics: 1\n"
                              "  - names: c2\n    gpus: 0\nswitches:"));
  absl::StatusOr<TopologySpec> again = ParseTopologyYaml(text, "written.yaml");
  ASSERT_THAT(again, IsOk()) << text;
  auto back = Topology::Create(*again);
  ASSERT_THAT(back, IsOk());
  EXPECT_THAT(CompareTopologies(**topo, **back), IsOk());
  // A spec built elsewhere (an import) is checked by Topology::Create as well.
  TopologySpec bad = *spec;
  bad.node_groups[1].nics = 0;
  EXPECT_THAT(Topology::Create(bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "m.yaml:6:5: #/nodes/1/nics: nodes with GPUs need at least one NIC; "
                       "nics: 0 is for CPU-only nodes (gpus: 0)"));
  bad.node_groups[1].nics = 1025;
  EXPECT_THAT(Topology::Create(bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "m.yaml:6:5: #/nodes/1/nics: nics must be between 0 (CPU-only nodes) and "
                       "1024, not 1025"));
  // A different NIC count is a different model.
  bad.node_groups[1].nics = 3;
  auto three = Topology::Create(bad);
  ASSERT_THAT(three, IsOk());
  EXPECT_THAT(CompareTopologies(**topo, **three),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("NICs of node f0")));
}

TEST(TopologyYamlTest, RailLeavesAreTheNics) {
  constexpr char kRails[] = R"(name: r
tiers: [leaf]
gpu_models: [{name: H100}]
nodes:
  - {names: "n[0-1]", gpus: 8, model: H100NICS}
switches:
  - {name: rail0, tier: leaf, rail: 0, nodes: "n[0-1]"}
  - {name: rail1, tier: leaf, rail: 1, nodes: "n[0-1]"}
)";
  auto build = [&](const std::string& nics) -> absl::StatusOr<std::shared_ptr<const Topology>> {
    std::string yaml = kRails;
    yaml.replace(yaml.find("NICS"), 4, nics);
    absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(yaml, "r.yaml");
    if (!spec.ok()) return spec.status();
    return Topology::Create(*spec);
  };
  // Two rails: two NICs, given or not (not one per GPU), and never written.
  for (const char* nics : {"", ", nics: 2"}) {
    auto topo = build(nics);
    ASSERT_THAT(topo, IsOk()) << nics;
    EXPECT_EQ((*topo)->nodes()[0].nics, 2) << nics;
    EXPECT_THAT(WriteTopologyYaml(**topo), Not(HasSubstr("nics"))) << nics;
  }
  EXPECT_THAT(build(", nics: 8"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "r.yaml:5:5: #/nodes/0/nics: node 'n0' has 2 rail leaves, so 2 NICs (one "
                       "per rail), not 8; leave nics out or make it the rail count"));
}

}  // namespace
}  // namespace nvlplace

namespace nvlplace {
namespace {

// ---------------------------------------------------------------------------------------
// Reading files: only regular files, bounded, never blocking.

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/nvl_yaml_test_", getpid(), "_", name);
}

TEST(ReadFileTest, RefusesWhatIsNotARegularFile) {
  EXPECT_THAT(ReadFileToString("tests/fixtures"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tests/fixtures: a directory, not a regular file")));
  EXPECT_THAT(ReadFileToString("/dev/zero"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("/dev/zero: a character device, not a regular file")));
  // A FIFO with no writer: open() used to wait for one for ever.
  std::string fifo = TempPath("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ReadFileToString(fifo),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a FIFO (named pipe)")));
  unlink(fifo.c_str());
  // A socket cannot be opened at all (ENXIO): still named as a socket.
  std::string sock = TempPath("sock");
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof(addr.sun_path));
  std::copy(sock.begin(), sock.end(), addr.sun_path);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_THAT(ReadFileToString(sock),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a socket")));
  close(fd);
  unlink(sock.c_str());
}

TEST(ReadFileTest, RefusesFilesPastTheLimit) {
  std::string path = TempPath("sized");
  {
    std::ofstream out(path);
    out << std::string(100, 'x');
  }
  EXPECT_THAT(ReadFileToString(path, 100), IsOk());
  EXPECT_THAT(ReadFileToString(path, 99), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr(": file is larger than 99 bytes")));
  // 64 MiB + 1 byte (sparse): refused from its size, before anything is read.
  ASSERT_EQ(truncate(path.c_str(), (off_t{64} << 20) + 1), 0);
  absl::StatusOr<std::string> big;
  size_t peak = PeakHeapOf([&] { big = ReadFileToString(path); });
  EXPECT_THAT(
      big, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(": file is larger than 64 MiB")));
  EXPECT_LT(peak, size_t{1} << 20);
  unlink(path.c_str());
}

// ---------------------------------------------------------------------------------------
// Out of memory anywhere in the reader is a Status, never std::terminate.

TEST(OutOfMemoryTest, EveryAllocationMayFail) {
  // Reading and parsing, with each allocation in turn failing: the readers were noexcept, so
  // a std::bad_alloc inside called std::terminate. (Topology::Create is left out: Debian's
  // abseil 20220623 leaves a flat_hash_map inconsistent when its growth fails, so there the
  // defence is the bounds checked before anything is allocated, not the catch.)
  const std::string file = "configs/lab-islands.yaml";
  int failed = 0;
  for (long n = 0;; ++n) {
    FailAllocationIn(n);
    absl::StatusOr<TopologySpec> spec;
    absl::StatusOr<std::string> text = ReadFileToString(file);
    if (text.ok()) spec = ParseTopologyYaml(*text, file);
    bool fired = AllocationFailed();
    FailAllocationIn(-1);
    if (!fired) {
      ASSERT_THAT(spec, IsOk());
      break;
    }
    ++failed;
    // Where the failed allocation was caught decides the code; it is never OK.
    EXPECT_FALSE(text.ok() && spec.ok()) << "allocation " << n << " failed unnoticed";
    if (n > 200000) FAIL() << "no end to the allocations";
  }
  EXPECT_GT(failed, 100);
}

// ---------------------------------------------------------------------------------------
// The limits of limits.h that apply to a YAML file.

constexpr char kTiny[] = R"(name: tiny
gpu_models: [{name: H100}]
nodes: [{names: "n[0-7]", gpus: 8, model: H100}]
switches: [{name: leaf0, tier: leaf, nodes: "n[0-7]"}]
)";

TEST(LimitTest, MaxGpusIsTheCallersAndCheckedBeforeExpanding) {
  // 8 nodes x 8 GPUs = 64 GPUs.
  EXPECT_THAT(ParseTopologyYaml(kTiny, "t.yaml", TopologyLimits{64}), IsOk());
  EXPECT_THAT(ParseTopologyYaml(kTiny, "t.yaml", TopologyLimits{63}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.yaml:3:17: #/nodes/0/names: these 8 nodes of 8 GPUs bring the cluster "
                       "to 64 GPUs, more than the limit of 63 GPUs per cluster file; raise it "
                       "(--max-gpus) if the cluster is really that large"));
  // 1,048,576 nodes x 1,024 GPUs in 120 bytes: refused before a name is built.
  std::string huge = R"(name: x
gpu_models: [{name: H}]
nodes: [{names: "n[0000000-1048575]", gpus: 1024, model: H}]
switches: [{name: l, tier: leaf, nodes: n0}]
)";
  absl::StatusOr<TopologySpec> spec;
  size_t peak = PeakHeapOf([&] { spec = ParseTopologyYaml(huge, "huge.yaml"); });
  EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument,
                             HasSubstr("bring the cluster to 1073741824 GPUs, more than the "
                                       "limit of 4194304")));
  EXPECT_LT(peak, size_t{1} << 20);
}

TEST(LimitTest, MaxNamesIsTheCallers) {
  // kTiny's hostlists name 16 nodes: 8 in the group, 8 under the leaf.
  TopologyLimits limits;
  limits.max_names = 16;
  EXPECT_THAT(ParseTopologyYaml(kTiny, "t.yaml", limits), IsOk());
  limits.max_names = 15;
  EXPECT_THAT(ParseTopologyYaml(kTiny, "t.yaml", limits),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the hostlists of this file expand to more than 15 names "
                                 "(this one to 8)")));
}

TEST(LimitTest, YamlNodesAreCountedBeforeTheRestIsRead) {
  // A 10 MB flow list: 5,000,000 scalars, 2.6 GB once yaml-cpp built them; refused at the
  // 1,048,577th, with 16 MB of nodes read.
  std::string text = "name: x\ntiers: [";
  for (int i = 0; i < 5000000; ++i) text += i ? ",a" : "a";
  text += "]\n";
  absl::StatusOr<TopologySpec> spec;
  size_t peak = PeakHeapOf([&] { spec = ParseTopologyYaml(text, "flow.yaml"); });
  EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument,
                             HasSubstr("flow.yaml:2:2097151: the document holds more than "
                                       "1048576 YAML values, lists and mappings")));
  EXPECT_LT(peak, size_t{32} << 20);
}

TEST(LimitTest, NestingPastTheLimitNamesTheLine) {
  // yaml-cpp gives up at 500 levels with "bad file" and no useful position.
  std::string text = "name: x\ntiers: " + std::string(3000, '[') + std::string(3000, ']');
  EXPECT_THAT(ParseTopologyYaml(text, "deep.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "deep.yaml:2:71: lists and mappings nest more than 64 levels deep here"));
}

TEST(LimitTest, AliasesCountEachTimeTheyAreRead) {
  // One island list of 1,024 GPUs, read again through each of 1,100 aliased node groups:
  // 1,100 x 1,030 nodes visited from a 14 KB file.
  std::string text =
      "name: x\ngpu_models: [{name: H}]\nnodes:\n  - &g {names: n0, gpus: 1024, "
      "model: H, islands: [[";
  for (int i = 0; i < 1024; ++i) absl::StrAppend(&text, i ? "," : "", i);
  text += "]]}\n";
  for (int i = 0; i < 1100; ++i) text += "  - *g\n";
  text += "switches: [{name: l, tier: leaf, nodes: n0}]\n";
  EXPECT_THAT(ParseTopologyYaml(text, "alias.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("reading the document visits more than 1048576 YAML values: "
                                 "aliases (*name) repeat too much of it")));
  // Islands longer than a node can be are refused while they are read.
  std::string islands =
      "name: x\ngpu_models: [{name: H}]\nnodes:\n  - {names: n0, gpus: 8, "
      "model: H, islands: [[";
  for (int i = 0; i < 1025; ++i) absl::StrAppend(&islands, i ? "," : "", i % 8);
  islands += "]]}\nswitches: [{name: l, tier: leaf, nodes: n0}]\n";
  EXPECT_THAT(ParseTopologyYaml(islands, "islands.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("#/nodes/0/islands/0/1024: the islands list more than 1024 GPU "
                                 "indexes")));
}

TEST(LimitTest, TwentyThousandLeavesNeedNoQuadraticTables) {
  // Tables over 20,000 leaf groups took 20,000^2 x 12 bytes = 4.8 GB.
  std::string text =
      "name: x\ntiers: [leaf, spine]\ngpu_models: [{name: H, nvlink_gbps: 900}]\n"
      "nodes: [{names: \"n[0-19999]\", gpus: 1, model: H}]\nswitches:\n";
  for (int i = 0; i < 20000; ++i)
    absl::StrAppend(&text, "  - {name: l", i, ", tier: leaf, nodes: n", i, "}\n");
  text += "  - {name: s0, tier: spine, switches: \"l[0-9999]\"}\n";
  absl::StatusOr<std::shared_ptr<const Topology>> topo;
  size_t peak = PeakHeapOf([&] {
    absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(text, "leaves.yaml");
    if (spec.ok()) topo = Topology::Create(*spec);
  });
  ASSERT_THAT(topo, IsOk());
  const Topology& t = **topo;
  EXPECT_TRUE(t.has_tier_components());
  EXPECT_EQ(t.num_leaf_groups(), 20000);
  EXPECT_EQ(t.CommonTier(t.FindNode("n3"), t.FindNode("n3")), Topology::kSameNode);
  EXPECT_EQ(t.CommonTier(t.FindNode("n3"), t.FindNode("n9999")), 1);  // both under s0
  EXPECT_EQ(t.CommonTier(t.FindNode("n3"), t.FindNode("n10000")), Topology::kDisconnected);
  EXPECT_EQ(t.PathGbps(t.FindNode("n3"), t.FindNode("n9999")), 400);
  EXPECT_LT(peak, size_t{256} << 20);
}

struct BadValue {
  std::string name;
  std::string replace;  // in kTiny
  std::string with;
  std::string message;  // after "v.yaml:"
};

class BadValueTest : public ::testing::TestWithParam<BadValue> {};

TEST_P(BadValueTest, IsRefusedWhereItIsWritten) {
  std::string text = kTiny;
  size_t at = text.find(GetParam().replace);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, GetParam().replace.size(), GetParam().with);
  absl::StatusOr<TopologySpec> spec = ParseTopologyYaml(text, "v.yaml");
  EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument, "v.yaml:" + GetParam().message));
  // No raw control byte ever reaches a message.
  for (char c : std::string(spec.status().message())) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << spec.status();
  }
}

INSTANTIATE_TEST_SUITE_P(
    NotFinite, BadValueTest,
    ::testing::Values(
        BadValue{"InfLink", "name: tiny", "name: tiny\nlink_gbps: .inf",
                 "2:12: #/link_gbps: link_gbps must be a positive number of Gb/s up to 1000000, "
                 "not '.inf'"},
        BadValue{"NanLatency", "name: tiny", "name: tiny\nlatency: {net_alpha_us: .nan}",
                 "2:25: #/latency/net_alpha_us: a latency must be a number of microseconds "
                 "from 0 to 1000000, not '.nan'"},
        BadValue{"HugeLatency", "name: tiny", "name: tiny\nlatency: {nvlink_alpha_us: 1e7}",
                 "2:28: #/latency/nvlink_alpha_us: a latency must be a number of microseconds "
                 "from 0 to 1000000, not '1e7'"},
        BadValue{"InfNvlink", "{name: H100}", "{name: H100, nvlink_gbps: .Inf}",
                 "2:40: #/gpu_models/0/nvlink_gbps: nvlink_gbps must be a number of GB/s from 0 "
                 "(no NVLink) up to 1000000, not '.Inf'"},
        BadValue{"NanSwitchLink", "tier: leaf,", "tier: leaf, link_gbps: .NaN,",
                 "4:49: #/switches/0/link_gbps: link_gbps must be a positive number of Gb/s up "
                 "to 1000000, not '.NaN'"},
        BadValue{"InfOversubscription", "tier: leaf,", "tier: leaf, oversubscription: .inf,",
                 "4:56: #/switches/0/oversubscription: oversubscription is a downlink:uplink "
                 "ratio and must be from 1 to 1000, not '.inf'"}),
    [](const ::testing::TestParamInfo<BadValue>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Names, BadValueTest,
    ::testing::Values(
        BadValue{"NulInClusterName", "name: tiny", "name: \"ti\\0ny\"",
                 "1:7: #/name: cluster name 'ti\\x00ny': control character \\x00 is not "
                 "allowed (byte 3); names are printable UTF-8"},
        BadValue{"TabInSwitchName", "name: leaf0", "name: \"leaf\\t0\"",
                 "4:19: #/switches/0/name: switch name 'leaf\\x090': control character \\x09 is "
                 "not allowed (byte 5); names are printable UTF-8"},
        BadValue{"BadUtf8Model", "{name: H100}", "{name: H\xff}",
                 "2:22: bad YAML: invalid leading UTF-8 octet (byte 0xff); the file must be "
                 "UTF-8 text without control characters"},
        BadValue{"LongTier", "tier: leaf", "tier: " + std::string(65, 't'),
                 "4:32: #/switches/0/tier: tier name '" + std::string(64, 't') +
                     "... (65 bytes)' is longer than 64 bytes"},
        BadValue{"ControlInHostlist", "names: \"n[0-7]\"", "names: \"n\\x01[0-7]\"",
                 "3:17: #/nodes/0/names: bad hostlist \"n\\x01[0-7]\" at character 2: control "
                 "character \\x01 is not allowed"},
        // libyaml refuses a control character anywhere, and says which.
        BadValue{"ControlInYamlEscape", "name: tiny", "name: \"ti\\\x01ny\"",
                 "1:11: bad YAML: control characters are not allowed (byte 0x01); the file "
                 "must be UTF-8 text without control characters"},
        BadValue{"SeventeenTiers", "name: tiny",
                 "name: tiny\ntiers: [t0, t1, t2, t3, t4, t5, t6, "
                 "t7, t8, t9, t10, t11, t12, t13, t14, t15, t16]",
                 "2:8: #/tiers: 17 tiers; at most 16 are allowed"}),
    [](const ::testing::TestParamInfo<BadValue>& info) { return info.param.name; });

}  // namespace
}  // namespace nvlplace
