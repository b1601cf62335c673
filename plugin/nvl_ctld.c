/* The slurmctld side of select/cons_tres_nvlplace (see nvl_ctld.h): copies slurmctld's
 * live state into the facade's plain structs, asks the engine for node sets and hands
 * cons_tres the narrowed bitmaps, best first, then the full one. */
#include "nvl_ctld.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "nvl_options.h"
#include "nvlplace_facade.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

/* The loaded configuration; NULL: behave exactly as cons_tres. Swapped on reconfigure. */
static pthread_mutex_t nvl_lock = PTHREAD_MUTEX_INITIALIZER;
static nvl_facade_t* nvl_facade = NULL;
static bool nvl_load_tried = false;

static const char* _mode_name(uint16_t mode) {
  if (SELECT_IS_MODE_RUN_NOW(mode)) return "run_now";
  if (SELECT_IS_MODE_TEST_ONLY(mode)) return "test_only";
  return "will_run";
}

/* nvlplace.yaml in the directory of slurm.conf. xfree the result. */
static char* _config_path(void) {
  const char* conf = slurm_conf.slurm_conf ? slurm_conf.slurm_conf : "/etc/slurm/slurm.conf";
  const char* slash = strrchr(conf, '/');
  char* path = NULL;

  if (slash)
    xstrfmtcat(path, "%.*s/nvlplace.yaml", (int)(slash - conf), conf);
  else
    path = xstrdup("nvlplace.yaml");
  return path;
}

/* Slurm nodes the topology does not describe: nvlplace never places a job there (a job
 * without a hard constraint that it cannot place goes to cons_tres, which may use them; a
 * strict job never runs there). Logged once per load, as a hostlist. */
static void _check_nodes(const nvl_facade_t* f, const char* path) {
  hostlist_t missing = hostlist_create(NULL);
  node_record_t* node_ptr;
  int total = 0, unknown;

  for (int i = 0; (node_ptr = next_node(&i)); i++) {
    total++;
    if (!nvl_facade_knows_node(f, node_ptr->name)) hostlist_push_host(missing, node_ptr->name);
  }
  if ((unknown = hostlist_count(missing)) > 0) {
    char* names = hostlist_ranged_string_xmalloc(missing);
    error(
        "nvlplace: %s: %d of %d Slurm nodes are not in its topology: %s; nvlplace places no "
        "job there (strict jobs never run there); add them to the topology file",
        path, unknown, total, names);
    xfree(names);
  }
  hostlist_destroy(missing);
}

extern void nvl_ctld_load_config(void) {
  char err[2048] = "";
  char* path = _config_path();
  nvl_facade_t* loaded = nvl_facade_load(path, err, sizeof(err));
  nvl_facade_t* old;

  slurm_mutex_lock(&nvl_lock);
  old = nvl_facade;
  nvl_facade = loaded;
  nvl_load_tried = true;
  slurm_mutex_unlock(&nvl_lock);
  nvl_facade_free(old);

  if (loaded) {
    info("nvlplace: loaded %s: %s", path, nvl_facade_describe(loaded));
    _check_nodes(loaded, path);
  } else
    error(
        "nvlplace: %s; placing exactly as select/cons_tres until this is fixed and "
        "`scontrol reconfigure` is run",
        err);
  xfree(path);
}

extern void nvl_ctld_fini(void) {
  slurm_mutex_lock(&nvl_lock);
  nvl_facade_free(nvl_facade);
  nvl_facade = NULL;
  nvl_load_tried = false;
  slurm_mutex_unlock(&nvl_lock);
}

/* ---- slurmctld's state as plain structs ------------------------------------------- */

static int _is_gpu(void* x, void* key) {
  (void)key;
  return !xstrcmp(((gres_state_t*)x)->gres_name, "gpu");
}

/* Free GPU indexes of one node, from the GRES allocation that slurmctld keeps per node
 * (rebuilt from the job records at every start, so a restart loses nothing). */
