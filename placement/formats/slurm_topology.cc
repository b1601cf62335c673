// Reads topology.conf as written (tree switches or blocks) and checks Slurm's BlockSizes rules.
#include "placement/formats/slurm_topology.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"

namespace nvlplace::slurm {
namespace {

absl::Status ErrorAt(const SourceLoc& loc, absl::string_view message) {
  return absl::InvalidArgumentError(FormatAt(loc, message));
}

// "18,36,72,144": the base and three levels above it, as an example of what to write.
std::string ExampleSizes(int64_t base) {
  std::vector<int64_t> sizes(4);
  for (int level = 0; level < 4; ++level) sizes[level] = base << level;
  return absl::StrJoin(sizes, ",");
}

// The shortest text of a limit ("1000000", not "1e+06").
std::string LimitText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

}  // namespace

// ---- block levels -------------------------------------------------------------------------

absl::StatusOr<BlockLevels> CheckBlockSizes(const std::vector<int64_t>& sizes,
                                            const std::vector<SourceLoc>& locs) {
  BlockLevels out;
  out.given = true;
  if (!locs.empty()) out.loc = locs[0];
  if (sizes.empty()) {
    return ErrorAt(out.loc,
                   "BlockSizes lists no size; give the planning base size (the nodes of one "
                   "block) first, then the larger sizes, e.g. 18,36,72,144");
  }
  if (sizes.size() > static_cast<size_t>(limits::kMaxBlockLevels)) {
    return ErrorAt(
        locs[limits::kMaxBlockLevels],
        absl::StrCat("more than ", limits::kMaxBlockLevels, " block sizes; Slurm plans at most ",
                     limits::kMaxBlockLevels, " levels (the base size times 1, 2, 4, ... ",
                     1 << (limits::kMaxBlockLevels - 1), ")"));
  }
  std::vector<bool> seen(limits::kMaxBlockLevels, false);
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t size = sizes[i];
    if (size < 1 || size > static_cast<int64_t>(limits::kMaxHosts)) {
      return ErrorAt(locs[i],
                     absl::StrCat(size,
                                  " is not a block size: a size is a number of "
                                  "nodes from 1 to ",
                                  limits::kMaxHosts, ", the first the planning base size"));
    }
    if (i == 0) out.base = size;
    if (size % out.base != 0) {
      return ErrorAt(locs[i],
                     absl::StrCat(size, " is not a multiple of the planning base size ", out.base,
                                  " (the first size); each size is the base times a "
                                  "power of two, e.g. ",
                                  ExampleSizes(out.base)));
    }
    int64_t ratio = size / out.base;
    if ((ratio & (ratio - 1)) != 0) {
      return ErrorAt(locs[i],
                     absl::StrCat(size, " is ", ratio, " times the planning base size ", out.base,
                                  ", not a power of two times it; each size is the base "
                                  "times 1, 2, 4, 8, ..., e.g. ",
                                  ExampleSizes(out.base)));
    }
    int level = 0;
    while ((int64_t{1} << level) < ratio) ++level;
    if (level >= limits::kMaxBlockLevels) {
      return ErrorAt(locs[i], absl::StrCat(size, " is ", ratio, " times the planning base size ",
                                           out.base, "; Slurm plans at most ",
                                           limits::kMaxBlockLevels, " levels (up to ",
                                           1 << (limits::kMaxBlockLevels - 1), " times it)"));
    }
    seen[level] = true;
  }
  for (int level = 0; level < limits::kMaxBlockLevels; ++level) {
    if (seen[level]) out.levels.push_back(level);
  }
  return out;
}

BlockLevels DefaultBlockLevels(int64_t first_block_nodes) {
  BlockLevels out;
  out.base = first_block_nodes;
  out.levels = {0, 1, 2, 3, 4};
  return out;
}

std::vector<int> LevelsAbove(const BlockLevels& levels, size_t blocks) {
  std::vector<int> out;
  int last = 0;  // the highest level taken
  for (int level : levels.levels) {
    if ((size_t{1} << last) >= blocks) break;
    if (level == 0) continue;
    out.push_back(level);
    last = level;
  }
  return out;
}

std::vector<int64_t> BlockSizesFor(int64_t base, size_t blocks) {
  std::vector<int64_t> out = {base};
  for (int level = 1; level < limits::kMaxBlockLevels && (size_t{1} << (level - 1)) < blocks;
       ++level) {
    out.push_back(base << level);
  }
  return out;
}

std::string BlockLevelTier(int level) {
  return level == 0 ? "block" : absl::StrCat("block", int64_t{1} << level);
}

