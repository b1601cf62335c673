/* SPANK plugin nvlplace: the srun, sbatch and salloc options by which a job asks for
 * topology-aware placement (usable as #SBATCH lines):
 *   --nvl-tp=T  --nvl-pp=P  --nvl-dp=D  --nvl=strict|prefer|off  --nvl-max-tier=leaf|spine|core
 *   --nvl-domain=one|any
 * Bad values are refused when the job is submitted.
 *
 * How the request reaches the select plugin in slurmctld (verified in the Slurm 22.05
 * source): in srun (local context) and sbatch/salloc (allocator context)
 * slurm_spank_init_post_opt calls spank_job_control_setenv("NVLPLACE_TP", "4", 1)
 * (src/common/plugstack.c -> dyn_spank_set_job_env), which stores "NVLPLACE_TP=4" in the
 * command's opt.spank_job_env (src/srun/libsrun/opt.c, src/sbatch/opt.c). The job
 * description carries it (src/common/slurm_opt.c: job_desc->spank_job_env), and
 * slurmctld moves it into job_record_t.spank_job_env (src/slurmctld/job_mgr.c,
 * _job_create), saved with the job state, so it survives a slurmctld restart. The select
 * plugin reads it there (nvl_options.c). sbatch and salloc also export the entries to the
 * job as SLURM_SPANK_NVLPLACE_*, and srun inside the job inherits them. */
#include <slurm/spank.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvl_options.h"

SPANK_PLUGIN(nvlplace, 1);

enum { OPT_TP = 1, OPT_PP, OPT_DP, OPT_NVL, OPT_MAX_TIER, OPT_DOMAIN, OPT_LAST = OPT_DOMAIN };

/* The values given on the command line or in #SBATCH lines, checked and canonical. */
static char opt_value[OPT_LAST + 1][NVL_OPTION_VALUE_MAX];

static int _option(int val, const char* optarg, int remote);

/* Registered from slurm_spank_init: in the allocator context (sbatch, salloc) Slurm 22.05
 * ignores a static spank_options table (src/common/plugstack.c). */
static struct spank_option nvl_options[] = {
    {"nvl-tp", "T",
     "[nvlplace] Tensor-parallel size: each group of T GPUs (ranks TP-innermost, then PP, "
     "then DP) is kept inside one NVLink domain.",
     1, OPT_TP, _option},
    {"nvl-pp", "P", "[nvlplace] Pipeline-parallel size (default 1).", 1, OPT_PP, _option},
    {"nvl-dp", "D", "[nvlplace] Data-parallel size (default: GPUs / (TP x PP)).", 1, OPT_DP,
     _option},
    {"nvl", "strict|prefer|off",
     "[nvlplace] strict (default): wait until every TP group fits in one NVLink domain; "
     "prefer: run now, splitting TP groups only when it must (logged); off: no NVLink "
     "constraint.",
     1, OPT_NVL, _option},
    {"nvl-max-tier", "leaf|spine|core",
     "[nvlplace] Highest fabric tier the job may span; the job waits until it fits.", 1,
     OPT_MAX_TIER, _option},
    {"nvl-domain", "one|any",
     "[nvlplace] one: the whole job inside one NVLink domain (one NVL72 rack), or it waits; "
     "any (default): TP groups and segments each inside one.",
     1, OPT_DOMAIN, _option},
    SPANK_OPTIONS_TABLE_END};

static const char* const env_names[OPT_LAST + 1] = {
    NULL, NVL_ENV_TP, NVL_ENV_PP, NVL_ENV_DP, NVL_ENV_NVL, NVL_ENV_MAX_TIER, NVL_ENV_DOMAIN};

/* Checks one value where the user typed it and keeps it in canonical form ("8" for "0008"),
 * as slurmctld will read it. RET 0, or -1 after printing why (srun and sbatch then stop with
 * "Invalid --nvl-tp argument"). */
