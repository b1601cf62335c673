/* The C facade between the Slurm plugins and the placement engine: plain structs in, plain
 * structs out. C++ inside; no exception, abort or assert ever leaves it: every entry point
 * runs through one guard (plugin/guard.h) that turns an exception into the entry's documented
 * fallback and one logged line. No Slurm header here, and no engine header in the files that
 * include Slurm's. The one way in for decisions is nvl_decide: slurmctld, the benchmark
 * (facade_bench.cc) and the fuzz target (tests/fuzz/facade_fuzz.cc) all call it. */
#ifndef NVLPLACE_PLUGIN_NVLPLACE_FACADE_H_
#define NVLPLACE_PLUGIN_NVLPLACE_FACADE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One loaded configuration (nvlplace.yaml, its topology and policy). Immutable once
 * loaded, except for the log de-duplication and the counters, which are locked: safe from
 * any thread. Reference-counted, so that slurmctld can swap in a new configuration on
 * `scontrol reconfigure` while a job_test still uses the old one. */
typedef struct nvl_facade nvl_facade_t;

enum nvl_log_level { NVL_LOG_ERROR = 0, NVL_LOG_INFO = 1, NVL_LOG_DEBUG = 2 };

/* Where the guard writes the line of an exception it caught ("nvlplace: internal error in
 * nvl_decide: std::bad_alloc; the job waits"): slurmctld's log. Set once, before any other
 * call (default: standard error). NULL restores the default. */
typedef void (*nvl_log_sink_t)(int level, const char* line);
void nvl_facade_set_log_sink(nvl_log_sink_t sink);

/* Reads nvlplace.yaml:
 *   topology: cluster.yaml   # required; relative to the directory of nvlplace.yaml
 *   policy: topo             # a policy name or file (default topo)
 *   weights: {nvlink: 100}   # optional: overrides the policy's weights
 *   log_level: info          # error | info | debug (default info)
 *   candidates: 3            # node sets tried before cons_tres's own choice (1..16)
 *   default_nvl: strict      # mode of jobs that do not give --nvl (default strict)
 *   compare_cons_tres: false # measure: log where cons_tres alone would put each job
 * IN path - the file
 * OUT err - on failure, one line "file:line:col: #/path: message"
 * RET a handle holding one reference, or NULL on failure. */
nvl_facade_t* nvl_facade_load(const char* path, char* err, size_t err_len);
/* The last good configuration kept in DIR (snapshot.h): written after a good load, read
 * when a load fails and no good configuration is in memory. RET 0, or -1 with err set. */
int nvl_facade_save_snapshot(const nvl_facade_t* facade, const char* dir, char* err,
                             size_t err_len);
/* Loads DIR's snapshot as nvl_facade_load loads a file; *source gets the nvlplace.yaml it was
 * taken from (into source_len bytes). */
nvl_facade_t* nvl_facade_load_snapshot(const char* dir, char* source, size_t source_len, char* err,
                                       size_t err_len);
/* Writes the status an admin reads with `nvlplace status` (schema nvlplace.status/1) to
 * PATH: the nvlplace.yaml slurmctld reads, what is in force ("loaded", "snapshot", "none")
 * and since when (epoch seconds), the last load error ("" when it loaded) and when, and the
 * counters of the configuration in force (facade may be NULL). RET 0 or -1. */
int nvl_write_status(const char* path, const nvl_facade_t* facade, const char* config,
                     const char* in_force, double loaded_at, const char* last_error,
                     double last_error_at);

/* Another reference to the same configuration (facade may be NULL). RET facade. */
nvl_facade_t* nvl_facade_ref(nvl_facade_t* facade);
/* Drops one reference; the last one frees the configuration. */
void nvl_facade_free(nvl_facade_t* facade);

int nvl_facade_log_level(const nvl_facade_t* facade);
/* "topology lab-islands (16 nodes, 128 GPUs, 32 NVLink domains) from FILE, policy topo" */
const char* nvl_facade_describe(const nvl_facade_t* facade);

