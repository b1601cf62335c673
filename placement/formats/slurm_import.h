// Imports Slurm's own files (topology.conf or topology.yaml: tree and block; gres.conf) as a spec.
#ifndef NVLPLACE_PLACEMENT_FORMATS_SLURM_IMPORT_H_
#define NVLPLACE_PLACEMENT_FORMATS_SLURM_IMPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/formats/slurm_lexer.h"
#include "placement/model/topology.h"

namespace nvlplace {

struct SlurmImportOptions {
  int gpus_per_node = 0;           // GPUs of each node when no gres.conf lists GPUs; 0: none
                                   // given (a node that nothing describes is then an error)
  std::string gpu_model = "H100";  // used when gres.conf gives no Type=
  // NVLink GB/s of the gpu_model model, over the table's; kGbpsFromTable: the table's.
  double nvlink_gbps = kGbpsFromTable;
  // Models declared on the command line (--model NAME=NVLINK,PCIE): they win over the table
  // of known models for a Type= of that name (any case); annotations win over them.
  std::vector<GpuModelSpec> models;
  std::string name = "imported";  // cluster name when no annotation gives one
  // What a block of topology/block is (a BlockName= line, a block of a block topology).
  // kNvlink (the default: topology/block exists for racks such as GB200 NVL72, whose block is
  // the NVLink domain): a multi-node NVLink domain; when nothing else describes the fabric, the
  // blocks and their levels are the fabric too. kFabric: only a level of the fabric.
  enum class Blocks { kNvlink, kFabric };
  Blocks blocks = Blocks::kNvlink;
  // topology.yaml: the names of the topologies to import (--topology-name), needed when the
  // file has two tree or two block topologies.
  std::vector<std::string> topology_names;
  // "Include FILE" lines of topology.conf and gres.conf (slurm_lexer.h ReadConfLines): how the
  // files they name are read (no reader: an Include line is an error at its line) and the
  // directory a relative name is read from, Slurm's being slurm.conf's (empty: the directory
  // of topology_file for topology.conf and the files it includes, of gres_file for gres.conf).
  slurm::IncludeFiles includes;
};

// The spec and what the import has to tell its user that is not an error.
struct SlurmImport {
  TopologySpec spec;
  std::vector<std::string> notes;  // "note: ..." lines, e.g. the nodes imported without GPUs
};

// Parses topology.conf text (and optionally gres.conf text) into a spec; the file names are
// used in messages, and to find the files that "Include FILE" lines name (options.includes:
// each included file's lines are read in place of its Include line). Errors are
// InvalidArgument "file:line: key: message" (the file a line is in, included or not, and the
// line a continued line starts on; another line a message points to is "line N" in the same
// file, "file:N" in another): an unknown key, a key given twice, a line that does not start
// with SwitchName=, a bad hostlist or number, a switch defined twice, an unknown child switch,
// a Links= row of the wrong length, an Include that cannot be read or would loop ... Semantic
// checks are left to Topology::Create. Lines, Include, comments, quotes and key=value fields
// are read by the lexer (slurm_lexer.h).
//
// topology.conf: "SwitchName=s Nodes=hostlist|Switches=hostlist [LinkSpeed=N]" lines, keys
// case-insensitive, '#' comments, lines continued with a trailing '\'. LinkSpeed, a whole
// number as in Slurm, is read as Gb/s; without it a switch gets the cluster's link_gbps. Tiers
// come from the height of each switch: a switch with nodes is "leaf", its parents "spine",
// then "core", "tier3", ... (a switch's height is 1 + the highest of its children's).
//
// Or topology/block's "BlockName=b Nodes=hostlist" lines and one "BlockSizes=18,36,72" line
// (or Slurm 23.11's "BlockLevels=0-2", whose base is every block's node count; slurm_topology.h;
// Slurm reads one kind per file). Each block is, per options.blocks, a multi-node NVLink
// domain (kNvlink) whose spares are its nodes beyond the planning base size (the first
// BlockSizes value, or Slurm's default, the node count of the first block with nodes), unless an
// "nvlink_domain name=<block> spares=K" annotation says otherwise; or (kFabric) a switch of tier
// "block". When no switch annotation describes the fabric, the blocks are the fabric in both
// cases: a leaf per block and, per level L of BlockSizes above the base (aligned runs of 2^L
// blocks in file order, up to the first level holding every block), a switch of tier
// "block<2^L>" named "block<2^L>-<index>". Errors beyond the syntax's, at the block: a node of
// an NVLink domain that no switch annotation lists, or that a gres.conf listing GPUs leaves
// out; --blocks fabric with switch annotations.
//
// gres.conf: "NodeName=hostlist Name=gpu [Type=model] File=/dev/nvidia[0-7]|Count=N
// [Links=...] [Cores=...]" lines; other Name= values are skipped. A node's File= entries
// must ascend (Slurm numbers its GPUs in File= order, nvlplace by device number). A node that
// a "NodeName=... AutoDetect=nvml" line names and no GPU line lists is an error at that line
// (Slurm finds its GPUs at run time); nodes a global AutoDetect line may cover are noted. A
// Links= row (one File per line) lists, per GPU of the node, -1 for itself, 0 for no NVLink,
// n >= 1 for n NVLinks; GPUs joined by links form one NVLink island
// (transitively). Rows must be symmetric. A node without Links= has one island. Each Type=
// is a GPU model whose NVLink and PCIe bandwidths come from an annotation, else from
// options.models, else from the table of known models (gpu_models.h, any case); a Type= that
// none of them knows is an error at its gres.conf line that names --model. Lines without
// Type= are of options.gpu_model (noted). Nodes that topology.conf lists but a gres.conf with
// GPU lines does not are CPU-only (gpus 0; SlurmImport::notes lists them); without GPU lines in
// gres.conf, they get options.gpus_per_node GPUs of options.gpu_model (an error naming the
// node when that is 0).
//
// "# nvlplace: <directive> key=value ..." comment lines (as ExportSlurm writes them) give
// what Slurm cannot express; values may be "quoted"; plain Slurm files need none of them:
//   cluster name= tiers=a,b,c link_gbps= nvlink_alpha_us= net_alpha_us=
//   gpu_model name= [nvlink_gbps=] [pcie_gbps=]
//   nodes names=hostlist gpus= [model=] [islands=0,1,2,3/4,5,6,7] [placed=false]
//       -- gpus=0 (CPU-only nodes) without model=, else with it
//   nvlink_domain name= [gpus=] [nodes=hostlist] [spares=]  -- a multi-node NVLink domain;
//       without nodes=, the SwitchName line of the same name gives its nodes (Nodes=) and is
//       not a switch: a parent listing it in Switches= gets those nodes instead; or the block
//       of the same name gives them.
//   switch name= [tier=] [rail=] [link_gbps=] [oversubscription=] [nodes=] [switches=]
//       -- nodes= and switches= add to what the SwitchName line lists; a switch annotation
//       with no SwitchName line declares a switch that Slurm does not see (a rail leaf).
// Where gres.conf and a "nodes" annotation both describe a node they must agree.
//
// Bounds (limits.h; each an error at the line): names are printable UTF-8 of at most
// kMaxNameBytes bytes; numbers are finite and in range (bandwidths up to kMaxBandwidth,
// latencies up to kMaxLatencyUs, oversubscription from 1 to kMaxOversubscription); Count=,
// File= and gpus= give at most kMaxGpusPerNode GPUs per node; the hostlists of each file expand
// to at most topology_limits.max_names names (kMaxNamesPerFile by default); the GPUs of the cluster
// are counted before names are built for them and refused past topology_limits.max_gpus; a switch
// chain of more than kMaxTiers levels is refused (naming it). An unterminated quote is an error at
// its line. Never throws: an exception inside (std::bad_alloc) becomes a Status.
absl::StatusOr<TopologySpec> ImportSlurm(absl::string_view topology_conf,
                                         const std::string& topology_file,
                                         absl::string_view gres_conf,  // may be empty
                                         const std::string& gres_file,
                                         const SlurmImportOptions& options,
                                         const TopologyLimits& topology_limits = {});

// The same, with the notes for the user (printed by the CLI on stderr).
absl::StatusOr<SlurmImport> ImportSlurmWithNotes(absl::string_view topology_conf,
                                                 const std::string& topology_file,
                                                 absl::string_view gres_conf,
                                                 const std::string& gres_file,
                                                 const SlurmImportOptions& options,
                                                 const TopologyLimits& topology_limits = {});

// The same from Slurm's topology.yaml (25.05+, slurm_topology.h ReadTopologyYaml): the tree
// topology gives the switches as SwitchName= lines would, the block topology the blocks as
// BlockName= lines would (options.blocks; a block's node must be under a switch of the tree
// topology when there is one); options.topology_names picks them when the file has two of a
// kind. "# nvlplace:" comment lines are annotations, as in topology.conf.
absl::StatusOr<SlurmImport> ImportSlurmTopologyYaml(absl::string_view topology_yaml,
                                                    const std::string& topology_file,
                                                    absl::string_view gres_conf,
                                                    const std::string& gres_file,
                                                    const SlurmImportOptions& options,
                                                    const TopologyLimits& topology_limits = {});

// One --model option, "NAME=NVLINK_GBPS,PCIE_GBPS" (GB/s per GPU, both directions; NVLink 0
// for none); InvalidArgument saying how to write it otherwise.
absl::StatusOr<GpuModelSpec> ParseModelOption(absl::string_view text);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_SLURM_IMPORT_H_
