/* The C facade between the Slurm plugins and the placement engine: plain structs in, plain
 * structs out. C++ inside; no exception, abort or assert ever leaves it. No Slurm header
 * here, and no engine header in the files that include Slurm's. */
#ifndef NVLPLACE_PLUGIN_NVLPLACE_FACADE_H_
#define NVLPLACE_PLUGIN_NVLPLACE_FACADE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One loaded configuration (nvlplace.yaml, its topology and policy). Immutable once
 * loaded, except for the log de-duplication, which is locked: safe from any thread. */
typedef struct nvl_facade nvl_facade_t;

enum nvl_log_level { NVL_LOG_ERROR = 0, NVL_LOG_INFO = 1, NVL_LOG_DEBUG = 2 };

/* Reads nvlplace.yaml:
 *   topology: cluster.yaml   # required; relative to the directory of nvlplace.yaml
 *   policy: topo             # a policy name or file (default topo)
 *   weights: {nvlink: 100}   # optional: overrides the policy's weights
 *   log_level: info          # error | info | debug (default info)
 *   candidates: 3            # node sets tried before cons_tres's own choice (1..16)
 *   default_nvl: strict      # mode of jobs that do not give --nvl (default strict)
 * IN path - the file
 * OUT err - on failure, one line "file:line:col: #/path: message"
 * RET a handle, or NULL on failure. */
nvl_facade_t* nvl_facade_load(const char* path, char* err, size_t err_len);
void nvl_facade_free(nvl_facade_t* facade);

int nvl_facade_log_level(const nvl_facade_t* facade);
/* "topology lab-islands (16 nodes, 128 GPUs, 32 NVLink domains) from FILE, policy topo" */
const char* nvl_facade_describe(const nvl_facade_t* facade);

/* 1 when the topology has a node of this name, else 0. */
int nvl_facade_knows_node(const nvl_facade_t* facade, const char* name);

/* True when `text` differs from the last text passed for this job id (so a pending job's
 * reason is logged once per change, not once per scheduling cycle). */
int nvl_facade_first_time(nvl_facade_t* facade, uint32_t job_id, const char* text);

/* A node as slurmctld sees it now. */
typedef struct {
  const char* name;
  int usable;           /* the job may be placed here (in the node bitmap it was given) */
  const int* free_gpus; /* GPU indexes (gres indexes) free now */
  int num_free;
} nvl_node_t;

/* What the job asks for; 0 / NULL / "" means "not given". */
typedef struct {
  uint32_t job_id; /* for messages only */
  int gpus;        /* total GPUs; or nodes x gpus_per_node */
  int nodes;       /* exact node count */
  int gpus_per_node;
  int tp, pp, dp;
  const char* nvl;      /* "strict", "prefer", "off"; NULL: default_nvl */
  const char* max_tier; /* "leaf", "spine", "core"; NULL: any */
  int exclusive;        /* whole nodes only */
  int ignore_busy;      /* place as if every GPU of the usable nodes were free */
} nvl_request_t;

enum nvl_status {
  NVL_PLACED = 0,      /* candidates holds at least one node set */
  NVL_NO_ROOM = 1,     /* a normal result: reason says why, in topology terms */
  NVL_BAD_REQUEST = 2, /* the request does not fit this topology: reason says why */
  NVL_INTERNAL = 3     /* a bug or an out-of-memory: reason says what */
};

/* One node set to try, best first. */
typedef struct {
  int num_nodes;
  const int* nodes;       /* indexes into the caller's node array, ascending */
  const int* gpu_offsets; /* num_nodes + 1 entries: the GPUs of nodes[k] are */
  const int* gpus;        /* gpus[gpu_offsets[k] .. gpu_offsets[k + 1]), ascending */
  const char* describe;   /* "node03:4-7 node05:0-3 domains=node03:nvl1,node05:nvl0
                             score=97.1 origin=..." */
} nvl_candidate_t;

typedef struct {
  int status;              /* enum nvl_status */
  int hard;                /* the request has a constraint the job must wait for: strict
                              NVLink TP groups (TP > 1) or a required max tier */
  const char* request;     /* "8 GPUs (TP=4 PP=1 DP=2, nvl=strict)", or "" */
  const char* reason;      /* when not placed */
  const char* relaxations; /* "; "-joined, "none" when none */
  int num_candidates;
  const nvl_candidate_t* candidates;
  void* priv; /* owned storage; release with nvl_result_clear */
} nvl_result_t;

/* Chooses node sets for the request from the nodes' free GPUs. Nodes of the topology that
 * are not in `nodes` are taken as busy; names unknown to the topology are ignored.
 * RET out->status; out must be released with nvl_result_clear. */
int nvl_facade_place(const nvl_facade_t* facade, const nvl_node_t* nodes, int num_nodes,
                     const nvl_request_t* request, nvl_result_t* out);

/* Adds one more node set to a placed result, computed only when the ones offered were all
 * refused: the best placement away from every node offered so far, up to the
 * configuration's `candidates`. RET 1 if one was added (result->candidates may move). */
int nvl_facade_more(const nvl_facade_t* facade, nvl_result_t* result);

void nvl_result_clear(nvl_result_t* result);

#ifdef __cplusplus
}
#endif

#endif /* NVLPLACE_PLUGIN_NVLPLACE_FACADE_H_ */