std::string AggregatedBlockName(int level, size_t index) {
  return absl::StrCat(BlockLevelTier(level), "-", index);
}

// ---- topology.conf ------------------------------------------------------------------------

namespace {

absl::Status ReadSwitchLine(const std::vector<std::string>& words, const TextLine& line,
                            const std::string& file, NameBudget* budget, TopologyFile* out) {
  NVL_ASSIGN_OR_RETURN(
      Fields f, ParseFields(words, file, line.line,
                            {"SwitchName", "Switches", "Nodes", "LinkSpeed"}, "topology.conf"));
  if (f.values[0].first != "SwitchName") {
    return f.Error(f.values[0].first,
                   "a line must start with SwitchName= (topology/tree), or with BlockName=, "
                   "BlockSizes= or BlockLevels= (topology/block)");
  }
  TreeSwitch sw;
  sw.name = f.values[0].second;
  if (sw.name.empty()) return f.Error("SwitchName", "a switch needs a name");
  NVL_RETURN_IF_ERROR(GetName(f, "SwitchName", "switch name").status());
  sw.loc = At(file, line.line, "SwitchName");
  sw.seq = line.seq;
  sw.nodes_loc = At(file, line.line, "Nodes");
  sw.children_loc = At(file, line.line, "Switches");
  NVL_RETURN_IF_ERROR(GetHostlist(f, "Nodes", budget, &sw.nodes));
  NVL_RETURN_IF_ERROR(GetHostlist(f, "Switches", budget, &sw.children));
  if (const std::string* speed = f.Find("LinkSpeed"); speed != nullptr) {
    // Slurm reads LinkSpeed as an unsigned integer (S_P_UINT32): 12.5 would not load.
    if (speed->empty() ||
        !std::all_of(speed->begin(), speed->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return f.Error("LinkSpeed", absl::StrCat("'", Printable(*speed),
                                               "' is not a whole number; Slurm reads LinkSpeed "
                                               "as an unsigned integer: write e.g. LinkSpeed=400"));
    }
    NVL_RETURN_IF_ERROR(
        GetBounded(f, "LinkSpeed", 0, true, limits::kMaxBandwidth,
                   absl::StrCat("a positive number of Gb/s up to ",
                                LimitText(limits::kMaxBandwidth), " (LinkSpeed is read as Gb/s)"),
                   &sw.link_gbps));
  }
  out->switches.push_back(std::move(sw));
  return absl::OkStatus();
}

absl::Status ReadBlockLine(const std::vector<std::string>& words, const TextLine& line,
                           const std::string& file, NameBudget* budget, TopologyFile* out) {
  NVL_ASSIGN_OR_RETURN(
      Fields f, ParseFields(words, file, line.line, {"BlockName", "Nodes"}, "topology.conf block"));
  Block block;
  block.name = f.values[0].second;
  if (block.name.empty()) return f.Error("BlockName", "a block needs a name");
  NVL_RETURN_IF_ERROR(GetName(f, "BlockName", "block name").status());
  block.loc = At(file, line.line, "BlockName");
  block.nodes_loc = At(file, line.line, "Nodes");
  NVL_RETURN_IF_ERROR(GetHostlist(f, "Nodes", budget, &block.nodes));
  out->blocks.push_back(std::move(block));
  return absl::OkStatus();
}

absl::Status ReadBlockSizesLine(const std::vector<std::string>& words, const TextLine& line,
                                const std::string& file, TopologyFile* out) {
  NVL_ASSIGN_OR_RETURN(Fields f,
                       ParseFields(words, file, line.line, {"BlockSizes"}, "topology.conf"));
  SourceLoc loc = At(file, line.line, "BlockSizes");
  if (out->block_levels.given) {
    return ErrorAt(loc, absl::StrCat(out->block_levels.from_levels ? "BlockLevels is given too (on "
                                                                   : "given twice (first on ",
                                     LineRef(out->block_levels.loc, file),
                                     "); give one BlockSizes line (Slurm 23.11 reads only "
                                     "BlockLevels=, 24.05 and later only BlockSizes=)"));
  }
  const std::string& value = *f.Find("BlockSizes");
  // Counted before anything is allocated for them.
  if (static_cast<size_t>(std::count(value.begin(), value.end(), ',')) >=
      static_cast<size_t>(limits::kMaxBlockLevels)) {
    return ErrorAt(loc, absl::StrCat("more than ", limits::kMaxBlockLevels,
                                     " block sizes; Slurm plans at most ", limits::kMaxBlockLevels,
                                     " levels"));
  }
  std::vector<int64_t> sizes;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(item, &size)) {
      return ErrorAt(loc, absl::StrCat("'", Printable(item),
                                       "' is not a whole number of nodes; BlockSizes lists "
                                       "node counts, the planning base size first, e.g. "
                                       "BlockSizes=18,36,72,144"));
    }
    sizes.push_back(size);
  }
  NVL_ASSIGN_OR_RETURN(out->block_levels,
                       CheckBlockSizes(sizes, std::vector<SourceLoc>(sizes.size(), loc)));
  return absl::OkStatus();
}

