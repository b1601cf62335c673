// The C facade between the Slurm plugins and the placement engine (see nvlplace_facade.h).
// Every entry point catches everything: nothing is thrown into slurmctld. The decisions
// themselves live in decision.cc.
#include "plugin/nvlplace_facade.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "plugin/decision.h"
#include "plugin/plugin_config.h"

using nvlplace::NvlMode;
using nvlplace::RequestSpec;
using nvlplace::Topology;
using nvlplace::plugin::Decider;
using nvlplace::plugin::JobDecision;
using nvlplace::plugin::Layout;
using nvlplace::plugin::LiveNode;

struct nvl_facade {
  std::unique_ptr<Decider> decider;
  std::string describe;
  std::atomic<int> refs{1};
};

namespace {

void CopyMessage(const std::string& text, char* buf, size_t len) {
  if (buf == nullptr || len == 0) return;
  std::snprintf(buf, len, "%s", text.c_str());
}

// The nodes as plain structs, copied. A NULL name is a node nvlplace does not know; a free
// list that is NULL while num_free > 0, a negative count or a NULL array with a positive one
// are the caller's bugs: *bad says which.
std::vector<LiveNode> LiveNodes(const nvl_node_t* nodes, int num_nodes, std::string* bad) {
  std::vector<LiveNode> out;
  if (num_nodes < 0 || (nodes == nullptr && num_nodes > 0)) {
    *bad = absl::StrCat(num_nodes, " nodes at ", nodes == nullptr ? "NULL" : "an array");
    return out;
  }
  if (nodes == nullptr || num_nodes == 0) return out;
  out.reserve(num_nodes);
  for (int i = 0; i < num_nodes; ++i) {
    LiveNode n;
    if (nodes[i].name != nullptr) n.name = nodes[i].name;
    n.usable = nodes[i].name != nullptr && nodes[i].usable != 0;
    if (nodes[i].free_gpus == nullptr && nodes[i].num_free > 0) {
      *bad = absl::StrCat("node ", i, " lists ", nodes[i].num_free, " free GPUs but no indexes");
      return {};
    }
    if (nodes[i].num_free > 0) {
      n.free.assign(nodes[i].free_gpus, nodes[i].free_gpus + nodes[i].num_free);
    }
    if (nodes[i].num_busy > 0 &&
        (nodes[i].busy_gpus == nullptr || nodes[i].busy_until == nullptr)) {
      *bad = absl::StrCat("node ", i, " lists ", nodes[i].num_busy, " busy GPUs but no indexes");
      return {};
    }
    for (int k = 0; k < nodes[i].num_busy; ++k) {
      n.busy_until.emplace_back(nodes[i].busy_gpus[k], nodes[i].busy_until[k]);
    }
    out.push_back(std::move(n));
  }
  return out;
}

// A layout given by the C side (NULL or empty: no nodes).
Layout LayoutOf(const nvl_layout_t* got) {
  Layout layout;
  if (got == nullptr || got->num_nodes <= 0 || got->nodes == nullptr ||
      got->gpu_offsets == nullptr) {
    return layout;
  }
  for (int k = 0; k < got->num_nodes; ++k) {
    layout.nodes.push_back(got->nodes[k]);
    int from = got->gpu_offsets[k], to = got->gpu_offsets[k + 1];
    layout.gpus.emplace_back();
    for (int g = from; got->gpus != nullptr && g < to; ++g) {
      layout.gpus.back().push_back(got->gpus[g]);
    }
  }
  return layout;
}

// C views of a decision's node sets, rebuilt when the list grows.
struct CandidateViews {
  std::vector<std::vector<int>> offsets, gpus;
  std::vector<nvl_candidate_t> views;

