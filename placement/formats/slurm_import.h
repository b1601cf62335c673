// Imports Slurm's own files, topology.conf (topology/tree) and gres.conf Links=, as a spec.
#ifndef NVLPLACE_PLACEMENT_FORMATS_SLURM_IMPORT_H_
#define NVLPLACE_PLACEMENT_FORMATS_SLURM_IMPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/topology.h"

namespace nvlplace {

struct SlurmImportOptions {
  int gpus_per_node = 0;           // used for nodes that gres.conf does not describe; 0: required
                                   // from gres.conf
  std::string gpu_model = "H100";  // used when gres.conf gives no Type=
  double nvlink_gbps = 900.0;      // for GPU models that no annotation describes
  std::string name = "imported";   // cluster name when no annotation gives one
};

// Parses topology.conf text (and optionally gres.conf text) into a spec; the file names are
// used in messages only. Errors are InvalidArgument "file:line: key: message" (the line a
// continued line starts on): an unknown key, a key given twice, a line that does not start
// with SwitchName=, a bad hostlist or number, a switch defined twice, an unknown child switch,
// a Links= row of the wrong length, ... Semantic checks are left to Topology::Create. Lines,
// comments, quotes and key=value fields are read by the lexer (slurm_lexer.h).
//
// topology.conf: "SwitchName=s Nodes=hostlist|Switches=hostlist [LinkSpeed=N]" lines, keys
// case-insensitive, '#' comments, lines continued with a trailing '\'. LinkSpeed is read as
// Gb/s; without it a switch gets the cluster's link_gbps. Tiers come from the height of each
// switch: a switch with nodes is "leaf", its parents "spine", then "core", "tier3", ...
// (a switch's height is 1 + the highest of its children's).
//
// gres.conf: "NodeName=hostlist Name=gpu [Type=model] File=/dev/nvidia[0-7]|Count=N
// [Links=...] [Cores=...]" lines; other Name= values and NodeName-less "AutoDetect=" lines
// are skipped. A Links= row (one File per line) lists, per GPU of the node, -1 for itself,
// 0 for no NVLink, n >= 1 for n NVLinks; GPUs joined by links form one NVLink island
// (transitively). Rows must be symmetric. A node without Links= has one island. Nodes that
// topology.conf lists but gres.conf does not describe get options.gpus_per_node GPUs of
// options.gpu_model (an error naming the node when that is 0).
//
// "# nvlplace: <directive> key=value ..." comment lines (as ExportSlurm writes them) give
// what Slurm cannot express; values may be "quoted"; plain Slurm files need none of them:
//   cluster name= tiers=a,b,c link_gbps= nvlink_alpha_us= net_alpha_us=
//   gpu_model name= [nvlink_gbps=]
//   nodes names=hostlist gpus= model= [islands=0,1,2,3/4,5,6,7]
//   nvlink_domain name= [gpus=] [nodes=hostlist]   -- a multi-node NVLink domain; without
//       nodes=, the SwitchName line of the same name gives its nodes (Nodes=) and is not a
//       switch: a parent listing it in Switches= gets those nodes instead.
//   switch name= [tier=] [rail=] [link_gbps=] [oversubscription=] [nodes=] [switches=]
//       -- nodes= and switches= add to what the SwitchName line lists; a switch annotation
//       with no SwitchName line declares a switch that Slurm does not see (a rail leaf).
// Where gres.conf and a "nodes" annotation both describe a node they must agree.
//
// Bounds (limits.h; each an error at the line): names are printable UTF-8 of at most
// kMaxNameBytes bytes; numbers are finite and in range (bandwidths up to kMaxBandwidth,
// latencies up to kMaxLatencyUs, oversubscription from 1 to kMaxOversubscription); Count=,
// File= and gpus= give at most kMaxGpusPerNode GPUs per node; the hostlists of each file expand
// to at most kMaxNamesPerFile names; the GPUs of the cluster are counted before names are
// built for them and refused past topology_limits.max_gpus; a switch chain of more than
// kMaxTiers levels is refused (naming it). An unterminated quote is an error at its line.
// Never throws: an exception inside (std::bad_alloc) becomes a Status.
absl::StatusOr<TopologySpec> ImportSlurm(absl::string_view topology_conf,
                                         const std::string& topology_file,
                                         absl::string_view gres_conf,  // may be empty
                                         const std::string& gres_file,
                                         const SlurmImportOptions& options,
                                         const TopologyLimits& topology_limits = {});

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_SLURM_IMPORT_H_