static int _free_gpus(node_record_t* node_ptr, int** out) {
  gres_state_t* gs;
  gres_node_state_t* ns;
  int avail, n = 0;

  *out = NULL;
  if (!node_ptr->gres_list || !(gs = list_find_first(node_ptr->gres_list, _is_gpu, NULL)) ||
      !gs->gres_data)
    return 0;
  ns = gs->gres_data;
  avail = (int)ns->gres_cnt_avail;
  if (avail <= 0) return 0;
  *out = xcalloc(avail, sizeof(int));
  if (ns->no_consume) {
    for (int i = 0; i < avail; i++) (*out)[n++] = i;
  } else if (ns->gres_bit_alloc) {
    int size = bit_size(ns->gres_bit_alloc);
    for (int i = 0; i < avail && i < size; i++)
      if (!bit_test(ns->gres_bit_alloc, i)) (*out)[n++] = i;
  } else { /* no File= in gres.conf: only counts are known */
    for (int i = 0; i < avail - (int)ns->gres_cnt_alloc; i++) (*out)[n++] = i;
  }
  return n;
}

typedef struct {
  nvl_node_t* nodes; /* node_record_count entries, index = node index */
  int** free;
  int count;
} nvl_snapshot_t;

static void _snapshot(bitstr_t* usable, nvl_snapshot_t* s) {
  node_record_t* node_ptr;

  s->count = node_record_count;
  s->nodes = xcalloc(s->count, sizeof(nvl_node_t));
  s->free = xcalloc(s->count, sizeof(int*));
  for (int i = 0; (node_ptr = next_node(&i)); i++) {
    s->nodes[i].name = node_ptr->name;
    s->nodes[i].usable = bit_test(usable, i);
    s->nodes[i].num_free = _free_gpus(node_ptr, &s->free[i]);
    s->nodes[i].free_gpus = s->free[i];
  }
}

static void _snapshot_free(nvl_snapshot_t* s) {
  for (int i = 0; i < s->count; i++) xfree(s->free[i]);
  xfree(s->free);
  xfree(s->nodes);
}

/* The job's GPU request and nvlplace options.
 * RET 1: a request for the engine; 0: nothing for nvlplace to do (no GPUs, or GPUs per
 * socket); -1: bad nvlplace options, msg says why. */
static int _job_request(job_record_t* job_ptr, uint32_t min_nodes, uint32_t max_nodes,
                        nvl_request_t* q, nvl_job_opts_t* opts, char* msg, size_t msg_len) {
  uint64_t per_job = 0, per_node = 0, per_task = 0, per_socket = 0;
  struct job_details* details = job_ptr->details;
  gres_state_t* gs;
  ListIterator it;
  int rc;

  memset(q, 0, sizeof(*q));
  q->job_id = job_ptr->job_id;
  if (!job_ptr->gres_list_req) return 0;
  it = list_iterator_create(job_ptr->gres_list_req);
  while ((gs = list_next(it))) {
    gres_job_state_t* js = gs->gres_data;
    if (xstrcmp(gs->gres_name, "gpu") || !js) continue;
    per_job += js->gres_per_job;
    per_node += js->gres_per_node;
    per_task += js->gres_per_task;
    per_socket += js->gres_per_socket;
  }
  list_iterator_destroy(it);

  if (per_socket || (!per_job && !per_node && !per_task)) return 0;
  if (per_node) {
    q->nodes = (int)MAX(min_nodes, 1);
    q->gpus_per_node = (int)per_node;
  } else {
    uint32_t tasks = details && details->num_tasks ? details->num_tasks : 1;
    uint64_t gpus = per_job ? per_job : per_task * tasks;
    q->gpus = (int)MIN(gpus, (uint64_t)INT32_MAX);
    /* An exact node count that divides the GPUs: the same share on every node. */
    if (min_nodes > 1 && min_nodes == max_nodes && gpus % min_nodes == 0) {
      q->nodes = (int)min_nodes;
      q->gpus_per_node = (int)(gpus / min_nodes);
    }
  }
  q->exclusive = details && (details->whole_node & WHOLE_NODE_REQUIRED);

  rc = nvl_opts_from_env(job_ptr->spank_job_env, job_ptr->spank_job_env_size, opts, msg, msg_len);
  if (rc < 0) return -1;
  q->tp = opts->tp;
  q->pp = opts->pp;
  q->dp = opts->dp;
  q->nvl = opts->nvl[0] ? opts->nvl : NULL;
  q->max_tier = opts->max_tier[0] ? opts->max_tier : NULL;
  return 1;
}

/* ---- logging ---------------------------------------------------------------------- */

