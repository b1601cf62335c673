/* The job options of nvlplace (--nvl-tp, --nvl-pp, --nvl-dp, --nvl, --nvl-max-tier): parsing
 * and checking shared by the SPANK plugin (srun, sbatch, salloc) and the select plugin
 * (slurmctld). Plain C; no Slurm and no engine header. */
#ifndef NVLPLACE_PLUGIN_NVL_OPTIONS_H_
#define NVLPLACE_PLUGIN_NVL_OPTIONS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Names in the job's SPANK environment (job_record_t.spank_job_env holds "NAME=value";
 * sbatch and salloc also export them to the job as SLURM_SPANK_NAME). */
#define NVL_ENV_TP "NVLPLACE_TP"
#define NVL_ENV_PP "NVLPLACE_PP"
#define NVL_ENV_DP "NVLPLACE_DP"
#define NVL_ENV_NVL "NVLPLACE_NVL"
#define NVL_ENV_MAX_TIER "NVLPLACE_MAX_TIER"
#define NVL_ENV_DOMAIN "NVLPLACE_DOMAIN"

#define NVL_MAX_GROUP 65536       /* largest TP, PP or DP size (limits::kMaxGroupSize) */
#define NVL_MAX_JOB_GPUS 16777216 /* largest TP x PP x DP (limits::kMaxJobGpus) */

/* What a job asked for; 0 or "" means "not given". */
typedef struct {
  int tp, pp, dp;
  char nvl[8];       /* "", "strict", "prefer" or "off" */
  char max_tier[16]; /* "", "leaf", "spine" or "core" */
  char domain[8];    /* "", "one" (the whole job inside one NVLink domain) or "any" */
} nvl_job_opts_t;

/* Each parser: RET 0 with the value stored, or -1 with a message for the user in msg
 * ("--nvl-tp=0: must be a whole number from 1 to 65536"). `option` names the option in
 * the message. */
int nvl_parse_size(const char* option, const char* text, int* out, char* msg, size_t msg_len);
int nvl_parse_mode(const char* option, const char* text, char out[8], char* msg, size_t msg_len);
int nvl_parse_tier(const char* option, const char* text, char out[16], char* msg, size_t msg_len);
int nvl_parse_domain(const char* option, const char* text, char out[8], char* msg, size_t msg_len);

/* The longest canonical value of an option, with its NUL ("65536", "strict", "spine"). */
#define NVL_OPTION_VALUE_MAX 8

/* One option as the user typed it, checked by its parser (`option` is "nvl-tp", "nvl-pp",
 * "nvl-dp", "nvl", "nvl-max-tier" or "nvl-domain") and written to `out` in canonical form
 * ("8" for "0008"), the text handed on to slurmctld: a value too long to keep whole is never
 * cut into another one. RET 0, or -1 with a message for the user in msg. */
int nvl_option_value(const char* option, const char* text, char out[NVL_OPTION_VALUE_MAX],
                     char* msg, size_t msg_len);

/* The sizes together: TP x PP x DP (absent ones count 1) at most NVL_MAX_JOB_GPUS.
 * RET 0, or -1 with a message for the user in msg. */
int nvl_check_opts(const nvl_job_opts_t* opts, char* msg, size_t msg_len);

/* Reads the options from "NAME=value" strings (job_record_t.spank_job_env). Unknown names
 * are ignored. RET 1 if any nvlplace option was found, 0 if none, -1 with msg set if a
 * value is bad or the sizes together are too large (nvl_check_opts; only possible if the
 * SPANK plugin was bypassed or is older). */
int nvl_opts_from_env(char* const* env, uint32_t env_size, nvl_job_opts_t* out, char* msg,
                      size_t msg_len);

/* Whether the options read by nvl_opts_from_env (its result `found` and `opts`) make a
 * promise the job waits for rather than run without: strict NVLink TP groups (TP > 1 with
 * --nvl=strict, or without --nvl when `default_strict`), a max tier, or one NVLink domain. Options
 * that cannot be read (found < 0) promise too: such a job is held, never run as if it had none. RET
 * 1 or 0. */
int nvl_opts_promise(int found, const nvl_job_opts_t* opts, int default_strict);

/* The rank map slurmctld hands the job (NVLPLACE_RANKMAP, in the batch environment and in
 * salloc's and srun's allocation): "v1 NODE:GPUS:DOMAINS ..." with the job's nodes in rank
 * order (TP groups are consecutive ranks), each node's GPU indexes in rank order ("0-3",
 * "0,2", "0,2,1,3": local rank i on the i-th) and the NVLink domains they are in
 * (comma-separated; a domain name may hold ':' and '/'). Room for a node of 16 GPUs each its
 * own domain of a long name (one domain per GPU without NVLink: 373 bytes were cut). */
#define NVL_ENV_RANKMAP "NVLPLACE_RANKMAP"
/* The longest map handed over: Linux refuses to exec a program with any one environment
 * string NAME=VALUE longer than MAX_ARG_STRLEN (32 pages, 131,072 bytes; E2BIG), so a longer
 * map would stop the job's batch script and tasks from starting (a job of some 3,000 nodes). */
#define NVL_RANKMAP_MAX (131072 - (int)sizeof(NVL_ENV_RANKMAP "="))
typedef struct {
  int node_rank;     /* this node's place in the map, from 0 */
  int num_nodes;     /* nodes in the map */
  int first_rank;    /* GPUs on the nodes before it: the global rank of its first GPU */
  int num_gpus;      /* GPUs on this node */
  char gpus[1024];   /* its GPU indexes as written */
  char domain[4096]; /* its NVLink domains as written */
} nvl_rankmap_entry_t;
/* Finds NODE in MAP. RET 0 (found, *out set), 1 (not in the map), -1 (MAP is not a v1 rank
 * map, or a field is too long). */
int nvl_rankmap_find(const char* map, const char* node, nvl_rankmap_entry_t* out);

/* The job's rank map file (NVLPLACE_RANKMAP_FILE, written by the SPANK plugin on each of its
 * nodes): a hostfile, one line "NODE slots=GPUS # node_rank=R first_rank=F gpus=I
 * nvlink_domain=D" per node in rank order, after a comment that says so. RET the bytes
 * written to BUF (NUL-terminated), or -1 (MAP is not a v1 rank map with a node, or BUF is
 * too small). */
int nvl_rankmap_hostfile(const char* map, const char* job_id, char* buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* NVLPLACE_PLUGIN_NVL_OPTIONS_H_ */
