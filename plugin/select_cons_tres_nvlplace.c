/* select/cons_tres_nvlplace: select/cons_tres with topology-aware node choice. Every
 * select_p_* call is forwarded to cons_tres (the same select_cons_tres.so that Slurm
 * loads, so the same globals); select_p_job_test first narrows the node bitmap to the
 * engine's best node sets (nvl_ctld.c). CPU, memory and GRES accounting stay cons_tres's;
 * gres.conf Links= steers GPU indexes inside a node.
 *
 * Slurm 22.05 rules this follows (src/common/select.c, src/common/plugin.c):
 * - slurmctld and the client commands load EVERY select_*.so of PluginDir and need all 37
 *   symbols of node_select_syms[]; slurmd loads only the configured plugin.
 * - plugin_version must equal SLURM_VERSION_NUMBER; plugin_id must be unique and >= 100.
 * - plugin_type must contain "cons_tres": several places test xstrstr(SelectType,
 *   "cons_tres"). Reservations with CoreCnt test the numeric id 109 and are refused. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "nvl_ctld.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/run_in_daemon.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#define NVLPLACE_SELECT_PLUGIN_ID 2109 /* cons_tres's 109 + 2000; unused by Slurm */

const char plugin_name[] = "nvlplace topology-aware GPU placement over cons_tres";
const char plugin_type[] = "select/cons_tres_nvlplace";
const uint32_t plugin_id = NVLPLACE_SELECT_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* The names Slurm resolves, in the order of slurm_select_ops_t (src/common/select.c). */
static const char* const cons_tres_syms[] = {
    "plugin_id",
    "select_p_state_save",
    "select_p_state_restore",
    "select_p_job_init",
    "select_p_node_init",
    "select_p_job_test",
    "select_p_job_begin",
    "select_p_job_ready",
    "select_p_job_expand",
    "select_p_job_resized",
    "select_p_job_signal",
    "select_p_job_fini",
    "select_p_job_suspend",
    "select_p_job_resume",
    "select_p_step_pick_nodes",
    "select_p_step_start",
    "select_p_step_finish",
    "select_p_select_nodeinfo_pack",
    "select_p_select_nodeinfo_unpack",
    "select_p_select_nodeinfo_alloc",
    "select_p_select_nodeinfo_free",
    "select_p_select_nodeinfo_set_all",
    "select_p_select_nodeinfo_set",
    "select_p_select_nodeinfo_get",
    "select_p_select_jobinfo_alloc",
    "select_p_select_jobinfo_free",
    "select_p_select_jobinfo_set",
    "select_p_select_jobinfo_get",
    "select_p_select_jobinfo_copy",
    "select_p_select_jobinfo_pack",
    "select_p_select_jobinfo_unpack",
    "select_p_select_jobinfo_sprint",
    "select_p_select_jobinfo_xstrdup",
    "select_p_get_info_from_plugin",
    "select_p_update_node_config",
    "select_p_reconfigure",
    "select_p_resv_test",
};
_Static_assert(sizeof(cons_tres_syms) / sizeof(cons_tres_syms[0]) ==
                   sizeof(slurm_select_ops_t) / sizeof(void*),
               "one name per slurm_select_ops_t member");

static slurm_select_ops_t ct; /* cons_tres's entry points */
static void* ct_handle = NULL;
static bool ct_initialized_here = false; /* we ran cons_tres's init() (slurmd) */