/* "node03:4-7,node05:0-3": the GPUs cons_tres selected on the nodes of `bitmap` (after a
 * RUN_NOW success; they are allocated right after, in select_p_select_nodeinfo_set). */
static char* _selected_gpus(job_record_t* job_ptr, bitstr_t* bitmap) {
  char *out = NULL, idx[128];
  gres_state_t* gs;
  ListIterator it;
  node_record_t* node_ptr;

  if (!job_ptr->gres_list_req) return xstrdup("?");
  for (int i = 0; (node_ptr = next_node(&i)); i++) {
    if (!bit_test(bitmap, i)) continue;
    it = list_iterator_create(job_ptr->gres_list_req);
    while ((gs = list_next(it))) {
      gres_job_state_t* js = gs->gres_data;
      if (xstrcmp(gs->gres_name, "gpu") || !js || !js->gres_bit_select ||
          i >= (int)js->total_node_cnt || !js->gres_bit_select[i] ||
          bit_set_count(js->gres_bit_select[i]) == 0)
        continue;
      bit_fmt(idx, sizeof(idx), js->gres_bit_select[i]);
      xstrfmtcat(out, "%s%s:%s", out ? "," : "", node_ptr->name, idx);
    }
    list_iterator_destroy(it);
  }
  return out ? out : xstrdup("?");
}

/* The GPUs of one node: its gpu GRES state, or NULL. */
static gres_node_state_t* _node_gpus(int node_index) {
  node_record_t* node_ptr = node_record_table_ptr[node_index];
  gres_state_t* gs;

  if (!node_ptr || !node_ptr->gres_list ||
      !(gs = list_find_first(node_ptr->gres_list, _is_gpu, NULL)))
    return NULL;
  return gs->gres_data;
}

/* Makes cons_tres's GPU choice on each node of the candidate the engine's, where cons_tres
 * took as many GPUs there as the engine did: inside a node cons_tres takes the lowest free
 * index first and Links= only gathers the rest around it, so with GPU 0 busy a 4-GPU job
 * gets 1-4 across two NVLink islands while 4-7 is a whole free island. The selection
 * (gres_bit_select) becomes the allocation right after job_test, in
 * select_p_select_nodeinfo_set. RET the number of nodes changed. */
static int _steer_gpus(job_record_t* job_ptr, bitstr_t* bitmap, const nvl_candidate_t* cand) {
  int changed = 0;

  if (!job_ptr->gres_list_req) return 0;
  for (int k = 0; k < cand->num_nodes; k++) {
    int node = cand->nodes[k], n = cand->gpu_offsets[k + 1] - cand->gpu_offsets[k];
    const int* want = cand->gpus + cand->gpu_offsets[k];
    gres_node_state_t* ns = _node_gpus(node);
    bitstr_t* sel = NULL;
    gres_state_t* gs;
    ListIterator it;
    bool ok = true, same = true;
    int entries = 0;

    if (!bit_test(bitmap, node) || !ns || !ns->gres_bit_alloc) continue;
    it = list_iterator_create(job_ptr->gres_list_req);
    while ((gs = list_next(it))) {
      gres_job_state_t* js = gs->gres_data;
      if (xstrcmp(gs->gres_name, "gpu") || !js || !js->gres_bit_select ||
          node >= (int)js->total_node_cnt || !js->gres_bit_select[node] ||
          !bit_set_count(js->gres_bit_select[node]))
        continue;
      sel = js->gres_bit_select[node];
      entries++;
    }
    list_iterator_destroy(it);
    if (entries != 1 || bit_set_count(sel) != n)
      continue; /* several GPU types, or another count: cons_tres's choice stands */
    for (int g = 0; g < n && ok; g++) {
      ok = want[g] >= 0 && want[g] < bit_size(sel) && want[g] < bit_size(ns->gres_bit_alloc) &&
           !bit_test(ns->gres_bit_alloc, want[g]);
      same = same && bit_test(sel, want[g]);
    }
    if (!ok || same) continue;
    bit_clear_all(sel);
    for (int g = 0; g < n; g++) bit_set(sel, want[g]);
    changed++;
  }
  return changed;
}

