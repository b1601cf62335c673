/* select/cons_tres_nvlplace: select/cons_tres with topology-aware node choice. Every
 * select_p_* call is forwarded to cons_tres (the same select_cons_tres.so that Slurm
 * loads, so the same globals); select_p_job_test first narrows the node bitmap to the
 * engine's best node sets (nvl_ctld.c). CPU, memory and GRES accounting stay cons_tres's;
 * gres.conf Links= steers GPU indexes inside a node. One source for Slurm 22.05 to 26.05:
 * the entry points are listed once in select_entries.h, the release differences are in
 * slurm_compat/nvl_slurm_compat.h.
 *
 * Slurm's rules this follows (src/common/select.c, src/interfaces/select.c, plugin.c):
 * - up to 24.11 slurmctld and the client commands load EVERY select_*.so of PluginDir and
 *   need every symbol of that release's node_select_syms[]; from 25.05 only SelectType is
 *   loaded, by slurmctld alone.
 * - plugin_version must equal SLURM_VERSION_NUMBER to the micro release; plugin_id must be
 *   unique and >= 100 (2109 up to 24.11, cons_tres's 109 from 25.05: nvl_slurm_compat.h).
 * - plugin_type must contain "cons_tres": several places test xstrstr(SelectType,
 *   "cons_tres"). On 22.05 and 23.02 reservations with CoreCnt test the numeric id 109 and
 *   are refused. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "nvl_ctld.h"
#include "nvl_slurm_compat.h"
#include "src/common/log.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

const char plugin_name[] = "nvlplace topology-aware GPU placement over cons_tres";
const char plugin_type[] = "select/cons_tres_nvlplace";
const uint32_t plugin_id = NVL_SELECT_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* cons_tres's entry points, in the order of this release's slurm_select_ops_t. */
typedef struct {
  uint32_t* plugin_id;
#define NVL_SELECT_ENTRY(ret, name, params, args) ret(*name) params;
#include "select_entries.h"
} nvl_select_ops_t;

/* The names Slurm resolves (node_select_syms[]), in the same order. */
static const char* const cons_tres_syms[] = {
    "plugin_id",
#define NVL_SELECT_ENTRY(ret, name, params, args) "select_p_" #name,
#include "select_entries.h"
};
_Static_assert(sizeof(cons_tres_syms) / sizeof(cons_tres_syms[0]) ==
                   sizeof(nvl_select_ops_t) / sizeof(void*),
               "one name per nvl_select_ops_t member");
#if NVL_SLURM_SELECT_OPS_PUBLIC
_Static_assert(sizeof(cons_tres_syms) / sizeof(cons_tres_syms[0]) ==
                   sizeof(slurm_select_ops_t) / sizeof(void*),
               "one name per slurm_select_ops_t member");
_Static_assert(offsetof(nvl_select_ops_t, job_test) == offsetof(slurm_select_ops_t, job_test) &&
                   offsetof(nvl_select_ops_t, reconfigure) ==
                       offsetof(slurm_select_ops_t, reconfigure),
               "select_entries.h in the order of slurm_select_ops_t");
#endif
/* Where slurm_select_ops_t is private, Slurm's own declaration still checks the job_test
 * signature (the part that changes most between releases). */
_Static_assert(__builtin_types_compatible_p(__typeof__(&select_g_job_test), nvl_job_test_fn),
               "nvl_slurm_compat.h's select_p_job_test is this release's");

static nvl_select_ops_t ct; /* cons_tres's entry points */
static void* ct_handle = NULL;
static bool ct_initialized_here = false; /* we ran cons_tres's init() */

/* Opens select_cons_tres.so from PluginDir, reusing the copy Slurm already loaded (up to
 * 24.11; from 25.05 Slurm never loads it and the wrapper initialises its own). */
