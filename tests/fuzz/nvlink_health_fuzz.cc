// Fuzzes the NVLink health file (ParseNvlinkHealthYaml) and its application to a cluster of
// two 6-tray NVL racks (ApplyNvlinkHealth): whatever it accepts must build, every GPU must
// stay in exactly one NVLink domain, and no domain may hold a node the file put elsewhere.
#include <memory>
#include <string>

#include "placement/formats/nvlink_health_yaml.h"
#include "placement/formats/topology_yaml.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/test_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  static const TopologySpec* spec = [] {
    auto s = ParseTopologyYaml(testing::kTwoRacksYaml, "racks.yaml");
    if (!s.ok()) __builtin_trap();
    return new TopologySpec(*std::move(s));
  }();
  auto health = ParseNvlinkHealthYaml(fuzz::AsText(data, size), "fuzz-health.yaml");
  if (!health.ok()) {
    FUZZ_CHECK(fuzz::Message(health.status()).rfind("fuzz-health.yaml", 0) == 0,
               "error without the file name: %s", fuzz::Message(health.status()).c_str());
    return 0;
  }
  (void)DescribeNvlinkHealth(*health);
  auto applied = ApplyNvlinkHealth(*spec, *health);
  if (!applied.ok()) return 0;
  auto topo = Topology::Create(*applied);
  FUZZ_CHECK(topo.ok(), "an accepted health file does not build: %s",
             fuzz::Message(topo.status()).c_str());
  std::vector<int> seen((*topo)->num_gpus(), 0);
  for (const NvlDomain& d : (*topo)->domains()) {
    for (GpuId g : d.gpus) seen[g]++;
  }
  for (GpuId g = 0; g < (*topo)->num_gpus(); ++g) {
    FUZZ_CHECK(seen[g] == 1, "GPU %d is in %d NVLink domains", g, seen[g]);
  }
  return 0;
}