static int _option(int val, const char* optarg, int remote) {
  char msg[256] = "";

  if (remote) /* slurmstepd: already checked on the submit side */
    return 0;
  if (val < 1 || val > OPT_LAST ||
      nvl_option_value(nvl_options[val - 1].name, optarg, opt_value[val], msg, sizeof(msg))) {
    slurm_error("nvlplace: %s", msg[0] ? msg : "unknown option");
    return -1;
  }
  return 0;
}

/* Where each node of a job keeps its rank map file: plugstack.conf's "rankmap_dir=DIR" (an
 * absolute path), else /tmp. */
static char rankmap_dir[256] = "/tmp";

static void _read_args(int ac, char** av) {
  for (int i = 0; i < ac; i++) {
    const char* dir = strncmp(av[i], "rankmap_dir=", 12) ? NULL : av[i] + 12;
    if (!dir) {
      slurm_error("nvlplace: unknown plugstack.conf argument '%s' (known: rankmap_dir=DIR)", av[i]);
    } else if (dir[0] != '/' || strlen(dir) >= sizeof(rankmap_dir)) {
      slurm_error(
          "nvlplace: rankmap_dir=%s is not an absolute path of at most %zu bytes; "
          "rank map files stay in %s",
          dir, sizeof(rankmap_dir) - 1, rankmap_dir);
    } else {
      snprintf(rankmap_dir, sizeof(rankmap_dir), "%s", dir);
    }
  }
}

/* The rank map file of a job on this node. RET 0, or -1 when the path does not fit. */
static int _rankmap_path(uint32_t job_id, char* path, size_t len) {
  int n = snprintf(path, len, "%s/nvlplace-rankmap.%u", rankmap_dir, job_id);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Adds the options to srun, sbatch and salloc (and to slurmstepd, which receives them). */
int slurm_spank_init(spank_t sp, int ac, char** av) {
  spank_context_t ctx = spank_context();

  _read_args(ac, av);
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return 0;
  for (int i = 0; nvl_options[i].name; i++) {
    if (spank_option_register(sp, &nvl_options[i]) != ESPANK_SUCCESS) {
      slurm_error("nvlplace: cannot register --%s", nvl_options[i].name);
      return -1;
    }
  }
  return 0;
}

/* The sizes together (each was checked alone where it was given). RET 0, or -1 after
 * printing why. */
static int _check_together(void) {
  nvl_job_opts_t opts;
  char msg[256] = "";
  int* size[OPT_DP + 1] = {NULL, &opts.tp, &opts.pp, &opts.dp};

  memset(&opts, 0, sizeof(opts));
  for (int i = OPT_TP; i <= OPT_DP; i++) {
    if (opt_value[i][0] && nvl_parse_size("nvl", opt_value[i], size[i], msg, sizeof(msg))) break;
  }
  if (!msg[0] && !nvl_check_opts(&opts, msg, sizeof(msg))) return 0;
  slurm_error("nvlplace: %s", msg);
  return -1;
}

/* After option parsing, on the submit side: hand the values to slurmctld in the job's
 * SPANK environment. */
int slurm_spank_init_post_opt(spank_t sp, int ac, char** av) {
  spank_context_t ctx = spank_context();

  (void)ac;
  (void)av;
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) return 0;
  if (_check_together()) return -1;
  for (int i = OPT_TP; i <= OPT_LAST; i++) {
    if (!opt_value[i][0]) continue;
    if (spank_job_control_setenv(sp, env_names[i], opt_value[i], 1) != ESPANK_SUCCESS) {
      slurm_error("nvlplace: cannot pass --%s to slurmctld", nvl_options[i - 1].name);
      return -1;
    }
  }
  return 0;
}

/* SPANK_getenv into a buffer that grows (the rank map of a large job is long). RET the value
 * (free it), or NULL when the variable is not set. */
static char* _getenv(spank_t sp, const char* name) {
  size_t len = 4096;
  char* buf = NULL;

  while (len <= (size_t)64 << 20) {
    char* grown = realloc(buf, len);
    spank_err_t rc;
    if (!grown) break;
    buf = grown;
    rc = spank_getenv(sp, name, buf, (int)len);
    if (rc == ESPANK_SUCCESS) return buf;
    if (rc != ESPANK_NOSPACE) break;
    len *= 2;
  }
  free(buf);
  return NULL;
}

