/* Fuzzes the SPANK option values (nvl_parse_size/mode/tier, and nvl_option_value as the
 * SPANK plugin hands them on), nvl_opts_from_env and the rank map (nvl_rankmap_find,
 * nvl_rankmap_hostfile: each line a map): byte 0 is the message buffer's length (the
 * hostfile's is 8 times it), the rest '\n'-separated values and "NAME=value" entries ("\1"
 * alone stands for a NULL entry). Buffers are malloc'ed to their exact size for ASan. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/nvl_options.h"

/* As FUZZ_CHECK in fuzz_common.h (contrib/fuzz.sh names findings from its message). */
#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      abort();                                                                      \
    }                                                                               \
  } while (0)

/* A line as a rank map: found entries and the hostfile stay in their buffers, and the two
 * readers agree on what is a map. */
static void rank_map(const char* map, size_t buf_len) {
  nvl_rankmap_entry_t* e = malloc(sizeof(*e));
  char* buf = malloc(buf_len ? buf_len : 1);
  int found = nvl_rankmap_find(map, "a", e);
  CHECK(found >= -1 && found <= 1);
  if (found == 0) {
    CHECK(memchr(e->gpus, '\0', sizeof(e->gpus)) && memchr(e->domain, '\0', sizeof(e->domain)));
    CHECK(e->node_rank >= 0 && e->node_rank < e->num_nodes && e->num_gpus >= 1);
    CHECK(e->first_rank >= 0 && e->first_rank <= NVL_MAX_JOB_GPUS - e->num_gpus);
  }
  int n = nvl_rankmap_hostfile(map, "7", buf, buf_len);
  CHECK(n == -1 || (n > 0 && (size_t)n < buf_len && strlen(buf) == (size_t)n));
  /* A file only of a map the finder reads through (no node is named with a space). */
  if (n > 0) CHECK(nvl_rankmap_find(map, "no such node", e) == 1);
  free(buf);
  free(e);
}

static int one_of(const char* s, size_t cap, const char* const* names) {
  if (!memchr(s, '\0', cap)) return 0;
  for (int i = 0; names[i]; i++)
    if (!strcmp(s, names[i])) return 1;
  return 0;
}

static const char* const kModes[] = {"", "strict", "prefer", "off", NULL};
static const char* const kTiers[] = {"", "leaf", "spine", "core", NULL};

/* A failed parse leaves a terminated message within msg_len. */
static void check_msg(const char* msg, size_t msg_len) {
  if (msg_len > 0) CHECK(memchr(msg, '\0', msg_len) != NULL);
}

static void parse_one(const char* text, char* msg, size_t msg_len) {
  int size = 0;
  char* mode = malloc(8);
  char* tier = malloc(16);
  if (nvl_parse_size("nvl-tp", text, &size, msg, msg_len) == 0) {
    CHECK(size >= 1 && size <= NVL_MAX_GROUP);
  } else {
    check_msg(msg, msg_len);
  }
  if (nvl_parse_mode("nvl", text, mode, msg, msg_len) == 0) {
    CHECK(one_of(mode, 8, kModes) && mode[0]);
  } else {
    check_msg(msg, msg_len);
  }
  if (nvl_parse_tier("nvl-max-tier", text, tier, msg, msg_len) == 0) {
    CHECK(one_of(tier, 16, kTiers) && tier[0]);
  } else {
    check_msg(msg, msg_len);
  }
  free(mode);
  free(tier);
  /* What the SPANK plugin hands on reads back as the value the user gave. */
  static const char* const kOptions[] = {"nvl-tp", "nvl", "nvl-max-tier", "nvl-domain", NULL};
  for (int i = 0; kOptions[i]; i++) {
    char* out = malloc(NVL_OPTION_VALUE_MAX);
    char* again = malloc(NVL_OPTION_VALUE_MAX);
    if (nvl_option_value(kOptions[i], text, out, msg, msg_len) == 0) {
      CHECK(memchr(out, '\0', NVL_OPTION_VALUE_MAX) != NULL);
      CHECK(nvl_option_value(kOptions[i], out, again, msg, msg_len) == 0 && !strcmp(out, again));
      if (i == 0) {
        int typed = 0, handed = 0;
        CHECK(nvl_parse_size("nvl-tp", text, &typed, msg, msg_len) == 0);
        CHECK(nvl_parse_size("nvl-tp", out, &handed, msg, msg_len) == 0 && typed == handed);
      } else {
        CHECK(!strcmp(out, text));
      }
    } else {
      check_msg(msg, msg_len);
    }
    free(out);
    free(again);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t msg_len = data[0];
  char* msg = malloc(msg_len ? msg_len : 1);
  /* A NUL-terminated copy of the rest, cut into lines in place. */
  char* text = malloc(size);
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  size_t lines = 1; /* up to the first 0 byte, where the C strings end */
  for (const char* p = text; *p; p++) lines += *p == '\n';
  char** env = malloc(lines * sizeof(char*));
  uint32_t n = 0;
  for (char* line = text; line; n++) {
    char* nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    env[n] = strcmp(line, "\1") ? line : NULL;
    line = nl ? nl + 1 : NULL;
  }
  CHECK(n == lines);

  parse_one(NULL, msg, msg_len);
  for (uint32_t i = 0; i < n; i++) {
    if (env[i]) parse_one(env[i], msg, msg_len);
    if (env[i]) rank_map(env[i], msg_len * 8);
  }
  nvl_job_opts_t* opts = malloc(sizeof(*opts));
  int found = nvl_opts_from_env(env, n, opts, msg, msg_len);
  CHECK(found >= -1 && found <= 1);
  if (found >= 0) {
    CHECK(opts->tp >= 0 && opts->tp <= NVL_MAX_GROUP);
    CHECK(opts->pp >= 0 && opts->pp <= NVL_MAX_GROUP);
    CHECK(opts->dp >= 0 && opts->dp <= NVL_MAX_GROUP);
    CHECK(one_of(opts->nvl, sizeof(opts->nvl), kModes));
    CHECK(one_of(opts->max_tier, sizeof(opts->max_tier), kTiers));
    CHECK(found == 1 ||
          (opts->tp == 0 && opts->pp == 0 && opts->dp == 0 && !opts->nvl[0] && !opts->max_tier[0]));
  } else {
    check_msg(msg, msg_len);
  }
  /* NULL and empty environments find nothing. */
  CHECK(nvl_opts_from_env(NULL, n, opts, msg, msg_len) == 0);
  CHECK(nvl_opts_from_env(env, 0, opts, msg, msg_len) == 0);
  free(opts);
  free(env);
  free(text);
  free(msg);
  return 0;
}
