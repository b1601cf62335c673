/* Every difference between the Slurm releases the plugins build against (22.05 to 26.05),
 * keyed on SLURM_VERSION_NUMBER: the plugins' C files include this instead of Slurm's
 * moved headers and write the types and signatures below. Read from each release's own
 * source (docs/slurm-versions.md); the select entry points themselves are listed in
 * select_entries.h. */
#ifndef NVLPLACE_PLUGIN_SLURM_COMPAT_NVL_SLURM_COMPAT_H_
#define NVLPLACE_PLUGIN_SLURM_COMPAT_NVL_SLURM_COMPAT_H_

#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm/slurm_version.h"

/* True when building against release a.b or later. */
#define NVL_SLURM_AT_LEAST(a, b) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(a, b, 0))

#if !NVL_SLURM_AT_LEAST(22, 5) || NVL_SLURM_AT_LEAST(26, 6)
#error "nvlplace plugins: Slurm releases 22.05 to 26.05 only (see select_entries.h)"
#endif

/* 23.02 moved the plugin interfaces from src/common/ to src/interfaces/. */
#if NVL_SLURM_AT_LEAST(23, 2)
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#else
#include "src/common/gres.h"
#include "src/common/select.h"
#endif
#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/slurmctld/slurmctld.h"

/* A job that asked for whole nodes (--exclusive). Until 23.11 details->whole_node is one
 * value (1 --exclusive, 2 =user, 3 =mcs: WHOLE_NODE_MCS 0x03, and Slurm itself tests
 * "== 1"); from 24.05 it holds flags (WHOLE_NODE_MCS 0x04). A bit test before 24.05 would
 * read --exclusive=mcs (3) as whole nodes. */
#if WHOLE_NODE_MCS == 0x03
#define NVL_WHOLE_NODE_REQUIRED(whole_node) ((whole_node) == WHOLE_NODE_REQUIRED)
#else
#define NVL_WHOLE_NODE_REQUIRED(whole_node) (((whole_node)&WHOLE_NODE_REQUIRED) != 0)
#endif

/* Lists: List and ListIterator until 23.11 added list_t and list_itr_t (the only names
 * left from 24.05/24.11). 22.05 keeps its own spelling. */
#if NVL_SLURM_AT_LEAST(23, 11)
typedef list_t* nvl_list_t;
typedef list_itr_t* nvl_list_itr_t;
#else
typedef List nvl_list_t;
typedef ListIterator nvl_list_itr_t;
#endif

/* hostlist_t was a pointer typedef until 23.11 made it the struct: the struct pointer is
 * the same type in every release. */
typedef struct hostlist* nvl_hostlist_t;

/* A job's details: struct job_details in 22.05, the anonymous job_details_t by 23.11 (in
 * src/common/job_record.h from 24.05). Named after the field, whatever the release. */
typedef __typeof__(*((job_record_t*)0)->details) nvl_job_details_t;

/* The tail of select_p_job_test after the preemptee lists: what reservations exclude
 * (a core bitmap, then from 23.11 resv_exc_t with GRES too) and, from 24.11, the
 * window backfill asks about in WILL_RUN mode. Carried as one struct so that nvl_ctld.c
 * hands it back to cons_tres as it came; it reads only the window (NVL_WILL_RUN_WINDOW). */
#if NVL_SLURM_AT_LEAST(24, 11)
typedef struct {
  resv_exc_t* resv_exc_ptr;
  will_run_data_t* will_run_ptr;
} nvl_job_test_tail_t;
#define NVL_JOB_TEST_TAIL_PARAMS resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr
#define NVL_JOB_TEST_TAIL_PACK \
  { resv_exc_ptr, will_run_ptr }
#define NVL_JOB_TEST_TAIL_ARGS(t) (t).resv_exc_ptr, (t).will_run_ptr
/* The time window a WILL_RUN call asks about (0, 0: from now on, as before 24.11). */
#define NVL_WILL_RUN_WINDOW(t, from, until) \
  do {                                      \
    if ((t).will_run_ptr) {                 \
      (from) = (t).will_run_ptr->start;     \
      (until) = (t).will_run_ptr->end;      \
    }                                       \
  } while (0)
#elif NVL_SLURM_AT_LEAST(23, 11)
typedef struct {
  resv_exc_t* resv_exc_ptr;
} nvl_job_test_tail_t;
#define NVL_JOB_TEST_TAIL_PARAMS resv_exc_t* resv_exc_ptr
#define NVL_JOB_TEST_TAIL_PACK \
  { resv_exc_ptr }
#define NVL_JOB_TEST_TAIL_ARGS(t) (t).resv_exc_ptr
#define NVL_WILL_RUN_WINDOW(t, from, until) ((void)0)
#else
typedef struct {
  bitstr_t* exc_core_bitmap;
} nvl_job_test_tail_t;
#define NVL_JOB_TEST_TAIL_PARAMS bitstr_t* exc_core_bitmap
#define NVL_JOB_TEST_TAIL_PACK \
  { exc_core_bitmap }
#define NVL_JOB_TEST_TAIL_ARGS(t) (t).exc_core_bitmap
#define NVL_WILL_RUN_WINDOW(t, from, until) ((void)0)
#endif

/* select_p_job_test's parameters in every release; the names are the ones a definition
 * written with them uses (job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
 * preemptee_candidates, preemptee_job_list, then the tail's). */
