// Reads Slurm's topology.yaml (25.05+): picks its tree and block topologies and reads them.
// What Slurm accepts is its data_parser's (src/plugins/data_parser/v0.0.44/parsers.c in
// 25.11, v0.0.45 in 26.05: PARSE_FUNC(TOPOLOGY_CONF_ARRAY) and the functions after it) over
// the values its YAML serializer makes (src/plugins/serializer/yaml: every scalar a string,
// converted as src/common/data.c converts strings); configs/FORMAT.md lists it.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/formats/slurm_lexer.h"
#include "placement/formats/slurm_topology.h"
#include "placement/formats/yaml_reader.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"

namespace nvlplace::slurm {
namespace {

using yaml::ForEach;
using yaml::MapReader;
using yaml::ReadString;
using yaml::Where;

// The kinds of topology a topology.yaml entry may be, as Slurm's data_parser names them.
constexpr absl::string_view kKinds[] = {"block", "flat", "ring", "torus3d", "tree"};

// One entry of the list: its name, its kind and the value under the kind's key.
struct Entry {
  std::string name;
  std::string kind;
  Where where;  // the entry
  Where body;   // the value of its kind's key
};

// A boolean as Slurm reads one (data.c _convert_data_bool): y, yes, t, true, on; n, no, f,
// false, off; in any case.
absl::StatusOr<bool> ReadSlurmBool(const Where& w) {
  if (!w.node.IsScalar()) return w.Error("expected true or false");
  const std::string v = absl::AsciiStrToLower(w.node.Scalar());
  if (v == "true" || v == "yes" || v == "on" || v == "t" || v == "y") return true;
  if (v == "false" || v == "no" || v == "off" || v == "f" || v == "n") return false;
  return w.Error(absl::StrCat("expected true or false (Slurm also reads yes, no, on, off, y, n, t ",
                              "and f, in any case), not '", Printable(w.node.Scalar()), "'"));
}

// A block size as Slurm reads one (data.c _convert_data_int, then PARSE_FUNC(INT32)): decimal
// digits only (leading zeros allowed, no sign), or 0x and hex digits; at most INT32_MAX.
absl::StatusOr<int64_t> ReadBlockSize(const Where& w) {
  constexpr absl::string_view kWrite = "write whole numbers of nodes, e.g. block_sizes: [18, 36]";
  if (!w.node.IsScalar()) return w.Error(absl::StrCat("expected a number of nodes; ", kWrite));
  absl::string_view v = w.node.Scalar();
  const bool hex = v.size() >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  absl::string_view digits = hex ? v.substr(2) : v;
  const bool ok = !digits.empty() && std::all_of(digits.begin(), digits.end(), [&](char c) {
    return hex ? absl::ascii_isxdigit(c) : absl::ascii_isdigit(c);
  });
  if (!ok) {
    return w.Error(absl::StrCat(
        "'", Printable(v), "' is not a whole number",
        absl::StrContains(v, ',') ? " but several in one value, which Slurm does not split" : "",
        "; ", kWrite));
  }
  int64_t value = 0;
  for (char c : digits) {
    value = value * (hex ? 16 : 10) +
            (absl::ascii_isdigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10);
    if (value > INT32_MAX) {
      return w.Error(absl::StrCat("'", Printable(v), "' is more than ", INT32_MAX,
                                  ", which Slurm refuses; ", kWrite));
    }
  }
  return value;
}

// Runs f for each item of a list, or for `w` itself when it is a mapping: Slurm reads one
// switch or block written as a mapping as a list of it (PARSE_FUNC(TOPOLOGY_TREE_CONFIG_ARRAY)
// and PARSE_FUNC(TOPOLOGY_BLOCK_CONFIG_ARRAY)).
template <typename F>
absl::Status ForEachItem(const Where& w, absl::string_view what, F f) {
  if (w.node.IsMap()) {
    NVL_RETURN_IF_ERROR(w.Visit());
    return f(w);
  }
  if (!w.node.IsSequence()) {
    return w.Error(absl::StrCat("expected a list of ", what, ", or one as a mapping"));
  }
  return ForEach(w, f);
}

absl::StatusOr<std::string> ReadName(const Where& w, absl::string_view what) {
  NVL_ASSIGN_OR_RETURN(std::string name, ReadString(w));
  if (name.empty()) return w.Error(absl::StrCat("a ", what, " needs a name"));
  absl::Status ok = CheckSlurmName(name, what);
  if (!ok.ok()) return w.Error(ok.message());
  return name;
}

// A hostlist, counted against the names budget before it is read.
absl::StatusOr<HostNames> ReadHostlist(const Where& w, NameBudget* budget) {
  NVL_ASSIGN_OR_RETURN(std::string expr, ReadString(w));
  if (absl::Status ok = CheckSlurmList(expr); !ok.ok()) return w.Error(ok.message());
  absl::StatusOr<size_t> count = CountHostlist(expr);
  if (!count.ok()) return w.Error(count.status().message());
  if (absl::Status charged = ChargeNames(*count, budget); !charged.ok()) {
    return w.Error(charged.message());
  }
  absl::StatusOr<HostNames> names = ParseHostlist(expr);
  if (!names.ok()) return w.Error(names.status().message());
  return names;
}

// Whether the value of kind `kind` selects that kind, as Slurm's PARSE_FUNC(TOPOLOGY_TREE)
// and the others decide: block, ring, torus3d and tree must be mappings and select their kind
// when not empty (`tree: {}` beside `block:` is nothing); flat is a boolean (`flat: false`
// is nothing) or, from 26.05, a mapping of its options, which selects it.
absl::StatusOr<bool> Selects(absl::string_view kind, const Where& body) {
  if (kind == "flat") {
    if (!body.node.IsMap()) return ReadSlurmBool(body);
    NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(body, {"alpha_step_rank"}));
    if (const Where* a = m.Find("alpha_step_rank")) NVL_RETURN_IF_ERROR(ReadSlurmBool(*a).status());
    return true;
  }
  if (!body.node.IsMap()) {
    return body.Error(absl::StrCat("expected a mapping: ", kind, ": {...}; Slurm refuses ",
                                   body.node.IsSequence() ? "a list" : "a single value", " here"));
  }
  return body.node.size() > 0;
}

absl::StatusOr<Entry> ReadEntry(const Where& w) {
  std::vector<absl::string_view> keys = {"topology", "cluster_default"};
  keys.insert(keys.end(), std::begin(kKinds), std::end(kKinds));
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(w, keys));
  Entry e{"", "", w, w};
  NVL_ASSIGN_OR_RETURN(const Where* name, m.Require("topology"));
  NVL_ASSIGN_OR_RETURN(e.name, ReadName(*name, "topology"));
  if (const Where* d = m.Find("cluster_default")) NVL_RETURN_IF_ERROR(ReadSlurmBool(*d).status());
  std::vector<std::string> idle;  // kinds given that select nothing
  for (absl::string_view kind : kKinds) {
    const Where* body = m.Find(kind);
    if (body == nullptr) continue;
    NVL_ASSIGN_OR_RETURN(bool selects, Selects(kind, *body));
    if (!selects) {
      idle.push_back(kind == "flat" ? "flat: false" : absl::StrCat(kind, ": {}"));
      continue;
    }
    if (!e.kind.empty()) {
      return body->Error(absl::StrCat("topology '", e.name, "' is both ", e.kind, " and ", kind,
                                      "; a topology has one kind: write two topologies"));
    }
    e.kind = std::string(kind);
    e.body = *body;
  }
  if (e.kind.empty()) {
    return w.Error(absl::StrCat(
        "topology '", e.name, "' needs one of ", absl::StrJoin(kKinds, ", "),
        idle.empty()
            ? ""
            : absl::StrCat(" (Slurm reads ", absl::StrJoin(idle, " and "), " as none of them)")));
  }
  return e;
}

