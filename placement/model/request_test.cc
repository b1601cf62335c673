// Tests for request resolution: defaults, every bad size named, and no input that traps.
#include "placement/model/request.h"

#include <climits>
#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/limits.h"
#include "tests/status_matchers.h"
#include "tests/test_data.h"

namespace nvlplace {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

std::shared_ptr<const Topology> Lab() {  // 8 nodes x 8 GPUs
  auto spec = ParseTopologyYaml(testing::kLabYaml, "lab.yaml");
  EXPECT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  EXPECT_THAT(topo, IsOk());
  return *topo;
}

TEST(RequestTest, Defaults) {
  auto topo = Lab();
  absl::StatusOr<Request> r = ResolveRequest({.gpus = 16, .tp = 4}, *topo);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->pp, 1);
  EXPECT_EQ(r->dp, 4);  // 16 / (4 x 1)
  EXPECT_TRUE(r->sizes_given);
  r = ResolveRequest({.nodes = 2, .gpus_per_node = 8}, *topo);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->gpus, 16);  // 2 x 8
  EXPECT_EQ(r->nodes, 2);
  EXPECT_EQ(r->dp, 16);  // one group of TP=1 PP=1: DP = GPUs
  EXPECT_FALSE(r->sizes_given);
  r = ResolveRequest({.tp = 4, .pp = 2, .dp = 2}, *topo);  // sizes alone: 4 x 2 x 2 = 16
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->gpus, 16);
}

struct BadSizes {
  RequestSpec spec;
  std::string message;
};

class RequestSizeTest : public ::testing::TestWithParam<BadSizes> {};

