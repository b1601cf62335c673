// Exports a model as Slurm's own files: topology.conf (tree, block), topology.yaml, gres.conf.
#ifndef NVLPLACE_PLACEMENT_FORMATS_SLURM_EXPORT_H_
#define NVLPLACE_PLACEMENT_FORMATS_SLURM_EXPORT_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "placement/model/topology.h"

namespace nvlplace {

struct SlurmFiles {
  std::string topology_conf;
  std::string gres_conf;
  // topology/block, for a cluster with multi-node NVLink domains (else empty), as
  // SlurmExportOptions::blocks asks: topology.conf lines for topology/block (written to
  // topology-block.conf), or a topology.yaml for Slurm 25.05 and later.
  std::string block_conf;
  std::string topology_yaml;
};

// Writes the model as Slurm files; ImportSlurm (slurm_import.h) of them (topology.conf alone
// suffices) yields a model equal to it (CompareTopologies).
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
//   nvlink_gbps and pcie_gbps, node shapes with their islands (and placed=false where the
//   site keeps nvlplace off them), domains, tiers, rails and oversubscription. Nodes without
//   GPUs are in topology.conf (under their leaf) and in a "nodes ... gpus=0" annotation, and
//   have no gres.conf line.
// gres.conf: per GPU index, one line for all nodes of the same shape:
// "NodeName=node[0-7] Name=gpu Type=H100 File=/dev/nvidia0 Links=-1,1,1,1,1,1,1,1" (-1 self,
// 1 for GPUs of the same NVLink island, 0 else) so that stock cons_tres already prefers
// NVLink islands. Names (cluster, tiers, models, nodes, switches) must not contain ',' or
// '"'; the YAML loader and Slurm's node names already exclude them in practice. Switch and
// multi-node NVLink domain names must also be names a hostlist can hold (no space or bracket):
// Slurm lists them in Switches= and in its block hostlists.
// With links false, gres.conf has no Links=: from Slurm 24.05 cons_tres takes the GPU with the
// fewest links to those already chosen first (_compare_gres_by_links sorts ascending), so
// Links= there splits NVLink islands that lowest-index-first would keep whole.
//
// The block description, for a cluster with multi-node NVLink domains (NVL72 racks) only:
// - kConf (24.05 to 25.05; later releases read it when no topology.yaml is present): topology.conf
//   text for topology/block, "BlockName=<domain> Nodes=<hostlist>" per multi-node domain in the
//   model's order and "BlockSizes=" base x 2^L for L from 0 to the first level that holds every
//   domain, base being the smallest domain's nodes less its spares. Its comments say to use it
//   in place of topology.conf with TopologyPlugin=topology/block, and annotations carry the
//   rest of the model (every switch as a "switch" annotation, the domains' gpus and spares), so
//   that ImportSlurm of it alone gives the model back.
// - kYaml (25.05+): topology.yaml with a block topology "nvlink" (the same blocks and sizes,
//   cluster_default) and a tree topology "fabric" (the switches Slurm sees in topology.conf,
//   without the NVLink domains), the slurm.conf Topology= lines in its comments and the same
//   annotations; ImportSlurmTopologyYaml of it alone gives the model back.
// - kConf with block_levels (Slurm 23.11, which has BlockLevels= and no BlockSizes=): the
//   same file with "BlockLevels=0-L" for the same levels; 23.11 plans every block at the first
//   block's node count (spares included: the annotations keep them), so every multi-node
//   domain must have that count (CheckSlurmBlockExport).
// - kNone (Slurm before 23.11, which has no topology/block): no block description.
struct SlurmExportOptions {
  bool links = true;
  enum class Blocks { kNone, kConf, kYaml };
  Blocks blocks = Blocks::kConf;
  bool block_levels = false;  // kConf: BlockLevels= (Slurm 23.11) in place of BlockSizes=
};
SlurmFiles ExportSlurm(const Topology& topo, const SlurmExportOptions& options = {});

// Whether the block description `options` asks for can hold the model: with block_levels,
// every multi-node NVLink domain must have as many nodes as the first. InvalidArgument naming
// the first that does not and what to do (export for 24.05 or later, or equal domains).
absl::Status CheckSlurmBlockExport(const Topology& topo, const SlurmExportOptions& options);

// Whether every name ExportSlurm would write can be read back from Slurm's files as itself
// (callers check before exporting; the YAML loader takes names these files cannot hold): no
// backslash (slurm::CheckSlurmName), no ',' or '"' in any name (cluster, tiers, GPU models,
// nodes, switches, NVLink domains), and no space or bracket in the names Slurm's hostlists
// hold (nodes, switches, multi-node NVLink domains). InvalidArgument naming the first name
// that is not, why, and "rename it".
absl::Status CheckSlurmExportable(const Topology& topo);

// Whether gres.conf Links= helps stock cons_tres of Slurm `major`.`minor` (before 24.05).
bool SlurmLinksHelp(int major, int minor);

// Whether Slurm `major`.`minor` reads topology.yaml (25.05 and later).
bool SlurmReadsTopologyYaml(int major, int minor);

// The size of the gres.conf ExportSlurm writes, computed without writing it. It grows with
// the square of the GPUs per node (each GPU's line has a Links= row over its node's GPUs), so
// callers check it (against limits::kMaxConfigBytes, what the importer reads back) first.
size_t ExportedGresBytes(const Topology& topo, const SlurmExportOptions& options = {});

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_SLURM_EXPORT_H_
