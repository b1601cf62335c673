/* The GPUs each running job holds, kept by the select plugin between job_test calls: told
 * when a job's resources are allocated and at its fini (a resize or an expand has it
 * rebuilt), so that backfill's WILL_RUN tests read when each busy GPU frees from this view
 * instead of walking slurmctld's whole job list per call.
 * The view is checked against Slurm's own GRES bitmaps (gres_bit_alloc of each node) at
 * every use and rebuilt from the job list when they differ (nvl_ctld.c). C ABI, C++
 * inside; no Slurm header, no exception leaves it. Not thread-safe: the caller locks. */
#ifndef NVLPLACE_PLUGIN_HELD_GPUS_H_
#define NVLPLACE_PLUGIN_HELD_GPUS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nvl_held nvl_held_t;

/* RET an empty view, or NULL when there is no memory. */
nvl_held_t* nvl_held_new(void);
void nvl_held_free(nvl_held_t* held);
/* Forgets every job (before a rebuild from the job list). */
void nvl_held_clear(nvl_held_t* held);

/* Job `job` holds GPUs gpus[0..count) on node `node` (a node index >= 0) too. RET 0, or
 * -1 when there is no memory or the node is negative (the view is then cleared: the caller
 * rebuilds). */
int nvl_held_add(nvl_held_t* held, uint32_t job, int node, const int* gpus, int count);
/* Job `job` holds nothing any more. */
void nvl_held_drop(nvl_held_t* held, uint32_t job);

/* The GPUs held on `node`, ascending by GPU then job: *gpus[k] held by *jobs[k]. The
 * pointers are valid until the next change. RET their number (0 for an unknown node). */
int nvl_held_node(const nvl_held_t* held, int node, const int** gpus, const uint32_t** jobs);
/* 1 when the distinct GPUs held on `node` are exactly alloc[0..count) (ascending, distinct:
 * the set bits of Slurm's gres_bit_alloc), else 0. */
int nvl_held_matches(const nvl_held_t* held, int node, const int* alloc, int count);
/* The number of jobs holding GPUs. */
int nvl_held_jobs(const nvl_held_t* held);

#ifdef __cplusplus
}
#endif

#endif /* NVLPLACE_PLUGIN_HELD_GPUS_H_ */
