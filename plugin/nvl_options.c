/* The job options of nvlplace: parsing and checking (see nvl_options.h). */
#include "nvl_options.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nvl_parse_size(const char* option, const char* text, int* out, char* msg, size_t msg_len) {
  char* end = NULL;
  long v;

  if (!text || !*text) {
    snprintf(msg, msg_len, "--%s needs a value, e.g. --%s=4", option, option);
    return -1;
  }
  errno = 0;
  v = strtol(text, &end, 10);
  /* Digits only: strtol would also take " 4" and "+4". */
  if (text[0] < '0' || text[0] > '9' || errno || *end || v < 1 || v > NVL_MAX_GROUP) {
    snprintf(msg, msg_len, "--%s=%s: must be a whole number from 1 to %d", option, text,
             NVL_MAX_GROUP);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static int _one_of(const char* option, const char* text, const char* const* names, const char* list,
                   char* out, size_t out_len, char* msg, size_t msg_len) {
  for (int i = 0; names[i]; i++) {
    if (text && !strcmp(text, names[i])) {
      snprintf(out, out_len, "%s", names[i]);
      return 0;
    }
  }
  snprintf(msg, msg_len, "--%s=%s: must be one of %s", option, text ? text : "", list);
  return -1;
}

int nvl_parse_mode(const char* option, const char* text, char out[8], char* msg, size_t msg_len) {
  static const char* const modes[] = {"strict", "prefer", "off", NULL};
  return _one_of(option, text, modes, "strict, prefer, off", out, 8, msg, msg_len);
}

int nvl_parse_tier(const char* option, const char* text, char out[16], char* msg, size_t msg_len) {
  static const char* const tiers[] = {"leaf", "spine", "core", NULL};
  return _one_of(option, text, tiers, "leaf, spine, core", out, 16, msg, msg_len);
}

int nvl_parse_domain(const char* option, const char* text, char out[8], char* msg, size_t msg_len) {
  static const char* const domains[] = {"one", "any", NULL};
  return _one_of(option, text, domains, "one, any", out, 8, msg, msg_len);
}

/* Modes and domains are parsed straight into nvl_option_value's `out` (char[8]). */
_Static_assert(NVL_OPTION_VALUE_MAX >= 8, "NVL_OPTION_VALUE_MAX holds a mode and a domain");

int nvl_option_value(const char* option, const char* text, char out[NVL_OPTION_VALUE_MAX],
                     char* msg, size_t msg_len) {
  int size;

  if (!option) option = "";
  if (!strcmp(option, "nvl-tp") || !strcmp(option, "nvl-pp") || !strcmp(option, "nvl-dp")) {
    if (nvl_parse_size(option, text, &size, msg, msg_len)) return -1;
    snprintf(out, NVL_OPTION_VALUE_MAX, "%d", size);
    return 0;
  }
  if (!strcmp(option, "nvl")) return nvl_parse_mode(option, text, out, msg, msg_len);
  if (!strcmp(option, "nvl-max-tier")) {
    char tier[16];
    size_t len;
    if (nvl_parse_tier(option, text, tier, msg, msg_len)) return -1;
    /* leaf, spine or core: never cut (checked, not assumed). */
    if ((len = strlen(tier)) >= NVL_OPTION_VALUE_MAX) {
      snprintf(msg, msg_len, "--%s=%s: longer than nvlplace hands on", option, tier);
      return -1;
    }
    memcpy(out, tier, len + 1);
    return 0;
  }
  if (!strcmp(option, "nvl-domain")) return nvl_parse_domain(option, text, out, msg, msg_len);
  snprintf(msg, msg_len, "--%s is not an nvlplace option", option);
  return -1;
}

/* The value of NAME in "NAME=value" strings, or NULL. */
static const char* _env_get(char* const* env, uint32_t env_size, const char* name) {
  size_t len = strlen(name);

  for (uint32_t i = 0; env && i < env_size; i++) {
    if (env[i] && !strncmp(env[i], name, len) && env[i][len] == '=') return env[i] + len + 1;
  }
  return NULL;
}

int nvl_check_opts(const nvl_job_opts_t* o, char* msg, size_t msg_len) {
  uint64_t tp = o->tp > 0 ? (uint64_t)o->tp : 1, pp = o->pp > 0 ? (uint64_t)o->pp : 1;
  uint64_t dp = o->dp > 0 ? (uint64_t)o->dp : 1;

  /* Each size is at most NVL_MAX_GROUP (2^16): the products fit in 64 bits. */
  if (tp * pp * dp > NVL_MAX_JOB_GPUS) {
    snprintf(msg, msg_len,
             "--nvl-tp=%d --nvl-pp=%d --nvl-dp=%d: TP x PP x DP = %llu GPUs, more than a job "
             "may have (%d)",
             o->tp ? o->tp : 1, o->pp ? o->pp : 1, o->dp ? o->dp : 1,
             (unsigned long long)(tp * pp * dp), NVL_MAX_JOB_GPUS);
    return -1;
  }
  return 0;
}

int nvl_opts_from_env(char* const* env, uint32_t env_size, nvl_job_opts_t* out, char* msg,
                      size_t msg_len) {
  const char* v;
  int found = 0;

  memset(out, 0, sizeof(*out));
  if ((v = _env_get(env, env_size, NVL_ENV_TP))) {
    found = 1;
    if (nvl_parse_size("nvl-tp", v, &out->tp, msg, msg_len)) return -1;
  }
  if ((v = _env_get(env, env_size, NVL_ENV_PP))) {
    found = 1;
    if (nvl_parse_size("nvl-pp", v, &out->pp, msg, msg_len)) return -1;
  }
  if ((v = _env_get(env, env_size, NVL_ENV_DP))) {
    found = 1;
    if (nvl_parse_size("nvl-dp", v, &out->dp, msg, msg_len)) return -1;
  }
  if ((v = _env_get(env, env_size, NVL_ENV_NVL))) {
    found = 1;
    if (nvl_parse_mode("nvl", v, out->nvl, msg, msg_len)) return -1;
  }
  if ((v = _env_get(env, env_size, NVL_ENV_MAX_TIER))) {
    found = 1;
    if (nvl_parse_tier("nvl-max-tier", v, out->max_tier, msg, msg_len)) return -1;
  }
  if ((v = _env_get(env, env_size, NVL_ENV_DOMAIN))) {
    found = 1;
    if (nvl_parse_domain("nvl-domain", v, out->domain, msg, msg_len)) return -1;
  }
  if (found && nvl_check_opts(out, msg, msg_len)) return -1;
  return found;
}

int nvl_opts_promise(int found, const nvl_job_opts_t* opts, int default_strict) {
  int strict;

  if (found < 0) return 1;
  if (found == 0 || !opts) return 0;
  if (opts->max_tier[0] || !strcmp(opts->domain, "one")) return 1;
  strict = opts->nvl[0] ? !strcmp(opts->nvl, "strict") : default_strict;
  return strict && opts->tp > 1;
}

/* GPUs in an index list "0-3,5" (no spaces). RET the count, or -1 if it is not one. */
static int _count_indexes(const char* s, size_t len) {
  int count = 0;
  size_t i = 0;

  while (i < len) {
    long lo, hi;
    size_t start = i;
    lo = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 7) lo = lo * 10 + (s[i++] - '0');
    if (i == start) return -1;
    hi = lo;
    if (i < len && s[i] == '-') {
      size_t from = ++i;
      hi = 0;
      while (i < len && s[i] >= '0' && s[i] <= '9' && i - from < 7) hi = hi * 10 + (s[i++] - '0');
      if (i == from || hi < lo) return -1;
    }
    if (hi - lo + 1 > NVL_MAX_JOB_GPUS - count) return -1;
    count += (int)(hi - lo + 1);
    if (i < len && s[i++] != ',') return -1;
    if (i == len && s[len - 1] == ',') return -1;
  }
  return count;
}