// Slurm 23.11's BlockLevels= (before BlockSizes replaced it in 24.05): the levels themselves,
// as a bitmap list ("0-2,4"; level L groups 2^L blocks). The base, every block's node count,
// is set once the blocks are read (CheckLevelBlocks).
absl::Status ReadBlockLevelsLine(const std::vector<std::string>& words, const TextLine& line,
                                 const std::string& file, TopologyFile* out) {
  NVL_ASSIGN_OR_RETURN(Fields f,
                       ParseFields(words, file, line.line, {"BlockLevels"}, "topology.conf"));
  SourceLoc loc = At(file, line.line, "BlockLevels");
  if (out->block_levels.given) {
    return ErrorAt(loc, absl::StrCat("BlockSizes or BlockLevels is given twice (first on ",
                                     LineRef(out->block_levels.loc, file),
                                     "); give one: BlockSizes= from Slurm 24.05 on, "
                                     "BlockLevels= for 23.11"));
  }
  std::vector<bool> seen(limits::kMaxBlockLevels, false);
  seen[0] = true;  // level 0, the block itself, is always planned
  for (absl::string_view item : absl::StrSplit(*f.Find("BlockLevels"), ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    int from = 0, to = 0;
    bool ok = absl::SimpleAtoi(ends[0], &from) && !ends[0].empty() &&
              absl::ascii_isdigit(ends[0][0]) && absl::SimpleAtoi(ends.back(), &to) &&
              absl::ascii_isdigit(ends.back()[0]);
    if (!ok || from > to || to >= limits::kMaxBlockLevels) {
      return ErrorAt(loc, absl::StrCat("'", Printable(item),
                                       "' is not a level or a range of "
                                       "levels from 0 to ",
                                       limits::kMaxBlockLevels - 1,
                                       "; level L groups 2^L blocks: write e.g. BlockLevels=0-4"));
    }
    for (int level = from; level <= to; ++level) seen[level] = true;
  }
  out->block_levels.given = true;
  out->block_levels.from_levels = true;
  out->block_levels.loc = loc;
  for (int level = 0; level < limits::kMaxBlockLevels; ++level) {
    if (seen[level]) out->block_levels.levels.push_back(level);
  }
  return absl::OkStatus();
}

// Slurm 23.11 (BlockLevels=) plans with every block at the first block's node count and
// refuses a block without nodes or of another count: the base is that count.
absl::Status CheckLevelBlocks(TopologyFile* out) {
  const SourceLoc& at = out->block_levels.loc;
  if (out->blocks.empty()) {
    return ErrorAt(at, "BlockLevels without BlockName= lines; give the blocks");
  }
  const Block& first = out->blocks.front();
  for (const Block& b : out->blocks) {
    if (b.nodes.empty()) {
      return ErrorAt(
          b.loc,
          absl::StrCat("block '", b.name, "' has no nodes, which Slurm 23.11 (BlockLevels=, ",
                       LineRef(at, b.loc.file), ") refuses; give its Nodes=, or remove the block"));
    }
    if (b.nodes.size() != first.nodes.size()) {
      return ErrorAt(
          b.loc,
          absl::StrCat("block '", b.name, "' has ", b.nodes.size(), " nodes and block '",
                       first.name, "' (", LineRef(first.loc, b.loc.file), ") ", first.nodes.size(),
                       "; Slurm 23.11 (BlockLevels=, ", LineRef(at, b.loc.file),
                       ") needs every block to have the first block's node count: make "
                       "them equal, or write BlockSizes= for Slurm 24.05 and later"));
    }
  }
  out->block_levels.base = static_cast<int64_t>(first.nodes.size());
  return absl::OkStatus();
}

// The key of a line's first word, as written ("" when it has none).
absl::string_view FirstKey(const std::vector<std::string>& words) {
  if (words.empty()) return "";
  absl::string_view w = words[0];
  return w.substr(0, w.find('='));
}

}  // namespace

