// The C facade between the Slurm plugins and the placement engine (see nvlplace_facade.h).
// Every entry point catches everything: nothing is thrown into slurmctld.
#include "plugin/nvlplace_facade.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "placement/cluster_state.h"
#include "placement/engine.h"
#include "placement/explain.h"
#include "plugin/plugin_config.h"

using nvlplace::ClusterState;
using nvlplace::GpuId;
using nvlplace::NodeId;
using nvlplace::NvlMode;
using nvlplace::PlacementResult;
using nvlplace::Request;
using nvlplace::RequestSpec;
using nvlplace::Topology;
using nvlplace::plugin::LoadedConfig;

struct nvl_facade {
  std::unique_ptr<LoadedConfig> loaded;
  std::string describe;
  std::mutex mu;  // guards last_text
  std::unordered_map<uint32_t, std::string> last_text;
};

namespace {

void CopyMessage(const std::string& text, char* buf, size_t len) {
  if (buf == nullptr || len == 0) return;
  std::snprintf(buf, len, "%s", text.c_str());
}

// The storage behind an nvl_result_t.
struct ResultStore {
  // For nvl_facade_more: the resolved request, still allowed nodes, live state.
  std::optional<Request> rest;
  std::unique_ptr<ClusterState> state;
  std::vector<int> to_caller;
  int limit = 0;   // the configuration's `candidates`
  int rounds = 0;  // engine runs made by nvl_facade_more
  bool exhausted = false;

