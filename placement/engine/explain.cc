// Explains a placement decision: JSON ("nvlplace.placement/1") and text.
#include "placement/engine/explain.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "placement/model/hostlist.h"

namespace nvlplace {
namespace {

std::string TierText(const Topology& topo, int tier) {
  if (tier == Topology::kSameNode) return "node";
  if (tier == Topology::kDisconnected) return "disconnected";
  return topo.tiers()[tier];
}

nlohmann::json CommJson(const CommEstimate& c) {
  return {{"tp", c.tp_s}, {"pp", c.pp_s}, {"dp", c.dp_s}, {"total", c.total()}};
}

std::string NodesOf(const std::vector<GpuId>& ranks, const Topology& topo) {
  std::vector<std::string> names;
  for (const auto& [node, gpus] : GpusByNode(ranks, topo)) names.push_back(node);
  return CompressHostlist(names);
}

}  // namespace

std::string IndexList(const std::vector<int>& idx) {
  std::vector<int> sorted = idx;
  std::sort(sorted.begin(), sorted.end());
  return RankIndexList(sorted);
}

std::string RankIndexList(const std::vector<int>& idx) {
  std::string out;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    absl::StrAppend(&out, out.empty() ? "" : ",", idx[i]);
    if (j > i) absl::StrAppend(&out, "-", idx[j]);
    i = j + 1;
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<int>>> GpusByNode(const std::vector<GpuId>& ranks,
                                                                 const Topology& topo) {
  thread_local NodeGroups groups;  // its per-node slots are the cluster's size: kept per thread
  groups.Fill(ranks, topo);
  std::vector<std::pair<std::string, std::vector<int>>> out;
  out.reserve(groups.nodes().size());
  for (size_t i = 0; i < groups.nodes().size(); ++i) {
    out.push_back({topo.nodes()[groups.nodes()[i]].name, groups.gpus(i)});
  }
  return out;
}

void NodeGroups::Fill(const std::vector<GpuId>& ranks, const Topology& topo) {
  for (NodeId n : nodes_) slot_[static_cast<size_t>(n)] = -1;
  nodes_.clear();
  if (slot_.size() < topo.nodes().size()) slot_.resize(topo.nodes().size(), -1);
  NodeId last = -1;
  size_t at = 0;
  for (GpuId g : ranks) {
    const Gpu& gpu = topo.gpus()[g];
    if (gpu.node != last) {
      int& slot = slot_[static_cast<size_t>(gpu.node)];
      if (slot < 0) {
        slot = static_cast<int>(nodes_.size());
        nodes_.push_back(gpu.node);
        if (gpus_.size() < nodes_.size()) gpus_.emplace_back();
        gpus_[nodes_.size() - 1].clear();
      }
      last = gpu.node;
      at = static_cast<size_t>(slot);
    }
    gpus_[at].push_back(gpu.index);
  }
}

nlohmann::json PlacementToJson(const PlacementResult& r, const Topology& topo) {
  using nlohmann::json;
  json out;
  out["schema"] = kPlacementSchema;
  out["placed"] = r.placed;
  out["request"] = r.request;
  out["policy"] = r.policy;
  out["relaxations"] = r.relaxations;
  if (!r.placed) {
    out["reason"] = r.reason;
    return out;
  }
  out["hostlist"] = NodesOf(r.ranks, topo);
  json nodes = json::array();
  for (const auto& [node, gpus] : GpusByNode(r.ranks, topo)) {
    std::vector<int> sorted = gpus;
    std::sort(sorted.begin(), sorted.end());
    nodes.push_back({{"name", node}, {"gpus", sorted}});
  }
  out["nodes"] = nodes;
  json models = json::array();
  for (const auto& [model, gpus] : GpuModelCounts(r.ranks, topo)) {
    models.push_back({{"name", topo.gpu_models()[model].name}, {"gpus", gpus}});
  }
  out["gpu_models"] = models;
  json ranks = json::array();
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const Gpu& g = topo.gpus()[r.ranks[i]];
    ranks.push_back({{"rank", i},
                     {"node", topo.nodes()[g.node].name},
                     {"gpu", g.index},
                     {"nvlink_domain", topo.domains()[g.domain].name}});
  }
  out["ranks"] = ranks;
  json scores = json::array();
  for (const ScoreLine& s : r.scores) {
    scores.push_back({{"scorer", s.scorer}, {"weight", s.weight}, {"score", s.score}});
  }
  out["scores"] = scores;
  out["total"] = r.total;
  out["comm_seconds_per_step"] = CommJson(r.comm);
  out["job_tier"] = TierText(topo, r.job_tier);
  out["dp_tier"] = TierText(topo, r.dp_tier);
  out["tp_groups_split"] = r.tp_groups_split;
  out["origin"] = r.origin;
  out["candidates"] = r.candidates;
  if (!r.locality_traded.empty()) out["locality_traded"] = r.locality_traded;
  if (r.best_rejected) {
    const Alternative& a = *r.best_rejected;
    out["best_rejected"] = {{"origin", a.origin},
                            {"hostlist", NodesOf(a.ranks, topo)},
                            {"total", a.total},
                            {"comm_seconds_per_step", CommJson(a.comm)},
                            {"why", a.why}};
  }
  return out;
}

std::string PlacementText(const PlacementResult& r, const Topology& topo) {
  std::string out = absl::StrCat("request: ", r.request, "\npolicy: ", r.policy, "\n");
  if (!r.placed) {
    absl::StrAppend(&out, "not placed: ", r.reason, "\n");
    for (const std::string& x : r.relaxations) absl::StrAppend(&out, "relaxed: ", x, "\n");
    return out;
  }
  absl::StrAppend(&out, "placed: ", NodesOf(r.ranks, topo), " (", r.origin,
                  "; candidates: ", r.candidates, ")\n");
  for (const auto& [node, gpus] : GpusByNode(r.ranks, topo)) {
    absl::StrAppend(&out, "  ", node, ": GPUs ", IndexList(gpus), "\n");
  }
  std::vector<std::string> order;
  for (GpuId g : r.ranks) {
    order.push_back(
        absl::StrCat(topo.nodes()[topo.gpus()[g].node].name, ":", topo.gpus()[g].index));
  }
  absl::StrAppend(&out, "model: ", GpuModelText(r.ranks, topo), "\n");
  absl::StrAppend(&out, "rank order: ", absl::StrJoin(order, " "), "\n");
  absl::StrAppend(&out, "fabric: job spans ", TierText(topo, r.job_tier), ", DP groups span ",
                  TierText(topo, r.dp_tier),
                  ", TP groups split across NVLink domains: ", r.tp_groups_split, "\n");
  absl::StrAppendFormat(
      &out, "communication per step (estimate): TP %.4f s, PP %.4f s, DP %.4f s, total %.4f s\n",
      r.comm.tp_s, r.comm.pp_s, r.comm.dp_s, r.comm.total());
  absl::StrAppendFormat(&out, "score %.1f:", r.total);
  for (const ScoreLine& s : r.scores) {
    absl::StrAppendFormat(&out, " %s %.1f (x%g)", s.scorer, s.score, s.weight);
  }
  out += "\n";
  for (const std::string& x : r.relaxations) absl::StrAppend(&out, "relaxed: ", x, "\n");
  if (r.relaxations.empty()) out += "relaxed: nothing\n";
  if (!r.locality_traded.empty())
    absl::StrAppend(&out, "locality traded: ", r.locality_traded, "\n");
  if (r.best_rejected) {
    const Alternative& a = *r.best_rejected;
    absl::StrAppendFormat(&out, "best rejected: %s (%s), score %.1f, comm %.4f s: %s\n",
                          NodesOf(a.ranks, topo), a.origin, a.total, a.comm.total(), a.why);
  }
  return out;
}

}  // namespace nvlplace
