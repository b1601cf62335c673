/* The slurmctld side of select/cons_tres_nvlplace: the configuration's life cycle and the
 * topology-aware job_test that narrows cons_tres's node bitmap. Slurm-side only: includes
 * Slurm's internal headers (never the engine's). */
#ifndef NVLPLACE_PLUGIN_NVL_CTLD_H_
#define NVLPLACE_PLUGIN_NVL_CTLD_H_

#include <stdint.h>

#include "nvl_slurm_compat.h"

/* cons_tres's select_p_job_test (this release's signature). */
typedef int (*nvl_job_test_fn)(NVL_JOB_TEST_PARAMS);

/* (Re)reads nvlplace.yaml beside slurm.conf. On failure logs one error (file:line) and
 * leaves the plugin behaving exactly as cons_tres until the next successful read. */
void nvl_ctld_load_config(void);
void nvl_ctld_fini(void);

/* select_p_job_test with nvlplace's node choice (arguments as in select_p_job_test, the
 * release's tail in one struct handed back to cons_tres unread):
 * asks the engine for node sets from the live state and hands cons_tres each narrowed
 * bitmap in turn, then the full one. Waits (returns SLURM_ERROR in RUN_NOW mode) only for
 * a hard constraint the engine cannot meet now: strict NVLink TP groups or a max tier.
 * RET cons_tres's result. */
int nvl_ctld_job_test(nvl_job_test_fn cons_tres, job_record_t* job_ptr, bitstr_t* bitmap,
                      uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                      nvl_list_t preemptee_candidates, nvl_list_t* preemptee_job_list,
                      nvl_job_test_tail_t tail);

/* The GPUs running jobs hold, kept for backfill's WILL_RUN tests (held_gpus.h): after
 * cons_tres's select_nodeinfo_set (the job's resources allocated) and job_fini, and
 * invalidate (rebuilt from the job list at the next use) after a resize or an expand,
 * whose GRES bookkeeping is spread over slurmctld. Checked against every node's
 * gres_bit_alloc at each use. */
void nvl_ctld_job_allocated(job_record_t* job_ptr);
void nvl_ctld_job_fini(job_record_t* job_ptr);
void nvl_ctld_held_invalidate(void);

/* The submit-time check of job_submit/nvlplace: the decision nvlplace would make at
 * submission (test_only, every node as if free) on the job description. RET SLURM_SUCCESS,
 * or ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE with the reason in *err_msg (shown to the user
 * by srun, sbatch and salloc). */
int nvl_ctld_submit_check(job_desc_msg_t* desc, char** err_msg);

#endif /* NVLPLACE_PLUGIN_NVL_CTLD_H_ */