static int _open_cons_tres(void) {
  char *dirs = xstrdup(slurm_conf.plugindir), *save = NULL, *dir;
  void** slots = (void**)&ct;
  int (*ct_init)(void);

  for (dir = strtok_r(dirs, ":", &save); dir && !ct_handle; dir = strtok_r(NULL, ":", &save)) {
    char* path = NULL;
    xstrfmtcat(path, "%s/select_cons_tres.so", dir);
    if (NVL_SLURM_LOADS_CONS_TRES && (ct_handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD))) {
      ct_initialized_here = false;
    } else if ((ct_handle = dlopen(path, RTLD_LAZY))) {
      ct_initialized_here = true;
    }
    xfree(path);
  }
  xfree(dirs);
  if (!ct_handle) {
    error("nvlplace: select_cons_tres.so not found in PluginDir=%s", slurm_conf.plugindir);
    return SLURM_ERROR;
  }
  for (size_t i = 0; i < sizeof(cons_tres_syms) / sizeof(cons_tres_syms[0]); i++) {
    if (!(slots[i] = dlsym(ct_handle, cons_tres_syms[i]))) {
      error("nvlplace: select_cons_tres.so has no %s", cons_tres_syms[i]);
      return SLURM_ERROR;
    }
  }
  /* Slurm calls init() of the plugins it loads itself; a copy we opened first needs ours. */
  if (ct_initialized_here) {
    if (!(ct_init = (int (*)(void))dlsym(ct_handle, "init")) || ct_init() != SLURM_SUCCESS) {
      error("nvlplace: init() of select_cons_tres.so failed");
      return SLURM_ERROR;
    }
  }
  return SLURM_SUCCESS;
}

extern int init(void) {
  if (_open_cons_tres() != SLURM_SUCCESS) return SLURM_ERROR;
  /* The release this .so was built for: it loads only into that one (plugin_version). */
  if (running_in_slurmctld())
    info("%s built for Slurm %d.%02d.%d loaded over cons_tres", plugin_type,
         SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
         SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
  return SLURM_SUCCESS;
}

extern int fini(void) {
  int (*ct_fini)(void);

  nvl_ctld_fini();
  if (ct_handle && ct_initialized_here && (ct_fini = (int (*)(void))dlsym(ct_handle, "fini")))
    ct_fini();
  if (ct_handle) dlclose(ct_handle);
  ct_handle = NULL;
  return SLURM_SUCCESS;
}

/* IN/OUT as in cons_tres's select_p_job_test; nvl_ctld.c narrows the node bitmap. The
 * release's tail (reservation exclusions, WILL_RUN window) goes back to cons_tres as is. */
extern int select_p_job_test(NVL_JOB_TEST_PARAMS) {
  nvl_job_test_tail_t tail = NVL_JOB_TEST_TAIL_PACK;

  return nvl_ctld_job_test(ct.job_test, job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                           preemptee_candidates, preemptee_job_list, tail);
}

/* The submit-time check, for job_submit/nvlplace (see nvl_ctld.h). */
extern int nvlplace_submit_check(job_desc_msg_t* job_desc, char** err_msg) {
  return nvl_ctld_submit_check(job_desc, err_msg);
}

/* cons_tres first, then nvlplace.yaml is read again (slurmctld start and
 * `scontrol reconfigure` both come here). */
extern int select_p_reconfigure(void) {
  int rc = ct.reconfigure();

  if (running_in_slurmctld()) nvl_ctld_load_config();
  return rc;
}

/* cons_tres's, and then the GPUs running jobs hold (nvl_ctld.h). select_nodeinfo_set is
 * where cons_tres allocates a starting job's resources, GRES included (its job_begin does
 * nothing), and where slurmctld gives it back each running job's at a restart. */
extern int select_p_select_nodeinfo_set(job_record_t* job_ptr) {
  int rc = ct.select_nodeinfo_set(job_ptr);

  if (rc == SLURM_SUCCESS && running_in_slurmctld()) nvl_ctld_job_allocated(job_ptr);
  return rc;
}

extern int select_p_job_fini(job_record_t* job_ptr) {
  int rc = ct.job_fini(job_ptr);

  if (running_in_slurmctld()) nvl_ctld_job_fini(job_ptr);
  return rc;
}

extern int select_p_job_resized(job_record_t* job_ptr, node_record_t* node_ptr) {
  int rc = ct.job_resized(job_ptr, node_ptr);

  if (running_in_slurmctld()) nvl_ctld_held_invalidate();
  return rc;
}

extern int select_p_job_expand(job_record_t* from_job_ptr, job_record_t* to_job_ptr) {
  int rc = ct.job_expand(from_job_ptr, to_job_ptr);

  if (running_in_slurmctld()) nvl_ctld_held_invalidate();
  return rc;
}

/* ---- everything else is cons_tres's, one forwarder per entry of select_entries.h ---- */

#define NVL_SELECT_ENTRY(ret, name, params, args) \
  extern ret select_p_##name params { return ct.name args; }
#define NVL_SELECT_VOID(name, params, args) \
  extern void select_p_##name params { ct.name args; }
#define NVL_SELECT_HOOK(ret, name, params, args) /* written above */
#include "select_entries.h"