/* One entry "NODE:GPUS:DOMAINS" of a v1 rank map, as pointers into it. */
typedef struct {
  const char *node, *gpus, *domain;
  size_t node_len, gpus_len, domain_len;
  int count; /* GPUs in GPUS */
} nvl_rankmap_word_t;

/* The entry at *pp (after "v1"), moving *pp past it. RET 1 (an entry), 0 (the end), -1 (not
 * an entry this plugin reads). */
static int _rankmap_next(const char** pp, nvl_rankmap_word_t* w) {
  const char *p = *pp, *end, *c1, *c2;

  while (*p == ' ') p++;
  if (!*p) return 0;
  end = strchr(p, ' ');
  if (!end) end = p + strlen(p);
  c1 = memchr(p, ':', (size_t)(end - p));
  c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
  if (!c1 || !c2 || c1 == p) return -1;
  w->count = _count_indexes(c1 + 1, (size_t)(c2 - c1 - 1));
  if (w->count <= 0) return -1;
  w->node = p;
  w->node_len = (size_t)(c1 - p);
  w->gpus = c1 + 1;
  w->gpus_len = (size_t)(c2 - c1 - 1);
  w->domain = c2 + 1;
  w->domain_len = (size_t)(end - c2 - 1);
  *pp = end;
  return 1;
}