/* What users see in `scontrol show job`: only ever replaces a comment of our own. */
static void _set_comment(job_record_t* job_ptr, const char* text) {
  if (job_ptr->system_comment && xstrncmp(job_ptr->system_comment, "nvlplace:", 9)) return;
  if (!xstrcmp(job_ptr->system_comment, text)) return;
  xfree(job_ptr->system_comment);
  job_ptr->system_comment = xstrdup(text);
}

/* ---- job_test ------------------------------------------------------------------------ */

typedef struct {
  nvl_job_test_fn fn;
  job_record_t* job_ptr;
  uint32_t min_nodes, max_nodes, req_nodes;
  uint16_t mode;
  List preemptee_candidates;
  List* preemptee_job_list;
  bitstr_t* exc_core_bitmap;
} nvl_call_t;

/* cons_tres on the usable nodes of one candidate. On success the caller's bitmap gets
 * cons_tres's choice. */
static int _try_candidate(const nvl_call_t* c, bitstr_t* bitmap, const nvl_candidate_t* cand) {
  bitstr_t* trial;
  int rc;

  if ((uint32_t)cand->num_nodes < c->min_nodes ||
      (c->max_nodes && (uint32_t)cand->num_nodes > c->max_nodes))
    return SLURM_ERROR;
  trial = bit_alloc(bit_size(bitmap));
  for (int i = 0; i < cand->num_nodes; i++) {
    if (bit_test(bitmap, cand->nodes[i])) bit_set(trial, cand->nodes[i]);
  }
  rc = c->fn(c->job_ptr, trial, c->min_nodes, c->max_nodes, c->req_nodes, c->mode,
             c->preemptee_candidates, c->preemptee_job_list, c->exc_core_bitmap);
  if (rc == SLURM_SUCCESS)
    bit_copybits(bitmap, trial);
  else if (c->preemptee_job_list)
    FREE_NULL_LIST(*c->preemptee_job_list);
  FREE_NULL_BITMAP(trial);
  return rc;
}

static int _forward(const nvl_call_t* c, bitstr_t* bitmap) {
  return c->fn(c->job_ptr, bitmap, c->min_nodes, c->max_nodes, c->req_nodes, c->mode,
               c->preemptee_candidates, c->preemptee_job_list, c->exc_core_bitmap);
}

/* RUN_NOW and WILL_RUN with a placement: the candidates, then the full bitmap. */
static int _try_all(const nvl_call_t* c, bitstr_t* bitmap, nvl_result_t* r, int level) {
  job_record_t* job_ptr = c->job_ptr;
  bool run_now = SELECT_IS_MODE_RUN_NOW(c->mode);
  int rc;

  for (int i = 0; i < r->num_candidates || (i > 0 && nvl_facade_more(nvl_facade, r)); i++) {
    const nvl_candidate_t* cand = &r->candidates[i];
    if (_try_candidate(c, bitmap, cand) != SLURM_SUCCESS) {
      if (level >= NVL_LOG_DEBUG)
        info("nvlplace: %pJ %s: cons_tres refused candidate %d of %d: %s", job_ptr,
             _mode_name(c->mode), i + 1, r->num_candidates, cand->describe);
      continue;
    }
    if (run_now) {
      char* before = _selected_gpus(job_ptr, bitmap);
      int steered = _steer_gpus(job_ptr, bitmap, cand);
      char* gpus = _selected_gpus(job_ptr, bitmap);
      char* comment = NULL;
      if (level >= NVL_LOG_INFO)
        info(
            "nvlplace: %pJ placed %s -> %s; slurm gpus %s%s%s%s; candidate %d of %d; "
            "relaxations: %s",
            job_ptr, r->request, cand->describe, gpus, steered ? " (cons_tres chose " : "",
            steered ? before : "", steered ? ")" : "", i + 1, r->num_candidates, r->relaxations);
      xfree(before);
      xstrfmtcat(comment, "nvlplace: %s -> %s; relaxations: %s", r->request, cand->describe,
                 r->relaxations);
      _set_comment(job_ptr, comment);
      xfree(comment);
      xfree(gpus);
    } else if (level >= NVL_LOG_DEBUG) {
      info("nvlplace: %pJ will_run on candidate %d of %d: %s", job_ptr, i + 1, r->num_candidates,
           cand->describe);
    }
    return SLURM_SUCCESS;
  }

  /* A hard constraint is not given up for cons_tres's own choice, which may split TP
   * groups: the job waits for resources, as if cons_tres had refused it. */
  if (r->hard) {
    char* line = NULL;
    xstrfmtcat(line,
               "nvlplace: waiting: %s: cons_tres refused the %d node sets that keep "
               "it (CPUs, memory or other limits), first %s",
               r->request, r->num_candidates, r->candidates[0].describe);
    if (run_now) {
      if (nvl_facade_first_time(nvl_facade, job_ptr->job_id, line) && level >= NVL_LOG_INFO)
        info("nvlplace: %pJ %s", job_ptr, line + strlen("nvlplace: "));
      _set_comment(job_ptr, line);
    }
    xfree(line);
    return SLURM_ERROR;
  }
  rc = _forward(c, bitmap);
  if (run_now && rc == SLURM_SUCCESS && level >= NVL_LOG_INFO) {
    char* nodes = bitmap2node_name(bitmap);
    char* gpus = _selected_gpus(job_ptr, bitmap);
    info(
        "nvlplace: %pJ placed %s -> %s by cons_tres (relaxation: cons_tres refused the %d "
        "node sets of nvlplace, first %s); slurm gpus %s",
        job_ptr, r->request, nodes, r->num_candidates,
        r->num_candidates ? r->candidates[0].describe : "none", gpus);
    xfree(nodes);
    xfree(gpus);
  }
  return rc;
}