/* The job's rank map as a file on this node (nvl_rankmap_hostfile), for launchers that read a
 * hostfile: NVLPLACE_RANKMAP_FILE names it. Every task writes the same text to a file of its
 * own and renames it into place, so concurrent tasks never leave half a file. A file that
 * cannot be written is logged and left out; the variables above still hold. */
static void _write_rankmap_file(spank_t sp) {
  uint32_t job_id = 0;
  char path[512], tmp[600], id[16];
  char* map;
  char* text;
  size_t len;
  int n;
  FILE* f;

  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || !job_id) return;
  if (_rankmap_path(job_id, path, sizeof(path))) return;
  if (!(map = _getenv(sp, NVL_ENV_RANKMAP))) return;
  /* A line per entry: the entry's bytes and about 70 of its own, a header of about 250. */
  len = strlen(map) + 512;
  for (const char* c = map; *c; c++) len += (*c == ' ') * 80;
  text = malloc(len);
  snprintf(id, sizeof(id), "%u", job_id);
  n = text ? nvl_rankmap_hostfile(map, id, text, len) : -1;
  free(map);
  snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
  if (n > 0 && (f = fopen(tmp, "w"))) {
    int ok = fwrite(text, 1, (size_t)n, f) == (size_t)n;
    ok &= fclose(f) == 0;
    if (ok && !rename(tmp, path)) {
      spank_setenv(sp, "NVLPLACE_RANKMAP_FILE", path, 1);
    } else {
      unlink(tmp);
      slurm_error("nvlplace: cannot write the rank map file %s", path);
    }
  } else if (n > 0) {
    slurm_error("nvlplace: cannot write the rank map file %s", tmp);
  }
  free(text);
}

/* In each task (and the batch script), from the job's rank map (NVLPLACE_RANKMAP, set by
 * the select plugin when it allocated the job): this node's place in rank order and its
 * NVLink domains, for launchers (torchrun --node-rank=$NVLPLACE_NODE_RANK, or a global rank
 * of NVLPLACE_FIRST_RANK + SLURM_LOCALID with one task per GPU):
 *   NVLPLACE_NODE_RANK, NVLPLACE_NUM_NODES, NVLPLACE_FIRST_RANK, NVLPLACE_NODE_GPUS,
 *   NVLPLACE_NVLINK_DOMAIN. */
int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  nvl_rankmap_entry_t e;
  char node[256], num[16];
  char* map;
  int rc;

  (void)ac;
  (void)av;
  if (spank_context() != S_CTX_REMOTE) return 0;
  if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof(node)) != ESPANK_SUCCESS) return 0;
  if (!(map = _getenv(sp, NVL_ENV_RANKMAP))) return 0;
  rc = nvl_rankmap_find(map, node, &e);
  free(map);
  if (rc < 0) slurm_error("nvlplace: %s is not a rank map this plugin reads", NVL_ENV_RANKMAP);
  if (rc != 0) return 0;
  snprintf(num, sizeof(num), "%d", e.node_rank);
  spank_setenv(sp, "NVLPLACE_NODE_RANK", num, 1);
  snprintf(num, sizeof(num), "%d", e.num_nodes);
  spank_setenv(sp, "NVLPLACE_NUM_NODES", num, 1);
  snprintf(num, sizeof(num), "%d", e.first_rank);
  spank_setenv(sp, "NVLPLACE_FIRST_RANK", num, 1);
  spank_setenv(sp, "NVLPLACE_NODE_GPUS", e.gpus, 1);
  spank_setenv(sp, "NVLPLACE_NVLINK_DOMAIN", e.domain, 1);
  _write_rankmap_file(sp);
  return 0;
}

/* At the end of the job on each node (slurmd's epilog, as root): its rank map file goes. */
int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
  uint32_t job_id = 0;
  char path[512];

  _read_args(ac, av);
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || !job_id) return 0;
  if (!_rankmap_path(job_id, path, sizeof(path))) unlink(path);
  return 0;
}