absl::Status CheckBlocks(const std::vector<Block>& blocks) {
  absl::flat_hash_map<absl::string_view, const Block*> names;
  absl::flat_hash_map<std::string, const Block*> node_block;  // names are read from runs
  for (const Block& b : blocks) {
    // Slurm lists blocks as hostlists (aggregated blocks are named "rack[1-2]", partitions say
    // "block{rack1}"), and so does nvlplace when blocks are the fabric.
    absl::StatusOr<std::vector<std::string>> alone = ExpandHostlist(b.name);
    if (!alone.ok() || alone->size() != 1 || (*alone)[0] != b.name) {
      return ErrorAt(b.loc, absl::StrCat("block name '", Printable(b.name),
                                         "' is not a name a hostlist can hold (Slurm lists "
                                         "blocks as hostlists); use letters, digits, '-', '_' "
                                         "and '.'"));
    }
    auto [first, inserted] = names.emplace(b.name, &b);
    if (!inserted) {
      return ErrorAt(b.loc, absl::StrCat("block '", b.name, "' is defined twice (first on ",
                                         LineRef(first->second->loc, b.loc.file), ")"));
    }
    for (const std::string& node : b.nodes) {
      auto [other, fresh] = node_block.emplace(node, &b);
      if (fresh) continue;
      if (other->second == &b) {
        return ErrorAt(b.nodes_loc, absl::StrCat("block '", b.name, "' lists node '", node,
                                                 "' twice; list each node once"));
      }
      return ErrorAt(
          b.nodes_loc,
          absl::StrCat("node '", node, "' is in block '", other->second->name, "' (",
                       LineRef(other->second->loc, b.nodes_loc.file), ") and in block '", b.name,
                       "'; a node belongs to one block: remove it from one of them"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TopologyFile> ReadTopologyConf(absl::string_view text, const std::string& file,
                                              NameBudget* budget, const IncludeFiles& includes) {
  TopologyFile out;
  out.file = file;
  NVL_ASSIGN_OR_RETURN(SplitText split, ReadConfLines(text, file, includes));
  out.annotations = std::move(split.annotations);
  // The first SwitchName= line and the first block line, in reading order (nullptr: none).
  const TextLine* first_switch = nullptr;
  const TextLine* first_block = nullptr;
  for (const TextLine& line : split.lines) {
    const std::string& here = split.files[line.file];
    NVL_ASSIGN_OR_RETURN(std::vector<std::string> words, Words(line.text, here, line.line));
    absl::string_view key = FirstKey(words);
    bool block = absl::EqualsIgnoreCase(key, "BlockName");
    bool sizes = absl::EqualsIgnoreCase(key, "BlockSizes");
    bool levels = absl::EqualsIgnoreCase(key, "BlockLevels");
    if (block) {
      NVL_RETURN_IF_ERROR(ReadBlockLine(words, line, here, budget, &out));
    } else if (sizes) {
      NVL_RETURN_IF_ERROR(ReadBlockSizesLine(words, line, here, &out));
    } else if (levels) {
      NVL_RETURN_IF_ERROR(ReadBlockLevelsLine(words, line, here, &out));
      sizes = true;  // a block line, for the check below
    } else {
      NVL_RETURN_IF_ERROR(ReadSwitchLine(words, line, here, budget, &out));
    }
    const TextLine*& first = block || sizes ? first_block : first_switch;
    if (first == nullptr) first = &line;
    if (first_switch != nullptr && first_block != nullptr) {
      bool tree_first = first_switch->seq < first_block->seq;
      auto ref = [&](const TextLine* l) {
        return LineRef(SourceLoc{split.files[l->file], l->line, 0, ""}, here);
      };
      return LineError(
          here, line.line,
          block    ? "BlockName"
          : levels ? "BlockLevels"
          : sizes  ? "BlockSizes"
                   : "SwitchName",
          absl::StrCat("this file has SwitchName= lines (topology/tree, ", ref(first_switch),
                       ") and BlockName= or BlockSizes= lines (topology/block, ", ref(first_block),
                       "); Slurm reads one kind per topology.conf: import the ",
                       tree_first ? "block" : "tree",
                       " lines as a file of their own, or write both topologies in a topology.yaml "
                       "(Slurm 25.05+, --topology-yaml)"));
    }
  }
  out.files = std::move(split.files);
  NVL_RETURN_IF_ERROR(CheckBlocks(out.blocks));
  if (out.block_levels.from_levels) NVL_RETURN_IF_ERROR(CheckLevelBlocks(&out));
  return out;
}

}  // namespace nvlplace::slurm