absl::Status ReadTree(const Entry& e, NameBudget* budget, TopologyFile* out) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(e.body, {"switches"}));
  NVL_ASSIGN_OR_RETURN(const Where* switches, m.Require("switches"));
  return ForEachItem(*switches, "switches", [&](const Where& item) -> absl::Status {
    NVL_ASSIGN_OR_RETURN(MapReader s, MapReader::Make(item, {"switch", "children", "nodes"}));
    TreeSwitch sw;
    sw.loc = item.Loc();
    sw.seq = sw.loc.line;
    sw.nodes_loc = sw.loc;
    sw.children_loc = sw.loc;
    NVL_ASSIGN_OR_RETURN(const Where* name, s.Require("switch"));
    NVL_ASSIGN_OR_RETURN(sw.name, ReadName(*name, "switch"));
    if (const Where* nodes = s.Find("nodes")) {
      sw.nodes_loc = nodes->Loc();
      NVL_ASSIGN_OR_RETURN(sw.nodes, ReadHostlist(*nodes, budget));
    }
    if (const Where* children = s.Find("children")) {
      sw.children_loc = children->Loc();
      NVL_ASSIGN_OR_RETURN(HostNames children_names, ReadHostlist(*children, budget));
      sw.children = children_names.Expand();
    }
    out->switches.push_back(std::move(sw));
    return absl::OkStatus();
  });
}

