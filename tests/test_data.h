// Test data shared by several test binaries: the small lab cluster and the bundled configs.
#ifndef NVLPLACE_TESTS_TEST_DATA_H_
#define NVLPLACE_TESTS_TEST_DATA_H_

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace nvlplace::testing {

// 8 nodes x 8 H100 (one NVLink domain per node), two leaf switches of 4 nodes, one spine.
inline constexpr char kLabYaml[] = R"(name: lab
tiers: [leaf, spine]
gpu_models: [{name: H100, nvlink_gbps: 900}]
nodes:
  - {names: "node[0-7]", gpus: 8, model: H100}
switches:
  - {name: leaf0, tier: leaf, nodes: "node[0-3]"}
  - {name: leaf1, tier: leaf, nodes: "node[4-7]"}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
)";

// Two GPU models under one spine: H100 on node[0-1], A100 on node[2-3].
inline constexpr char kTwoModelYaml[] = R"(name: two-models
tiers: [leaf, spine]
gpu_models: [{name: H100, nvlink_gbps: 900}, {name: A100, nvlink_gbps: 600}]
nodes:
  - {names: "node[0-1]", gpus: 8, model: H100}
  - {names: "node[2-3]", gpus: 4, model: A100}
switches:
  - {name: leaf0, tier: leaf, nodes: "node[0-1]"}
  - {name: leaf1, tier: leaf, nodes: "node[2-3]"}
  - {name: spine0, tier: spine, switches: "leaf[0-1]"}
)";

// Two NVL racks of six 4-GPU trays (a multi-node NVLink domain each), rack1 keeping 2 spare
// trays: what the NVLink health file splits and marks.
inline constexpr char kTwoRacksYaml[] = R"(name: racks
tiers: [leaf, spine]
gpu_models: [{name: GB200, nvlink_gbps: 1800}]
nodes:
  - {names: "gb[01-12]", gpus: 4, model: GB200}
nvlink_domains:
  - {name: rack1, nodes: "gb[01-06]", spares: 2}
  - {name: rack2, nodes: "gb[07-12]"}
switches:
  - {name: leaf1, tier: leaf, nodes: "gb[01-06]"}
  - {name: leaf2, tier: leaf, nodes: "gb[07-12]"}
  - {name: spine, tier: spine, switches: "leaf[1-2]"}
)";

// Every configs/*.yaml, sorted (tests run from the source root).
inline std::vector<std::string> ConfigFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("configs")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace nvlplace::testing

#endif  // NVLPLACE_TESTS_TEST_DATA_H_