/* Engine not usable for this job (bad options or request, internal error: `is_error`; or a
 * request it does not handle): logged once per job and message, then cons_tres as is. */
static int _fallback(const nvl_call_t* c, bitstr_t* bitmap, nvl_facade_t* f, const char* what,
                     bool is_error) {
  char* line = NULL;

  xstrfmtcat(line, "%s; placing as cons_tres", what);
  if (f && nvl_facade_first_time(f, c->job_ptr->job_id, line)) {
    if (is_error)
      error("nvlplace: %pJ: %s", c->job_ptr, line);
    else if (nvl_facade_log_level(f) >= NVL_LOG_INFO)
      info("nvlplace: %pJ: %s", c->job_ptr, line);
  }
  xfree(line);
  return _forward(c, bitmap);
}

/* A hard constraint (strict NVLink TP groups, a required max tier) the engine cannot meet.
 * TEST_ONLY (asked on an empty cluster): never runnable here, so Slurm refuses the job at
 * submit time. RUN_NOW: the job waits (Reason=Resources) and says why in its
 * SystemComment. WILL_RUN: no start time, so backfill reserves nothing for it (cons_tres
 * would promise a start now that RUN_NOW then refuses, and backfill would hold those
 * nodes for the job's whole time limit). RET SLURM_ERROR. */
static int _hard_no_room(const nvl_call_t* c, const nvl_result_t* r, int level) {
  job_record_t* job_ptr = c->job_ptr;
  char* line = NULL;

  if (SELECT_IS_MODE_WILL_RUN(c->mode)) {
    if (level >= NVL_LOG_DEBUG)
      info("nvlplace: %pJ will_run: %s: %s", job_ptr, r->request, r->reason);
    return SLURM_ERROR;
  }
  if (SELECT_IS_MODE_TEST_ONLY(c->mode))
    xstrfmtcat(line, "nvlplace: never runnable on this cluster: %s: %s", r->request, r->reason);
  else
    xstrfmtcat(line, "nvlplace: waiting: %s: %s", r->request, r->reason);
  if (nvl_facade_first_time(nvl_facade, job_ptr->job_id, line) && level >= NVL_LOG_INFO)
    info("nvlplace: %pJ %s", job_ptr, line + strlen("nvlplace: "));
  _set_comment(job_ptr, line);
  xfree(line);
  return SLURM_ERROR;
}