// block_sizes: a list, or one value, which Slurm's list parser reads as a list of it
// (data_parser parsing.c _parse_list: "Assume List is just a single entry").
absl::Status ReadBlockSizes(const Where& w, TopologyFile* out) {
  std::vector<int64_t> sizes;
  std::vector<SourceLoc> locs;
  if (w.node.IsScalar()) {
    NVL_ASSIGN_OR_RETURN(int64_t size, ReadBlockSize(w));
    sizes.push_back(size);
    locs.push_back(w.Loc());
  } else {
    if (!w.node.IsSequence()) {
      return w.Error("expected a list of block sizes, e.g. [18, 36, 72], or one size");
    }
    if (w.node.size() > static_cast<size_t>(limits::kMaxBlockLevels)) {
      return w.Error(absl::StrCat(w.node.size(), " block sizes; Slurm plans at most ",
                                  limits::kMaxBlockLevels, " levels"));
    }
    NVL_RETURN_IF_ERROR(ForEach(w, [&](const Where& item) -> absl::Status {
      NVL_ASSIGN_OR_RETURN(int64_t size, ReadBlockSize(item));
      sizes.push_back(size);
      locs.push_back(item.Loc());
      return absl::OkStatus();
    }));
  }
  if (sizes.empty()) locs.push_back(w.Loc());
  NVL_ASSIGN_OR_RETURN(out->block_levels, CheckBlockSizes(sizes, locs));
  return absl::OkStatus();
}

absl::Status ReadBlock(const Entry& e, NameBudget* budget, TopologyFile* out) {
  NVL_ASSIGN_OR_RETURN(MapReader m, MapReader::Make(e.body, {"block_sizes", "blocks"}));
  if (const Where* sizes = m.Find("block_sizes")) NVL_RETURN_IF_ERROR(ReadBlockSizes(*sizes, out));
  NVL_ASSIGN_OR_RETURN(const Where* blocks, m.Require("blocks"));
  NVL_RETURN_IF_ERROR(ForEachItem(*blocks, "blocks", [&](const Where& item) -> absl::Status {
    NVL_ASSIGN_OR_RETURN(MapReader b, MapReader::Make(item, {"block", "nodes"}));
    Block block;
    block.loc = item.Loc();
    block.nodes_loc = block.loc;
    NVL_ASSIGN_OR_RETURN(const Where* name, b.Require("block"));
    NVL_ASSIGN_OR_RETURN(block.name, ReadName(*name, "block"));
    if (const Where* nodes = b.Find("nodes")) {
      block.nodes_loc = nodes->Loc();
      NVL_ASSIGN_OR_RETURN(block.nodes, ReadHostlist(*nodes, budget));
    }
    out->blocks.push_back(std::move(block));
    return absl::OkStatus();
  }));
  return CheckBlocks(out->blocks);
}

// "fabric (tree, line 3), nvl (block, line 9)": the topologies, for messages.
std::string Listed(const std::vector<Entry>& entries) {
  return absl::StrJoin(entries, ", ", [](std::string* out, const Entry& e) {
    absl::StrAppend(out, e.name, " (", e.kind, ", line ", e.where.Loc().line, ")");
  });
}

// The topology of `kind` to read: the one `names` picks, else the only one; nullptr for none.
absl::StatusOr<const Entry*> Pick(const std::vector<Entry>& entries, absl::string_view kind,
                                  const std::vector<std::string>& names) {
  const Entry* picked = nullptr;
  for (const std::string& name : names) {
    for (const Entry& e : entries) {
      if (e.name != name || e.kind != kind) continue;
      if (picked != nullptr) {
        return e.where.Error(absl::StrCat("--topology-name picks two ", kind, " topologies, '",
                                          picked->name, "' and '", e.name,
                                          "'; give one name per kind"));
      }
      picked = &e;
    }
  }
  if (picked != nullptr) return picked;
  std::vector<const Entry*> of_kind;
  for (const Entry& e : entries) {
    if (e.kind == kind) of_kind.push_back(&e);
  }
  if (of_kind.size() <= 1) return of_kind.empty() ? nullptr : of_kind[0];
  std::vector<std::string> listed;
  listed.reserve(of_kind.size());
  for (const Entry* e : of_kind) listed.push_back(e->name);
  return of_kind[1]->where.Error(absl::StrCat(
      "two ", kind, " topologies, '", of_kind[0]->name, "' (line ", of_kind[0]->where.Loc().line,
      ") and '", of_kind[1]->name, "'; give --topology-name with the one to import (", kind,
      " topologies here: ", absl::StrJoin(listed, ", "), ")"));
}

