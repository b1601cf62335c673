// A job's placement request: validation and defaults.
#include "placement/model/request.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"

namespace nvlplace {
namespace {

absl::Status Bad(absl::string_view message) { return absl::InvalidArgumentError(message); }

absl::Status MarkNodes(const std::string& expr, const Topology& topo, const char* what, bool value,
                       std::vector<uint8_t>* allowed) {
  absl::StatusOr<HostNames> names = ParseHostlist(expr);  // read one at a time
  if (!names.ok()) return Bad(absl::StrCat(what, ": ", names.status().message()));
  Topology::RunHint hint;
  for (auto name = names->begin(); name != names->end(); ++name) {
    NodeId n = topo.FindNode(name, &hint);
    if (n < 0) {
      return Bad(
          absl::StrCat(what, ": node ", QuoteUserText(*name), " is not in cluster ", topo.name()));
    }
    (*allowed)[n] = value;
  }
  return absl::OkStatus();
}

// One size of a RequestSpec and its bound.
struct SizeBound {
  const char* name;  // as the message shows it: "tp", "gpus-per-node"
  int value;
  int64_t max;
  const char* what;  // "the largest TP size"
};

// The sizes of a request, resolved and checked without a topology. Every product is
// computed in 64 bits from values already bounded, so none overflows; every divisor is
// at least 1.
absl::Status ResolveSizes(const RequestSpec& spec, Request* r) {
  for (const SizeBound& b : {
           SizeBound{"gpus", spec.gpus, limits::kMaxJobGpus, "the most GPUs of one job"},
           SizeBound{"nodes", spec.nodes, limits::kMaxJobNodes, "the most nodes of one job"},
           SizeBound{"gpus-per-node", spec.gpus_per_node, limits::kMaxGpusPerNode,
                     "the most GPUs of one node"},
           SizeBound{"tp", spec.tp, limits::kMaxGroupSize, "the largest TP size"},
           SizeBound{"pp", spec.pp, limits::kMaxGroupSize, "the largest PP size"},
           SizeBound{"dp", spec.dp, limits::kMaxGroupSize, "the largest DP size"},
       }) {
    if (b.value < 0) {
      return Bad(absl::StrCat(b.name, "=", b.value, " is negative; give a size of 1 or more, ",
                              "or 0 for not given"));
    }
    if (b.value > b.max) {
      return Bad(absl::StrCat(b.name, "=", b.value, " is more than ", b.max, ", ", b.what));
    }
  }
  // From here on each size is in [0, its bound]: products of two or three fit in int64.
  int64_t gpus = spec.gpus;
  int64_t nodes = spec.nodes;
  if (spec.nodes > 0 && spec.gpus_per_node > 0) {
    int64_t product = int64_t{spec.nodes} * spec.gpus_per_node;
    if (product > limits::kMaxJobGpus) {
      return Bad(absl::StrCat("nodes x gpus-per-node = ", spec.nodes, " x ", spec.gpus_per_node,
                              " = ", product, " is more than ", limits::kMaxJobGpus,
                              ", the most GPUs of one job; lower nodes or gpus-per-node"));
    }
    if (spec.gpus > 0 && spec.gpus != product) {
      return Bad(absl::StrCat("gpus=", spec.gpus, " does not match nodes x gpus-per-node = ",
                              spec.nodes, " x ", spec.gpus_per_node, " = ", product));
    }
    gpus = product;
  } else if (spec.gpus_per_node > 0 || (spec.nodes > 0 && spec.gpus == 0)) {
    return Bad("give nodes together with gpus-per-node, or give gpus");
  }
  if (gpus == 0 && spec.tp > 0 && spec.dp > 0) {  // sizes alone define the job
    int64_t product = int64_t{spec.tp} * std::max(spec.pp, 1) * spec.dp;
    if (product > limits::kMaxJobGpus) {
      return Bad(absl::StrCat("TP x PP x DP = ", spec.tp, " x ", std::max(spec.pp, 1), " x ",
                              spec.dp, " = ", product, " is more than ", limits::kMaxJobGpus,
                              ", the most GPUs of one job; lower tp, pp or dp"));
    }
    gpus = product;
  }
  if (gpus <= 0) return Bad("the request needs a GPU count (gpus, or nodes x gpus-per-node)");
  int64_t tp = spec.tp > 0 ? spec.tp : 1;
  int64_t pp = spec.pp > 0 ? spec.pp : 1;
  int64_t tp_pp = tp * pp;  // >= 1
  if (gpus % tp_pp != 0) {  // also when TP x PP is more than the GPUs
    return Bad(
        absl::StrCat("TP x PP = ", tp, " x ", pp, " = ", tp_pp, " does not divide ", gpus, " GPUs",
                     tp_pp > gpus ? "; it is more than the GPUs requested: lower tp or pp" : ""));
  }
  // DP derived from the GPU count is at most gpus, so within kMaxJobGpus.
  int64_t dp = spec.dp > 0 ? spec.dp : gpus / tp_pp;
  if (tp_pp * dp != gpus) {
    return Bad(absl::StrCat("TP x PP x DP = ", tp, " x ", pp, " x ", dp, " = ", tp_pp * dp,
                            " is not the ", gpus, " GPUs requested"));
  }
  if (nodes > 0 && gpus % nodes != 0) {
    return Bad(absl::StrCat(gpus, " GPUs do not split evenly over ", nodes, " nodes"));
  }
  // Every value is now at most kMaxJobGpus (< INT_MAX): the narrowing is exact.
  static_assert(limits::kMaxJobGpus <= std::numeric_limits<int>::max());
  static_assert(limits::kMaxJobNodes <= std::numeric_limits<int>::max());
  r->gpus = static_cast<int>(gpus);
  r->nodes = static_cast<int>(nodes);
  r->tp = static_cast<int>(tp);
  r->pp = static_cast<int>(pp);
  r->dp = static_cast<int>(dp);
  r->sizes_given = spec.tp > 0 || spec.pp > 0 || spec.dp > 0;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NvlMode> ParseNvlMode(absl::string_view text) {
  if (text == "strict") return NvlMode::kStrict;
  if (text == "prefer") return NvlMode::kPrefer;
  if (text == "off") return NvlMode::kOff;
  return Bad(
      absl::StrCat("NVLink mode ", QuoteUserText(text), " is not one of strict, prefer, off"));
}

std::string EscapeControls(absl::string_view text, char quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || (quote != 0 && c == quote)) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  return out;
}

std::string QuoteUserText(absl::string_view text) {
  constexpr size_t kShown = 64;
  size_t shown = std::min(text.size(), kShown);
  // Cut at a character boundary, not inside a UTF-8 sequence (at most 3 bytes back).
  for (int back = 0; back < 3 && shown < text.size() && shown > 0 &&
                     (static_cast<unsigned char>(text[shown]) & 0xC0) == 0x80;
       ++back) {
    --shown;
  }
  std::string out = absl::StrCat("'", EscapeControls(text.substr(0, shown)), "'");
  if (shown < text.size()) absl::StrAppend(&out, "... (", text.size(), " bytes)");
  return out;
}

const char* NvlModeName(NvlMode mode) {
  switch (mode) {
    case NvlMode::kStrict:
      return "strict";
    case NvlMode::kPrefer:
      return "prefer";
    case NvlMode::kOff:
      return "off";
  }
  return "?";
}

absl::Status CheckRequestSizes(const RequestSpec& spec) {
  Request r;
  return ResolveSizes(spec, &r);
}

namespace {

// Keeps only the nodes of the GPU model named `name` (any case) in r.allowed_node.
absl::StatusOr<Request> RestrictToModel(absl::string_view name, const Topology& topo, Request r) {
  const auto& models = topo.gpu_models();
  auto it = std::find_if(models.begin(), models.end(), [&](const GpuModelSpec& m) {
    return absl::EqualsIgnoreCase(m.name, name);
  });
  if (it == models.end()) {
    std::vector<std::string> names;
    for (const auto& m : models) names.push_back(m.name);
    return Bad(absl::StrCat("GPU model ", QuoteUserText(name), " is not in cluster ", topo.name(),
                            "; its models are ", absl::StrJoin(names, ", ")));
  }
  r.gpu_model = static_cast<int>(it - models.begin());
  if (r.allowed_set == Request::kEveryNode) r.allowed_set = r.gpu_model;
  int64_t of_model = 0;
  for (NodeId n = 0; n < topo.num_nodes(); ++n) {
    const Node& node = topo.nodes()[n];
    if (node.model != r.gpu_model) {
      r.allowed_node[n] = false;
    } else if (node.placed) {
      of_model += static_cast<int64_t>(node.gpus.size());
    }
  }
  if (r.gpus > of_model) {
    return Bad(absl::StrCat("the request asks for ", r.gpus, " ", it->name, " GPUs; cluster ",
                            topo.name(), " has ", of_model));
  }
  return r;
}

// The usual names of the tiers from the bottom, as the SPANK option --nvl-max-tier takes them.
constexpr const char* kUsualTiers[] = {"leaf", "spine", "core"};

// r->max_tier from a tier name: the topology's tier of that name; or, for a usual name above
// the topology's highest tier (core on a two-tier cluster), no limit, named as a relaxation.
absl::Status ResolveTier(const std::string& name, const Topology& topo, Request* r) {
  r->max_tier = topo.FindTier(name);
  if (r->max_tier >= 0) return absl::OkStatus();
  const int num_tiers = static_cast<int>(topo.tiers().size());
  for (int i = 0; i < static_cast<int>(std::size(kUsualTiers)); ++i) {
    if (name == kUsualTiers[i] && i >= num_tiers) {
      r->relaxations.push_back(
          absl::StrCat("max-tier=", name, " limits nothing: cluster ", topo.name(),
                       num_tiers == 0 ? " has no switch tier"
                                      : absl::StrCat("'s highest tier is ", topo.tiers().back()),
                       " (dropped)"));
      return absl::OkStatus();
    }
  }
  return Bad(absl::StrCat("max-tier ", QuoteUserText(name), " is not a tier of cluster ",
                          topo.name(), "; tiers are ", absl::StrJoin(topo.tiers(), ", ")));
}

// Segments and one NVLink domain for the whole job (see RequestSpec). Slurm's topology/block
// keeps a job of no more nodes than a block plans for (its nodes less its spares) inside one
// block, and a job without -N inside one block too (it picks the block by the job's minimum
// of one node).
absl::Status ResolveNodeGroups(const RequestSpec& spec, const Topology& topo, Request* r) {
  bool multi_node = false;
  int base = 0;  // the fewest nodes a multi-node domain plans for
  for (const NvlDomain& d : topo.domains()) {
    if (!d.multi_node) continue;
    int plans = static_cast<int>(d.nodes.size()) - d.spares;
    base = multi_node ? std::min(base, plans) : plans;
    multi_node = true;
  }
  if (spec.segment < 0 || spec.segment > limits::kMaxJobNodes) {
    return Bad(absl::StrCat("segment=", spec.segment, " is not a node count from 1 to ",
                            limits::kMaxJobNodes, " (0: not given)"));
  }
  if (spec.segment > 0) {
    if (r->nodes == 0) {
      return Bad(absl::StrCat("segment=", spec.segment,
                              " needs an exact node count (-N): a segment is that many of "
                              "the job's nodes"));
    }
    if (spec.segment < r->nodes && r->nodes % spec.segment != 0) {
      return Bad(absl::StrCat(r->nodes, " nodes do not split into segments of ", spec.segment,
                              "; give -N a multiple of the segment"));
    }
    if (!multi_node) {
      r->relaxations.push_back(
          absl::StrCat("segment=", spec.segment, " is left to Slurm: cluster ", topo.name(),
                       " has no multi-node NVLink domain to keep a segment in"));
    } else {
      r->segment = std::min(spec.segment, r->nodes);
    }
  }
  if (r->segment > 0) r->spread_segments = spec.spread_segments;
  if (spec.one_domain) {
    r->one_domain = true;
    r->one_domain_asked = true;
    r->one_domain_why = "--nvl-domain=one";
  } else if (spec.consolidate_segments && r->segment > 0 && multi_node) {
    if (r->nodes <= base) {
      r->one_domain = true;
      r->one_domain_asked = true;
      r->one_domain_why = "--consolidate-segments keeps the segments inside one block";
    } else {
      r->relaxations.push_back(
          absl::StrCat("--consolidate-segments: topology/block decides which blocks of ", r->nodes,
                       " nodes hold the segments (more than the ", base, " a block plans for)"));
    }
  } else if (spec.slurm_blocks && multi_node && r->segment == 0) {
    if (r->nodes == 0) {
      r->one_domain = true;
      r->one_domain_why = "topology/block keeps a job without -N inside one block";
    } else if (r->nodes <= base) {
      r->one_domain = true;
      r->one_domain_why = absl::StrCat("topology/block keeps a job of ", r->nodes,
                                       " nodes inside one block (", base, " planned)");
    } else {
      r->relaxations.push_back(absl::StrCat("topology/block decides how a job of ", r->nodes,
                                            " nodes without --segment spans "
                                            "blocks (more than the ",
                                            base,
                                            " a block plans for); give --segment to keep its "
                                            "parts in NVLink domains"));
    }
  }
  r->may_use_spares = spec.may_use_spares;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Request> ResolveRequest(const RequestSpec& spec, const Topology& topo) {
  Request r;
  absl::Status sizes = ResolveSizes(spec, &r);
  if (!sizes.ok()) return sizes;
  if (r.gpus > topo.num_placed_gpus()) {
    std::string unplaced;
    if (topo.num_placed_gpus() < topo.num_gpus()) {
      unplaced =
          absl::StrCat(" that nvlplace places on (", topo.num_gpus() - topo.num_placed_gpus(),
                       " more are on nodes with placed: false)");
    }
    return Bad(absl::StrCat("the request asks for ", r.gpus, " GPUs; cluster ", topo.name(),
                            " has ", topo.num_placed_gpus(), unplaced));
  }
  if (r.nodes > topo.num_nodes()) {
    return Bad(absl::StrCat("the request asks for ", r.nodes, " nodes; the cluster has ",
                            topo.num_nodes()));
  }
  r.nvl = spec.nvl;
  if (!spec.max_tier.empty()) {
    absl::Status tier = ResolveTier(spec.max_tier, topo, &r);
    if (!tier.ok()) return tier;
  }
  r.max_tier_required = spec.max_tier_required;
  if (absl::Status groups = ResolveNodeGroups(spec, topo, &r); !groups.ok()) return groups;
  r.exclusive = spec.exclusive;
  r.allowed_node.assign(topo.num_nodes(), spec.include.empty());
  if (!spec.include.empty()) {
    absl::Status s = MarkNodes(spec.include, topo, "include", true, &r.allowed_node);
    if (!s.ok()) return s;
  }
  if (!spec.exclude.empty()) {
    absl::Status s = MarkNodes(spec.exclude, topo, "exclude", false, &r.allowed_node);
    if (!s.ok()) return s;
  }
  r.allowed_set =
      spec.include.empty() && spec.exclude.empty() ? Request::kEveryNode : Request::kListed;
  if (!spec.gpu_model.empty()) return RestrictToModel(spec.gpu_model, topo, std::move(r));
  return r;
}

std::string DescribeRequest(const Request& r, const Topology& topo) {
  std::string out = absl::StrCat(r.gpus, " GPUs");
  if (r.nodes > 0) absl::StrAppend(&out, " on ", r.nodes, " nodes");
  absl::StrAppend(&out, " (TP=", r.tp, " PP=", r.pp, " DP=", r.dp, ", nvl=", NvlModeName(r.nvl));
  if (r.max_tier >= 0) {
    absl::StrAppend(&out, ", max-tier=", topo.tiers()[r.max_tier],
                    r.max_tier_required ? "" : " (preferred)");
  }
  if (r.segment > 0) absl::StrAppend(&out, ", segment=", r.segment);
  if (r.one_domain) absl::StrAppend(&out, ", one NVLink domain");
  if (r.exclusive) absl::StrAppend(&out, ", exclusive");
  if (r.gpu_model >= 0) absl::StrAppend(&out, ", model=", topo.gpu_models()[r.gpu_model].name);
  out += ")";
  return out;
}

}  // namespace nvlplace