  std::string request;
  std::string reason;
  std::string relaxations = "none";
  std::vector<std::vector<int>> nodes;
  std::vector<std::vector<int>> gpu_offsets;
  std::vector<std::vector<int>> gpus;
  std::vector<std::string> describe;
  std::vector<nvl_candidate_t> candidates;
};

// "node03:4-7 node05:0-3 domains=node03:nvl1,node05:nvl0 score=97.1 origin=..."
std::string Describe(const PlacementResult& r, const Topology& topo) {
  std::vector<std::string> parts;
  for (const auto& [node, gpus] : nvlplace::GpusByNode(r.ranks, topo)) {
    parts.push_back(absl::StrCat(node, ":", nvlplace::IndexList(gpus)));
  }
  std::vector<std::string> domains;
  std::set<int> seen;
  for (GpuId g : r.ranks) {
    int d = topo.DomainOf(g);
    if (seen.insert(d).second) domains.push_back(topo.domains()[d].name);
  }
  return absl::StrFormat("%s domains=%s score=%.1f origin=\"%s\"", absl::StrJoin(parts, " "),
                         absl::StrJoin(domains, ","), r.total, r.origin);
}

// A placement as the caller's node indexes (ascending) and each node's GPU indexes.
struct NodeSet {
  std::vector<int> nodes;
  std::vector<int> gpu_offsets;
  std::vector<int> gpus;
};

NodeSet CallerNodes(const PlacementResult& r, const Topology& topo,
                    const std::vector<int>& to_caller) {
  std::map<int, std::vector<int>> by_node;
  for (GpuId g : r.ranks) by_node[to_caller[topo.gpus()[g].node]].push_back(topo.gpus()[g].index);
  NodeSet set;
  set.gpu_offsets.push_back(0);
  for (auto& [node, gpus] : by_node) {
    std::sort(gpus.begin(), gpus.end());
    set.nodes.push_back(node);
    set.gpus.insert(set.gpus.end(), gpus.begin(), gpus.end());
    set.gpu_offsets.push_back(static_cast<int>(set.gpus.size()));
  }
  return set;
}

// A requested tier above the topology's highest (core on a two-tier cluster) limits
// nothing: it is dropped. Any other unknown name is left for ResolveRequest to refuse.
std::string EffectiveTier(const char* tier, const Topology& topo) {
  if (tier == nullptr || *tier == '\0') return "";
  if (topo.FindTier(tier) >= 0) return tier;
  static const char* const kCanonical[] = {"leaf", "spine", "core"};
  for (int i = 0; i < 3; ++i) {
    if (std::strcmp(tier, kCanonical[i]) == 0 && i >= static_cast<int>(topo.tiers().size())) {
      return "";
    }
  }
  return tier;
}

// Adds a node set unless it repeats one or the limit is reached. RET true if added.
bool AddCandidate(ResultStore* store, NodeSet set, std::string describe) {
  if (static_cast<int>(store->nodes.size()) >= store->limit) return false;
  for (const std::vector<int>& have : store->nodes) {
    if (have == set.nodes) return false;
  }
  store->nodes.push_back(std::move(set.nodes));
  store->gpu_offsets.push_back(std::move(set.gpu_offsets));
  store->gpus.push_back(std::move(set.gpus));
  store->describe.push_back(std::move(describe));
  return true;
}

// Points the C view at the store (again: vectors may have moved).
void Publish(ResultStore* store, nvl_result_t* out) {
  store->candidates.clear();
  for (size_t i = 0; i < store->nodes.size(); ++i) {
    store->candidates.push_back(nvl_candidate_t{
        static_cast<int>(store->nodes[i].size()), store->nodes[i].data(),
        store->gpu_offsets[i].data(), store->gpus[i].data(), store->describe[i].c_str()});
  }
  out->request = store->request.c_str();
  out->reason = store->reason.c_str();
  out->relaxations = store->relaxations.c_str();
  out->num_candidates = out->status == NVL_PLACED ? static_cast<int>(store->candidates.size()) : 0;
  out->candidates = out->num_candidates ? store->candidates.data() : nullptr;
}

// One more candidate: the best placement away from every node offered so far.
bool More(const nvl_facade_t* f, ResultStore* store) {
  const Topology& topo = *f->loaded->topology;
  while (!store->exhausted && static_cast<int>(store->nodes.size()) < store->limit) {
    if (++store->rounds > 4 || !store->rest || !store->state) break;
    for (const std::vector<int>& set : store->nodes) {
      for (int caller_index : set) {
        for (NodeId n = 0; n < topo.num_nodes(); ++n) {
          if (store->to_caller[n] == caller_index) store->rest->allowed_node[n] = false;
        }
      }
    }
    PlacementResult next = f->loaded->engine->Place(*store->state, *store->rest);
    if (!next.placed) break;
    if (AddCandidate(store, CallerNodes(next, topo, store->to_caller), Describe(next, topo))) {
      return true;
    }
  }
  store->exhausted = true;
  return false;
}

int Place(const nvl_facade_t* f, const nvl_node_t* nodes, int num_nodes, const nvl_request_t* q,
          ResultStore* store, nvl_result_t* out) {
  const LoadedConfig& cfg = *f->loaded;
  const Topology& topo = *cfg.topology;

  RequestSpec spec;
  spec.gpus = q->gpus;
  spec.nodes = q->nodes;
  spec.gpus_per_node = q->gpus_per_node;
  if (q->nodes > 0 && q->gpus_per_node > 0) spec.gpus = 0;
  spec.tp = q->tp;
  spec.pp = q->pp;
  spec.dp = q->dp;
  spec.nvl = cfg.config.default_nvl;
  if (q->nvl != nullptr && *q->nvl != '\0') {
    absl::StatusOr<NvlMode> mode = nvlplace::ParseNvlMode(q->nvl);
    if (!mode.ok()) {
      store->reason = std::string(mode.status().message());
      return NVL_BAD_REQUEST;
    }
    spec.nvl = *mode;
  }
  spec.max_tier = EffectiveTier(q->max_tier, topo);
  spec.exclusive = q->exclusive != 0;
  absl::StatusOr<Request> request = nvlplace::ResolveRequest(spec, topo);
  if (!request.ok()) {
    store->reason = std::string(request.status().message());
    return NVL_BAD_REQUEST;
  }
  out->hard = (request->nvl == NvlMode::kStrict && request->tp > 1) ||
              (request->max_tier >= 0 && request->max_tier_required);
  store->request = nvlplace::DescribeRequest(*request, topo);

  // The live state: every GPU busy except those the caller lists as free.
  std::vector<int> to_caller(topo.num_nodes(), -1);
  std::vector<bool> is_free(topo.num_gpus(), false);
  std::fill(request->allowed_node.begin(), request->allowed_node.end(), false);
  for (int i = 0; i < num_nodes; ++i) {
    if (nodes[i].name == nullptr) continue;
    NodeId n = topo.FindNode(nodes[i].name);
    if (n < 0) continue;
    to_caller[n] = i;
    request->allowed_node[n] = nodes[i].usable != 0;
    const std::vector<GpuId>& gpus = topo.nodes()[n].gpus;
    if (q->ignore_busy) {
      for (GpuId g : gpus) is_free[g] = true;
      continue;
    }
    for (int k = 0; k < nodes[i].num_free; ++k) {
      int idx = nodes[i].free_gpus[k];
      if (idx >= 0 && idx < static_cast<int>(gpus.size())) is_free[gpus[idx]] = true;
    }
  }
  std::vector<GpuId> busy;
  for (GpuId g = 0; g < topo.num_gpus(); ++g) {
    if (!is_free[g]) busy.push_back(g);
  }
  ClusterState state(cfg.topology);
  absl::Status s = state.Allocate(busy);
  if (!s.ok()) {
    store->reason = std::string(s.message());
    return NVL_INTERNAL;
  }

  // Candidates: the best placement and the runner-up on other nodes now; more, each away
  // from the nodes already offered, only when asked (nvl_facade_more).
  PlacementResult first = cfg.engine->Place(state, *request);
  if (!first.placed) {
    store->reason = first.reason;
    return first.reason.rfind("internal error", 0) == 0 ? NVL_INTERNAL : NVL_NO_ROOM;
  }
  if (!first.relaxations.empty()) store->relaxations = absl::StrJoin(first.relaxations, "; ");
  store->limit = cfg.config.candidates;
  AddCandidate(store, CallerNodes(first, topo, to_caller), Describe(first, topo));
  if (first.best_rejected) {
    PlacementResult alt;
    alt.ranks = first.best_rejected->ranks;
    alt.total = first.best_rejected->total;
    alt.origin = first.best_rejected->origin;
    AddCandidate(store, CallerNodes(alt, topo, to_caller), Describe(alt, topo));
  }
  store->rest = std::move(*request);
  store->state = std::make_unique<ClusterState>(std::move(state));
  store->to_caller = std::move(to_caller);
  return NVL_PLACED;
}

}  // namespace

