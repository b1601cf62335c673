// Imports and exports Slurm's own files: topology.conf (topology/tree) and gres.conf Links=.
#ifndef NVLPLACE_PLACEMENT_FORMATS_SLURM_IO_H_
#define NVLPLACE_PLACEMENT_FORMATS_SLURM_IO_H_

#include <cstddef>
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
// a Links= row of the wrong length, ... Semantic checks are left to Topology::Create.
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

struct SlurmFiles {
  std::string topology_conf;
  std::string gres_conf;
};

// Writes the model as Slurm files; ImportSlurm of them (topology.conf alone suffices) yields
// a model equal to it (CompareTopologies).
//
// topology.conf for stock topology/tree:
// - A multi-node NVLink domain (an NVL72 rack) becomes a leaf "switch" of its own, below the
//   fabric leaf that holds its nodes, so that topology/tree keeps a job inside one rack when it
//   fits. This is done when the fabric leaf holds only whole domains (Slurm forbids a switch
//   with both Nodes= and Switches=); other domains are written as annotations only.
// - Rails: topology/tree wants each node under one leaf (a node under several leaves draws
//   "Multiple leaf switches contain nodes" and makes the tree ambiguous), and in a
//   rail-optimized unit every rail leaf reaches the same spines, so rail 0 stands for the
//   node's position. Rail-0 leaves are real SwitchName lines; the leaves of rails 1..R-1 (and
//   any switch above only them) are "# nvlplace: switch" annotations that Slurm ignores.
// - LinkSpeed= is written where a switch's speed differs from the cluster's link_gbps and is
//   a whole number (Slurm's LinkSpeed is an integer); otherwise an annotation carries it.
// - Annotations carry the cluster name, tiers, link_gbps, latencies, GPU models with
//   nvlink_gbps, node shapes with their islands, domains, tiers, rails and oversubscription.
// gres.conf: per GPU index, one line for all nodes of the same shape:
// "NodeName=node[0-7] Name=gpu Type=H100 File=/dev/nvidia0 Links=-1,1,1,1,1,1,1,1" (-1 self,
// 1 for GPUs of the same NVLink island, 0 else) so that stock cons_tres already prefers
// NVLink islands. Names (cluster, tiers, models, nodes, switches) must not contain ',' or
// '"'; the YAML loader and Slurm's node names already exclude them in practice.
// With links false, gres.conf has no Links=: from Slurm 24.05 cons_tres takes the GPU with the
// fewest links to those already chosen first (_compare_gres_by_links sorts ascending), so
// Links= there splits NVLink islands that lowest-index-first would keep whole.
struct SlurmExportOptions {
  bool links = true;
};
SlurmFiles ExportSlurm(const Topology& topo, const SlurmExportOptions& options = {});

// Whether gres.conf Links= helps stock cons_tres of Slurm `major`.`minor` (before 24.05).
bool SlurmLinksHelp(int major, int minor);

// The size of the gres.conf ExportSlurm writes, computed without writing it. It grows with
// the square of the GPUs per node (each GPU's line has a Links= row over its node's GPUs), so
// callers check it (against limits::kMaxConfigBytes, what the importer reads back) first.
size_t ExportedGresBytes(const Topology& topo, const SlurmExportOptions& options = {});

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_SLURM_IO_H_