absl::StatusOr<TopologyFile> Read(absl::string_view text, const std::string& file,
                                  const std::vector<std::string>& names, NameBudget* budget) {
  absl::StatusOr<yaml::Document> doc = yaml::LoadYaml(text, file);
  if (!doc.ok() && absl::StrContains(doc.status().message(), ": bad YAML: ")) {
    return absl::Status(doc.status().code(),
                        absl::StrCat(doc.status().message(),
                                     "; topology.yaml is YAML: check the brackets, quotes and "
                                     "indentation here and on the lines above"));
  }
  if (!doc.ok()) return doc.status();
  if (yaml::Position alias = doc->FirstAlias(); !alias.is_null()) {
    return absl::InvalidArgumentError(
        FormatAt(SourceLoc{file, alias.line + 1, alias.column + 1, ""},
                 "an alias (*name), which Slurm's YAML parser refuses (\"does not support "
                 "aliases\"); write the value out in full"));
  }
  yaml::Budget visits;
  Where top{&file, doc->root(), "#", &visits};
  if (top.node.IsNull()) {
    return absl::InvalidArgumentError(
        FormatAt(SourceLoc{file, 1, 1, "#"},
                 "the file is empty; topology.yaml is a list of topologies, e.g. - topology: nvl"));
  }
  // A single topology may be written as a mapping, not in a list (PARSE_FUNC(
  // TOPOLOGY_CONF_ARRAY): "single topology configuration").
  if (!top.node.IsSequence() && !top.node.IsMap()) {
    return top.Error(
        absl::StrCat("expected a list of topologies, each `- topology: NAME` with one "
                     "of ",
                     absl::StrJoin(kKinds, ", "), ", or one topology as a mapping"));
  }
  std::vector<Entry> entries;
  NVL_RETURN_IF_ERROR(ForEachItem(top, "topologies", [&](const Where& item) -> absl::Status {
    NVL_ASSIGN_OR_RETURN(Entry e, ReadEntry(item));
    for (const Entry& other : entries) {
      if (other.name == e.name) {
        return item.Error(absl::StrCat("topology '", e.name, "' is defined twice (first on line ",
                                       other.where.Loc().line, ")"));
      }
    }
    entries.push_back(std::move(e));
    return absl::OkStatus();
  }));
  for (const std::string& name : names) {
    bool found = false;
    for (const Entry& e : entries) found = found || e.name == name;
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": --topology-name ", Printable(name),
                                                     ": no such topology; the file has ",
                                                     Listed(entries)));
    }
  }
  TopologyFile out;
  out.file = file;
  out.annotations = SplitConf(text).annotations;
  out.files = {file};
  NVL_ASSIGN_OR_RETURN(const Entry* tree, Pick(entries, "tree", names));
  NVL_ASSIGN_OR_RETURN(const Entry* block, Pick(entries, "block", names));
  for (const Entry& e : entries) {
    bool named = false;
    for (const std::string& name : names) named = named || e.name == name;
    if (e.kind == "ring" || e.kind == "torus3d") {
      out.notes.push_back(absl::StrCat("note: ", file, ": topology '", e.name, "' (", e.kind,
                                       ") is not imported: nvlplace reads tree and block "
                                       "topologies"));
    }
    if (named && e.kind != "tree" && e.kind != "block") {
      return e.where.Error(absl::StrCat("--topology-name ", e.name, " names a ", e.kind,
                                        " topology, which holds no switches or blocks; name a "
                                        "tree or block topology (",
                                        Listed(entries), ")"));
    }
  }
  if (tree != nullptr) {
    out.tree_topology = tree->name;
    NVL_RETURN_IF_ERROR(ReadTree(*tree, budget, &out));
  }
  if (block != nullptr) {
    out.block_topology = block->name;
    NVL_RETURN_IF_ERROR(ReadBlock(*block, budget, &out));
  }
  if (tree == nullptr && block == nullptr) {
    return top.Error(absl::StrCat("no tree or block topology to import; the file has ",
                                  entries.empty() ? "no topology" : Listed(entries)));
  }
  return out;
}

}  // namespace

absl::StatusOr<TopologyFile> ReadTopologyYaml(absl::string_view text, const std::string& file,
                                              const std::vector<std::string>& names,
                                              NameBudget* budget) {
  try {
    return Read(text, file, names, budget);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(file, ": out of memory while reading"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": cannot read: ", e.what()));
  }
}

}  // namespace nvlplace::slurm
