// Fuzzes ImportSlurm: topology.conf (topology/tree SwitchName= or topology/block BlockName= and
// BlockSizes= lines), a 0 byte, then gres.conf; blocks are NVLink domains for an input of even
// size, fabric levels for an odd one. On a valid model every Slurm export (tree, block,
// topology.yaml) must import back to an equal one (CompareTopologies).
#include <string>

#include "placement/formats/slurm_import.h"
#include "placement/model/topology.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/slurm_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  absl::string_view text = fuzz::AsText(data, size);
  size_t cut = text.find('\0');
  absl::string_view topology_conf = text.substr(0, cut);
  absl::string_view gres_conf = cut == absl::string_view::npos ? "" : text.substr(cut + 1);
  SlurmImportOptions options;
  options.gpus_per_node = 8;
  options.blocks =
      size % 2 == 0 ? SlurmImportOptions::Blocks::kNvlink : SlurmImportOptions::Blocks::kFabric;
  auto spec =
      ImportSlurm(topology_conf, "topology.conf", gres_conf, "gres.conf", options, fuzz::Limits());
  if (!spec.ok()) return 0;
  auto topo = Topology::Create(*spec);
  if (!topo.ok()) return 0;
  options.blocks = SlurmImportOptions::Blocks::kNvlink;  // what the export writes
  fuzz::CheckSlurmRoundTrips(**topo, options);
  return 0;
}
