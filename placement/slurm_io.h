// Imports and exports Slurm's own files: topology.conf (topology/tree) and gres.conf Links=.
#ifndef NVLPLACE_PLACEMENT_SLURM_IO_H_
#define NVLPLACE_PLACEMENT_SLURM_IO_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "placement/topology.h"

namespace nvlplace {

struct SlurmImportOptions {
  int gpus_per_node = 0;         // used for nodes that gres.conf does not describe; 0: required
                                 // from gres.conf
  std::string gpu_model = "H100";  // used when gres.conf gives no Type=
  double nvlink_gbps = 900.0;
  std::string name = "imported";
};

// Parses topology.conf text (and optionally gres.conf text) into a spec. Understands
// SwitchName=, Nodes=, Switches=, LinkSpeed=, comments, continuation lines ending in '\',
// hostlists, and the "# nvlplace:" annotation comments that ExportSlurm writes (tier names,
// NVLink domains, rails, oversubscription, GPU models); plain Slurm files need none of them.
// Tiers are inferred from depth when not annotated: leaf, spine, core, tier3, ...
// gres.conf: "NodeName=... Name=gpu [Type=...] File=/dev/nvidia[0-7] [Links=...]" lines;
// Links= rows group GPUs into NVLink islands (a link value >= 1 joins two GPUs).
// Errors are InvalidArgument "file:line: key: message".
absl::StatusOr<TopologySpec> ImportSlurm(absl::string_view topology_conf,
                                          const std::string& topology_file,
                                          absl::string_view gres_conf,  // may be empty
                                          const std::string& gres_file,
                                          const SlurmImportOptions& options);

struct SlurmFiles {
  std::string topology_conf;
  std::string gres_conf;
};

// Writes the model as Slurm files. topology.conf: multi-node NVLink domains become the
// lowest switches (so topology/tree keeps jobs inside them), fabric tiers above them, with
// LinkSpeed= and "# nvlplace:" annotations that Slurm ignores. gres.conf: one line per GPU
// with File=/dev/nvidiaN and Links= (-1 self, 1 for GPUs of the same NVLink island, 0 else)
// so that stock cons_tres already prefers NVLink islands. ImportSlurm(ExportSlurm(m))
// yields a model equal to m.
SlurmFiles ExportSlurm(const Topology& topo);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_SLURM_IO_H_
