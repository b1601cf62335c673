// Slurm's topology files as written (tree switches, blocks, BlockSizes), and block levels.
#ifndef NVLPLACE_PLACEMENT_FORMATS_SLURM_TOPOLOGY_H_
#define NVLPLACE_PLACEMENT_FORMATS_SLURM_TOPOLOGY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/formats/slurm_lexer.h"
#include "placement/model/topology.h"

// What a topology.conf (topology/tree SwitchName= lines or topology/block BlockName= lines)
// or a topology.yaml (25.05+: several topologies) says, before nvlplace reads it as a model
// (slurm_import.h). Both readers check syntax, names, hostlists and Slurm's BlockSizes rules,
// and charge the names their hostlists expand to against one NameBudget.
namespace nvlplace::slurm {

// One switch of topology/tree: a SwitchName= line, or a switch of a tree topology.
struct TreeSwitch {
  std::string name;
  HostNames nodes;                    // Nodes= / nodes:
  std::vector<std::string> children;  // Switches= / children:
  double link_gbps = 0;               // LinkSpeed=; 0: not given (topology.yaml has none)
  SourceLoc loc;                      // the line (key SwitchName) or the YAML entry
  SourceLoc nodes_loc;                // where its nodes are named
  SourceLoc children_loc;             // where its children are named
  int64_t seq = 0;  // reading order among switches and annotations (TextLine::seq; YAML: line)
};

// One block of topology/block: a BlockName= line, or a block of a block topology.
struct Block {
  std::string name;
  HostNames nodes;  // may be empty (26.05 allows a block without nodes)
  SourceLoc loc;    // the line (key BlockName) or the YAML entry
  SourceLoc nodes_loc;
};

// The block levels BlockSizes configures (Slurm's block_record.c): the first value is the
// planning base size (nodes), each value is base x 2^L for a level L from 0 to
// limits::kMaxBlockLevels - 1; level L groups 2^L consecutive blocks (blocks i with equal
// i >> L, in file order).
struct BlockLevels {
  int64_t base = 0;          // planning base block size, nodes
  std::vector<int> levels;   // configured levels, ascending, without repeats; 0 always first
  bool given = false;        // from a BlockSizes or BlockLevels line or block_sizes; else
                             // Slurm's default
  bool from_levels = false;  // Slurm 23.11's BlockLevels= gave the levels; base: every
                             // block's node count (23.11 needs them equal)
  SourceLoc loc;             // where BlockSizes (or BlockLevels) was given
};

// Everything a topology file holds for nvlplace.
struct TopologyFile {
  std::string file;
  std::vector<TreeSwitch> switches;   // in file order
  std::vector<Block> blocks;          // in file order: the order aggregates them
  BlockLevels block_levels;           // given: BlockSizes / block_sizes was read
  std::vector<TextLine> annotations;  // "# nvlplace:" comment lines, in reading order
  std::vector<std::string> files;     // the files of annotations (TextLine::file): `file`,
                                      // then the files its Include lines brought in
  std::vector<std::string> notes;     // what the reader tells the user ("note: ...")
  std::string tree_topology;          // topology.yaml: the tree topology read ("" for none)
  std::string block_topology;         // topology.yaml: the block topology read ("" for none)

