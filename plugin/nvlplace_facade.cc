// The C facade between the Slurm plugins and the placement engine (see nvlplace_facade.h).
// Every entry point runs through the one guard of guard.h; the decisions themselves live in
// decision.cc.
#include "plugin/nvlplace_facade.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "plugin/decision.h"
#include "plugin/guard.h"
#include "plugin/nvl_options.h"
#include "plugin/placement_line.h"
#include "plugin/plugin_config.h"
#include "plugin/snapshot.h"

using nvlplace::Topology;
using nvlplace::plugin::Decider;
using nvlplace::plugin::JobDecision;
using nvlplace::plugin::Layout;
using nvlplace::plugin::LiveNode;
using nvlplace::plugin::Resolve;
using nvlplace::plugin::ResolveVoid;

struct nvl_facade {
  std::unique_ptr<Decider> decider;
  std::string describe;
  std::atomic<int> refs{1};
  std::atomic<double> last_stale_check{0};  // seconds; nvl_facade_stale
  std::mutex stamp_mu;
  nvlplace::plugin::FileStamp seen_health;  // the health file as last loaded or accepted
};

namespace {

std::atomic<nvl_log_sink_t> g_sink{nullptr};

void CopyMessage(const std::string& text, char* buf, size_t len) {
  if (buf == nullptr || len == 0) return;
  std::snprintf(buf, len, "%s", text.c_str());
}

// The nodes as views of the caller's arrays in *out (a thread's vector, reused: slurmctld asks
// on every job_test), the busy GPUs of WILL_RUN paired in *busy. Nothing is copied per node
// but its name's view. A NULL name is a node nvlplace does not know; a list that is NULL
// while its count is positive, a negative node count or a NULL array with a positive one are
// the caller's bugs: *bad says which, and *out is left empty.
void LiveNodes(const nvl_node_t* nodes, int num_nodes, std::string* bad, std::vector<LiveNode>* out,
               std::vector<std::pair<int, int64_t>>* busy) {
  busy->clear();
  if (num_nodes < 0 || (nodes == nullptr && num_nodes > 0)) {
    *bad = absl::StrCat(num_nodes, " nodes at ", nodes == nullptr ? "NULL" : "an array");
    out->clear();
    return;
  }
  out->resize(num_nodes);  // 0 when `nodes` is NULL (checked above); every field set below
  // WILL_RUN's busy GPUs go to one buffer, which keeps its room from call to call: the views
  // point into it, and are pointed again should it grow during this call.
  const size_t room = busy->capacity();
  for (int i = 0; i < num_nodes; ++i) {
    const nvl_node_t& c = nodes[i];
    const bool free_unlisted = c.free_gpus == nullptr && c.num_free > 0;
    if (free_unlisted || (c.num_busy > 0 && (c.busy_gpus == nullptr || c.busy_until == nullptr))) {
      *bad = absl::StrCat("node ", i, " lists ", free_unlisted ? c.num_free : c.num_busy,
                          free_unlisted ? " free" : " busy", " GPUs but no indexes");
      out->clear();
      return;
    }
    LiveNode& n = (*out)[i];
    n.name = c.name != nullptr ? absl::string_view(c.name) : absl::string_view();
    n.usable = c.name != nullptr && c.usable != 0;
    n.free =
        c.num_free > 0 ? absl::MakeConstSpan(c.free_gpus, c.num_free) : absl::Span<const int>();
    n.busy_until = {};
    if (c.num_busy <= 0) continue;
    const size_t from = busy->size();
    for (int k = 0; k < c.num_busy; ++k) busy->emplace_back(c.busy_gpus[k], c.busy_until[k]);
    n.busy_until = absl::MakeConstSpan(busy->data() + from, busy->size() - from);
  }
  if (busy->capacity() == room) return;
  for (size_t i = 0, at = 0; i < out->size(); ++i) {
    LiveNode& n = (*out)[i];
    if (n.busy_until.empty()) continue;
    n.busy_until = absl::MakeConstSpan(busy->data() + at, n.busy_until.size());
    at += n.busy_until.size();
  }
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

// The job as the decision reads it. The submit-time check gives tres_per_* strings instead
// of counts: they are read here (GpusInTres), and a count that is not a plain number leaves
// the job to slurmctld's own checks.
nvlplace::plugin::SlurmJob SlurmJobOf(const nvl_job_t& job) {
  nvlplace::plugin::SlurmJob j;
  j.id = job.job_id;
  j.mode = job.mode == NVL_MODE_TEST_ONLY  ? nvlplace::plugin::Mode::kTestOnly
           : job.mode == NVL_MODE_WILL_RUN ? nvlplace::plugin::Mode::kWillRun
                                           : nvlplace::plugin::Mode::kRunNow;
  j.gpus_per_job = job.gpus_per_job;
  j.gpus_per_node = job.gpus_per_node;
  j.gpus_per_task = job.gpus_per_task;
  j.gpus_per_socket = job.gpus_per_socket;
  j.gpu_requests = job.gpu_requests;
  if (job.gpu_type != nullptr) j.gpu_type = job.gpu_type;
  if (job.tres_per_job || job.tres_per_node || job.tres_per_socket || job.tres_per_task) {
    j.gpu_requests = 0;
    j.gpu_type.clear();
    const char* const tres[4] = {job.tres_per_job, job.tres_per_node, job.tres_per_socket,
                                 job.tres_per_task};
    uint64_t* const count[4] = {&j.gpus_per_job, &j.gpus_per_node, &j.gpus_per_socket,
                                &j.gpus_per_task};
    for (int k = 0; k < 4; ++k) {
      nvlplace::plugin::TresGpus g = nvlplace::plugin::GpusInTres(tres[k] ? tres[k] : "");
      *count[k] = g.count;
      j.gpu_requests += g.entries;
      j.gpus_unreadable |= g.unreadable;
      if (j.gpu_type.empty()) j.gpu_type = g.type;
    }
  }
  j.num_tasks = job.num_tasks;
  j.min_nodes = job.min_nodes;
  j.max_nodes = job.max_nodes;
  j.whole_node = job.whole_node != 0;
  j.required_nodes = job.required_nodes;
  j.now = job.now;
  j.will_run_start = job.will_run_start;
  j.will_run_end = job.will_run_end;
  j.now_only = job.now_only != 0;
  j.segment = job.segment;
  j.spread_segments = job.spread_segments != 0;
  j.consolidate_segments = job.consolidate_segments != 0;
  j.restarts = job.restarts;
  j.free_is_all = job.free_is_all != 0;
  j.preempting = job.preempting != 0;
  if (job.restarts > 0 && job.previous_comment != nullptr)
    j.previous_comment = job.previous_comment;
  for (uint32_t i = 0; job.env != nullptr && i < job.env_size; ++i) {
    if (job.env[i] != nullptr) j.env.emplace_back(job.env[i]);
  }
  return j;
}

// C views of a decision's node sets, built as the caller asks for them (a node set's text is
// formatted only when it is offered: a job of 1,024 GPUs names 256 trays). Deques: what a
// view points into never moves as more are added.
struct CandidateViews {
  std::deque<std::vector<int>> offsets, gpus;
  std::deque<std::string> describes;
  std::deque<nvl_candidate_t> views;

  // Views of node sets 0..upto (each computed by the decision already).
  void Sync(const JobDecision& d, int upto) {
    while (static_cast<int>(views.size()) <= upto &&
           static_cast<int>(views.size()) < d.num_candidates()) {
      const nvlplace::plugin::Candidate& c = *d.Peek(static_cast<int>(views.size()));
      std::vector<int>& offset = offsets.emplace_back(1, 0);
      std::vector<int>& gpu = gpus.emplace_back();
      for (const std::vector<int>& g : c.layout.gpus) {
        gpu.insert(gpu.end(), g.begin(), g.end());
        offset.push_back(static_cast<int>(gpu.size()));
      }
      views.push_back(nvl_candidate_t{static_cast<int>(c.layout.nodes.size()),
                                      c.layout.nodes.data(), offset.data(), gpu.data(),
                                      describes.emplace_back(c.Describe()).c_str()});
    }
  }
};

}  // namespace

namespace nvlplace::plugin {

void LogCaught(const char* entry, const char* what, const char* consequence) noexcept {
  char line[512];
  std::snprintf(line, sizeof(line), "nvlplace: internal error in %s: %s; %s", entry,
                what != nullptr ? what : "?", consequence);
  nvl_log_sink_t sink = g_sink.load(std::memory_order_acquire);
  if (sink != nullptr) {
    sink(NVL_LOG_ERROR, line);
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
}

}  // namespace nvlplace::plugin

// A decision, or (d == nullptr) one of the two fallbacks below, which need no memory.
struct nvl_decision {
  std::unique_ptr<JobDecision> d;
  CandidateViews views;
  int fallback_action = NVL_ACT_CONS_TRES;
  const char* fallback_reason = "";
  std::string owned_reason;  // behind fallback_reason when it is not a constant
};

namespace {

// When nvl_decide itself fails: a job whose options make a promise waits, any other goes to
// cons_tres. Never freed.
nvl_decision g_fallback_waits{nullptr,
                              {},
                              NVL_ACT_REFUSE,
                              // A placement line (placement_line.h), written out: no memory.
                              "nvlplace: v=1 event=waiting why=\"nvlplace could not decide on "
                              "this job (an internal error, logged by slurmctld); it is tried "
                              "again\""};
nvl_decision g_fallback_cons_tres{nullptr, {}, NVL_ACT_CONS_TRES, ""};

bool IsFallback(const nvl_decision_t* d) {
  return d == &g_fallback_waits || d == &g_fallback_cons_tres;
}

// The fallback for `job`, read without allocating: its options from the SPANK environment
// (bad options promise too: they are held when the facade works).
nvl_decision_t* FallbackFor(const nvl_facade_t* facade, const nvl_job_t* job) noexcept {
  if (job == nullptr) return &g_fallback_cons_tres;
  nvl_job_opts_t opts;
  char msg[256];
  int found = nvl_opts_from_env(job->env, job->env_size, &opts, msg, sizeof(msg));
  int default_strict = facade == nullptr ||
                       facade->decider->config().config.default_nvl == nvlplace::NvlMode::kStrict;
  return nvl_opts_promise(found, &opts, default_strict) ? &g_fallback_waits : &g_fallback_cons_tres;
}

}  // namespace

extern "C" {

void nvl_facade_set_log_sink(nvl_log_sink_t sink) { g_sink.store(sink, std::memory_order_release); }

nvl_facade_t* nvl_facade_load(const char* path, char* err, size_t err_len) {
  CopyMessage("", err, err_len);
  nvl_facade_t* loaded = Resolve<nvl_facade_t*>(
      "nvl_facade_load", "the configuration is not loaded", nullptr, [&]() -> nvl_facade_t* {
        if (path == nullptr) {
          CopyMessage("no configuration file name", err, err_len);
          return nullptr;
        }
        auto cfg = nvlplace::plugin::LoadPluginConfig(path);
        if (!cfg.ok()) {
          CopyMessage(std::string(cfg.status().message()), err, err_len);
          return nullptr;
        }
        auto f = std::make_unique<nvl_facade>();
        f->seen_health = (*cfg)->health_stamp;
        f->decider = std::make_unique<Decider>(*std::move(cfg));
        const nvlplace::plugin::LoadedConfig& c = f->decider->config();
        const Topology& topo = *c.topology;
        f->describe = absl::StrFormat(
            "topology %s (%d nodes, %d GPUs, %d NVLink domains) from %s, policy %s, %d "
            "candidates, default nvl=%s",
            topo.name(), topo.num_nodes(), topo.num_gpus(), topo.num_domains(), c.config.topology,
            c.policy->name, c.config.candidates, nvlplace::NvlModeName(c.config.default_nvl));
        if (c.config.slurm_blocks) absl::StrAppend(&f->describe, ", Slurm's topology/block");
        if (!c.config.nvlink_health.empty()) {
          absl::StrAppend(&f->describe, ", NVLink health from ", c.config.nvlink_health, ": ",
                          c.health_describe);
        }
        return f.release();
      });
  if (loaded == nullptr && err != nullptr && err_len > 0 && err[0] == '\0') {
    std::snprintf(err, err_len, "%s: internal error while loading (logged)",
                  path != nullptr ? path : "?");
  }
  return loaded;
}

int nvl_facade_save_snapshot(const nvl_facade_t* facade, const char* dir, char* err,
                             size_t err_len) {
  if (facade == nullptr || dir == nullptr) return -1;
  return Resolve("nvl_facade_save_snapshot", "no snapshot is written", -1, [&] {
    absl::Status s = nvlplace::plugin::SaveSnapshot(facade->decider->config(), dir);
    if (!s.ok()) CopyMessage(std::string(s.message()), err, err_len);
    return s.ok() ? 0 : -1;
  });
}

nvl_facade_t* nvl_facade_load_snapshot(const char* dir, char* source, size_t source_len, char* err,
                                       size_t err_len) {
  if (dir == nullptr) return nullptr;
  std::string path, from;
  bool named = Resolve("nvl_facade_load_snapshot", "no snapshot is read", false, [&] {
    path = nvlplace::plugin::SnapshotConfigPath(dir);
    from = nvlplace::plugin::SnapshotSource(dir);
    return true;
  });
  if (!named) return nullptr;
  CopyMessage(from, source, source_len);
  return nvl_facade_load(path.c_str(), err, err_len);
}

int nvl_write_status(const char* path, const nvl_facade_t* facade, const char* config,
                     const char* in_force, double loaded_at, const char* last_error,
                     double last_error_at) {
  if (path == nullptr) return -1;
  return Resolve("nvl_write_status", "the status file is not written", -1, [&] {
    nvlplace::plugin::Status st;
    st.config = config != nullptr ? config : "";
    st.in_force = in_force != nullptr ? in_force : "none";
    st.describe = facade != nullptr ? facade->describe : "";
    st.loaded_at = loaded_at;
    st.last_error = last_error != nullptr ? last_error : "";
    st.last_error_at = last_error_at;
    if (facade != nullptr) st.counters = facade->decider->CountersLine();
    return nvlplace::plugin::WriteStatus(st, path).ok() ? 0 : -1;
  });
}

nvl_facade_t* nvl_facade_ref(nvl_facade_t* facade) {
  if (facade != nullptr) facade->refs.fetch_add(1, std::memory_order_relaxed);
  return facade;
}

void nvl_facade_free(nvl_facade_t* facade) {
  if (facade != nullptr && facade->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    ResolveVoid("nvl_facade_free", "the configuration is leaked", [&] { delete facade; });
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
  return Resolve("nvl_facade_knows_node", "the node counts as unknown", 0,
                 [&] { return facade->decider->config().topology->FindNode(name) >= 0 ? 1 : 0; });
}

int nvl_facade_summary(const nvl_facade_t* facade, double now_s, double interval_s, char* buf,
                       size_t buf_len) {
  if (facade == nullptr) return 0;
  return Resolve("nvl_facade_summary", "no summary this time", 0, [&] {
    std::string line = facade->decider->SummaryDue(now_s, interval_s);
    if (line.empty()) return 0;
    CopyMessage(line, buf, buf_len);
    return 1;
  });
}

namespace {

// The NVLink health file differs from the one last loaded or accepted.
bool HealthChanged(nvl_facade& facade) {
  const std::string& health = facade.decider->config().config.nvlink_health;
  if (health.empty()) return false;
  nvlplace::plugin::FileStamp now = nvlplace::plugin::StampOf(health);
  std::lock_guard<std::mutex> lock(facade.stamp_mu);
  return !(now == facade.seen_health);
}

}  // namespace

int nvl_facade_stale(nvl_facade_t* facade, double now_s) {
  if (facade == nullptr) return 0;
  return Resolve("nvl_facade_stale", "the files are taken as unchanged", 0, [&] {
    const nvlplace::plugin::LoadedConfig& c = facade->decider->config();
    if (c.config.nvlink_health.empty()) return 0;
    // At most once a second, and by one thread: a stat per job_test would be one more system
    // call in the scheduler's inner loop.
    double last = facade->last_stale_check.load(std::memory_order_relaxed);
    if (now_s - last < 1.0 ||
        !facade->last_stale_check.compare_exchange_strong(last, now_s, std::memory_order_relaxed))
      return 0;
    return HealthChanged(*facade) ? 1 : 0;
  });
}

int nvl_facade_files_changed(nvl_facade_t* facade) {
  if (facade == nullptr) return 0;
  return Resolve("nvl_facade_files_changed", "the files are taken as unchanged", 0,
                 [&] { return HealthChanged(*facade) ? 1 : 0; });
}

void nvl_facade_accept_files(nvl_facade_t* facade) {
  if (facade == nullptr) return;
  ResolveVoid("nvl_facade_accept_files", "the change is seen again", [&] {
    const nvlplace::plugin::LoadedConfig& c = facade->decider->config();
    if (c.config.nvlink_health.empty()) return;
    nvlplace::plugin::FileStamp now = nvlplace::plugin::StampOf(c.config.nvlink_health);
    std::lock_guard<std::mutex> lock(facade->stamp_mu);
    facade->seen_health = now;
  });
}

int nvl_facade_compares_cons_tres(const nvl_facade_t* facade) {
  return facade != nullptr && facade->decider->config().config.compare_cons_tres ? 1 : 0;
}

// ---- decisions ----------------------------------------------------------------------------

nvl_decision_t* nvl_decide(nvl_facade_t* facade, const nvl_job_t* job, const nvl_node_t* nodes,
                           int num_nodes) {
  nvl_decision_t* fallback = FallbackFor(facade, job);
  if (facade == nullptr || job == nullptr) return fallback;
  return Resolve<nvl_decision_t*>(
      "nvl_decide",
      fallback == &g_fallback_waits ? "the job waits (its options make a promise)"
                                    : "placing as cons_tres",
      fallback, [&]() -> nvl_decision_t* {
        nvlplace::plugin::SlurmJob j = SlurmJobOf(*job);
        auto out = std::make_unique<nvl_decision>();
        std::string broken;
        thread_local std::vector<LiveNode> live;
        thread_local std::vector<std::pair<int, int64_t>> busy;
        LiveNodes(nodes, num_nodes, &broken, &live, &busy);
        out->d = broken.empty() ? facade->decider->Decide(j, live)
                                : facade->decider->Unusable(j, "internal error: " + broken);
        return out.release();
      });
}

nvl_decision_t* nvl_decide_unconfigured(const nvl_job_t* job, const char* problem) {
  if (job == nullptr) return &g_fallback_cons_tres;
  nvl_job_opts_t opts;
  char msg[256];
  int found = nvl_opts_from_env(job->env, job->env_size, &opts, msg, sizeof(msg));
  // TEST_ONLY ("could it ever run") stays cons_tres's, so that the job is accepted and waits;
  // RUN_NOW and WILL_RUN refuse, so that backfill neither starts it nor reserves for it.
  if (found == 0 || job->mode == NVL_MODE_TEST_ONLY) return &g_fallback_cons_tres;
  return Resolve<nvl_decision_t*>(
      "nvl_decide_unconfigured", "the job waits", &g_fallback_waits, [&]() -> nvl_decision_t* {
        auto out = std::make_unique<nvl_decision>();
        nvlplace::plugin::PlacementLine line;
        line.event = nvlplace::plugin::Event::kWaiting;
        line.why = absl::StrCat(
            "no usable nvlplace configuration, so nvlplace options cannot be honoured: ",
            problem != nullptr ? problem : "not loaded", "; the job waits until it is fixed");
        out->owned_reason = "nvlplace: " + nvlplace::plugin::Format(line);
        out->fallback_action = NVL_ACT_REFUSE;
        out->fallback_reason = out->owned_reason.c_str();
        return out.release();
      });
}

int nvl_decision_action(const nvl_decision_t* d) {
  if (d == nullptr) return NVL_ACT_CONS_TRES;
  if (d->d == nullptr) return d->fallback_action;
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

int nvl_decision_hold(const nvl_decision_t* d) {
  return d != nullptr && d->d != nullptr && d->d->hold() ? 1 : 0;
}

int nvl_decision_waits(const nvl_decision_t* d) {
  return d != nullptr && d->d != nullptr && d->d->waits() ? 1 : 0;
}

int nvl_decision_mask(const nvl_decision_t* d) {
  return d != nullptr && d->d != nullptr && d->d->mask_gpus() ? 1 : 0;
}

const char* nvl_decision_log(const nvl_decision_t* d, int* level) {
  if (d == nullptr || d->d == nullptr || d->d->log().text.empty()) return nullptr;
  if (level != nullptr) *level = static_cast<int>(d->d->log().level);
  return d->d->log().text.c_str();
}

const char* nvl_decision_reason(const nvl_decision_t* d) {
  if (d == nullptr) return "";
  return d->d != nullptr ? d->d->reason().c_str() : d->fallback_reason;
}

const char* nvl_decision_comment(const nvl_decision_t* d) {
  if (d == nullptr) return nullptr;
  if (d->d == nullptr) return d->fallback_action == NVL_ACT_REFUSE ? d->fallback_reason : nullptr;
  return d->d->comment() ? d->d->comment()->c_str() : nullptr;
}

const nvl_candidate_t* nvl_decision_candidate(nvl_decision_t* d, int i) {
  // Node sets are offered only with NVL_ACT_TRY: a TEST_ONLY decision that found a placement
  // still leaves the answer to cons_tres, and its sets must not reach the caller.
  if (d == nullptr || d->d == nullptr || i < 0 ||
      d->d->action() != nvlplace::plugin::Action::kTry) {
    return nullptr;
  }
  return Resolve<const nvl_candidate_t*>("nvl_decision_candidate", "no more node sets", nullptr,
                                         [&]() -> const nvl_candidate_t* {
                                           if (d->d->CandidateAt(i) == nullptr) return nullptr;
                                           d->views.Sync(*d->d, i);
                                           return &d->views.views[i];
                                         });
}

const char* nvl_decision_rankmap(const nvl_decision_t* d) {
  if (d == nullptr || d->d == nullptr || d->d->rank_map().empty()) return nullptr;
  return d->d->rank_map().c_str();
}

int64_t nvl_decision_start_time(const nvl_decision_t* d) {
  return d != nullptr && d->d != nullptr ? d->d->start_time() : 0;
}

void nvl_decision_refused(nvl_decision_t* d, int i) {
  if (d == nullptr || d->d == nullptr) return;
  ResolveVoid("nvl_decision_refused", "the refusal is not logged", [&] { d->d->Refused(i); });
}

void nvl_decision_cons_tres_alone(nvl_decision_t* d, const nvl_layout_t* alone) {
  if (d == nullptr || d->d == nullptr) return;
  ResolveVoid("nvl_decision_cons_tres_alone", "the comparison is left out",
              [&] { d->d->ConsTresAlone(LayoutOf(alone)); });
}

int nvl_decision_took(nvl_decision_t* d, int i, const nvl_layout_t* got) {
  if (d == nullptr || d->d == nullptr) return 1;
  // Cannot check: a hard promise is kept by refusing this node set.
  const bool hard = d->d->hard();
  return Resolve("nvl_decision_took", hard ? "the node set is refused" : "the node set is taken",
                 hard ? 0 : 1, [&] { return d->d->Took(i, LayoutOf(got)) ? 1 : 0; });
}

int nvl_decision_preempts(nvl_decision_t* d, int i, const nvl_layout_t* nodes, int jobs) {
  if (d == nullptr) return 1;
  // A fallback that makes the job wait accepts no preemption for a promise it cannot check.
  if (d->d == nullptr) return d->fallback_action == NVL_ACT_REFUSE ? 0 : 1;
  const bool hard = d->d->hard();
  return Resolve("nvl_decision_preempts",
                 hard ? "the node set is refused" : "the node set is taken", hard ? 0 : 1,
                 [&] { return d->d->Preempts(i, LayoutOf(nodes).nodes, jobs) ? 1 : 0; });
}

int nvl_decision_starting(const nvl_decision_t* d) {
  return d != nullptr && d->d != nullptr && d->d->starting() ? 1 : 0;
}

void nvl_decision_started(nvl_decision_t* d) {
  if (d == nullptr || d->d == nullptr) return;
  ResolveVoid("nvl_decision_started", "the start is not counted", [&] { d->d->Started(); });
}

void nvl_decision_dropped(nvl_decision_t* d, const char* slurm_reason) {
  if (d == nullptr || d->d == nullptr) return;
  ResolveVoid("nvl_decision_dropped", "the job's wait is not logged",
              [&] { d->d->Dropped(slurm_reason != nullptr ? slurm_reason : ""); });
}

int nvl_decision_exhausted(nvl_decision_t* d) {
  if (d == nullptr) return NVL_ACT_CONS_TRES;
  if (d->d == nullptr) return d->fallback_action;
  const bool hard = d->d->hard();
  return Resolve<int>("nvl_decision_exhausted", hard ? "the job waits" : "placing as cons_tres",
                      hard ? NVL_ACT_REFUSE : NVL_ACT_CONS_TRES, [&] {
                        d->d->Exhausted();
                        return nvl_decision_action(d);
                      });
}

void nvl_decision_free(nvl_decision_t* d) {
  if (d == nullptr || IsFallback(d)) return;
  ResolveVoid("nvl_decision_free", "the decision is leaked", [&] { delete d; });
}

}  // extern "C"