extern "C" {

nvl_facade_t* nvl_facade_load(const char* path, char* err, size_t err_len) {
  try {
    if (path == nullptr) {
      CopyMessage("no configuration file name", err, err_len);
      return nullptr;
    }
    auto loaded = nvlplace::plugin::LoadPluginConfig(path);
    if (!loaded.ok()) {
      CopyMessage(std::string(loaded.status().message()), err, err_len);
      return nullptr;
    }
    auto f = std::make_unique<nvl_facade>();
    f->loaded = *std::move(loaded);
    const Topology& topo = *f->loaded->topology;
    f->describe = absl::StrFormat(
        "topology %s (%d nodes, %d GPUs, %d NVLink domains) from %s, policy %s, %d "
        "candidates, default nvl=%s",
        topo.name(), topo.num_nodes(), topo.num_gpus(), topo.num_domains(),
        f->loaded->config.topology, f->loaded->policy->name, f->loaded->config.candidates,
        nvlplace::NvlModeName(f->loaded->config.default_nvl));
    return f.release();
  } catch (const std::exception& e) {
    CopyMessage(absl::StrCat(path ? path : "", ": internal error: ", e.what()), err, err_len);
  } catch (...) {
    CopyMessage("internal error", err, err_len);
  }
  return nullptr;
}

void nvl_facade_free(nvl_facade_t* facade) { delete facade; }

int nvl_facade_log_level(const nvl_facade_t* facade) {
  return facade ? static_cast<int>(facade->loaded->config.log_level) : NVL_LOG_INFO;
}

const char* nvl_facade_describe(const nvl_facade_t* facade) {
  return facade ? facade->describe.c_str() : "";
}

int nvl_facade_knows_node(const nvl_facade_t* facade, const char* name) {
  if (facade == nullptr || name == nullptr) return 0;
  try {
    return facade->loaded->topology->FindNode(name) >= 0 ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int nvl_facade_first_time(nvl_facade_t* facade, uint32_t job_id, const char* text) {
  if (facade == nullptr || text == nullptr) return 1;
  try {
    std::lock_guard<std::mutex> lock(facade->mu);
    if (facade->last_text.size() > 100000) facade->last_text.clear();
    std::string& last = facade->last_text[job_id];
    if (last == text) return 0;
    last = text;
  } catch (...) {
  }
  return 1;
}

int nvl_facade_place(const nvl_facade_t* facade, const nvl_node_t* nodes, int num_nodes,
                     const nvl_request_t* request, nvl_result_t* out) {
  if (out == nullptr) return NVL_INTERNAL;
  std::memset(out, 0, sizeof(*out));
  ResultStore* store = new (std::nothrow) ResultStore;
  if (store == nullptr) {
    out->status = NVL_INTERNAL;
    out->request = out->relaxations = "";
    out->reason = "out of memory";
    return out->status;
  }
  out->priv = store;
  try {
    if (facade == nullptr || request == nullptr || (nodes == nullptr && num_nodes > 0)) {
      store->reason = "no configuration or no request";
      out->status = NVL_INTERNAL;
    } else {
      out->status = Place(facade, nodes, num_nodes, request, store, out);
    }
  } catch (const std::exception& e) {
    store->reason = absl::StrCat("internal error: ", e.what());
    store->candidates.clear();
    out->status = NVL_INTERNAL;
  } catch (...) {
    store->reason = "internal error";
    store->candidates.clear();
    out->status = NVL_INTERNAL;
  }
  Publish(store, out);
  return out->status;
}

int nvl_facade_more(const nvl_facade_t* facade, nvl_result_t* result) {
  if (facade == nullptr || result == nullptr || result->priv == nullptr ||
      result->status != NVL_PLACED) {
    return 0;
  }
  auto* store = static_cast<ResultStore*>(result->priv);
  int added = 0;
  try {
    added = More(facade, store) ? 1 : 0;
  } catch (...) {
    store->exhausted = true;
  }
  Publish(store, result);
  return added;
}

void nvl_result_clear(nvl_result_t* result) {
  if (result == nullptr) return;
  delete static_cast<ResultStore*>(result->priv);
  std::memset(result, 0, sizeof(*result));
}

}  // extern "C"