extern int nvl_ctld_job_test(nvl_job_test_fn cons_tres, job_record_t* job_ptr, bitstr_t* bitmap,
                             uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
                             uint16_t mode, List preemptee_candidates, List* preemptee_job_list,
                             bitstr_t* exc_core_bitmap) {
  nvl_call_t c = {cons_tres,
                  job_ptr,
                  min_nodes,
                  max_nodes,
                  req_nodes,
                  mode,
                  preemptee_candidates,
                  preemptee_job_list,
                  exc_core_bitmap};
  nvl_request_t q;
  nvl_job_opts_t opts;
  nvl_snapshot_t snap;
  nvl_result_t r;
  bitstr_t* usable;
  char msg[512];
  int level, rc, want, required;

  slurm_mutex_lock(&nvl_lock);
  if (!nvl_load_tried) {
    slurm_mutex_unlock(&nvl_lock);
    nvl_ctld_load_config();
    slurm_mutex_lock(&nvl_lock);
  }
  /* Reservation and preemption-on-full tests are cons_tres's alone. */
  if (!nvl_facade || !job_ptr || !job_ptr->details || SELECT_IS_MODE_RESV(mode) ||
      SELECT_IS_PREEMPT_ON_FULL_TEST(mode)) {
    slurm_mutex_unlock(&nvl_lock);
    return _forward(&c, bitmap);
  }
  want = _job_request(job_ptr, min_nodes, max_nodes, &q, &opts, msg, sizeof(msg));
  if (want == 0) {
    slurm_mutex_unlock(&nvl_lock);
    return _forward(&c, bitmap);
  }
  if (want < 0) {
    rc = _fallback(&c, bitmap, nvl_facade, msg, true);
    slurm_mutex_unlock(&nvl_lock);
    return rc;
  }
  level = nvl_facade_log_level(nvl_facade);
  /* "Could it ever run" only matters for a constraint the job would wait for. */
  if (SELECT_IS_MODE_TEST_ONLY(mode) && q.tp <= 1 && !q.max_tier) {
    slurm_mutex_unlock(&nvl_lock);
    return _forward(&c, bitmap);
  }

  /* Required nodes (-w): the job must hold ALL of them, which the engine (choosing a subset
   * of allowed nodes) cannot promise for more than one node, nor when the job needs more
   * nodes than the one named: cons_tres decides those, with one line in the log. */
  required =
      job_ptr->details->req_node_bitmap ? bit_set_count(job_ptr->details->req_node_bitmap) : 0;
  if (job_ptr->details->req_node_bitmap && (required > 1 || min_nodes > 1)) {
    snprintf(msg, sizeof(msg),
             "-w names %d node(s) for a job of %u node(s): the topology "
             "constraints are not applied",
             required, min_nodes);
    rc = _fallback(&c, bitmap, nvl_facade, msg, false);
    slurm_mutex_unlock(&nvl_lock);
    return rc;
  }
  /* A required node (-w) narrows the choice; the bitmap already holds the partition's
   * usable nodes minus excluded, down or reserved ones. */
  usable = bit_copy(bitmap);
  if (job_ptr->details->req_node_bitmap) bit_and(usable, job_ptr->details->req_node_bitmap);
  /* TEST_ONLY asks "could it ever run": the engine answers on an empty cluster. */
  q.ignore_busy = SELECT_IS_MODE_TEST_ONLY(mode);
  _snapshot(usable, &snap);
  nvl_facade_place(nvl_facade, snap.nodes, snap.count, &q, &r);
  _snapshot_free(&snap);
  FREE_NULL_BITMAP(usable);

  if (r.status == NVL_BAD_REQUEST || r.status == NVL_INTERNAL) {
    snprintf(msg, sizeof(msg), "%s%s%s", r.status == NVL_INTERNAL ? "internal error: " : "",
             r.request[0] ? "" : "request not usable: ", r.reason);
    rc = _fallback(&c, bitmap, nvl_facade, msg, true);
  } else if (r.status == NVL_NO_ROOM && r.hard) {
    rc = _hard_no_room(&c, &r, level);
  } else if (r.status == NVL_NO_ROOM || SELECT_IS_MODE_TEST_ONLY(mode)) {
    /* Nothing nvlplace must wait for (or "could it ever run", which it can): cons_tres. */
    if (r.status == NVL_NO_ROOM && level >= NVL_LOG_DEBUG)
      info("nvlplace: %pJ %s: no placement now (%s); cons_tres decides", job_ptr, _mode_name(mode),
           r.reason);
    rc = _forward(&c, bitmap);
  } else {
    rc = _try_all(&c, bitmap, &r, level);
  }
  nvl_result_clear(&r);
  slurm_mutex_unlock(&nvl_lock);
  return rc;
}