#define NVL_JOB_TEST_PARAMS                                                        \
  job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes, \
      uint32_t req_nodes, uint16_t mode, nvl_list_t preemptee_candidates,          \
      nvl_list_t *preemptee_job_list, NVL_JOB_TEST_TAIL_PARAMS

/* job_submit's job_modify: 23.02 added err_msg, a message for the user. */
#if NVL_SLURM_AT_LEAST(23, 2)
#define NVL_JOB_MODIFY_PARAMS                                           \
  job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid, \
      char **err_msg __attribute__((unused))
#else
#define NVL_JOB_MODIFY_PARAMS job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid
#endif

/* The select plugin's id. Up to 24.11 slurmctld, the clients and slurmstepd load every
 * select_*.so of PluginDir and a duplicate id is fatal, so the wrapper keeps its own
 * (cons_tres's 109 + 2000, unused by Slurm). From 25.05 only SelectType is loaded and
 * "is this cons_tres" is running_cons_tres(), an id test: any other id is fatal with
 * CR_Core/CR_CPU/CR_Socket, so the wrapper is cons_tres's 109 there. */
#if NVL_SLURM_AT_LEAST(25, 5)
#define NVL_SELECT_PLUGIN_ID SELECT_PLUGIN_CONS_TRES
#else
#define NVL_SELECT_PLUGIN_ID 2109
#endif

/* Up to 24.11 slurmctld has select_cons_tres.so open already (every select plugin is
 * loaded) and has run its init(); from 25.05 it never loads it, so the wrapper opens and
 * initialises it itself. */
#define NVL_SLURM_LOADS_CONS_TRES (!NVL_SLURM_AT_LEAST(25, 5))

/* slurm_select_ops_t is public in select.h through 23.11 (checked against the wrapper's
 * own table there); 24.11 and later keep it private to select.c. */
#define NVL_SLURM_SELECT_OPS_PUBLIC (!NVL_SLURM_AT_LEAST(24, 5))

/* Slurm's --segment (24.05+: job_details_t.segment_size, job_desc_msg_t.segment_size) and
 * --spread-segments / --consolidate-segments (25.11+: bits of job_record_t.bit_flags). 0
 * where the release has none. */
#if NVL_SLURM_AT_LEAST(24, 5)
#define NVL_JOB_SEGMENT(job_ptr)                                      \
  ((job_ptr)->details && (job_ptr)->details->segment_size != NO_VAL16 \
       ? (int)(job_ptr)->details->segment_size                        \
       : 0)
#define NVL_DESC_SEGMENT(desc) ((desc)->segment_size != NO_VAL16 ? (int)(desc)->segment_size : 0)
#else
#define NVL_JOB_SEGMENT(job_ptr) 0
#define NVL_DESC_SEGMENT(desc) 0
#endif
#if NVL_SLURM_AT_LEAST(25, 11)
#define NVL_JOB_SPREAD_SEGMENTS(job_ptr) (((job_ptr)->bit_flags & SPREAD_SEGMENTS) ? 1 : 0)
#define NVL_JOB_CONSOLIDATE_SEGMENTS(job_ptr) \
  (((job_ptr)->bit_flags & CONSOLIDATE_SEGMENTS) ? 1 : 0)
#define NVL_DESC_SPREAD_SEGMENTS(desc) (((desc)->bitflags & SPREAD_SEGMENTS) ? 1 : 0)
#define NVL_DESC_CONSOLIDATE_SEGMENTS(desc) (((desc)->bitflags & CONSOLIDATE_SEGMENTS) ? 1 : 0)
#else
#define NVL_JOB_SPREAD_SEGMENTS(job_ptr) 0
#define NVL_JOB_CONSOLIDATE_SEGMENTS(job_ptr) 0
#define NVL_DESC_SPREAD_SEGMENTS(desc) 0
#define NVL_DESC_CONSOLIDATE_SEGMENTS(desc) 0
#endif

/* job_feature_t: in slurmctld.h up to 23.02, in job_features.h from 23.11 on. */
#if __has_include("src/common/job_features.h")
#include "src/common/job_features.h"
#endif

/* The name of a job's Reason ("NvidiaImexChannels"): job_reason_string in
 * slurm_protocol_defs.h up to 23.11, job_state_reason_string in job_state_reason.h from
 * 24.05 on. */
#if __has_include("src/common/job_state_reason.h")
#include "src/common/job_state_reason.h"
#define NVL_JOB_REASON(reason) job_state_reason_string(reason)
#else
#define NVL_JOB_REASON(reason) job_reason_string(reason)
#endif

/* The GRES that shares a node's GPUs (gres/shard or gres/mps, "alt" GRES): its node state,
 * whose gres_bit_alloc has a bit per GPU index set while a job holds shards or MPS of that
 * GPU (cons_tres then gives the GPU to no gres/gpu job; before 23.11.5 Slurm clears the bit
 * when the first of several holders ends). Up to 23.11.3 it points at the node state
 * itself (alt_gres_ns); 23.11.4 made it the GRES state (alt_gres). NULL when none. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 4)
#define NVL_SHARING_GRES(ns) \
  ((ns)->alt_gres ? (gres_node_state_t*)(ns)->alt_gres->gres_data : (gres_node_state_t*)NULL)
#else
#define NVL_SHARING_GRES(ns) ((ns)->alt_gres_ns)
#endif

#endif /* NVLPLACE_PLUGIN_SLURM_COMPAT_NVL_SLURM_COMPAT_H_ */