/* 1 when a file the configuration was loaded from changed since (the NVLink health file:
 * a rack split, a tray's NVLink down), so that the caller loads it again; checked at most once
 * a second (now_s: seconds). Else 0. */
int nvl_facade_stale(nvl_facade_t* facade, double now_s);
/* The files as they are now count as seen: nvl_facade_stale says 0 until they change again
 * (after a load of the changed files failed and this configuration stays in force). */
void nvl_facade_accept_files(nvl_facade_t* facade);
/* 1 when a file the configuration was loaded from differs from what it last loaded or
 * accepted, checked now (no once-a-second limit): a thread that found the configuration stale
 * checks again once its turn to load comes, since another thread may have loaded the change,
 * or failed to and accepted it, meanwhile. Else 0. */
int nvl_facade_files_changed(nvl_facade_t* facade);

/* 1 when the topology has a node of this name, else 0. */
int nvl_facade_knows_node(const nvl_facade_t* facade, const char* name);

/* The counters since load as one line ("since load: 120 jobs placed on nvlplace node sets,
 * 120 allocated as decided, ..."), when they changed and `interval_s` passed since the last
 * summary. RET 1 with the line in buf, else 0. */
int nvl_facade_summary(const nvl_facade_t* facade, double now_s, double interval_s, char* buf,
                       size_t buf_len);

/* A node as slurmctld sees it now. Its GPU arrays are read during nvl_decide only; its name
 * is kept until the decision is freed. */
typedef struct {
  const char* name;
  int usable;           /* the job may be placed here (in the node bitmap it was given) */
  const int* free_gpus; /* GPU indexes (gres indexes) free now */
  int num_free;
  /* WILL_RUN only (else 0 / NULL): the busy GPUs whose job has an end time, and that time
   * (seconds since the epoch): busy_gpus[k] is free from busy_until[k] on. */
  const int* busy_gpus;
  const int64_t* busy_until;
  int num_busy;
} nvl_node_t;

/* One node set to try, best first. */
typedef struct {
  int num_nodes;
  const int* nodes;       /* indexes into the caller's node array, ascending */
  const int* gpu_offsets; /* num_nodes + 1 entries: the GPUs of nodes[k] are */
  const int* gpus;        /* gpus[gpu_offsets[k] .. gpu_offsets[k + 1]), ascending */
  const char* describe;   /* the placement line's fields of this node set:
                             gpus="node03:4-7 node05:0-3" domains=node03:nvl1,node05:nvl0
                             span_domains=2 ... score=97.1 origin="..." */
} nvl_candidate_t;

/* ---- what job_test does with one job (the decision logic lives in decision.h) ---------- */

enum nvl_mode { NVL_MODE_RUN_NOW = 0, NVL_MODE_TEST_ONLY = 1, NVL_MODE_WILL_RUN = 2 };

/* A job as slurmctld holds it, flattened by the C side. */
typedef struct {
  uint32_t job_id;
  int mode; /* enum nvl_mode */
  /* sums over the job's GPU entries of gres_list_req */
  uint64_t gpus_per_job, gpus_per_node, gpus_per_task, gpus_per_socket;
  int gpu_requests;     /* GPU entries (a typed and an untyped one are two) */
  const char* gpu_type; /* the GPU type asked for ("h100" of --gpus=h100:8); NULL: any */
  uint32_t num_tasks, min_nodes, max_nodes;
  int whole_node;     /* --exclusive */
  int required_nodes; /* nodes named with -w */
  char* const* env;   /* job_record_t.spank_job_env: "NAME=value" */
  uint32_t env_size;
  /* WILL_RUN: the time now, and the window backfill asks about (24.11+ will_run_data_t;
   * 0: from now, no end); now_only: the job asks about now only (TEST_NOW_ONLY). */
  int64_t now, will_run_start, will_run_end;
  int now_only;
  /* The submit-time check has only the job description: its tres_per_* strings
   * ("gres/gpu:h100:8", "gres:gpu:2,gres:gpu:a100:1"). When any is non-NULL, the GPU counts,
   * entries and type above are read from them instead. */
  const char *tres_per_job, *tres_per_node, *tres_per_socket, *tres_per_task;
  /* Slurm's --segment (nodes per segment; 0: none), --spread-segments and
   * --consolidate-segments. */
  int segment, spread_segments, consolidate_segments;
  /* Times the job was requeued (job_ptr->restart_cnt): a job that lost a tray and was
   * requeued may take its rack's spare trays (a replacement inside its NVLink domain). */
  uint32_t restarts;
  /* A requeued job's SystemComment (job_ptr->system_comment; NULL: none): the plugin's last
   * placement line of it, whose NVLink domains the job goes back to when they have room. */
  const char* previous_comment;
  /* RUN_NOW: 1 when the free GPUs of the nodes handed to nvl_decide are all cons_tres could
   * give the job now (no preemption candidates, no -w, no usable node whose GPUs nvlplace
   * cannot index); then a job that asks for more GPUs than are free is refused at once,
   * without cons_tres's search of every node that would say the same. 0: no such shortcut. */
  int free_is_all;
  /* RUN_NOW: 1 for a second look at a job the first look made wait, where the nodes' free
   * GPUs include those of the running jobs it may preempt (slurmctld's preemptee candidates):
   * only a node set cons_tres accepts is logged and commented (nvl_decision_took,
   * nvl_decision_preempts), so that the job's wait line stays the first look's. */
  int preempting;
} nvl_job_t;