  // The file a line of this file's annotations is in.
  const std::string& FileOf(const TextLine& line) const {
    return line.file >= 0 && static_cast<size_t>(line.file) < files.size() ? files[line.file]
                                                                           : file;
  }
};

// Checks BlockSizes values as Slurm does and returns their levels. `locs[i]` is where value i
// was given (the same place for every value of a BlockSizes= line). Errors, at the value: more
// than limits::kMaxBlockLevels values; a value below 1; a value that is not a multiple of the
// base (the first value); a ratio to the base that is not a power of two; a level past
// limits::kMaxBlockLevels - 1. Each message says what to write instead.
absl::StatusOr<BlockLevels> CheckBlockSizes(const std::vector<int64_t>& sizes,
                                            const std::vector<SourceLoc>& locs);

// Slurm's levels without BlockSizes: 0 to 4 (1, 2, 4, 8 and 16 blocks), the base being the
// node count of the first block.
BlockLevels DefaultBlockLevels(int64_t first_block_nodes);

// The configured levels above 0 that group blocks in a file of `blocks` blocks: each up to the
// first that holds them all (a higher one would group the same blocks again).
std::vector<int> LevelsAbove(const BlockLevels& levels, size_t blocks);

// The BlockSizes nvlplace writes for `blocks` blocks of planning base size `base`: base x 2^L
// for L from 0 to the first level that holds every block (and below limits::kMaxBlockLevels).
std::vector<int64_t> BlockSizesFor(int64_t base, size_t blocks);

// The fabric tier nvlplace gives a block level when blocks are the fabric: "block" for level 0,
// "block<2^L>" above ("block2", "block4", ...); and the name of aggregated block `index` of level
// L (blocks index x 2^L to (index + 1) x 2^L - 1): "<tier>-<index>" ("block4-1").
std::string BlockLevelTier(int level);
std::string AggregatedBlockName(int level, size_t index);

// Checks blocks as Slurm would use them: each name once, each node in one block (and once),
// errors at the later block: "node 'n5' is in block 'rack1' (line 2) and in block 'rack2'; ...".
absl::Status CheckBlocks(const std::vector<Block>& blocks);

// Reads topology.conf: SwitchName= lines (topology/tree: Switches=, Nodes=, LinkSpeed=), or
// BlockName= lines (Nodes=) and one BlockSizes= line (topology/block, 24.05+) or Slurm 23.11's
// BlockLevels= line ("0-4": the levels; every block then needs the first block's node count,
// the base, and nodes), and the "# nvlplace:"
// annotations (slurm_lexer.h). "Include FILE" lines bring in the lines of FILE in their place,
// read through `includes` (ReadConfLines; without a reader an Include line is an error).
// Keys are case-insensitive. Errors are InvalidArgument "file:line: key: message", in the file
// (included or not) where the line is: an unknown key, a key given twice, a line that starts
// with none of SwitchName=, BlockName= and BlockSizes=, SwitchName= and BlockName= lines in
// one file and those it includes (Slurm reads one kind), a bad name, hostlist or number,
// BlockSizes given twice or breaking Slurm's rules (CheckBlockSizes), and ReadConfLines's.
// Names expanded are charged to `budget`.
absl::StatusOr<TopologyFile> ReadTopologyConf(absl::string_view text, const std::string& file,
                                              NameBudget* budget,
                                              const IncludeFiles& includes = {});

// Reads topology.yaml (Slurm 25.05+): a list of topologies, each a mapping of `topology: NAME`,
// an optional `cluster_default: BOOL` and exactly one of `tree: {switches: [{switch, children,
// nodes}]}`, `block: {block_sizes: [...], blocks: [{block, nodes}]}`, `flat`, `ring` and
// `torus3d` (the last three hold nothing nvlplace models: ring and torus3d are named in a note).
// The tree topology gives the switches, the block topology the blocks and BlockSizes. When the
// file has two topologies of one kind, `names` (--topology-name) must pick one of that kind;
// a name the file does not have, or two names of one kind, is an error listing the file's
// topologies. Strict as every nvlplace YAML reader (yaml_reader.h): unknown and duplicated
// keys, wrong types, limits::kMaxYamlNodes and kMaxYamlDepth; errors read
// "file:line:col: #/1/block/blocks/3/nodes: message". "# nvlplace:" comment lines are
// annotations, as in topology.conf. Names expanded are charged to `budget`.
absl::StatusOr<TopologyFile> ReadTopologyYaml(absl::string_view text, const std::string& file,
                                              const std::vector<std::string>& names,
                                              NameBudget* budget);

}  // namespace nvlplace::slurm

#endif  // NVLPLACE_PLACEMENT_FORMATS_SLURM_TOPOLOGY_H_
