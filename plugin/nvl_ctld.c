/* The slurmctld side of select/cons_tres_nvlplace (see nvl_ctld.h). It only copies
 * slurmctld's state into the facade's plain structs, offers cons_tres the node sets the
 * facade decides on (with each node's free GPUs masked to the decision's, so that what
 * cons_tres allocates is the decision), reads back what Slurm will allocate, and logs. The
 * decisions themselves (modes, -w, hard and soft constraints, waiting, holding, comments)
 * are made in decision.cc. */
#include "nvl_ctld.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "held_gpus.h"
#include "nvl_options.h"
#include "nvl_slurm_compat.h"
#include "nvlplace_facade.h"
#include "src/common/job_resources.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

/* The loaded configuration; NULL: behave exactly as cons_tres. Swapped on reconfigure;
 * each job_test holds its own reference, so the lock is never held across cons_tres. */
static pthread_mutex_t nvl_lock = PTHREAD_MUTEX_INITIALIZER;
static nvl_facade_t* nvl_facade = NULL;
/* Loads run one at a time, and the status file is written by one thread at a time. Several
 * slurmctld threads can load at once: job_submit runs under the job read lock, so two submits
 * can find the NVLink health file changed in the same second, and each load frees the
 * configuration it replaced (another load still using it would read freed memory), writes the
 * last good copy through the same DIR.new and DIR.old (two at once could leave no good copy)
 * and the status file through the same FILE.new. Taken before nvl_lock and nvl_held_lock,
 * never while holding either. */
static pthread_mutex_t nvl_load_serial = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t nvl_status_serial = PTHREAD_MUTEX_INITIALIZER;
static bool nvl_load_tried = false;
/* The last load's error ("" after a good load), and when the configuration in force was
 * loaded. Under nvl_lock. */
static char nvl_load_error[2048] = "";
static time_t nvl_loaded_at = 0, nvl_error_at = 0;
/* What is in force: "loaded" (nvlplace.yaml), "snapshot" (the last good copy), "none". */
static char nvl_in_force[16] = "none";
/* Under nvl_lock too: the configuration for which nodes without GPU indexes were last
 * reported, and the unregistered nodes last reported ("" when none). */
static const nvl_facade_t* nvl_indexless_reported = NULL;
static char* nvl_unregistered_reported = NULL;

/* The GPUs running jobs hold (held_gpus.h), for WILL_RUN's end times: told when cons_tres
 * allocates a job's resources (select_nodeinfo_set) and at job fini, checked against every node's
 * gres_bit_alloc at each use and rebuilt from the job list when they differ, when it is not valid
 * (first use, after a load of the configuration, a resize or an expand) or when it ran out of
 * memory. nvl_held_lock is never taken while nvl_lock is held. */
static pthread_mutex_t nvl_held_lock = PTHREAD_MUTEX_INITIALIZER;
static nvl_held_t* nvl_held = NULL;
static bool nvl_held_valid = false;
static uint64_t nvl_held_drifts = 0; /* rebuilds because the view differed from Slurm's */

/* The decision of the last RUN_NOW start job_test accepted (nvl_decision_starting), with a
 * reference to its configuration: slurmctld's select_nodes still checks accounting limits,
 * IMEX channels, burst buffers and MPI ports after job_test, and may keep the job pending.
 * select_nodeinfo_set, in the same select_nodes call, says it started (its line and comment
 * are reported then); any job_test after that select_nodes returned finds the start dropped
 * (the line says the job waits, with its Reason). The record is matched, not only the id:
 * a job array's task that starts gets a new job id in select_nodes (job_array_post_sched,
 * before select_nodeinfo_set), and the array's pending record keeps the old one. */
static pthread_mutex_t nvl_start_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  job_record_t* job_ptr;
  uint32_t job_id;
  nvl_decision_t* d;
  nvl_facade_t* f;
} nvl_start;

static void _start_clear(void) {
  nvl_decision_free(nvl_start.d);
  nvl_facade_free(nvl_start.f);
  memset(&nvl_start, 0, sizeof(nvl_start));
}

#define NVL_SUMMARY_INTERVAL_S 300.0

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
  nvl_hostlist_t missing = hostlist_create(NULL);
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

/* The facade's guard logs an exception it caught here (plugin/guard.h). */
static void _log_sink(int level, const char* line) {
  if (level == NVL_LOG_ERROR)
    error("%s", line);
  else
    info("%s", line);
}

/* ${StateSaveLocation}/nvlplace/LEAF: the last good configuration ("last-good") and the
 * status `nvlplace status` reads ("status.json"), kept where slurmctld keeps its state so
 * that they survive a restart, the re-exec of `scontrol reconfigure` (23.11+) and a takeover
 * by the backup controller. xfree the result. */
static char* _state_path(const char* leaf) {
  const char* dir = slurm_conf.state_save_location ? slurm_conf.state_save_location : ".";
  char* path = NULL;

  xstrfmtcat(path, "%s/nvlplace/%s", dir, leaf);
  return path;
}

/* The status file, from what is in force (f may be NULL). */
static void _write_status(const nvl_facade_t* f) {
  char* status = _state_path("status.json");
  char* config = _config_path();
  char in_force[sizeof(nvl_in_force)], problem[sizeof(nvl_load_error)];
  time_t loaded_at, error_at;

  slurm_mutex_lock(&nvl_lock);
  snprintf(in_force, sizeof(in_force), "%s", nvl_in_force);
  snprintf(problem, sizeof(problem), "%s", nvl_load_error);
  loaded_at = nvl_loaded_at;
  error_at = nvl_error_at;
  slurm_mutex_unlock(&nvl_lock);
  slurm_mutex_lock(&nvl_status_serial);
  if (nvl_write_status(status, f, config, in_force, (double)loaded_at, problem, (double)error_at) !=
      0)
    debug("nvlplace: cannot write %s", status);
  slurm_mutex_unlock(&nvl_status_serial);
  xfree(status);
  xfree(config);
}

/* Loads nvlplace.yaml (or, with nothing good in memory, the last good copy) and puts it in
 * force unless it is bad. health_changed: the load is the NVLink health file's change, not a
 * reconfigure (the next change of that file loads again too). Under nvl_load_serial. */