/* Opens select_cons_tres.so from PluginDir, reusing the copy Slurm already loaded. */
static int _open_cons_tres(void) {
  char *dirs = xstrdup(slurm_conf.plugindir), *save = NULL, *dir;
  void** slots = (void**)&ct;
  int (*ct_init)(void);

  for (dir = strtok_r(dirs, ":", &save); dir && !ct_handle; dir = strtok_r(NULL, ":", &save)) {
    char* path = NULL;
    xstrfmtcat(path, "%s/select_cons_tres.so", dir);
    if ((ct_handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD))) {
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
  if (running_in_slurmctld()) verbose("%s loaded over cons_tres", plugin_type);
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

/* IN/OUT as in cons_tres's select_p_job_test; nvl_ctld.c narrows the node bitmap. */
extern int select_p_job_test(job_record_t* job_ptr, bitstr_t* bitmap, uint32_t min_nodes,
                             uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                             List preemptee_candidates, List* preemptee_job_list,
                             bitstr_t* exc_core_bitmap) {
  return nvl_ctld_job_test(ct.job_test, job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                           preemptee_candidates, preemptee_job_list, exc_core_bitmap);
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

/* ---- everything else is cons_tres's --------------------------------------------------- */

extern int select_p_state_save(char* dir_name) { return ct.state_save(dir_name); }
extern int select_p_state_restore(char* dir_name) { return ct.state_restore(dir_name); }
extern int select_p_job_init(List job_list) { return ct.job_init(job_list); }
extern int select_p_node_init(void) { return ct.node_init(); }
extern int select_p_job_begin(job_record_t* job_ptr) { return ct.job_begin(job_ptr); }
extern int select_p_job_ready(job_record_t* job_ptr) { return ct.job_ready(job_ptr); }
extern int select_p_job_expand(job_record_t* from_job_ptr, job_record_t* to_job_ptr) {
  return ct.job_expand(from_job_ptr, to_job_ptr);
}
extern int select_p_job_resized(job_record_t* job_ptr, node_record_t* node_ptr) {
  return ct.job_resized(job_ptr, node_ptr);
}
extern int select_p_job_signal(job_record_t* job_ptr, int signal) {
  return ct.job_signal(job_ptr, signal);
}
extern int select_p_job_fini(job_record_t* job_ptr) { return ct.job_fini(job_ptr); }
extern int select_p_job_suspend(job_record_t* job_ptr, bool indf_susp) {
  return ct.job_suspend(job_ptr, indf_susp);
}
extern int select_p_job_resume(job_record_t* job_ptr, bool indf_susp) {
  return ct.job_resume(job_ptr, indf_susp);
}
extern bitstr_t* select_p_step_pick_nodes(job_record_t* job_ptr, select_jobinfo_t* jobinfo,
                                          uint32_t node_count, bitstr_t** avail_nodes) {
  return ct.step_pick_nodes(job_ptr, jobinfo, node_count, avail_nodes);
}
extern int select_p_step_start(step_record_t* step_ptr) { return ct.step_start(step_ptr); }
extern int select_p_step_finish(step_record_t* step_ptr, bool killing_step) {
  return ct.step_finish(step_ptr, killing_step);
}
extern int select_p_select_nodeinfo_pack(select_nodeinfo_t* nodeinfo, buf_t* buffer,
                                         uint16_t protocol_version) {
  return ct.nodeinfo_pack(nodeinfo, buffer, protocol_version);
}
extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t** nodeinfo, buf_t* buffer,
                                           uint16_t protocol_version) {
  return ct.nodeinfo_unpack(nodeinfo, buffer, protocol_version);
}
extern select_nodeinfo_t* select_p_select_nodeinfo_alloc(void) { return ct.nodeinfo_alloc(); }
extern int select_p_select_nodeinfo_free(select_nodeinfo_t* nodeinfo) {
  return ct.nodeinfo_free(nodeinfo);
}
extern int select_p_select_nodeinfo_set_all(void) { return ct.nodeinfo_set_all(); }
extern int select_p_select_nodeinfo_set(job_record_t* job_ptr) { return ct.nodeinfo_set(job_ptr); }
extern int select_p_select_nodeinfo_get(select_nodeinfo_t* nodeinfo,
                                        enum select_nodedata_type dinfo, enum node_states state,
                                        void* data) {
  return ct.nodeinfo_get(nodeinfo, dinfo, state, data);
}
extern select_jobinfo_t* select_p_select_jobinfo_alloc(void) { return ct.jobinfo_alloc(); }
extern int select_p_select_jobinfo_free(select_jobinfo_t* jobinfo) {
  return ct.jobinfo_free(jobinfo);
}
extern int select_p_select_jobinfo_set(select_jobinfo_t* jobinfo,
                                       enum select_jobdata_type data_type, void* data) {
  return ct.jobinfo_set(jobinfo, data_type, data);
}
extern int select_p_select_jobinfo_get(select_jobinfo_t* jobinfo,
                                       enum select_jobdata_type data_type, void* data) {
  return ct.jobinfo_get(jobinfo, data_type, data);
}
extern select_jobinfo_t* select_p_select_jobinfo_copy(select_jobinfo_t* jobinfo) {
  return ct.jobinfo_copy(jobinfo);
}
extern int select_p_select_jobinfo_pack(select_jobinfo_t* jobinfo, buf_t* buffer,
                                        uint16_t protocol_version) {
  return ct.jobinfo_pack(jobinfo, buffer, protocol_version);
}
extern int select_p_select_jobinfo_unpack(select_jobinfo_t** jobinfo, buf_t* buffer,
                                          uint16_t protocol_version) {
  return ct.jobinfo_unpack(jobinfo, buffer, protocol_version);
}
extern char* select_p_select_jobinfo_sprint(select_jobinfo_t* jobinfo, char* buf, size_t size,
                                            int mode) {
  return ct.jobinfo_sprint(jobinfo, buf, size, mode);
}
extern char* select_p_select_jobinfo_xstrdup(select_jobinfo_t* jobinfo, int mode) {
  return ct.jobinfo_xstrdup(jobinfo, mode);
}
extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t* job_ptr,
                                         void* data) {
  return ct.get_info_from_plugin(dinfo, job_ptr, data);
}
extern int select_p_update_node_config(int index) { return ct.update_node_config(index); }
extern bitstr_t* select_p_resv_test(resv_desc_msg_t* resv_desc_ptr, uint32_t node_cnt,
                                    bitstr_t* avail_bitmap, bitstr_t** core_bitmap) {
  return ct.resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