TEST_P(RequestSizeTest, RefusedWithTheValueToChange) {
  auto topo = Lab();
  EXPECT_THAT(ResolveRequest(GetParam().spec, *topo),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Overflow, RequestSizeTest,
    ::testing::Values(
        // 65536 x 65536 = 2^32 wrapped to 0 in int, and gpus % 0 trapped (SIGFPE).
        BadSizes{{.gpus = 8, .tp = 65536, .pp = 65536},
                 "TP x PP = 65536 x 65536 = 4294967296 does not divide 8 GPUs; it is more than the "
                 "GPUs requested: lower tp or pp"},
        // 4 x 2^30 = 2^32 wrapped to 0: "placed" with 0 GPUs.
        BadSizes{{.nodes = 4, .gpus_per_node = 1073741824},
                 "gpus-per-node=1073741824 is more than 1024, the most GPUs of one node"},
        // 1024 x 2^20 = 2^30 GPUs: each size in range, the product is not.
        BadSizes{{.nodes = 1 << 20, .gpus_per_node = 1024},
                 "nodes x gpus-per-node = 1048576 x 1024 = 1073741824 is more than 16777216"},
        // (2^31 - 1) x 2 wrapped to -2: accepted as DP=-4.
        BadSizes{{.gpus = 8, .tp = INT_MAX, .pp = 2},
                 "tp=2147483647 is more than 65536, the largest TP size"},
        BadSizes{{.gpus = 8, .pp = 65537}, "pp=65537 is more than 65536"},
        BadSizes{{.gpus = 8, .dp = INT_MAX}, "dp=2147483647 is more than 65536"},
        BadSizes{{.gpus = INT_MAX}, "gpus=2147483647 is more than 16777216"},
        BadSizes{{.gpus = 8, .nodes = INT_MAX}, "nodes=2147483647 is more than 1048576"},
        BadSizes{{.gpus = INT_MIN}, "gpus=-2147483648 is negative"},
        BadSizes{{.gpus = 8, .tp = -8}, "tp=-8 is negative"},
        BadSizes{{.gpus = 8, .gpus_per_node = -1}, "gpus-per-node=-1 is negative"},
        // 65536 x 65536 x 65536 = 2^48 GPUs from sizes alone.
        BadSizes{{.tp = 65536, .pp = 65536, .dp = 65536},
                 "TP x PP x DP = 65536 x 65536 x 65536 = 281474976710656 is more than 16777216"},
        // 64 x 64 x 64 = 262144: in range, more than the cluster.
        BadSizes{{.tp = 64, .pp = 64, .dp = 64}, "asks for 262144 GPUs; cluster lab has 64"},
        BadSizes{{.gpus = 16, .tp = 4, .pp = 2, .dp = 65536},
                 "TP x PP x DP = 4 x 2 x 65536 = 524288 is not the 16 GPUs requested"},
        BadSizes{{.gpus = 8, .nodes = 16}, "8 GPUs do not split evenly over 16 nodes"},
        BadSizes{{.gpus = 16, .nodes = 16}, "asks for 16 nodes; the cluster has 8"}));

TEST(RequestTest, PluginRequestWithHugeSizesIsInvalidArgument) {
  // What slurmctld passes for --nvl-tp=65536 --nvl-pp=65536 --gpus=8: a status, never a trap.
  auto topo = Lab();
  RequestSpec spec;
  spec.gpus = 8;
  spec.tp = limits::kMaxGroupSize;
  spec.pp = limits::kMaxGroupSize;
  EXPECT_THAT(ResolveRequest(spec, *topo),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lower tp or pp")));
  EXPECT_THAT(CheckRequestSizes(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lower tp or pp")));
}

TEST(RequestTest, CheckRequestSizesNeedsNoCluster) {
  EXPECT_THAT(CheckRequestSizes({.gpus = 4096, .tp = 8, .pp = 4}), IsOk());
  EXPECT_THAT(CheckRequestSizes({.gpus = 12, .tp = 8}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not divide 12 GPUs")));
  EXPECT_THAT(CheckRequestSizes({.gpus = 16, .nodes = 3}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("over 3 nodes")));
}

TEST(RequestTest, UserTextIsEscapedInMessages) {
  auto topo = Lab();
  EXPECT_THAT(ParseNvlMode(std::string("str\0ict\n", 8)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("NVLink mode 'str\\x00ict\\n' is not one of")));
  EXPECT_THAT(ResolveRequest({.gpus = 8, .max_tier = "\x1b[2Jspine"}, *topo),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max-tier '\\x1b[2Jspine'")));
  EXPECT_THAT(ResolveRequest({.gpus = 8, .max_tier = std::string(1000, 'x')}, *topo),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("... (1000 bytes)")));
}

TEST(RequestTest, GpuModelKeepsOnlyItsNodesInAnyCase) {
  auto spec = ParseTopologyYaml(testing::kTwoModelYaml, "two.yaml");
  ASSERT_THAT(spec, IsOk());
  auto topo = Topology::Create(*spec);
  ASSERT_THAT(topo, IsOk());
  absl::StatusOr<Request> r = ResolveRequest({.gpus = 4, .gpu_model = "a100"}, **topo);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->gpu_model, 1);
  EXPECT_EQ(r->allowed_node, (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_THAT(DescribeRequest(*r, **topo), HasSubstr("model=A100"));
  // An -x still applies inside the model.
  r = ResolveRequest({.gpus = 4, .exclude = "node3", .gpu_model = "A100"}, **topo);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->allowed_node, (std::vector<uint8_t>{0, 0, 1, 0}));
  // No model given: every node, and no model named.
  r = ResolveRequest({.gpus = 4}, **topo);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->gpu_model, -1);
  EXPECT_EQ(r->allowed_node, (std::vector<uint8_t>(4, 1)));
  EXPECT_THAT(ResolveRequest({.gpus = 4, .gpu_model = "V100"}, **topo),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("GPU model 'V100' is not in cluster two-models; its models are "
                                 "H100, A100")));
  EXPECT_THAT(ResolveRequest({.gpus = 16, .gpu_model = "a100"}, **topo),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("asks for 16 A100 GPUs; cluster two-models has 8")));
}

}  // namespace
}  // namespace nvlplace