enum nvl_action {
  NVL_ACT_CONS_TRES = 0, /* hand cons_tres the job and its bitmap as they are */
  NVL_ACT_TRY = 1,       /* offer the node sets of nvl_decision_candidate, one by one */
  NVL_ACT_REFUSE = 2     /* return an error without calling cons_tres */
};

/* What Slurm will allocate: nodes (indexes into the node array given to nvl_decide,
 * ascending) and the GPU indexes on each (gpus[gpu_offsets[k] .. gpu_offsets[k + 1])). */
typedef struct {
  int num_nodes;
  const int* nodes;
  const int* gpu_offsets;
  const int* gpus;
} nvl_layout_t;

typedef struct nvl_decision nvl_decision_t;

/* The first step for one job in one job_test call. RET a decision, never NULL (release it
 * with nvl_decision_free). When the facade fails (no memory, a bug), the decision is a
 * fallback: NVL_ACT_REFUSE with a reason for a job whose options make a promise (strict TP
 * groups, a max tier), else NVL_ACT_CONS_TRES; the guard logs why. */
nvl_decision_t* nvl_decide(nvl_facade_t* facade, const nvl_job_t* job, const nvl_node_t* nodes,
                           int num_nodes);
/* The decision when there is no usable configuration at all (never loaded, and no last good
 * copy): in RUN_NOW and WILL_RUN a job that gave nvlplace options waits, with `problem` (the
 * load error) in its SystemComment, rather than run without them; every other job, and
 * TEST_ONLY (so that the job is accepted at submit), goes to cons_tres. RET a decision,
 * never NULL (nvl_decision_free it). */
nvl_decision_t* nvl_decide_unconfigured(const nvl_job_t* job, const char* problem);
int nvl_decision_action(const nvl_decision_t* d); /* enum nvl_action */
/* NVL_ACT_REFUSE of a request the plugin can never use (RUN_NOW): hold the job. */
int nvl_decision_hold(const nvl_decision_t* d);
/* 1 when the decision makes the job wait (RUN_NOW, NVL_ACT_REFUSE, not held): for a second
 * look with preemption (nvl_job_t.preempting). */
int nvl_decision_waits(const nvl_decision_t* d);
/* NVL_ACT_TRY: mask each node's free GPUs to the node set's before calling cons_tres, so
 * that what it allocates is the decision (RUN_NOW). */
int nvl_decision_mask(const nvl_decision_t* d);
/* After each step: the placement line to log (placement_line.h; without "nvlplace: JobId=N
 * "), or NULL; *level (when level is not NULL) gets its enum nvl_log_level. */
