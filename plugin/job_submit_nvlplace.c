/* job_submit/nvlplace: refuses at submission, with the reason shown to the user by srun,
 * sbatch and salloc, a job whose nvlplace options cannot be honoured (a TP size that does
 * not divide its GPUs, an unsupported job shape with options) or whose hard constraint can
 * never be met on this cluster. Without it slurmctld refuses the same jobs at submission
 * too, but the user sees only "Requested node configuration is not available".
 *
 * The decision is select/cons_tres_nvlplace's own (nvl_ctld_submit_check): that plugin is
 * slurmctld's SelectType and already loaded, so this one finds it in PluginDir with
 * RTLD_NOLOAD and calls its exported nvlplace_submit_check. With another SelectType it
 * accepts every job. slurm.conf: JobSubmitPlugins=nvlplace. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "nvl_slurm_compat.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

const char plugin_name[] = "nvlplace submit-time checks";
const char plugin_type[] = "job_submit/nvlplace";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

typedef int (*nvl_check_fn)(job_desc_msg_t* desc, char** err_msg);

static void* select_handle = NULL;
static nvl_check_fn check = NULL;
static bool looked = false;
/* Submissions run at once (slurmctld holds only read locks for job_submit): the first ones
 * wait here for the look-up instead of seeing `looked` before `check` is set, unchecked. */
static pthread_mutex_t look_lock = PTHREAD_MUTEX_INITIALIZER;

/* nvlplace_submit_check of the loaded select/cons_tres_nvlplace, or NULL (logged once).
 * Under look_lock. */
static nvl_check_fn _check_locked(void) {
  char *dirs, *save = NULL, *dir;

  if (looked) return check;
  looked = true;
  dirs = xstrdup(slurm_conf.plugindir);
  for (dir = strtok_r(dirs, ":", &save); dir && !select_handle; dir = strtok_r(NULL, ":", &save)) {
    char* path = NULL;
    xstrfmtcat(path, "%s/select_cons_tres_nvlplace.so", dir);
    select_handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    xfree(path);
  }
  xfree(dirs);
  if (select_handle) check = (nvl_check_fn)dlsym(select_handle, "nvlplace_submit_check");
  if (!check)
    error(
        "nvlplace: job_submit/nvlplace: select/cons_tres_nvlplace is not loaded (SelectType=%s): "
        "submissions are not checked",
        slurm_conf.select_type);
  return check;
}

static nvl_check_fn _check(void) {
  nvl_check_fn f;

  slurm_mutex_lock(&look_lock);
  f = _check_locked();
  slurm_mutex_unlock(&look_lock);
  return f;
}

extern int init(void) { return SLURM_SUCCESS; }

extern int fini(void) {
  slurm_mutex_lock(&look_lock);
  if (select_handle) dlclose(select_handle);
  select_handle = NULL;
  check = NULL;
  looked = false;
  slurm_mutex_unlock(&look_lock);
  return SLURM_SUCCESS;
}

/* IN job_desc - the job as submitted; OUT err_msg - why it is refused, for the user.
 * RET SLURM_SUCCESS or ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE. */
extern int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
  nvl_check_fn f = _check();

  (void)submit_uid;
  return f ? f(job_desc, err_msg) : SLURM_SUCCESS;
}

/* Updates are checked by slurmctld's select plugin when the job is next tested (a job
 * whose new options cannot be honoured is held there, with the reason). From 23.02 Slurm
 * also passes err_msg, unused here. */
extern int job_modify(NVL_JOB_MODIFY_PARAMS) {
  (void)job_desc;
  (void)job_ptr;
  (void)submit_uid;
  return SLURM_SUCCESS;
}