  void Sync(const JobDecision& d) {
    // Views already published point into vectors that are never touched again.
    while (static_cast<int>(views.size()) < d.num_candidates()) {
      size_t i = views.size();
      const nvlplace::plugin::Candidate& c = *d.Peek(static_cast<int>(i));
      offsets.emplace_back(1, 0);
      gpus.emplace_back();
      for (const std::vector<int>& g : c.layout.gpus) {
        gpus.back().insert(gpus.back().end(), g.begin(), g.end());
        offsets.back().push_back(static_cast<int>(gpus.back().size()));
      }
      views.push_back(nvl_candidate_t{static_cast<int>(c.layout.nodes.size()),
                                      c.layout.nodes.data(), offsets.back().data(),
                                      gpus.back().data(), c.describe.c_str()});
    }
    // offsets/gpus may have reallocated: point every view at the current storage.
    for (size_t i = 0; i < views.size(); ++i) {
      views[i].gpu_offsets = offsets[i].data();
      views[i].gpus = gpus[i].data();
    }
  }
};

// The storage behind an nvl_result_t.
struct ResultStore {
  std::unique_ptr<JobDecision> decision;
  Decider::Placement placement;
  CandidateViews views;
};

void Publish(ResultStore* store, nvl_result_t* out) {
  const Decider::Placement& p = store->placement;
  out->hard = p.hard ? 1 : 0;
  out->request = p.request.c_str();
  out->reason = p.reason.c_str();
  out->relaxations = p.relaxations.c_str();
  out->num_candidates = 0;
  out->candidates = nullptr;
  if (out->status == NVL_PLACED && store->decision) {
    store->views.Sync(*store->decision);
    out->num_candidates = static_cast<int>(store->views.views.size());
    out->candidates = out->num_candidates ? store->views.views.data() : nullptr;
  }
}

int StatusOf(Decider::Placement::Status s) {
  switch (s) {
    case Decider::Placement::kPlaced:
      return NVL_PLACED;
    case Decider::Placement::kNoRoom:
      return NVL_NO_ROOM;
    case Decider::Placement::kBadRequest:
      return NVL_BAD_REQUEST;
    case Decider::Placement::kInternal:
      return NVL_INTERNAL;
  }
  return NVL_INTERNAL;
}

RequestSpec SpecOf(const nvl_request_t* q, NvlMode default_nvl, std::string* bad) {
  RequestSpec spec;
  spec.gpus = q->gpus;
  spec.nodes = q->nodes;
  spec.gpus_per_node = q->gpus_per_node;
  if (q->nodes > 0 && q->gpus_per_node > 0) spec.gpus = 0;
  spec.tp = q->tp;
  spec.pp = q->pp;
  spec.dp = q->dp;
  spec.nvl = default_nvl;
  if (q->nvl != nullptr && *q->nvl != '\0') {
    absl::StatusOr<NvlMode> mode = nvlplace::ParseNvlMode(q->nvl);
    if (!mode.ok())
      *bad = std::string(mode.status().message());
    else
      spec.nvl = *mode;
  }
  if (q->max_tier != nullptr) spec.max_tier = q->max_tier;
  spec.exclusive = q->exclusive != 0;
  return spec;
}

}  // namespace

struct nvl_decision {
  std::unique_ptr<JobDecision> d;
  CandidateViews views;
};

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
    f->decider = std::make_unique<Decider>(*std::move(loaded));
    const nvlplace::plugin::LoadedConfig& cfg = f->decider->config();
    const Topology& topo = *cfg.topology;
    f->describe = absl::StrFormat(
        "topology %s (%d nodes, %d GPUs, %d NVLink domains) from %s, policy %s, %d "
        "candidates, default nvl=%s",
        topo.name(), topo.num_nodes(), topo.num_gpus(), topo.num_domains(), cfg.config.topology,
        cfg.policy->name, cfg.config.candidates, nvlplace::NvlModeName(cfg.config.default_nvl));
    return f.release();
  } catch (const std::exception& e) {
    CopyMessage(absl::StrCat(path ? path : "", ": internal error: ", e.what()), err, err_len);
  } catch (...) {
    CopyMessage("internal error", err, err_len);
  }
  return nullptr;
}

nvl_facade_t* nvl_facade_ref(nvl_facade_t* facade) {
  if (facade != nullptr) facade->refs.fetch_add(1, std::memory_order_relaxed);
  return facade;
}

void nvl_facade_free(nvl_facade_t* facade) {
  if (facade != nullptr && facade->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete facade;
  }
}

int nvl_facade_log_level(const nvl_facade_t* facade) {
  return facade ? static_cast<int>(facade->decider->config().config.log_level) : NVL_LOG_INFO;
}

const char* nvl_facade_describe(const nvl_facade_t* facade) {
  return facade ? facade->describe.c_str() : "";
}

