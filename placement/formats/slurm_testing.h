// Test helpers shared by the Slurm import and export tests: options and an import that builds.
#ifndef NVLPLACE_PLACEMENT_FORMATS_SLURM_TESTING_H_
#define NVLPLACE_PLACEMENT_FORMATS_SLURM_TESTING_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "placement/formats/slurm_import.h"
#include "placement/formats/slurm_lexer.h"
#include "placement/model/topology.h"

namespace nvlplace::testing {

// The import options with `gpus_per_node` for nodes that gres.conf does not describe.
inline SlurmImportOptions Options(int gpus_per_node) {
  SlurmImportOptions options;
  options.gpus_per_node = gpus_per_node;
  return options;
}

// ImportSlurm of the texts ("topology.conf", "gres.conf"), then Topology::Create.
inline absl::StatusOr<std::shared_ptr<const Topology>> Import(const std::string& topology,
                                                              const std::string& gres,
                                                              const SlurmImportOptions& options) {
  absl::StatusOr<TopologySpec> spec =
      ImportSlurm(topology, "topology.conf", gres, "gres.conf", options);
  if (!spec.ok()) return spec.status();
  return Topology::Create(*spec);
}

// Files held in memory for Include lines: Includes() reads `files` by path (NotFound with
// ReadFileToString's message for another path) and notes each path asked for in `asked`. It
// must outlive the IncludeFiles it gives.
struct MemoryFiles {
  std::map<std::string, std::string> files;
  std::vector<std::string> asked;

  slurm::IncludeFiles Includes(const std::string& dir = "") {
    slurm::IncludeFiles in;
    in.dir = dir;
    in.read = [this](const std::string& path) -> absl::StatusOr<std::string> {
      asked.push_back(path);
      auto it = files.find(path);
      if (it == files.end()) {
        return absl::NotFoundError(
            absl::StrCat(path, ": cannot open the file (No such file or directory)"));
      }
      return it->second;
    };
    return in;
  }
};

// The tier name of switch `sw`.
inline std::string TierOf(const Topology& t, absl::string_view sw) {
  return t.tiers()[t.switches()[t.FindSwitch(sw)].tier];
}

}  // namespace nvlplace::testing

#endif  // NVLPLACE_PLACEMENT_FORMATS_SLURM_TESTING_H_
