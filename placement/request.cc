// A job's placement request: validation and defaults.
#include "placement/request.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/hostlist.h"

namespace nvlplace {
namespace {

absl::Status Bad(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

absl::Status MarkNodes(const std::string& expr, const Topology& topo, const char* what,
                       bool value, std::vector<bool>* allowed) {
  absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(expr);
  if (!names.ok()) return Bad(absl::StrCat(what, ": ", names.status().message()));
  for (const std::string& name : *names) {
    NodeId n = topo.FindNode(name);
    if (n < 0) {
      return Bad(absl::StrCat(what, ": node '", name, "' is not in cluster ", topo.name()));
    }
    (*allowed)[n] = value;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NvlMode> ParseNvlMode(absl::string_view text) {
  if (text == "strict") return NvlMode::kStrict;
  if (text == "prefer") return NvlMode::kPrefer;
  if (text == "off") return NvlMode::kOff;
  return Bad(absl::StrCat("NVLink mode '", text, "' is not one of strict, prefer, off"));
}

const char* NvlModeName(NvlMode mode) {
  switch (mode) {
    case NvlMode::kStrict: return "strict";
    case NvlMode::kPrefer: return "prefer";
    case NvlMode::kOff: return "off";
  }
  return "?";
}

absl::StatusOr<Request> ResolveRequest(const RequestSpec& spec, const Topology& topo) {
  Request r;
  if (spec.gpus < 0 || spec.nodes < 0 || spec.gpus_per_node < 0 || spec.tp < 0 || spec.pp < 0 ||
      spec.dp < 0) {
    return Bad("sizes must not be negative");
  }
  if (spec.nodes > 0 && spec.gpus_per_node > 0) {
    int product = spec.nodes * spec.gpus_per_node;
    if (spec.gpus > 0 && spec.gpus != product) {
      return Bad(absl::StrCat("gpus=", spec.gpus, " does not match nodes x gpus-per-node = ",
                              spec.nodes, " x ", spec.gpus_per_node, " = ", product));
    }
    r.gpus = product;
    r.nodes = spec.nodes;
  } else if (spec.gpus_per_node > 0 || (spec.nodes > 0 && spec.gpus == 0)) {
    return Bad("give nodes together with gpus-per-node, or give gpus");
  } else {
    r.gpus = spec.gpus;
    r.nodes = spec.nodes;
  }
  if (r.gpus <= 0 && spec.tp > 0 && spec.pp >= 0 && spec.dp > 0) {
    r.gpus = spec.tp * std::max(spec.pp, 1) * spec.dp;  // sizes alone define the job
  }
  if (r.gpus <= 0) return Bad("the request needs a GPU count (gpus, or nodes x gpus-per-node)");
  if (r.gpus > topo.num_gpus()) {
    return Bad(absl::StrCat("the request asks for ", r.gpus, " GPUs; cluster ", topo.name(),
                            " has ", topo.num_gpus()));
  }
  r.sizes_given = spec.tp > 0 || spec.pp > 0 || spec.dp > 0;
  r.tp = spec.tp > 0 ? spec.tp : 1;
  r.pp = spec.pp > 0 ? spec.pp : 1;
  if (r.gpus % (r.tp * r.pp) != 0) {
    return Bad(absl::StrCat("TP x PP = ", r.tp, " x ", r.pp, " = ", r.tp * r.pp,
                            " does not divide ", r.gpus, " GPUs"));
  }
  r.dp = spec.dp > 0 ? spec.dp : r.gpus / (r.tp * r.pp);
  if (r.tp * r.pp * r.dp != r.gpus) {
    return Bad(absl::StrCat("TP x PP x DP = ", r.tp, " x ", r.pp, " x ", r.dp, " = ",
                            r.tp * r.pp * r.dp, " is not the ", r.gpus, " GPUs requested"));
  }
  if (r.nodes > 0 && r.nodes > topo.num_nodes()) {
    return Bad(absl::StrCat("the request asks for ", r.nodes, " nodes; the cluster has ",
                            topo.num_nodes()));
  }
  if (r.nodes > 0 && r.gpus % r.nodes != 0) {
    return Bad(absl::StrCat(r.gpus, " GPUs do not split evenly over ", r.nodes, " nodes"));
  }
  r.nvl = spec.nvl;
  if (!spec.max_tier.empty()) {
    r.max_tier = topo.FindTier(spec.max_tier);
    if (r.max_tier < 0) {
      return Bad(absl::StrCat("max-tier '", spec.max_tier, "' is not a tier of cluster ",
                              topo.name(), "; tiers are ", absl::StrJoin(topo.tiers(), ", ")));
    }
  }
  r.max_tier_required = spec.max_tier_required;
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
  if (r.exclusive) absl::StrAppend(&out, ", exclusive");
  out += ")";
  return out;
}

}  // namespace nvlplace