const char* nvl_decision_log(const nvl_decision_t* d, int* level);
/* NVL_ACT_REFUSE: why, for the user (also when the log line was de-duplicated). */
const char* nvl_decision_reason(const nvl_decision_t* d);
/* After each step: the SystemComment to set, NULL to leave it, "" to remove a comment that
 * nvlplace set earlier. */
const char* nvl_decision_comment(const nvl_decision_t* d);
/* NVL_ACT_TRY: node set i (0, 1, ...), computed on demand once the earlier ones were
 * refused; NULL when there is none. Valid until the next call on d. */
const nvl_candidate_t* nvl_decision_candidate(nvl_decision_t* d, int i);
/* WILL_RUN, NVL_ACT_TRY: the earliest time (seconds since the epoch) the node sets can
 * hold the job by nvlplace's rules, from the running jobs' end times; 0: now. The caller
 * sets the job's start time to the later of this and cons_tres's own. */
int64_t nvl_decision_start_time(const nvl_decision_t* d);
/* 1 when nvlplace.yaml says compare_cons_tres: true. Then, in RUN_NOW, the caller asks
 * cons_tres for its own choice on the job's bitmap before NVL_ACT_TRY (and releases it), and
 * gives it to nvl_decision_cons_tres_alone; the placement line names it. */
int nvl_facade_compares_cons_tres(const nvl_facade_t* facade);
void nvl_decision_cons_tres_alone(nvl_decision_t* d, const nvl_layout_t* alone);
/* cons_tres refused node set i. */
void nvl_decision_refused(nvl_decision_t* d, int i);
/* cons_tres accepted node set i (-1: the job's own bitmap) and Slurm will allocate `got`.
 * RET 1: accept; 0: reject (release what cons_tres set up, then go on with the next). */
int nvl_decision_took(nvl_decision_t* d, int i, const nvl_layout_t* got);
/* RUN_NOW: cons_tres accepted node set i (-1: the job's own bitmap) only by preempting
 * `jobs` running jobs (its preemptee list) on the nodes of `nodes` (their GPUs are left out:
 * cons_tres chooses them once those jobs are gone). Slurm preempts them and the job waits;
 * the test that finds their GPUs free places it. RET 1: accept (return the preemptee list to
 * Slurm); 0: reject (a hard job's node set where cons_tres would preempt on other nodes:
 * release what cons_tres set up, then go on with the next). */
int nvl_decision_preempts(nvl_decision_t* d, int i, const nvl_layout_t* nodes, int jobs);
/* After nvl_decision_took accepted a RUN_NOW allocation of GPUs: the job's rank map, the
 * value of NVLPLACE_RANKMAP (nvl_options.h) to put in its environment; else NULL. */
const char* nvl_decision_rankmap(const nvl_decision_t* d);
/* RUN_NOW: 1 when nvl_decision_took accepted a start whose line, comment and counters wait
 * for slurmctld: select_nodes can still keep the job pending after job_test (an accounting
 * limit, no IMEX channel left, a burst buffer). Keep the decision (and a reference to its
 * facade) and tell it nvl_decision_started when slurmctld starts the job, or
 * nvl_decision_dropped when it did not; then report its log and comment. Else 0. */
int nvl_decision_starting(const nvl_decision_t* d);
/* slurmctld started the job (select_nodeinfo_set): the start counts; the log and comment are
 * nvl_decision_took's, to report now. */
void nvl_decision_started(nvl_decision_t* d);
/* slurmctld kept the job pending after job_test accepted its start: the log and comment say
 * the job waits, with `slurm_reason` (the job's Reason, "NvidiaImexChannels"; NULL: unknown),
 * once per job and text. */
void nvl_decision_dropped(nvl_decision_t* d, const char* slurm_reason);
/* Every node set was refused. RET NVL_ACT_REFUSE (a hard constraint waits) or
 * NVL_ACT_CONS_TRES (cons_tres's own choice, a named relaxation: then report it with
 * nvl_decision_took(d, -1, ...)). */
int nvl_decision_exhausted(nvl_decision_t* d);
void nvl_decision_free(nvl_decision_t* d);

#ifdef __cplusplus
}
#endif

#endif /* NVLPLACE_PLUGIN_NVLPLACE_FACADE_H_ */
