// Fuzzes ImportSlurm: topology.conf (topology/tree SwitchName= or topology/block BlockName= and
// BlockSizes= lines), a 0 byte, gres.conf, then, each after a 0 byte, files that Include lines
// may name, each its name, a newline and its text; blocks are NVLink domains for an input of
// even size, fabric levels for an odd one. On a valid model every Slurm export (tree, block,
// topology.yaml) must import back to an equal one (CompareTopologies).
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "placement/formats/slurm_import.h"
#include "placement/model/topology.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/slurm_round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace;
  std::vector<absl::string_view> parts =
      absl::StrSplit(fuzz::AsText(data, size), absl::MaxSplits('\0', 2));
  absl::string_view topology_conf = parts[0];
  absl::string_view gres_conf = parts.size() > 1 ? parts[1] : "";
  // The files Include lines may name, read from memory ("NAME\nTEXT" each).
  std::map<std::string, std::string> files;
  if (parts.size() > 2) {
    for (absl::string_view file : absl::StrSplit(parts[2], '\0')) {
      std::vector<absl::string_view> name_text = absl::StrSplit(file, absl::MaxSplits('\n', 1));
      files.emplace(std::string(name_text[0]),
                    name_text.size() > 1 ? std::string(name_text[1]) : std::string());
    }
  }
  SlurmImportOptions options;
  options.gpus_per_node = 8;
  options.blocks =
      size % 2 == 0 ? SlurmImportOptions::Blocks::kNvlink : SlurmImportOptions::Blocks::kFabric;
  options.includes.read = [&files](const std::string& path) -> absl::StatusOr<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return it->second;
  };
  auto spec =
      ImportSlurm(topology_conf, "topology.conf", gres_conf, "gres.conf", options, fuzz::Limits());
  if (!spec.ok()) return 0;
  auto topo = Topology::Create(*spec);
  if (!topo.ok()) return 0;
  options.blocks = SlurmImportOptions::Blocks::kNvlink;  // what the export writes
  fuzz::CheckSlurmRoundTrips(**topo, options);
  return 0;
}
