// Fuzzes ImportSlurmTopologyYaml: Slurm's topology.yaml (25.05+), a 0 byte, gres.conf, a 0 byte,
// then --topology-name values separated by ','; blocks are NVLink domains for an input of even
// size, fabric levels for an odd one. On a valid model every Slurm export (tree, block,
// topology.yaml) must import back to an equal one (CompareTopologies).
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "placement/formats/slurm_import.h"
#include "placement/model/topology.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/slurm_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  std::vector<absl::string_view> parts =
      absl::StrSplit(fuzz::AsText(data, size), absl::MaxSplits('\0', 2));
  absl::string_view yaml = parts[0];
  absl::string_view gres = parts.size() > 1 ? parts[1] : "";
  SlurmImportOptions options;
  options.gpus_per_node = 8;
  options.blocks =
      size % 2 == 0 ? SlurmImportOptions::Blocks::kNvlink : SlurmImportOptions::Blocks::kFabric;
  if (parts.size() > 2) {
    for (absl::string_view name : absl::StrSplit(parts[2], ',', absl::SkipEmpty())) {
      options.topology_names.emplace_back(name);
    }
  }
  auto imported =
      ImportSlurmTopologyYaml(yaml, "topology.yaml", gres, "gres.conf", options, fuzz::Limits());
  if (!imported.ok()) return 0;
  auto topo = Topology::Create(imported->spec);
  if (!topo.ok()) return 0;
  options.blocks = SlurmImportOptions::Blocks::kNvlink;  // what the export writes
  options.topology_names.clear();
  fuzz::CheckSlurmRoundTrips(**topo, options);
  return 0;
}