static void _load_config(bool health_changed) {
  char err[2048] = "", source[1024] = "", snap_err[2048] = "";
  char* path = _config_path();
  char* snapshot = _state_path("last-good");
  nvl_facade_t *loaded, *old, *status_of;
  bool had_good, from_snapshot = false;
  time_t old_loaded_at;

  nvl_facade_set_log_sink(_log_sink);
  loaded = nvl_facade_load(path, err, sizeof(err));
  slurm_mutex_lock(&nvl_lock);
  had_good = nvl_facade != NULL;
  slurm_mutex_unlock(&nvl_lock);
  /* Nothing good in memory (a restart, the re-exec of a reconfigure): the copy kept at the
   * last good load. */
  if (!loaded && !had_good) {
    loaded = nvl_facade_load_snapshot(snapshot, source, sizeof(source), snap_err, sizeof(snap_err));
    from_snapshot = loaded != NULL;
  }

  slurm_mutex_lock(&nvl_lock);
  old = nvl_facade;
  old_loaded_at = nvl_loaded_at;
  if (loaded) {
    nvl_facade = loaded;
    nvl_loaded_at = time(NULL);
    snprintf(nvl_in_force, sizeof(nvl_in_force), "%s", from_snapshot ? "snapshot" : "loaded");
  }
  if (loaded && !from_snapshot) {
    nvl_load_error[0] = '\0';
    nvl_error_at = 0;
  } else {
    snprintf(nvl_load_error, sizeof(nvl_load_error), "%s", err);
    nvl_error_at = time(NULL);
  }
  nvl_load_tried = true;
  status_of = nvl_facade_ref(nvl_facade);
  slurm_mutex_unlock(&nvl_lock);

  /* The view of held GPUs is rebuilt after every reconfigure, whatever the load gave:
   * Slurm rebuilds its own node usage then. */
  nvl_ctld_held_invalidate();
  if (loaded) {
    nvl_facade_free(old);
    if (from_snapshot)
      error(
          "nvlplace: %s; the last good configuration (kept in %s from %s) is in force until "
          "this is fixed and `scontrol reconfigure` is run",
          err, snapshot, source[0] ? source : path);
    info("nvlplace: loaded %s: %s", from_snapshot ? snapshot : path, nvl_facade_describe(loaded));
    _check_nodes(loaded, path);
    if (!from_snapshot &&
        nvl_facade_save_snapshot(loaded, snapshot, snap_err, sizeof(snap_err)) != 0)
      error(
          "nvlplace: cannot keep a copy of the good configuration in %s: %s; after a restart "
          "a bad nvlplace.yaml would find no last good one",
          snapshot, snap_err);
  } else if (old) {
    /* A bad new configuration never replaces a good one: Slurm keeps running on its last
     * good configuration too. */
    char when[64];
    struct tm tm;
    localtime_r(&old_loaded_at, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    nvl_facade_accept_files(old);
    error(
        "nvlplace: %s; the configuration loaded at %s stays in force until this is fixed "
        "and %s",
        err, when,
        health_changed ? "the NVLink health file changes again or `scontrol reconfigure` is run"
                       : "`scontrol reconfigure` is run");
  } else
    error(
        "nvlplace: %s; no usable configuration (and no last good copy in %s): jobs with "
        "nvlplace options wait (their SystemComment says why), other jobs are placed exactly "
        "as select/cons_tres, until this is fixed and `scontrol reconfigure` is run",
        err, snapshot);
  _write_status(status_of);
  nvl_facade_free(status_of);
  xfree(snapshot);
  xfree(path);
}

extern void nvl_ctld_load_config(void) {
  /* slurmctld reloads its job records here (a backup controller taking over again in the
   * same process): a kept start must not match a record at the same address. */
  slurm_mutex_lock(&nvl_start_lock);
  _start_clear();
  slurm_mutex_unlock(&nvl_start_lock);
  slurm_mutex_lock(&nvl_load_serial);
  _load_config(false);
  slurm_mutex_unlock(&nvl_load_serial);
}

/* The first load (seen NULL), or a reload because `seen` (a reference the caller holds, so
 * its address is not reused) found its files changed: done unless another thread did it
 * while this one waited for its turn (loaded the change, or failed to and kept `seen`, which
 * then accepted the files: one error per change, not one per thread that saw it). */
static void _load_unless_done(nvl_facade_t* seen) {
  bool go;

  slurm_mutex_lock(&nvl_load_serial);
  slurm_mutex_lock(&nvl_lock);
  go = seen ? nvl_facade == seen : !nvl_load_tried;
  slurm_mutex_unlock(&nvl_lock);
  if (go && seen) go = nvl_facade_files_changed(seen);
  if (go) _load_config(seen != NULL);
  slurm_mutex_unlock(&nvl_load_serial);
}

extern void nvl_ctld_fini(void) {
  slurm_mutex_lock(&nvl_load_serial);
  slurm_mutex_lock(&nvl_lock);
  nvl_facade_free(nvl_facade);
  nvl_facade = NULL;
  nvl_load_tried = false;
  nvl_load_error[0] = '\0';
  snprintf(nvl_in_force, sizeof(nvl_in_force), "none");
  nvl_indexless_reported = NULL;
  xfree(nvl_unregistered_reported);
  slurm_mutex_unlock(&nvl_lock);
  slurm_mutex_lock(&nvl_held_lock);
  nvl_held_free(nvl_held);
  nvl_held = NULL;
  nvl_held_valid = false;
  slurm_mutex_unlock(&nvl_held_lock);
  slurm_mutex_lock(&nvl_start_lock);
  _start_clear();
  slurm_mutex_unlock(&nvl_start_lock);
  slurm_mutex_unlock(&nvl_load_serial);
}

/* A reference to the configuration (loaded at the first call), or NULL. */
static nvl_facade_t* _acquire(void) {
  nvl_facade_t* f;

  slurm_mutex_lock(&nvl_lock);
  if (!nvl_load_tried) {
    slurm_mutex_unlock(&nvl_lock);
    _load_unless_done(NULL);
    slurm_mutex_lock(&nvl_lock);
  }
  f = nvl_facade_ref(nvl_facade);
  slurm_mutex_unlock(&nvl_lock);
  /* The NVLink health file changed (a rack split, a tray's NVLink down): the next decision
   * sees the new domains. */
  if (f && nvl_facade_stale(f, (double)time(NULL))) {
    _load_unless_done(f);
    nvl_facade_free(f);
    slurm_mutex_lock(&nvl_lock);
    f = nvl_facade_ref(nvl_facade);
    slurm_mutex_unlock(&nvl_lock);
  }
  return f;
}

/* ---- slurmctld's state as plain structs ------------------------------------------- */

static int _is_gpu(void* x, void* key) {
  (void)key;
  return !xstrcmp(((gres_state_t*)x)->gres_name, "gpu");
}

/* The GPUs of one node: its gpu GRES state, or NULL. */
static gres_node_state_t* _node_gpus(int node_index) {
  node_record_t* node_ptr;
  gres_state_t* gs;

  if (node_index < 0 || node_index >= node_record_count) return NULL;
  node_ptr = node_record_table_ptr[node_index];
  if (!node_ptr || !node_ptr->gres_list ||
      !(gs = list_find_first(node_ptr->gres_list, _is_gpu, NULL)))
    return NULL;
  return gs->gres_data;
}

/* The GPUs of a node (its gpu GRES state) that jobs hold shards or MPS of: the sharing
 * GRES's bitmap by GPU index, or NULL when none is shared. cons_tres gives such a GPU to no
 * gres/gpu job. */
static bitstr_t* _shared_gpus(gres_node_state_t* ns) {
  gres_node_state_t* sharing = ns ? NVL_SHARING_GRES(ns) : NULL;

  if (!sharing || !sharing->gres_bit_alloc || !bit_set_count(sharing->gres_bit_alloc)) return NULL;
  return sharing->gres_bit_alloc;
}

/* GPUs of one node the held view is checked against (more: that node is not checked). */
#define NVL_CHECK_GPUS 1024

/* A growing list of ints: one allocation per snapshot for every node's free GPUs, where
 * there was one per node and call (1,024 on every job_test of a 1,024-node cluster). */
typedef struct {
  int* v;
  int len, cap;
} nvl_ints_t;

/* Room for n more after b->len (b->v may move). */
static int* _ints_room(nvl_ints_t* b, int n) {
  if (b->len + n > b->cap) {
    b->cap = MAX(2 * b->cap, MAX(b->len + n, 1024));
    xrealloc_nz(b->v, (size_t)b->cap * sizeof(int));
  }
  return b->v + b->len;
}

/* Why a node with GPUs offers none to nvlplace. */
typedef enum {
  NVL_GPUS_INDEXED,      /* free GPUs by index (possibly none free) */
  NVL_GPUS_UNREGISTERED, /* slurmd has not registered its GPUs since slurmctld started */
  NVL_GPUS_INDEXLESS,    /* registered, but gres.conf gives Count= without File= */
} nvl_gpus_state_t;

/* Whether bit i of b (NULL: none) is set. */
static bool _in(bitstr_t* b, int i) { return b && i >= 0 && i < bit_size(b) && bit_test(b, i); }

/* Free GPU indexes of one node, from the GRES allocation that slurmctld keeps per node
 * (rebuilt from the job records at every start, so a restart loses nothing). A node whose
 * GPUs have no indexes offers none: nvlplace places by index. After a restart slurmctld
 * has the node's count and busy bitmap from its state file but no GPU indexes until the
 * node's slurmd registers again (gres_cnt_found is NO_VAL64 until then): cons_tres would
 * allocate GPUs there without indexes. RET the number of free GPUs, appended to `buf`; *state says
 * why a node with GPUs offers none. With `check` (the held view, under nvl_held_lock), a node whose
 * allocated GPUs are not the ones the view holds there sets *drift. A GPU of `reclaim` (NULL:
 * none) counts as free: running jobs the job may preempt hold it, or hold all its shares.
 * Any other GPU some job holds shards or MPS of is busy: cons_tres gives it to no gres/gpu
 * job (it is in no job's gpu allocation, so not in the held view); *shared counts those. A GPU
 * of `reserved` (NULL: none) is never free: a reservation keeps it from the job. */
static int _free_gpus(int node_index, nvl_ints_t* buf, nvl_gpus_state_t* state,
                      const nvl_held_t* check, bool* drift, bitstr_t* reclaim, bitstr_t* reserved,
                      int* shared_busy) {
  gres_node_state_t* ns = _node_gpus(node_index);
  bitstr_t* shared;
  int avail, n = 0, size;
  int alloc[NVL_CHECK_GPUS];
  int num_alloc = 0;
  int* out;

  *state = NVL_GPUS_INDEXED;
  if (!ns || (avail = (int)ns->gres_cnt_avail) <= 0) {
    if (check && !nvl_held_matches(check, node_index, NULL, 0)) *drift = true;
    return 0;
  }
  if (!ns->no_consume && ns->gres_cnt_found == NO_VAL64) {
    *state = NVL_GPUS_UNREGISTERED;
    return 0;
  }
  if (!ns->no_consume && !ns->gres_bit_alloc) {
    *state = NVL_GPUS_INDEXLESS;
    return 0;
  }
  out = _ints_room(buf, avail);
  if (ns->no_consume) {
    for (int i = 0; i < avail; i++) out[n++] = i;
    buf->len += n;
    return n;
  }
  shared = _shared_gpus(ns);
  size = bit_size(ns->gres_bit_alloc);
  for (int i = 0; i < size; i++) {
    bool reclaimed = _in(reclaim, i);
    if (!bit_test(ns->gres_bit_alloc, i) || reclaimed) {
      if (i >= avail || _in(reserved, i)) continue;
      if (!reclaimed && _in(shared, i))
        (*shared_busy)++;
      else
        out[n++] = i;
    } else if (num_alloc < NVL_CHECK_GPUS) {
      alloc[num_alloc++] = i;
    } else {
      check = NULL; /* more GPUs on one node than the check holds: not checked */
    }
  }
  if (check && !nvl_held_matches(check, node_index, alloc, num_alloc)) *drift = true;
  buf->len += n;
  return n;
}

typedef struct {
  nvl_node_t* nodes; /* node_record_count entries, index = node index */
  nvl_ints_t free;   /* every node's free GPUs, node after node (nodes[i].free_gpus) */
  int count;
  bitstr_t* unregistered; /* nodes whose GPUs have not registered yet, or NULL if none */
  int indexless_usable;   /* usable nodes with GPUs but no GPU indexes (cons_tres's alone) */
  bitstr_t* shared;       /* nodes with a GPU busy only by its shares (shard, MPS), or NULL */
  int* busy_gpus;         /* WILL_RUN: busy GPUs by node (nodes[i].busy_gpus points here) */
  int64_t* busy_until;    /* ... and when each is free */
} nvl_snapshot_t;

/* Logs `names` (xfree'd here) once per configuration (indexless) or per change of the set
 * (unregistered), under nvl_lock: job_test runs in several slurmctld threads. */
static void _report_gpuless(const nvl_facade_t* f, char* indexless, char* unregistered) {
  bool say_indexless, say_unregistered;

  slurm_mutex_lock(&nvl_lock);
  say_indexless = indexless && nvl_indexless_reported != f;
  if (say_indexless) nvl_indexless_reported = f;
  say_unregistered = xstrcmp(unregistered ? unregistered : "",
                             nvl_unregistered_reported ? nvl_unregistered_reported : "");
  if (say_unregistered) {
    xfree(nvl_unregistered_reported);
    nvl_unregistered_reported = xstrdup(unregistered ? unregistered : "");
  }
  slurm_mutex_unlock(&nvl_lock);
  if (say_indexless)
    error(
        "nvlplace: %s have GPUs without indexes (gres.conf Count= without File=): nvlplace "
        "places no job there; give File= per GPU (nvlplace export slurm writes it)",
        indexless);
  if (say_unregistered && unregistered)
    info(
        "nvlplace: %s have not registered their GPUs since slurmctld started (no GPU "
        "indexes yet): no GPU job starts there until they do",
        unregistered);
  else if (say_unregistered)
    info("nvlplace: every node has registered its GPUs");
  xfree(indexless);
  xfree(unregistered);
}

static char* _names(nvl_hostlist_t hl) {
  char* names;
  if (!hl) return NULL;
  names = hostlist_ranged_string_xmalloc(hl);
  hostlist_destroy(hl);
  return names;
}

/* The nodes' free GPUs, and the GPUs of `reclaim` (NULL, or a bitmap or NULL per node:
 * _reclaimable), but none of `reserved` (the same shape: _reserved_gpus). With `check` (under
 * nvl_held_lock): RET the first node whose allocated GPUs differ from the held view's, else
 * -1. */
static int _snapshot(const nvl_facade_t* f, bitstr_t* usable, nvl_snapshot_t* s,
                     const nvl_held_t* check, bitstr_t** reclaim, bitstr_t** reserved) {
  node_record_t* node_ptr;
  nvl_hostlist_t indexless = NULL, unregistered = NULL;
  int drifted = -1;

  s->count = node_record_count;
  s->nodes = xcalloc(s->count, sizeof(nvl_node_t));
  s->free = (nvl_ints_t){0};
  s->unregistered = NULL;
  s->indexless_usable = 0;
  s->shared = NULL;
  s->busy_gpus = NULL;
  s->busy_until = NULL;
  for (int i = 0; (node_ptr = next_node(&i)); i++) {
    nvl_gpus_state_t state;
    s->nodes[i].name = node_ptr->name;
    s->nodes[i].usable = bit_test(usable, i);
    bool drift = false;
    int shared = 0;
    s->nodes[i].num_free =
        _free_gpus(i, &s->free, &state, check, &drift, reclaim ? reclaim[i] : NULL,
                   reserved ? reserved[i] : NULL, &shared);
    if (drift && drifted < 0) drifted = i;
    if (shared) {
      if (!s->shared) s->shared = bit_alloc(node_record_count);
      bit_set(s->shared, i);
    }
    if (state == NVL_GPUS_INDEXLESS) {
      if (s->nodes[i].usable) s->indexless_usable++;
      if (!indexless) indexless = hostlist_create(NULL);
      hostlist_push_host(indexless, node_ptr->name);
    } else if (state == NVL_GPUS_UNREGISTERED) {
      if (!s->unregistered) s->unregistered = bit_alloc(bit_size(usable));
      if (i < bit_size(usable)) bit_set(s->unregistered, i);
      if (!unregistered) unregistered = hostlist_create(NULL);
      hostlist_push_host(unregistered, node_ptr->name);
    }
  }
  /* Each node's list where the buffer now is (it moved as it grew). */
  for (int i = 0, at = 0; i < s->count; at += s->nodes[i].num_free, i++)
    s->nodes[i].free_gpus = s->nodes[i].num_free ? s->free.v + at : NULL;
  _report_gpuless(f, _names(indexless), _names(unregistered));
  return drifted;
}

/* slurmctld's job list and job lookup are slurmctld's own symbols, not libslurmfull's: weak
 * references, so that the plugin links with -z defs and loads in the clients and
 * slurmstepd that open every select plugin up to 24.11 (there they are NULL and never
 * used). */
#pragma weak job_list
#pragma weak find_job_record

/* Calls fn(node index, the GPUs job_ptr holds there, arg) for each node of the job, from
 * the gpu entries of its gres_list_alloc (gres_bit_alloc per node of the job, in the order
 * of its job_resrcs node bitmap), until fn returns non-zero; with `shares`, from its shard
 * and mps entries instead (a bit per GPU it holds shares of). RET that, or 0. */
static int _job_gres_each(job_record_t* job_ptr, bool shares, int (*fn)(int, bitstr_t*, void*),
                          void* arg) {
  bitstr_t* on;
  gres_state_t* gs;
  nvl_list_itr_t it;
  int rc = 0;

  if (!job_ptr->job_resrcs || !(on = job_ptr->job_resrcs->node_bitmap) || !job_ptr->gres_list_alloc)
    return 0;
  it = list_iterator_create(job_ptr->gres_list_alloc);
  while (!rc && (gs = list_next(it))) {
    gres_job_state_t* js = gs->gres_data;
    int first, last, j = 0;
    if (!js || !js->gres_bit_alloc) continue;
    if (shares ? xstrcmp(gs->gres_name, "shard") && xstrcmp(gs->gres_name, "mps")
               : xstrcmp(gs->gres_name, "gpu"))
      continue;
    first = bit_ffs(on);
    last = bit_fls(on);
    for (int i = first; !rc && first >= 0 && i <= last && j < (int)js->node_cnt; i++) {
      bitstr_t* b;
      if (!bit_test(on, i)) continue;
      if ((b = js->gres_bit_alloc[j++])) rc = fn(i, b, arg);
    }
  }
  list_iterator_destroy(it);
  return rc;
}

static int _job_gpus_each(job_record_t* job_ptr, int (*fn)(int, bitstr_t*, void*), void* arg) {
  return _job_gres_each(job_ptr, false, fn, arg);
}

typedef struct {
  uint32_t job_id;
  int* gpus;
  int cap;
} nvl_held_add_t;

static int _held_add_node(int node_index, bitstr_t* b, void* arg) {
  nvl_held_add_t* a = arg;
  int size = bit_size(b), n = 0;

  if (size > a->cap) {
    a->cap = size;
    xrecalloc(a->gpus, a->cap, sizeof(int));
  }
  for (int g = 0; g < size; g++)
    if (bit_test(b, g)) a->gpus[n++] = g;
  return n ? nvl_held_add(nvl_held, a->job_id, node_index, a->gpus, n) : 0;
}

/* Adds the GPUs job_ptr holds to the view. RET 0, or -1 when the view ran out of memory. */
static int _held_add_job(job_record_t* job_ptr) {
  nvl_held_add_t a = {job_ptr->job_id, NULL, 0};
  int rc = _job_gpus_each(job_ptr, _held_add_node, &a);

  xfree(a.gpus);
  return rc;
}

static int _reclaim_node(int node_index, bitstr_t* b, void* arg) {
  bitstr_t** reclaim = arg;

  if (node_index >= node_record_count) return 0;
  if (!reclaim[node_index]) reclaim[node_index] = bit_alloc(bit_size(b));
  if (bit_size(reclaim[node_index]) == bit_size(b)) bit_or(reclaim[node_index], b);
  return 0;
}

/* slurmctld's own (22.05: slurmctld/preempt.c; 23.11 on: interfaces/preempt.c, linked into
 * slurmctld): a weak reference, as job_list. */
extern uint16_t slurm_job_preempt_mode(job_record_t* job_ptr);
#pragma weak slurm_job_preempt_mode

/* A preemptee candidate whose resources preemption frees: a running job cons_tres requeues or
 * cancels (its _run_now removes no other; a suspended job keeps its GPUs, and with PreemptType
 * preempt/qos a suspend-mode job first in the list sends cons_tres down a path that never
 * frees GPUs). */
static bool _freeable(job_record_t* jp) {
  uint16_t mode;

  if (!IS_JOB_RUNNING(jp)) return false;
  if (!slurm_job_preempt_mode) return true;
  mode = slurm_job_preempt_mode(jp);
  return mode == PREEMPT_MODE_REQUEUE || mode == PREEMPT_MODE_CANCEL;
}

static int _has_gpus(int node_index, bitstr_t* b, void* arg) {
  (void)node_index;
  (void)arg;
  return bit_set_count(b) > 0;
}

static void _reclaim_free(bitstr_t** reclaim) {
  for (int i = 0; reclaim && i < node_record_count; i++) FREE_NULL_BITMAP(reclaim[i]);
  xfree(reclaim);
}

/* _reclaim_node's converse: clears in reclaim[node] the GPUs of b (the shares or GPUs of a job
 * that is not reclaimed). */
static int _unreclaim_node(int node_index, bitstr_t* b, void* arg) {
  bitstr_t** reclaim = arg;
  bitstr_t* r;

  if (node_index >= node_record_count || !(r = reclaim[node_index])) return 0;
  for (int g = 0; g < bit_size(b) && g < bit_size(r); g++)
    if (bit_test(b, g)) bit_clear(r, g);
  return 0;
}

static int _cmp_job_ptr(const void* a, const void* b) {
  uintptr_t x = (uintptr_t) * (job_record_t*const*)a, y = (uintptr_t) * (job_record_t*const*)b;
  return (x > y) - (x < y);
}

/* The GPUs whose shares the `n` jobs of `taken` (sorted by _cmp_job_ptr) hold, and no other
 * job holds a share of or holds (a GPU frees for gres/gpu only when its last share goes; on
 * 22.05 Slurm may give it to a gres/gpu job while a share is still held): added to
 * `reclaim`. One walk of the job list, made only when a taken job holds shares. */
static void _reclaim_shares(bitstr_t** reclaim, job_record_t** taken, int n) {
  bitstr_t** shares = xcalloc(node_record_count, sizeof(bitstr_t*));
  nvl_list_itr_t it;
  job_record_t* jp;

  for (int k = 0; k < n; k++) _job_gres_each(taken[k], true, _reclaim_node, shares);
  if (job_list) {
    it = list_iterator_create(job_list);
    while ((jp = list_next(it))) {
      if (!IS_JOB_RUNNING(jp) && !IS_JOB_SUSPENDED(jp)) continue;
      if (bsearch(&jp, taken, n, sizeof(*taken), _cmp_job_ptr)) continue;
      _job_gres_each(jp, true, _unreclaim_node, shares);
      _job_gpus_each(jp, _unreclaim_node, shares);
    }
    list_iterator_destroy(it);
  }
  for (int i = 0; i < node_record_count; i++) {
    if (!shares[i] || !bit_set_count(shares[i])) continue;
    if (!reclaim[i]) reclaim[i] = bit_alloc(bit_size(shares[i]));
    if (bit_size(reclaim[i]) == bit_size(shares[i])) bit_or(reclaim[i], shares[i]);
  }
  _reclaim_free(shares);
}

/* The GPUs that the first `limit` freeable jobs of `preemptees` holding GPUs or shares of GPUs
 * (shard, MPS) hold (a shared GPU when no other job holds a share of it), a bitmap or NULL
 * per node (node_record_count entries); NULL when they hold none. `preemptees` is
 * slurmctld's list of preemptee candidates of a job, in the order it preempts them
 * (preempt_g_find_preemptable_jobs: the lowest preemption priority first, partition_prio's
 * PriorityTier then node count, qos's QOS priority then node count, or the youngest with
 * PreemptParameters=youngest_first or, 22.05, SchedulerParameters=preempt_youngest_first).
 * *more: such jobs beyond the first `limit`. Free with _reclaim_free. */
static bitstr_t** _reclaimable(nvl_list_t preemptees, int limit, bool* more) {
  bitstr_t** reclaim;
  nvl_list_itr_t it;
  job_record_t* jp;
  job_record_t** jobs; /* the jobs taken */
  bool any = false, sharing = false;
  int taken = 0;

  *more = false;
  if (!preemptees || !list_count(preemptees)) return NULL;
  reclaim = xcalloc(node_record_count, sizeof(bitstr_t*));
  jobs = xcalloc(list_count(preemptees), sizeof(job_record_t*));
  it = list_iterator_create(preemptees);
  while ((jp = list_next(it))) {
    bool shares;
    if (!_freeable(jp)) continue;
    shares = _job_gres_each(jp, true, _has_gpus, NULL) != 0;
    if (!shares && !_job_gpus_each(jp, _has_gpus, NULL)) continue;
    if (taken == limit) {
      *more = true;
      break;
    }
    _job_gpus_each(jp, _reclaim_node, reclaim);
    sharing |= shares;
    jobs[taken++] = jp;
  }
  list_iterator_destroy(it);
  if (sharing) {
    qsort(jobs, taken, sizeof(*jobs), _cmp_job_ptr);
    _reclaim_shares(reclaim, jobs, taken);
  }
  xfree(jobs);
  for (int i = 0; i < node_record_count && !any; i++) any = reclaim[i] != NULL;
  if (!any) xfree(reclaim);
  return reclaim;
}

/* The position of node `node_index` in node set `cand`, or -1. */
static int _cand_pos(const nvl_candidate_t* cand, int node_index) {
  for (int k = 0; k < cand->num_nodes; k++)
    if (cand->nodes[k] == node_index) return k;
  return -1;
}

static int _holds_wanted(int node_index, bitstr_t* b, void* arg) {
  const nvl_candidate_t* cand = arg;
  int k = _cand_pos(cand, node_index);

  if (k < 0) return 0;
  for (int g = cand->gpu_offsets[k]; g < cand->gpu_offsets[k + 1]; g++)
    if (_in(b, cand->gpus[g])) return 1;
  return 0;
}

static int _holds_gpus_on(int node_index, bitstr_t* b, void* arg) {
  return _cand_pos(arg, node_index) >= 0 && bit_set_count(b) > 0;
}

/* Whether job jp runs on a node of node set `cand`. */
static bool _on_nodes(job_record_t* jp, const nvl_candidate_t* cand) {
  bitstr_t* on = jp->job_resrcs ? jp->job_resrcs->node_bitmap : NULL;

  for (int k = 0; on && k < cand->num_nodes; k++)
    if (cand->nodes[k] >= 0 && cand->nodes[k] < bit_size(on) && bit_test(on, cand->nodes[k]))
      return true;
  return false;
}

/* Whether preempting job jp, which holds no share of a GPU node set `cand` wants, may be what
 * the job needs there (_holding's rule). */
static bool _frees_for(job_record_t* jp, const nvl_candidate_t* cand, bool whole_node) {
  if (_job_gpus_each(jp, _holds_wanted, (void*)cand)) return true;
  if (!_on_nodes(jp, cand)) return false;
  return whole_node || (!_job_gpus_each(jp, _holds_gpus_on, (void*)cand) &&
                        !_job_gres_each(jp, true, _holds_gpus_on, (void*)cand));
}

/* The freeable jobs of `preemptees` cons_tres may preempt for node set `cand`, in their order
 * (those holding shares of a GPU it wants first): those that hold a GPU it wants or a share
 * of one, and those on its nodes that hold none of the GPUs there nor shares of them (their
 * cores, memory or licenses may be what the job needs; for a whole-node job, every job on
 * its nodes). Not a job that holds only other GPUs of those nodes: given it, cons_tres
 * preempts any job on the nodes until enough GPUs are free there, whichever they are. NULL
 * when there is none (an empty list would have cons_tres copy its usage data for nothing). */
static nvl_list_t _holding(nvl_list_t preemptees, const nvl_candidate_t* cand, bool whole_node) {
  nvl_list_t mine = NULL;
  nvl_list_itr_t it;
  job_record_t* jp;

  /* The jobs holding shares of the GPUs it wants first: up to 24.11, cons_tres's copy of
   * the node usage it preempts on has no link to the sharing GRES (upstream's fix came in
   * 25.05), so it accepts after removing any first job, and only a share holder first gets
   * the share preempted; each of them must go for this node set anyway. */
  for (int pass = 0; pass < 2; pass++) {
    it = list_iterator_create(preemptees);
    while ((jp = list_next(it))) {
      bool shares_wanted;
      if (!_freeable(jp)) continue;
      shares_wanted = _job_gres_each(jp, true, _holds_wanted, (void*)cand) != 0;
      if (shares_wanted != (pass == 0) || (!shares_wanted && !_frees_for(jp, cand, whole_node)))
        continue;
      if (!mine) mine = list_create(NULL);
      list_append(mine, jp);
    }
    list_iterator_destroy(it);
  }
  return mine;
}

/* The jobs of `preemptees` in their order, in a list of its own (freed with FREE_NULL_LIST;
 * the jobs are not its), or NULL for none: cons_tres sorts the candidate list it is given in
 * place (_run_now), and the second look needs slurmctld's order of preemption. */
static nvl_list_t _in_order(nvl_list_t preemptees) {
  nvl_list_t copy;
  nvl_list_itr_t it;
  job_record_t* jp;

  if (!preemptees || !list_count(preemptees)) return NULL;
  copy = list_create(NULL);
  it = list_iterator_create(preemptees);
  while ((jp = list_next(it))) list_append(copy, jp);
  list_iterator_destroy(it);
  return copy;
}

/* The view from the job list: the GPUs of every running and suspended job (a suspended job
 * keeps its GPUs: cons_tres releases only its cores). Under nvl_held_lock. */
static void _held_rebuild(void) {
  nvl_list_itr_t it;
  job_record_t* jp;
  int rc = 0;

  nvl_held_valid = false;
  if (!job_list || (!nvl_held && !(nvl_held = nvl_held_new()))) return;
  nvl_held_clear(nvl_held);
  it = list_iterator_create(job_list);
  while (!rc && (jp = list_next(it)))
    if (IS_JOB_RUNNING(jp) || IS_JOB_SUSPENDED(jp)) rc = _held_add_job(jp);
  list_iterator_destroy(it);
  nvl_held_valid = rc == 0;
}

extern void nvl_ctld_held_invalidate(void) {
  slurm_mutex_lock(&nvl_held_lock);
  nvl_held_valid = false;
  slurm_mutex_unlock(&nvl_held_lock);
}

/* ---- a start job_test accepted, until slurmctld starts the job ------------------------ */

/* Takes d (and a reference to f) when it holds a start that waits for slurmctld; else frees
 * d. */
static void _start_keep(job_record_t* job_ptr, nvl_facade_t* f, nvl_decision_t* d) {
  if (!nvl_decision_starting(d)) {
    nvl_decision_free(d);
    return;
  }
  slurm_mutex_lock(&nvl_start_lock);
  _start_clear();
  nvl_start.job_ptr = job_ptr;
  nvl_start.job_id = job_ptr->job_id;
  nvl_start.d = d;
  nvl_start.f = nvl_facade_ref(f);
  slurm_mutex_unlock(&nvl_start_lock);
}

static void _report(job_record_t* job_ptr, const nvl_decision_t* d);

/* Whether the job asks for node counts of features (-C "a*2&b*2"): select_nodes then runs
 * a RUN_NOW job_test per counted feature and one for their union (_get_req_features), each
 * success of one start. */
static bool _counted_features(job_record_t* job_ptr) {
  nvl_list_itr_t it;
  job_feature_t* feat;
  bool counted = false;

  if (!job_ptr->details || !job_ptr->details->feature_list_use) return false;
  it = list_iterator_create(job_ptr->details->feature_list_use);
  while (!counted && (feat = list_next(it))) counted = feat->count > 0;
  list_iterator_destroy(it);
  return counted;
}

/* A job_test of job record `now` (one of slurmctld's job list) begins: the select_nodes of a
 * start kept before is over. The job is pending: slurmctld kept it so (select_nodeinfo_set
 * would have taken the start), unless `now` is the same job with counted features, tested
 * again in the same select_nodes. It runs: slurmctld started it although cons_tres's
 * select_nodeinfo_set failed. */
static void _start_dropped(job_record_t* now) {
  job_record_t* jp;

  slurm_mutex_lock(&nvl_start_lock);
  if (nvl_start.d) {
    jp = find_job_record ? find_job_record(nvl_start.job_id) : NULL;
    if (jp != nvl_start.job_ptr) {
      /* gone (its record may be another job's now): nothing to say */
    } else if (IS_JOB_RUNNING(jp)) {
      nvl_decision_started(nvl_start.d);
      _report(jp, nvl_start.d);
    } else if (IS_JOB_PENDING(jp) && !(jp == now && _counted_features(jp))) {
      nvl_decision_dropped(nvl_start.d, NVL_JOB_REASON(jp->state_reason));
      _report(jp, nvl_start.d);
    }
    _start_clear();
  }
  slurm_mutex_unlock(&nvl_start_lock);
}

/* slurmctld started the job: the kept start's line and comment are said now. Only for a
 * running job: 22.05's in-process reconfigure calls select_nodeinfo_set for every job,
 * pending ones included (_sync_jobs_to_conf). */
static void _start_started(job_record_t* job_ptr) {
  slurm_mutex_lock(&nvl_start_lock);
  if (nvl_start.d && nvl_start.job_ptr == job_ptr && IS_JOB_RUNNING(job_ptr)) {
    nvl_decision_started(nvl_start.d);
    _report(job_ptr, nvl_start.d);
    _start_clear();
  }
  slurm_mutex_unlock(&nvl_start_lock);
}

extern void nvl_ctld_job_allocated(job_record_t* job_ptr) {
  _start_started(job_ptr);
  slurm_mutex_lock(&nvl_held_lock);
  if (nvl_held_valid) {
    nvl_held_drop(nvl_held, job_ptr->job_id); /* a requeued job begins again */
    if (_held_add_job(job_ptr)) nvl_held_valid = false;
  }
  slurm_mutex_unlock(&nvl_held_lock);
}

extern void nvl_ctld_job_fini(job_record_t* job_ptr) {
  slurm_mutex_lock(&nvl_held_lock);
  if (nvl_held_valid) nvl_held_drop(nvl_held, job_ptr->job_id);
  slurm_mutex_unlock(&nvl_held_lock);
}

/* The held view, valid and checked: the nodes' free GPUs into s (as _snapshot), the view
 * compared with every node's gres_bit_alloc on the way, and rebuilt (and logged) when they
 * differ. Under nvl_held_lock. RET 0, or -1 when there is no usable view. */
static int _snapshot_checked(const nvl_facade_t* f, bitstr_t* usable, nvl_snapshot_t* s,
                             bitstr_t** reserved) {
  int drifted;

  if (!nvl_held_valid) _held_rebuild();
  drifted = _snapshot(f, usable, s, nvl_held_valid ? nvl_held : NULL, NULL, reserved);
  if (drifted >= 0) {
    gres_node_state_t* ns = _node_gpus(drifted);
    char slurm[256] = "none";
    char* ours = NULL;
    const int* gpus;
    const uint32_t* jobs;
    int n = nvl_held_node(nvl_held, drifted, &gpus, &jobs);

    if (ns && ns->gres_bit_alloc && bit_set_count(ns->gres_bit_alloc))
      bit_fmt(slurm, sizeof(slurm), ns->gres_bit_alloc);
    for (int k = 0; k < n; k++) xstrfmtcat(ours, "%s%d(job %u)", k ? "," : "", gpus[k], jobs[k]);
    nvl_held_drifts++;
    error(
        "nvlplace: the GPUs nvlplace keeps as held by running jobs differ from Slurm's GRES "
        "on %s (Slurm's gres_bit_alloc: %s; nvlplace's: %s); rebuilt from the job list "
        "(%" PRIu64 " times since slurmctld started)",
        node_record_table_ptr[drifted]->name, slurm, ours ? ours : "none", nvl_held_drifts);
    xfree(ours);
    _held_rebuild();
  }
  return nvl_held_valid ? 0 : -1;
}

/* WILL_RUN: when the GPUs busy only by their shares (shard, MPS) free. */
typedef struct {
  int64_t** until; /* per node index of s->shared and usable: per GPU, the latest end of a
                      job holding shares of it (0: none found), else NULL */
  int* size;       /* ... and how many GPUs that array has */
  int count;
  int64_t end; /* the end of the job being walked */
} nvl_share_ends_t;

static int _share_end_node(int node_index, bitstr_t* b, void* arg) {
  nvl_share_ends_t* e = arg;
  int size;

  if (node_index >= e->count || !e->until[node_index]) return 0;
  size = MIN((int)bit_size(b), e->size[node_index]);
  for (int g = 0; g < size; g++)
    if (bit_test(b, g)) e->until[node_index][g] = MAX(e->until[node_index][g], e->end);
  return 0;
}

/* The end times of the shares on the usable nodes of s->shared: one walk of the job list,
 * made only when such a node is there. RET the number of GPUs with one. */
static int _share_ends(nvl_snapshot_t* s, bitstr_t* usable, int count, nvl_share_ends_t* e) {
  nvl_list_itr_t it;
  job_record_t* jp;
  bool any = false;
  int found = 0;

  *e = (nvl_share_ends_t){.count = count};
  if (!s->shared || !job_list) return 0;
  e->until = xcalloc(count, sizeof(int64_t*));
  e->size = xcalloc(count, sizeof(int));
  for (int i = 0; i < count && i < bit_size(s->shared); i++) {
    bitstr_t* shared;
    if (!bit_test(s->shared, i) || !bit_test(usable, i) || !(shared = _shared_gpus(_node_gpus(i))))
      continue;
    e->size[i] = bit_size(shared);
    e->until[i] = xcalloc(e->size[i], sizeof(int64_t));
    any = true;
  }
  if (!any) return 0;
  it = list_iterator_create(job_list);
  while ((jp = list_next(it))) {
    if (!IS_JOB_RUNNING(jp) && !IS_JOB_SUSPENDED(jp)) continue;
    e->end = (int64_t)jp->end_time;
    if (e->end > 0) _job_gres_each(jp, true, _share_end_node, e);
  }
  list_iterator_destroy(it);
  for (int i = 0; i < count; i++)
    for (int g = 0; e->until[i] && g < e->size[i]; g++) found += e->until[i][g] > 0;
  return found;
}

static void _share_ends_free(nvl_share_ends_t* e) {
  for (int i = 0; e->until && i < e->count; i++) xfree(e->until[i]);
  xfree(e->until);
  xfree(e->size);
}

/* WILL_RUN: the GPUs running and suspended jobs hold on the usable nodes, with each job's
 * end time, from the held view (under nvl_held_lock, valid); and the GPUs busy only by
 * their shares, free when the last job holding a share of them ends. Not those of
 * `reserved` (_reserved_gpus): a reservation keeps them from the job after those jobs too;
 * nor those of `reclaim` (NULL, or _reclaimable's): free now, their jobs preempted. */
static void _snapshot_ends(nvl_snapshot_t* s, bitstr_t* usable, bitstr_t** reserved,
                           bitstr_t** reclaim) {
  int total = 0, k = 0;
  int count = MIN(s->count, (int)bit_size(usable));
  uint32_t last_job = 0; /* job ids start at 1 */
  int64_t last_end = 0;
  nvl_share_ends_t shares;

  if (!find_job_record) return;
  for (int i = 0; i < count; i++) {
    const int* gpus;
    const uint32_t* jobs;
    if (bit_test(usable, i)) total += nvl_held_node(nvl_held, i, &gpus, &jobs);
  }
  total += _share_ends(s, usable, count, &shares);
  if (!total) {
    _share_ends_free(&shares);
    return;
  }
  s->busy_gpus = xcalloc(total, sizeof(int));
  s->busy_until = xcalloc(total, sizeof(int64_t));
  for (int i = 0; i < count; i++) {
    const int* gpus;
    const uint32_t* jobs;
    nvl_node_t* node = &s->nodes[i];
    bitstr_t* kept = reserved ? reserved[i] : NULL;
    bitstr_t* gone = reclaim ? reclaim[i] : NULL;
    int n;
    if (!bit_test(usable, i)) continue;
    node->busy_gpus = s->busy_gpus + k;
    node->busy_until = s->busy_until + k;
    n = nvl_held_node(nvl_held, i, &gpus, &jobs);
    for (int g = 0; g < n; g++) {
      if (jobs[g] != last_job) {
        job_record_t* jp = find_job_record(jobs[g]);
        last_job = jobs[g];
        last_end = (jp && (IS_JOB_RUNNING(jp) || IS_JOB_SUSPENDED(jp))) ? (int64_t)jp->end_time : 0;
      }
      if (last_end <= 0 || _in(kept, gpus[g]) || _in(gone, gpus[g])) continue;
      s->busy_gpus[k] = gpus[g];
      s->busy_until[k] = last_end;
      k++;
      node->num_busy++;
    }
    for (int g = 0; shares.until && shares.until[i] && g < shares.size[i]; g++) {
      if (shares.until[i][g] <= 0 || _in(kept, g) || _in(gone, g)) continue;
      s->busy_gpus[k] = g;
      s->busy_until[k] = shares.until[i][g];
      k++;
      node->num_busy++;
    }
    if (!node->num_busy) {
      node->busy_gpus = NULL;
      node->busy_until = NULL;
    }
  }
  _share_ends_free(&shares);
}

static void _snapshot_free(nvl_snapshot_t* s) {
  FREE_NULL_BITMAP(s->shared);
  xfree(s->busy_gpus);
  xfree(s->busy_until);
  FREE_NULL_BITMAP(s->unregistered);
  xfree(s->free.v);
  xfree(s->nodes);
}

/* The job as the facade reads it: its GPU request (summed over its gpu GRES entries, and
 * the type of a typed one: it points into job_ptr's GRES state),
 * task and node counts, -w, and the SPANK environment holding the nvlplace options. */
static void _job_of(job_record_t* job_ptr, uint32_t min_nodes, uint32_t max_nodes, uint16_t mode,
                    nvl_job_t* job) {
  nvl_job_details_t* details = job_ptr->details;
  gres_state_t* gs;
  nvl_list_itr_t it;

  memset(job, 0, sizeof(*job));
  job->job_id = job_ptr->job_id;
  job->mode = SELECT_IS_MODE_RUN_NOW(mode)     ? NVL_MODE_RUN_NOW
              : SELECT_IS_MODE_TEST_ONLY(mode) ? NVL_MODE_TEST_ONLY
                                               : NVL_MODE_WILL_RUN;
  if (job_ptr->gres_list_req) {
    it = list_iterator_create(job_ptr->gres_list_req);
    while ((gs = list_next(it))) {
      gres_job_state_t* js = gs->gres_data;
      if (xstrcmp(gs->gres_name, "gpu") || !js) continue;
      job->gpu_requests++;
      job->gpus_per_job += js->gres_per_job;
      job->gpus_per_node += js->gres_per_node;
      job->gpus_per_task += js->gres_per_task;
      job->gpus_per_socket += js->gres_per_socket;
      if (js->type_name && js->type_name[0]) job->gpu_type = js->type_name;
    }
    list_iterator_destroy(it);
  }
  job->num_tasks = details->num_tasks;
  job->min_nodes = min_nodes;
  job->max_nodes = max_nodes;
  job->whole_node = NVL_WHOLE_NODE_REQUIRED(details->whole_node) ? 1 : 0;
  job->required_nodes = details->req_node_bitmap ? bit_set_count(details->req_node_bitmap) : 0;
  job->env = job_ptr->spank_job_env;
  job->env_size = job_ptr->spank_job_env_size;
  job->now = (int64_t)time(NULL);
  job->now_only = (job_ptr->bit_flags & TEST_NOW_ONLY) ? 1 : 0;
  job->segment = NVL_JOB_SEGMENT(job_ptr);
  job->spread_segments = NVL_JOB_SPREAD_SEGMENTS(job_ptr);
  job->consolidate_segments = NVL_JOB_CONSOLIDATE_SEGMENTS(job_ptr);
  job->restarts = job_ptr->restart_cnt;
  job->previous_comment = job_ptr->restart_cnt ? job_ptr->system_comment : NULL;
}

/* ---- GPUs masked to a node set --------------------------------------------------------- */

/* One node's GPU allocation state as it was before masking. */
typedef struct {
  gres_node_state_t* ns;
  bitstr_t* bit_alloc;
  uint64_t cnt_alloc;
  uint64_t* topo_alloc; /* topo_cnt entries */
  uint64_t* type_alloc; /* type_cnt entries */
} nvl_saved_t;

/* Marks every free GPU of the node set's nodes that the node set does not use as allocated
 * (bitmap, counts, per-topology and per-type counts alike; a shared GPU its bit only), so
 * that cons_tres, which takes the lowest free index first and decides per-node counts
 * itself for a --gpus total, can only take the decision. Restored by _unmask before
 * anything else runs: slurmctld holds its node write lock for the whole job_test. RET the
 * saved state (xfree'd by _unmask). */
static nvl_saved_t* _mask(const nvl_candidate_t* cand) {
  nvl_saved_t* saved = xcalloc(cand->num_nodes, sizeof(nvl_saved_t));

  for (int k = 0; k < cand->num_nodes; k++) {
    gres_node_state_t* ns = _node_gpus(cand->nodes[k]);
    const int* want = cand->gpus + cand->gpu_offsets[k];
    int n_want = cand->gpu_offsets[k + 1] - cand->gpu_offsets[k], size;
    bitstr_t* shared = _shared_gpus(ns);

    if (!ns || ns->no_consume || !ns->gres_bit_alloc) continue;
    saved[k].ns = ns;
    saved[k].bit_alloc = bit_copy(ns->gres_bit_alloc);
    saved[k].cnt_alloc = ns->gres_cnt_alloc;
    if (ns->topo_cnt && ns->topo_gres_cnt_alloc) {
      saved[k].topo_alloc = xcalloc(ns->topo_cnt, sizeof(uint64_t));
      memcpy(saved[k].topo_alloc, ns->topo_gres_cnt_alloc, ns->topo_cnt * sizeof(uint64_t));
    }
    if (ns->type_cnt && ns->type_cnt_alloc) {
      saved[k].type_alloc = xcalloc(ns->type_cnt, sizeof(uint64_t));
      memcpy(saved[k].type_alloc, ns->type_cnt_alloc, ns->type_cnt * sizeof(uint64_t));
    }
    size = bit_size(ns->gres_bit_alloc);
    for (int g = 0; g < size; g++) {
      bool keep = false;
      int topo = -1;
      for (int w = 0; w < n_want && !keep; w++) keep = want[w] == g;
      if (keep || bit_test(ns->gres_bit_alloc, g)) continue;
      bit_set(ns->gres_bit_alloc, g);
      /* A shared GPU: cons_tres already takes it off its gres.conf record's count (and
       * counts it free per node and type), so only its bit is set, that cons_tres does not
       * pick it from a record of several GPUs. */
      if (_in(shared, g)) continue;
      ns->gres_cnt_alloc++;
      for (int t = 0; t < ns->topo_cnt && topo < 0; t++) {
        if (ns->topo_gres_bitmap && ns->topo_gres_bitmap[t] &&
            g < bit_size(ns->topo_gres_bitmap[t]) && bit_test(ns->topo_gres_bitmap[t], g))
          topo = t;
      }
      if (topo < 0) continue;
      if (saved[k].topo_alloc) ns->topo_gres_cnt_alloc[topo]++;
      for (int ty = 0; saved[k].type_alloc && ty < ns->type_cnt; ty++) {
        if (ns->topo_type_id && ns->type_id && ns->type_id[ty] == ns->topo_type_id[topo]) {
          ns->type_cnt_alloc[ty]++;
          break;
        }
      }
    }
  }
  return saved;
}

static void _unmask(nvl_saved_t* saved, int count) {
  for (int k = 0; k < count; k++) {
    gres_node_state_t* ns = saved[k].ns;
    if (!ns) continue;
    bit_copybits(ns->gres_bit_alloc, saved[k].bit_alloc);
    FREE_NULL_BITMAP(saved[k].bit_alloc);
    ns->gres_cnt_alloc = saved[k].cnt_alloc;
    if (saved[k].topo_alloc)
      memcpy(ns->topo_gres_cnt_alloc, saved[k].topo_alloc, ns->topo_cnt * sizeof(uint64_t));
    if (saved[k].type_alloc)
      memcpy(ns->type_cnt_alloc, saved[k].type_alloc, ns->type_cnt * sizeof(uint64_t));
    xfree(saved[k].topo_alloc);
    xfree(saved[k].type_alloc);
  }
  xfree(saved);
}

/* ---- what Slurm will allocate ---------------------------------------------------------- */

typedef struct {
  nvl_layout_t view;
  int *nodes, *offsets, *gpus;
} nvl_got_t;

/* The nodes of `bitmap` and, on each, the GPUs cons_tres selected for the job
 * (gres_bit_select: the allocation made right after, in select_p_select_nodeinfo_set). A
 * whole-node job (--exclusive) is allocated every GPU of its nodes whatever was selected
 * (gres_*_job_alloc_whole_node; 22.05 selects only the count asked for). */
static void _selected(job_record_t* job_ptr, bitstr_t* bitmap, nvl_got_t* got) {
  int nodes = bit_set_count(bitmap), n = 0, g = 0, cap = 0;
  bool whole = job_ptr->details && NVL_WHOLE_NODE_REQUIRED(job_ptr->details->whole_node);
  node_record_t* node_ptr;

  memset(got, 0, sizeof(*got));
  got->nodes = xcalloc(nodes + 1, sizeof(int));
  got->offsets = xcalloc(nodes + 1, sizeof(int));
  for (int i = 0; (node_ptr = next_node(&i)); i++) {
    bitstr_t* sel = NULL;
    gres_state_t* gs;
    nvl_list_itr_t it;

    if (!bit_test(bitmap, i)) continue;
    got->nodes[n] = i;
    got->offsets[n] = g;
    if (whole) {
      gres_node_state_t* ns = _node_gpus(i);
      if (ns && !ns->no_consume && ns->gres_bit_alloc) {
        sel = bit_alloc(bit_size(ns->gres_bit_alloc));
        bit_set_all(sel);
      }
    }
    /* The union of the job's GPU entries' selections on this node. */
    if (!whole && job_ptr->gres_list_req) {
      it = list_iterator_create(job_ptr->gres_list_req);
      while ((gs = list_next(it))) {
        gres_job_state_t* js = gs->gres_data;
        bitstr_t* b;
        if (xstrcmp(gs->gres_name, "gpu") || !js || !js->gres_bit_select ||
            i >= (int)js->total_node_cnt || !(b = js->gres_bit_select[i]))
          continue;
        if (!sel)
          sel = bit_copy(b);
        else if (bit_size(b) == bit_size(sel))
          bit_or(sel, b);
      }
      list_iterator_destroy(it);
    }
    for (int b = 0; sel && b < bit_size(sel); b++) {
      if (!bit_test(sel, b)) continue;
      if (g == cap) {
        cap = cap ? 2 * cap : 64;
        xrecalloc(got->gpus, cap, sizeof(int));
      }
      got->gpus[g++] = b;
    }
    FREE_NULL_BITMAP(sel);
    n++;
  }
  got->offsets[n] = g;
  got->view.num_nodes = n;
  got->view.nodes = got->nodes;
  got->view.gpu_offsets = got->offsets;
  got->view.gpus = got->gpus;
}

static void _got_free(nvl_got_t* got) {
  xfree(got->nodes);
  xfree(got->offsets);
  xfree(got->gpus);
}

/* ---- logging ---------------------------------------------------------------------------- */

/* What users see in `scontrol show job`: only ever replaces or removes a comment of ours. */
static void _set_comment(job_record_t* job_ptr, const char* text) {
  if (job_ptr->system_comment && xstrncmp(job_ptr->system_comment, "nvlplace:", 9)) return;
  if (!text[0]) {
    xfree(job_ptr->system_comment);
    return;
  }
  if (!xstrcmp(job_ptr->system_comment, text)) return;
  xfree(job_ptr->system_comment);
  job_ptr->system_comment = xstrdup(text);
}

/* The line and the comment of the decision's last step. */
static void _report(job_record_t* job_ptr, const nvl_decision_t* d) {
  int level = NVL_LOG_INFO;
  const char* line = nvl_decision_log(d, &level);
  const char* comment = nvl_decision_comment(d);

  if (line) {
    if (level == NVL_LOG_ERROR)
      error("nvlplace: %pJ %s", job_ptr, line);
    else
      info("nvlplace: %pJ %s", job_ptr, line);
  }
  if (comment) _set_comment(job_ptr, comment);
}

static void _summary(const nvl_facade_t* f) {
  char line[1024];

  if (!nvl_facade_summary(f, (double)time(NULL), NVL_SUMMARY_INTERVAL_S, line, sizeof(line)))
    return;
  if (nvl_facade_log_level(f) >= NVL_LOG_INFO) info("nvlplace: %s", line);
  _write_status(f);
}

/* A request nvlplace can never use (bad options, an unsupported shape with options): the
 * job is held, with the reason in its SystemComment, instead of running without them.
 * (The scheduler publishes the change: last_job_update is slurmctld's, not linkable here.) */
static void _hold(job_record_t* job_ptr) {
  job_ptr->direct_set_prio = 1;
  job_ptr->priority = 0;
  job_ptr->state_reason = WAIT_HELD;
  xfree(job_ptr->state_desc);
}

/* ---- job_test ------------------------------------------------------------------------ */

/* 25.11 on: a constraint alternative other than the job's last, for which cons_tres preempts
 * nothing (job_test.c _run_now): no second look with preemption there. */
#ifdef NEED_MORE_FEATURES
#define NVL_NEEDS_MORE_FEATURES(job_ptr) (((job_ptr)->bit_flags & NEED_MORE_FEATURES) != 0)
#else
#define NVL_NEEDS_MORE_FEATURES(job_ptr) 0
#endif

typedef struct {
  nvl_job_test_fn fn;
  job_record_t* job_ptr;
  uint32_t min_nodes, max_nodes, req_nodes;
  uint16_t mode;
  nvl_list_t preemptee_candidates;
  nvl_list_t* preemptee_job_list;
  nvl_job_test_tail_t tail; /* the release's last arguments, for cons_tres only */
  bitstr_t** reserved;      /* the GPUs reservations keep from the job (_reserved_gpus) */
} nvl_call_t;

#if NVL_SLURM_AT_LEAST(23, 11)
/* Sets in `per_node` (node_record_count entries, each allocated as needed to its node's GPU
 * count) the GPUs of the gpu entries of `gres_list`: a reservation's gres_job_state_t
 * entries, whose gres_bit_alloc is indexed by node index (reservation.c,
 * _switch_select_alloc_gres). Of every type: cons_tres applies an entry to a job's request
 * of exactly its type only (gres_find_job_by_key_exact_type), so that a job asking for
 * `gpu:h100` takes the GPUs of a reservation of untyped GPUs. nvlplace keeps them for the
 * reservation: a job it places gets only the GPUs it chose (_mask). RET whether an
 * entry is there. */
static bool _set_resv_gpus(nvl_list_t gres_list, bitstr_t** per_node) {
  nvl_list_itr_t it = list_iterator_create(gres_list);
  gres_state_t* gs;
  bool applies = false;

  while ((gs = list_next(it))) {
    gres_job_state_t* js = gs->gres_data;
    if (xstrcmp(gs->gres_name, "gpu") || !js) continue;
    applies = true;
    for (int i = 0; js->gres_bit_alloc && i < (int)js->node_cnt && i < node_record_count; i++) {
      bitstr_t* b = js->gres_bit_alloc[i];
      gres_node_state_t* ns = b ? _node_gpus(i) : NULL;
      int size = ns && ns->gres_bit_alloc ? bit_size(ns->gres_bit_alloc) : 0;
      if (!size) continue;
      if (!per_node[i]) per_node[i] = bit_alloc(size);
      for (int g = 0; g < size && g < bit_size(b); g++)
        if (bit_test(b, g)) bit_set(per_node[i], g);
    }
  }
  list_iterator_destroy(it);
  return applies;
}

/* The GPUs reservations keep from the job, as cons_tres reads job_test's resv_exc_t
 * (gres_sock_list.c): a bitmap or NULL per node (node_record_count entries; free with
 * _reclaim_free), or NULL when none are kept.
 * - A job outside GPU reservations whose time it overlaps: their GPUs (gres_list_exc).
 * - A job in a GPU reservation: every GPU but the reservation's (gres_list_inc; a node
 *   without an entry gives none). A reservation with no GPUs keeps every GPU from it from
 *   25.11 on, and none before (cons_tres then did not restrict it).
 * Reservations of whole nodes or cores are not here: slurmctld takes their nodes out of the
 * job's bitmap, or their cores out of cons_tres's. */
static bitstr_t** _reserved_gpus(const nvl_job_test_tail_t* tail) {
  resv_exc_t* r = tail->resv_exc_ptr;
  bitstr_t** keep;
  bool any = false;

  if (!r || !(r->gres_list_exc || r->gres_list_inc)) return NULL;
  keep = xcalloc(node_record_count, sizeof(bitstr_t*));
  if (r->gres_list_exc) {
    _set_resv_gpus(r->gres_list_exc, keep);
  } else if (_set_resv_gpus(r->gres_list_inc, keep) || NVL_SLURM_AT_LEAST(25, 11)) {
    for (int i = 0; i < node_record_count; i++) {
      gres_node_state_t* ns = _node_gpus(i);
      int size = ns && ns->gres_bit_alloc ? bit_size(ns->gres_bit_alloc) : 0;
      if (!size) {
        FREE_NULL_BITMAP(keep[i]);
        continue;
      }
      if (!keep[i]) keep[i] = bit_alloc(size);
      bit_not(keep[i]); /* what the job may use, so what it may not */
    }
  }
  for (int i = 0; i < node_record_count && !any; i++) any = keep[i] && bit_set_count(keep[i]);
  if (any) return keep;
  _reclaim_free(keep);
  return NULL;
}
#else
/* Before 23.11 a reservation keeps whole nodes or cores, not GPUs. */
static bitstr_t** _reserved_gpus(const nvl_job_test_tail_t* tail) {
  (void)tail;
  return NULL;
}
#endif

static int _forward(const nvl_call_t* c, bitstr_t* bitmap) {
  return c->fn(c->job_ptr, bitmap, c->min_nodes, c->max_nodes, c->req_nodes, c->mode,
               c->preemptee_candidates, c->preemptee_job_list, NVL_JOB_TEST_TAIL_ARGS(c->tail));
}

/* cons_tres's work for a node set it accepted but the decision rejects. */
static void _undo(const nvl_call_t* c) {
  free_job_resources(&c->job_ptr->job_resrcs);
  if (c->preemptee_job_list) FREE_NULL_LIST(*c->preemptee_job_list);
}

/* The index of NAME=... in the job's supplementary environment, or -1. The details' type is
 * named differently across releases (struct job_details in 22.05, job_details_t later):
 * reached through job_ptr. */
static int _env_sup_find(job_record_t* job_ptr, const char* name) {
  __typeof__(job_ptr->details) details = job_ptr->details;
  size_t len = strlen(name);

  for (uint32_t k = 0; k < details->env_cnt; k++) {
    if (details->env_sup[k] && !strncmp(details->env_sup[k], name, len) &&
        details->env_sup[k][len] == '=')
      return (int)k;
  }
  return -1;
}

/* NAME=VALUE in the job's supplementary environment (details->env_sup: added to the batch
 * script's environment at launch and sent with salloc's and srun's allocation), replacing an
 * earlier value. */
static void _set_env_sup(job_record_t* job_ptr, const char* name, const char* value) {
  __typeof__(job_ptr->details) details = job_ptr->details;
  int k = _env_sup_find(job_ptr, name);
  char* entry = NULL;

  xstrfmtcat(entry, "%s=%s", name, value);
  if (k >= 0) {
    xfree(details->env_sup[k]);
    details->env_sup[k] = entry;
    return;
  }
  xrecalloc(details->env_sup, details->env_cnt + 2, sizeof(char*));
  details->env_sup[details->env_cnt++] = entry;
}

/* Removes NAME=... from the job's supplementary environment: a map from an earlier test
 * (an allocation select_nodes dropped after job_test, or a requeued job) must not reach a
 * job this test places without one (left to cons_tres, or no usable configuration). */
static void _unset_env_sup(job_record_t* job_ptr, const char* name) {
  __typeof__(job_ptr->details) details = job_ptr->details;
  int k = _env_sup_find(job_ptr, name);

  if (k < 0) return;
  xfree(details->env_sup[k]);
  for (uint32_t m = (uint32_t)k + 1; m < details->env_cnt; m++)
    details->env_sup[m - 1] = details->env_sup[m];
  details->env_sup[--details->env_cnt] = NULL;
}

/* Tells the decision what cons_tres took (the nodes of `bitmap`); RET its verdict. */
static int _took(const nvl_call_t* c, nvl_decision_t* d, int i, bitstr_t* bitmap) {
  nvl_got_t got;
  const char* map;
  int ok;

  if (!SELECT_IS_MODE_RUN_NOW(c->mode)) {
    ok = nvl_decision_took(d, i, NULL);
  } else {
    _selected(c->job_ptr, bitmap, &got);
    ok = nvl_decision_took(d, i, &got.view);
    _got_free(&got);
    /* The job learns its nodes in rank order and their NVLink domains (the SPANK plugin
     * gives each task its own part). */
    if (ok && (map = nvl_decision_rankmap(d))) {
      size_t len = strlen(map);
      if (len <= NVL_RANKMAP_MAX)
        _set_env_sup(c->job_ptr, NVL_ENV_RANKMAP, map);
      else
        error(
            "nvlplace: JobId=%u: its rank map of %zu bytes is longer than one environment "
            "variable may be (%d): the job gets no " NVL_ENV_RANKMAP,
            c->job_ptr->job_id, len, NVL_RANKMAP_MAX);
    }
  }
  /* A start's line and comment wait until slurmctld starts the job (_start_keep). */
  if (!nvl_decision_starting(d)) _report(c->job_ptr, d);
  return ok;
}

/* The running jobs cons_tres would preempt for its last success (its preemptee list). */
static int _preempting(const nvl_call_t* c) {
  return c->preemptee_job_list && *c->preemptee_job_list ? list_count(*c->preemptee_job_list) : 0;
}

/* RUN_NOW: cons_tres accepted the nodes of `bitmap` (node set i; -1: the job's own bitmap)
 * only by preempting running jobs: no GPUs are chosen yet (slurmctld preempts them and the
 * job waits); the decision accepts or rejects the node set. */
static int _preempts(const nvl_call_t* c, nvl_decision_t* d, int i, bitstr_t* bitmap) {
  int count = bit_set_count(bitmap), n = 0, ok;
  int* nodes = xcalloc(count + 1, sizeof(int));
  int* offsets = xcalloc(count + 1, sizeof(int));
  nvl_layout_t view;

  for (int k = bit_ffs(bitmap), last = bit_fls(bitmap); k >= 0 && k <= last && n < count; k++)
    if (bit_test(bitmap, k)) nodes[n++] = k;
  view = (nvl_layout_t){n, nodes, offsets, NULL};
  ok = nvl_decision_preempts(d, i, &view, _preempting(c));
  xfree(nodes);
  xfree(offsets);
  _report(c->job_ptr, d);
  return ok;
}

/* What cons_tres's success comes to: a start (_took) or a preemption first (_preempts). */
static int _succeeded(const nvl_call_t* c, nvl_decision_t* d, int i, bitstr_t* bitmap) {
  if (SELECT_IS_MODE_RUN_NOW(c->mode) && _preempting(c)) return _preempts(c, d, i, bitmap);
  return _took(c, d, i, bitmap);
}

/* cons_tres on one node set, GPUs masked to it in RUN_NOW. On success the caller's bitmap
 * gets cons_tres's choice. */
static int _try_candidate(const nvl_call_t* c, nvl_decision_t* d, int i,
                          const nvl_candidate_t* cand, bitstr_t* bitmap) {
  bitstr_t* trial;
  nvl_saved_t* saved = NULL;
  int rc;

  trial = bit_alloc(bit_size(bitmap));
  for (int k = 0; k < cand->num_nodes; k++) {
    if (cand->nodes[k] < bit_size(bitmap) && bit_test(bitmap, cand->nodes[k]))
      bit_set(trial, cand->nodes[k]);
  }
  if (nvl_decision_mask(d)) saved = _mask(cand);
  rc = _forward(c, trial);
  if (saved) _unmask(saved, cand->num_nodes);
  if (rc == SLURM_SUCCESS && !_succeeded(c, d, i, trial)) {
    _undo(c);
    rc = SLURM_ERROR;
  } else if (rc != SLURM_SUCCESS) {
    if (c->preemptee_job_list) FREE_NULL_LIST(*c->preemptee_job_list);
    nvl_decision_refused(d, i);
    _report(c->job_ptr, d);
  }
  if (rc == SLURM_SUCCESS) bit_copybits(bitmap, trial);
  FREE_NULL_BITMAP(trial);
  return rc;
}

/* compare_cons_tres, RUN_NOW: cons_tres's own choice on the job's whole bitmap, told to the
 * decision and released again (as for a node set the decision rejects), so that the
 * placement line can name both on the same state. */
static void _cons_tres_alone(const nvl_call_t* c, nvl_decision_t* d, bitstr_t* bitmap) {
  bitstr_t* alone = bit_copy(bitmap);
  nvl_got_t got;

  if (_forward(c, alone) == SLURM_SUCCESS) {
    _selected(c->job_ptr, alone, &got);
    nvl_decision_cons_tres_alone(d, &got.view);
    _got_free(&got);
    _undo(c);
  } else {
    if (c->preemptee_job_list) FREE_NULL_LIST(*c->preemptee_job_list);
    nvl_decision_cons_tres_alone(d, NULL);
  }
  FREE_NULL_BITMAP(alone);
}

/* NVL_ACT_TRY: the node sets in turn; then a wait or cons_tres's own choice. */
static int _try_all(const nvl_call_t* c, nvl_decision_t* d, bitstr_t* bitmap) {
  const nvl_candidate_t* cand;
  int rc;

  for (int i = 0; (cand = nvl_decision_candidate(d, i)); i++) {
    if (_try_candidate(c, d, i, cand, bitmap) == SLURM_SUCCESS) return SLURM_SUCCESS;
  }
  rc = nvl_decision_exhausted(d);
  _report(c->job_ptr, d);
  if (rc == NVL_ACT_REFUSE) return SLURM_ERROR;
  rc = _forward(c, bitmap);
  if (rc == SLURM_SUCCESS) _succeeded(c, d, -1, bitmap);
  return rc;
}

/* The nodes the job may be placed on: the bitmap slurmctld offers (the partition's usable
 * nodes minus excluded, down or reserved ones), narrowed to the nodes named with -w. */
static bitstr_t* _usable(job_record_t* job_ptr, bitstr_t* bitmap) {
  bitstr_t* usable = bit_copy(bitmap);

  if (job_ptr->details->req_node_bitmap) bit_and(usable, job_ptr->details->req_node_bitmap);
  return usable;
}

/* The decision of a second look, where the GPUs of `reclaim` (taken) count as free too; in
 * WILL_RUN with the other busy GPUs' end times (theirs: free now). */
static nvl_decision_t* _decide_reclaiming(const nvl_call_t* c, nvl_facade_t* f, nvl_job_t* job,
                                          bitstr_t* bitmap, bitstr_t** reclaim) {
  bitstr_t* usable = _usable(c->job_ptr, bitmap);
  nvl_snapshot_t snap;
  nvl_decision_t* d;

  if (job->mode == NVL_MODE_WILL_RUN) {
    slurm_mutex_lock(&nvl_held_lock);
    if (!nvl_held_valid) _held_rebuild();
    _snapshot(f, usable, &snap, NULL, reclaim, c->reserved);
    if (nvl_held_valid) _snapshot_ends(&snap, usable, c->reserved, reclaim);
    slurm_mutex_unlock(&nvl_held_lock);
  } else {
    _snapshot(f, usable, &snap, NULL, reclaim, c->reserved);
  }
  _reclaim_free(reclaim);
  job->free_is_all = 0;
  job->preempting = 1;
  d = nvl_decide(f, job, snap.nodes, snap.count);
  _snapshot_free(&snap);
  FREE_NULL_BITMAP(usable);
  return d;
}

/* One look of _second_look: its decision's node sets offered to cons_tres in turn. */
static int _look_reclaiming(const nvl_call_t* c, nvl_facade_t* f, nvl_job_t* job, bitstr_t* bitmap,
                            bitstr_t** reclaim) {
  nvl_decision_t* d = _decide_reclaiming(c, f, job, bitmap, reclaim);
  const nvl_candidate_t* cand;
  int rc = SLURM_ERROR;

  for (int i = 0; rc != SLURM_SUCCESS && nvl_decision_action(d) == NVL_ACT_TRY &&
                  (cand = nvl_decision_candidate(d, i));
       i++) {
    nvl_call_t own = *c;
    own.preemptee_candidates = _holding(c->preemptee_candidates, cand, job->whole_node);
    rc = _try_candidate(&own, d, i, cand, bitmap);
    FREE_NULL_LIST(own.preemptee_candidates);
  }
  _start_keep(c->job_ptr, f, d);
  return rc;
}

/* A job the first look made wait (RUN_NOW) that may preempt running jobs: a second look,
 * where the GPUs those jobs hold count as free too, its node sets offered to cons_tres with
 * the preemptee candidates that hold its GPUs, in turn. cons_tres accepts one by preempting
 * (its preemptee list goes back to slurmctld, which preempts them; the job waits, and the test
 * that finds their GPUs free places it) or starts the job at once. Without this a job with a hard
 * constraint never preempted: the first look counts only free GPUs. Quiet unless a node set is
 * accepted (nvl_job_t.preempting): the job's wait line stays the first look's.
 * The jobs count in slurmctld's order of preemption: the GPUs of the first 1, 2, 4, ... of
 * those that hold GPUs or shares of GPUs (a shared GPU once no other job holds a share), until a
 * node set is accepted or all count, so the job goes where the jobs Slurm would preempt first free
 * enough GPUs (the engine's best place among those), not where jobs it would preempt last run (at
 * most 2 + log2(jobs) looks; one where none fits). */
static int _second_look(const nvl_call_t* c, nvl_facade_t* f, nvl_job_t* job, bitstr_t* bitmap) {
  bool more = false, fits;
  bitstr_t** all = _reclaimable(c->preemptee_candidates, INT_MAX, &more);
  nvl_decision_t* d;
  int rc = SLURM_ERROR;

  /* Where no node set holds the job even with every preemptable job gone (the common case
   * for a job that waits), one look says so. */
  if (!all) return SLURM_ERROR;
  d = _decide_reclaiming(c, f, job, bitmap, all);
  fits = nvl_decision_action(d) == NVL_ACT_TRY && nvl_decision_candidate(d, 0);
  nvl_decision_free(d);
  /* more: jobs holding GPUs beyond the first `limit` */
  more = fits;
  for (int limit = 1; rc != SLURM_SUCCESS && more;
       limit = limit > INT_MAX / 2 ? INT_MAX : 2 * limit) {
    bitstr_t** first = _reclaimable(c->preemptee_candidates, limit, &more);

    if (first) rc = _look_reclaiming(c, f, job, bitmap, first);
  }
  return rc;
}

/* WILL_RUN for a job that may preempt, when the first look found no start now: one more look
 * where the GPUs of every freeable preemptee candidate count as free now (the running jobs
 * cons_tres requeues or cancels; shares as in _reclaimable), as cons_tres's own will_run
 * counts them (all candidates gone at once, "start now" so that backfill's start of the job
 * preempts them), each node set offered to cons_tres with the candidates the RUN_NOW look
 * that then starts the job would offer there (_holding). The earlier start of the two looks
 * stands: its node set in `bitmap` (`offered`: the bitmap slurmctld gave), its start time,
 * CPU count, preemption node bitmap and preemptee list. Backfill preempts only through such a
 * start: before this, a strict job the main scheduler did not reach (its partition blocked by a job
 * that waits) never preempted, and `sbatch --test-only` said it starts when the jobs it would
 * preempt end. RET the job_test result. */
static int _will_run_preempting(const nvl_call_t* c, nvl_facade_t* f, nvl_job_t* job,
                                bitstr_t* bitmap, bitstr_t* offered, int rc) {
  job_record_t* job_ptr = c->job_ptr;
  /* What cons_tres's will_run leaves on the job, the first look's kept for when it stands. */
  time_t first_start = job_ptr->start_time;
  uint32_t first_cpus = job_ptr->total_cpus;
#if NVL_SLURM_AT_LEAST(24, 11)
  bitstr_t* first_preempt_nodes = NULL;
#endif
  nvl_list_t first_preempts = NULL;
  bitstr_t *trial, **reclaim;
  const nvl_candidate_t* cand;
  nvl_decision_t* d;
  bool more;
  int got = SLURM_ERROR;

  if (!(reclaim = _reclaimable(c->preemptee_candidates, INT_MAX, &more))) return rc;
#if NVL_SLURM_AT_LEAST(24, 11)
  if (job_ptr->node_bitmap_preempt) first_preempt_nodes = bit_copy(job_ptr->node_bitmap_preempt);
#endif
  d = _decide_reclaiming(c, f, job, offered, reclaim);
  /* cons_tres appends to a preemptee list it is given: the first look's is kept apart. */
  if (c->preemptee_job_list) {
    first_preempts = *c->preemptee_job_list;
    *c->preemptee_job_list = NULL;
  }
  trial = bit_copy(offered);
  for (int i = 0; got != SLURM_SUCCESS && nvl_decision_action(d) == NVL_ACT_TRY &&
                  (cand = nvl_decision_candidate(d, i));
       i++) {
    nvl_call_t own = *c; /* the jobs the second RUN_NOW look would offer (_look_reclaiming) */
    own.preemptee_candidates = _holding(c->preemptee_candidates, cand, job->whole_node);
    bit_copybits(trial, offered);
    got = _try_candidate(&own, d, i, cand, trial);
    FREE_NULL_LIST(own.preemptee_candidates);
  }
  if (got == SLURM_SUCCESS && nvl_decision_start_time(d) > (int64_t)job_ptr->start_time)
    job_ptr->start_time = (time_t)nvl_decision_start_time(d);
  if (got == SLURM_SUCCESS && (rc != SLURM_SUCCESS || job_ptr->start_time < first_start)) {
    bit_copybits(bitmap, trial);
    FREE_NULL_LIST(first_preempts);
    rc = SLURM_SUCCESS;
  } else {
    job_ptr->start_time = first_start;
    job_ptr->total_cpus = first_cpus;
#if NVL_SLURM_AT_LEAST(24, 11)
    FREE_NULL_BITMAP(job_ptr->node_bitmap_preempt);
    job_ptr->node_bitmap_preempt = first_preempt_nodes;
    first_preempt_nodes = NULL;
#endif
    if (c->preemptee_job_list) {
      FREE_NULL_LIST(*c->preemptee_job_list);
      *c->preemptee_job_list = first_preempts;
    }
  }
#if NVL_SLURM_AT_LEAST(24, 11)
  FREE_NULL_BITMAP(first_preempt_nodes);
#endif
  FREE_NULL_BITMAP(trial);
  nvl_decision_free(d);
  return rc;
}

/* No usable configuration at all: a job with nvlplace options waits with the load error in
 * its SystemComment; any other job is cons_tres's (nvl_decide_unconfigured). */
static int _unconfigured(const nvl_call_t* c, const nvl_job_t* job, bitstr_t* bitmap) {
  char problem[sizeof(nvl_load_error)];
  nvl_decision_t* d;
  int rc;

  slurm_mutex_lock(&nvl_lock);
  snprintf(problem, sizeof(problem), "%s", nvl_load_error);
  slurm_mutex_unlock(&nvl_lock);
  d = nvl_decide_unconfigured(job, problem[0] ? problem : "nvlplace.yaml was not loaded");
  if (nvl_decision_action(d) == NVL_ACT_REFUSE) {
    _report(c->job_ptr, d);
    rc = SLURM_ERROR;
  } else {
    rc = _forward(c, bitmap);
  }
  nvl_decision_free(d);
  return rc;
}

extern int nvl_ctld_job_test(nvl_job_test_fn cons_tres, job_record_t* job_ptr, bitstr_t* bitmap,
                             uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes,
                             uint16_t mode, nvl_list_t preemptee_candidates,
                             nvl_list_t* preemptee_job_list, nvl_job_test_tail_t tail) {
  nvl_call_t c = {
      cons_tres,          job_ptr, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
      preemptee_job_list, tail,    NULL};
  nvl_facade_t* f;
  nvl_decision_t* d;
  nvl_snapshot_t snap;
  nvl_job_t job;
  nvl_list_t ordered = NULL; /* the candidates in slurmctld's order, for a second look */
  bitstr_t* usable;
  bitstr_t* offered = NULL; /* WILL_RUN with preemptee candidates: the bitmap as offered */
  int rc;

  /* Not for a job record outside slurmctld's job list (a reservation's, tested under a job
   * read lock: the kept job's comment must not change then). */
  if (job_ptr && find_job_record && find_job_record(job_ptr->job_id) == job_ptr)
    _start_dropped(job_ptr);
  /* Only this test's placement, if any, gives the job a rank map (_took). */
  if (job_ptr && job_ptr->details && SELECT_IS_MODE_RUN_NOW(mode))
    _unset_env_sup(job_ptr, NVL_ENV_RANKMAP);
  /* Reservation and preemption-on-full tests are cons_tres's alone. */
  if (!job_ptr || !job_ptr->details || SELECT_IS_MODE_RESV(mode) ||
      SELECT_IS_PREEMPT_ON_FULL_TEST(mode))
    return _forward(&c, bitmap);

  _job_of(job_ptr, min_nodes, max_nodes, mode, &job);
  if (!(f = _acquire())) return _unconfigured(&c, &job, bitmap);
  if (job.gpu_requests) c.reserved = _reserved_gpus(&tail);
  usable = _usable(job_ptr, bitmap);
  if (job.mode == NVL_MODE_WILL_RUN && job.gpu_requests) {
    NVL_WILL_RUN_WINDOW(tail, job.will_run_start, job.will_run_end);
    slurm_mutex_lock(&nvl_held_lock);
    if (_snapshot_checked(f, usable, &snap, c.reserved) == 0)
      _snapshot_ends(&snap, usable, c.reserved, NULL);
    slurm_mutex_unlock(&nvl_held_lock);
  } else {
    _snapshot(f, usable, &snap, NULL, NULL, c.reserved);
  }
  /* The free GPUs are all cons_tres could give: nothing to preempt, every usable node's GPUs
   * indexed, and no -w (cons_tres may add nodes beyond the named ones for a --gpus total). */
  job.free_is_all = SELECT_IS_MODE_RUN_NOW(mode) && !snap.indexless_usable &&
                    !job_ptr->details->req_node_bitmap &&
                    !(preemptee_candidates && list_count(preemptee_candidates));
  /* A GPU job starts on no node whose GPUs slurmctld cannot index yet, whoever chooses. */
  if (snap.unregistered && job.gpu_requests && SELECT_IS_MODE_RUN_NOW(mode))
    bit_and_not(bitmap, snap.unregistered);
  if (job.mode == NVL_MODE_WILL_RUN && job.gpu_requests && preemptee_candidates &&
      list_count(preemptee_candidates))
    offered = bit_copy(bitmap);
  d = nvl_decide(f, &job, snap.nodes, snap.count);
  _snapshot_free(&snap);
  FREE_NULL_BITMAP(usable);
  _report(job_ptr, d);
  /* Before the first look's cons_tres tests: they sort the list (_in_order). */
  if (SELECT_IS_MODE_RUN_NOW(mode)) ordered = _in_order(preemptee_candidates);

  switch (nvl_decision_action(d)) {
    case NVL_ACT_REFUSE:
      if (nvl_decision_hold(d)) _hold(job_ptr);
      rc = SLURM_ERROR;
      break;
    case NVL_ACT_TRY:
      if (SELECT_IS_MODE_RUN_NOW(mode) && nvl_facade_compares_cons_tres(f))
        _cons_tres_alone(&c, d, bitmap);
      rc = _try_all(&c, d, bitmap);
      /* Backfill's reservation: not before the GPUs the decision needs are free. */
      if (rc == SLURM_SUCCESS && job.mode == NVL_MODE_WILL_RUN &&
          nvl_decision_start_time(d) > (int64_t)job_ptr->start_time)
        job_ptr->start_time = (time_t)nvl_decision_start_time(d);
      break;
    default:
      rc = _forward(&c, bitmap);
      if (rc == SLURM_SUCCESS && SELECT_IS_MODE_RUN_NOW(mode) && job.gpu_requests)
        _succeeded(&c, d, -1, bitmap);
      break;
  }
  /* A start later than now (or none) in WILL_RUN, where preempting may start it now. */
  if (offered && nvl_decision_action(d) != NVL_ACT_CONS_TRES &&
      (rc != SLURM_SUCCESS || job_ptr->start_time > time(NULL)))
    rc = _will_run_preempting(&c, f, &job, bitmap, offered, rc);
  FREE_NULL_BITMAP(offered);
  if (rc != SLURM_SUCCESS && nvl_decision_waits(d) && ordered &&
      !NVL_NEEDS_MORE_FEATURES(job_ptr)) {
    nvl_call_t again = c;
    again.preemptee_candidates = ordered;
    rc = _second_look(&again, f, &job, bitmap);
  }
  FREE_NULL_LIST(ordered);
  _reclaim_free(c.reserved);
  _start_keep(job_ptr, f, d);
  _summary(f);
  nvl_facade_free(f);
  return rc;
}

/* ---- the submit-time check (job_submit/nvlplace) ------------------------------------- */

extern int nvl_ctld_submit_check(job_desc_msg_t* desc, char** err_msg) {
  nvl_facade_t* f;
  nvl_decision_t* d;
  nvl_node_t* nodes;
  node_record_t* node_ptr;
  nvl_job_t job;
  int rc = SLURM_SUCCESS;

  if (!desc || !(f = _acquire())) return SLURM_SUCCESS;
  memset(&job, 0, sizeof(job));
  job.mode = NVL_MODE_TEST_ONLY;
  /* The GPU counts and type are read from these by the facade. */
  job.tres_per_job = desc->tres_per_job ? desc->tres_per_job : "";
  job.tres_per_node = desc->tres_per_node;
  job.tres_per_socket = desc->tres_per_socket;
  job.tres_per_task = desc->tres_per_task;
  job.num_tasks = desc->num_tasks == NO_VAL ? 0 : desc->num_tasks;
  job.min_nodes = desc->min_nodes == NO_VAL ? 1 : desc->min_nodes;
  job.max_nodes = desc->max_nodes == NO_VAL ? job.min_nodes : desc->max_nodes;
  job.whole_node = desc->shared == 0;
  if (desc->req_nodes && desc->req_nodes[0]) {
    nvl_hostlist_t hl = hostlist_create(desc->req_nodes);
    job.required_nodes = hl ? hostlist_count(hl) : 0;
    if (hl) hostlist_destroy(hl);
    if ((uint32_t)job.required_nodes > job.min_nodes) job.min_nodes = job.required_nodes;
    if (job.max_nodes < job.min_nodes) job.max_nodes = job.min_nodes;
  }
  job.env = desc->spank_job_env;
  job.env_size = desc->spank_job_env_size;
  job.segment = NVL_DESC_SEGMENT(desc);
  job.spread_segments = NVL_DESC_SPREAD_SEGMENTS(desc);
  job.consolidate_segments = NVL_DESC_CONSOLIDATE_SEGMENTS(desc);
  /* "Could it ever run": every node of the cluster, as if free. */
  nodes = xcalloc(node_record_count, sizeof(nvl_node_t));
  for (int i = 0; (node_ptr = next_node(&i)); i++) {
    nodes[i].name = node_ptr->name;
    nodes[i].usable = 1;
  }
  d = nvl_decide(f, &job, nodes, node_record_count);
  if (nvl_decision_action(d) == NVL_ACT_REFUSE) {
    const char* line = nvl_decision_log(d, NULL); /* event=refused; no job id yet */
    xfree(*err_msg);
    *err_msg = xstrdup_printf("nvlplace: %s", nvl_decision_reason(d));
    if (line) info("nvlplace: %s", line);
    rc = ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
  }
  nvl_decision_free(d);
  xfree(nodes);
  nvl_facade_free(f);
  return rc;
}
