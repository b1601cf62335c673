/* The job options of nvlplace: parsing and checking (see nvl_options.h). */
#include "nvl_options.h"

#include <errno.h>
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
  if (errno || *end || v < 1 || v > NVL_MAX_GROUP) {
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

/* The value of NAME in "NAME=value" strings, or NULL. */
static const char* _env_get(char* const* env, uint32_t env_size, const char* name) {
  size_t len = strlen(name);

  for (uint32_t i = 0; env && i < env_size; i++) {
    if (env[i] && !strncmp(env[i], name, len) && env[i][len] == '=') return env[i] + len + 1;
  }
  return NULL;
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
  return found;
}