int nvl_facade_knows_node(const nvl_facade_t* facade, const char* name) {
  if (facade == nullptr || name == nullptr) return 0;
  try {
    return facade->decider->config().topology->FindNode(name) >= 0 ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int nvl_facade_summary(const nvl_facade_t* facade, double now_s, double interval_s, char* buf,
                       size_t buf_len) {
  if (facade == nullptr) return 0;
  try {
    std::string line = facade->decider->SummaryDue(now_s, interval_s);
    if (line.empty()) return 0;
    CopyMessage(line, buf, buf_len);
    return 1;
  } catch (...) {
    return 0;
  }
}

int nvl_facade_place(const nvl_facade_t* facade, const nvl_node_t* nodes, int num_nodes,
                     const nvl_request_t* request, nvl_result_t* out) {
  if (out == nullptr) return NVL_INTERNAL;
  std::memset(out, 0, sizeof(*out));
  out->request = out->relaxations = "";
  ResultStore* store = new (std::nothrow) ResultStore;
  if (store == nullptr) {
    out->status = NVL_INTERNAL;
    out->reason = "out of memory";
    return out->status;
  }
  out->priv = store;
  try {
    if (facade == nullptr || request == nullptr || (nodes == nullptr && num_nodes > 0)) {
      store->placement.reason = "no configuration or no request";
      out->status = NVL_INTERNAL;
    } else {
      std::string bad, broken;
      RequestSpec spec = SpecOf(request, facade->decider->config().config.default_nvl, &bad);
      std::vector<LiveNode> live = LiveNodes(nodes, num_nodes, &broken);
      if (!broken.empty()) {
        store->placement.status = Decider::Placement::kInternal;
        store->placement.reason = absl::StrCat("internal error: ", broken);
      } else if (!bad.empty()) {
        store->placement.status = Decider::Placement::kBadRequest;
        store->placement.reason = bad;
      } else {
        store->decision =
            facade->decider->PlaceRequest(spec, live, request->ignore_busy != 0, &store->placement);
      }
      out->status = StatusOf(store->placement.status);
    }
  } catch (const std::exception& e) {
    store->decision.reset();
    store->placement = Decider::Placement{};
    store->placement.reason = absl::StrCat("internal error: ", e.what());
    out->status = NVL_INTERNAL;
  } catch (...) {
    store->decision.reset();
    store->placement = Decider::Placement{};
    store->placement.reason = "internal error";
    out->status = NVL_INTERNAL;
  }
  try {
    Publish(store, out);
  } catch (...) {
    out->num_candidates = 0;
    out->candidates = nullptr;
  }
  return out->status;
}

int nvl_facade_more(const nvl_facade_t* facade, nvl_result_t* result) {
  if (facade == nullptr || result == nullptr || result->priv == nullptr ||
      result->status != NVL_PLACED) {
    return 0;
  }
  auto* store = static_cast<ResultStore*>(result->priv);
  if (!store->decision) return 0;
  int added = 0;
  try {
    int before = store->decision->num_candidates();
    added = store->decision->CandidateAt(before) != nullptr ? 1 : 0;
    Publish(store, result);
  } catch (...) {
    added = 0;
  }
  return added;
}

void nvl_result_clear(nvl_result_t* result) {
  if (result == nullptr) return;
  delete static_cast<ResultStore*>(result->priv);
  std::memset(result, 0, sizeof(*result));
}

// ---- decisions ----------------------------------------------------------------------------

nvl_decision_t* nvl_decide(nvl_facade_t* facade, const nvl_job_t* job, const nvl_node_t* nodes,
                           int num_nodes) {
  if (facade == nullptr || job == nullptr) return nullptr;
  try {
    nvlplace::plugin::SlurmJob j;
    j.id = job->job_id;
    j.mode = job->mode == NVL_MODE_TEST_ONLY  ? nvlplace::plugin::Mode::kTestOnly
             : job->mode == NVL_MODE_WILL_RUN ? nvlplace::plugin::Mode::kWillRun
                                              : nvlplace::plugin::Mode::kRunNow;
    j.gpus_per_job = job->gpus_per_job;
    j.gpus_per_node = job->gpus_per_node;
    j.gpus_per_task = job->gpus_per_task;
    j.gpus_per_socket = job->gpus_per_socket;
    j.gpu_requests = job->gpu_requests;
    if (job->gpu_type) j.gpu_type = job->gpu_type;
    j.num_tasks = job->num_tasks;
    j.min_nodes = job->min_nodes;
    j.max_nodes = job->max_nodes;
    j.whole_node = job->whole_node != 0;
    j.required_nodes = job->required_nodes;
    j.now = job->now;
    j.will_run_start = job->will_run_start;
    j.will_run_end = job->will_run_end;
    j.now_only = job->now_only != 0;
    for (uint32_t i = 0; job->env != nullptr && i < job->env_size; ++i) {
      if (job->env[i] != nullptr) j.env.emplace_back(job->env[i]);
    }
    auto out = std::make_unique<nvl_decision>();
    std::string broken;
    std::vector<LiveNode> live = LiveNodes(nodes, num_nodes, &broken);
    out->d = broken.empty() ? facade->decider->Decide(j, live)
                            : facade->decider->Unusable(j, "internal error: " + broken);
    return out.release();
  } catch (...) {
    return nullptr;
  }
}

int nvl_decision_action(const nvl_decision_t* d) {
  if (d == nullptr) return NVL_ACT_CONS_TRES;
  switch (d->d->action()) {
    case nvlplace::plugin::Action::kConsTres:
      return NVL_ACT_CONS_TRES;
    case nvlplace::plugin::Action::kTry:
      return NVL_ACT_TRY;
    case nvlplace::plugin::Action::kRefuse:
      return NVL_ACT_REFUSE;
  }
  return NVL_ACT_CONS_TRES;
}

int nvl_decision_hold(const nvl_decision_t* d) { return d != nullptr && d->d->hold() ? 1 : 0; }

int nvl_decision_mask(const nvl_decision_t* d) { return d != nullptr && d->d->mask_gpus() ? 1 : 0; }

const char* nvl_decision_log(const nvl_decision_t* d, int* level) {
  if (d == nullptr || d->d->log().text.empty()) return nullptr;
  if (level != nullptr) *level = static_cast<int>(d->d->log().level);
  return d->d->log().text.c_str();
}

const char* nvl_decision_reason(const nvl_decision_t* d) {
  return d != nullptr ? d->d->reason().c_str() : "";
}

const char* nvl_decision_comment(const nvl_decision_t* d) {
  if (d == nullptr || !d->d->comment()) return nullptr;
  return d->d->comment()->c_str();
}

const nvl_candidate_t* nvl_decision_candidate(nvl_decision_t* d, int i) {
  if (d == nullptr || i < 0) return nullptr;
  try {
    if (d->d->CandidateAt(i) == nullptr) return nullptr;
    d->views.Sync(*d->d);
    return &d->views.views[i];
  } catch (...) {
    return nullptr;
  }
}

int64_t nvl_decision_start_time(const nvl_decision_t* d) {
  return d != nullptr ? d->d->start_time() : 0;
}

void nvl_decision_refused(nvl_decision_t* d, int i) {
  if (d == nullptr) return;
  try {
    d->d->Refused(i);
  } catch (...) {
  }
}

int nvl_facade_compares_cons_tres(const nvl_facade_t* facade) {
  return facade != nullptr && facade->decider->config().config.compare_cons_tres ? 1 : 0;
}

void nvl_decision_cons_tres_alone(nvl_decision_t* d, const nvl_layout_t* alone) {
  if (d == nullptr) return;
  try {
    d->d->ConsTresAlone(LayoutOf(alone));
  } catch (...) {
  }
}

int nvl_decision_took(nvl_decision_t* d, int i, const nvl_layout_t* got) {
  if (d == nullptr) return 1;
  try {
    return d->d->Took(i, LayoutOf(got)) ? 1 : 0;
  } catch (...) {
    // Cannot check: keep a hard promise by refusing this node set.
    return d->d->hard() ? 0 : 1;
  }
}

int nvl_decision_exhausted(nvl_decision_t* d) {
  if (d == nullptr) return NVL_ACT_CONS_TRES;
  try {
    d->d->Exhausted();
    return nvl_decision_action(d);
  } catch (...) {
    return d->d->hard() ? NVL_ACT_REFUSE : NVL_ACT_CONS_TRES;
  }
}

void nvl_decision_free(nvl_decision_t* d) { delete d; }

}  // extern "C"