static int _rankmap_start(const char* map) {
  return map && !strncmp(map, "v1", 2) && (!map[2] || map[2] == ' ');
}

int nvl_rankmap_find(const char* map, const char* node, nvl_rankmap_entry_t* out) {
  const char* p;
  size_t node_len;
  int rank = 0, gpus_before = 0, found = 0, rc;
  nvl_rankmap_word_t w;

  if (!_rankmap_start(map) || !node || !out) return -1;
  memset(out, 0, sizeof(*out));
  node_len = strlen(node);
  p = map + 2;
  while ((rc = _rankmap_next(&p, &w)) > 0) {
    if (!found && w.node_len == node_len && !strncmp(w.node, node, node_len)) {
      if (w.gpus_len >= sizeof(out->gpus) || w.domain_len >= sizeof(out->domain)) return -1;
      found = 1;
      out->node_rank = rank;
      out->first_rank = gpus_before;
      out->num_gpus = w.count;
      memcpy(out->gpus, w.gpus, w.gpus_len);
      memcpy(out->domain, w.domain, w.domain_len);
    }
    if (w.count > NVL_MAX_JOB_GPUS - gpus_before) return -1;
    gpus_before += w.count;
    rank++;
  }
  if (rc < 0) return -1;
  out->num_nodes = rank;
  return found ? 0 : 1;
}

int nvl_rankmap_hostfile(const char* map, const char* job_id, char* buf, size_t len) {
  const char* p;
  size_t at;
  int rank = 0, gpus_before = 0, rc, n;
  nvl_rankmap_word_t w;

  if (!_rankmap_start(map) || !job_id || !buf || len == 0) return -1;
  n = snprintf(buf, len,
               "# nvlplace rank map of job %s: one line per node in rank order (a hostfile for "
               "mpirun --hostfile\n# or DeepSpeed: slots = the node's GPUs); after '#' the "
               "node's rank, the global rank of its\n# first GPU, its GPU indexes and their "
               "NVLink domains.\n",
               job_id);
  if (n < 0 || (size_t)n >= len) return -1;
  at = (size_t)n;
  p = map + 2;
  while ((rc = _rankmap_next(&p, &w)) > 0) {
    if (w.count > NVL_MAX_JOB_GPUS - gpus_before) return -1;
    n = snprintf(buf + at, len - at,
                 "%.*s slots=%d # node_rank=%d first_rank=%d gpus=%.*s nvlink_domain=%.*s\n",
                 (int)w.node_len, w.node, w.count, rank, gpus_before, (int)w.gpus_len, w.gpus,
                 (int)w.domain_len, w.domain);
    if (n < 0 || (size_t)n >= len - at) return -1;
    at += (size_t)n;
    gpus_before += w.count;
    rank++;
  }
  return rc < 0 || rank == 0 ? -1 : (int)at;
}
