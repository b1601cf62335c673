/* The select plugin entry points of each Slurm release, once: node_select_syms[] and
 * slurm_select_ops_t of src/common/select.c (22.05) or src/interfaces/select.c (23.02+),
 * in their order, without the leading "plugin_id". An X-macro list: the includer defines
 *   NVL_SELECT_ENTRY(ret, name, params, args)  select_p_<name>, forwarded to cons_tres
 * and may define
 *   NVL_SELECT_VOID(name, params, args)        one returning void (else an ENTRY)
 *   NVL_SELECT_HOOK(ret, name, params, args)   one nvlplace implements (else an ENTRY;
 *                                              its args are not used)
 * From it come the forwarders and the table dlsym'd from select_cons_tres.so
 * (select_cons_tres_nvlplace.c) and the linker export map (select.map.in, preprocessed by
 * CMake). contrib/slurm/check_symbols.sh checks a built .so against a release's list.
 * Needs only slurm/slurm_version.h; the parameter types come from nvl_slurm_compat.h
 * where the list is expanded into C.
 *
 *  series          symbols  change
 *  22.05             37     the full list
 *  23.02             33     - job_signal, jobinfo_sprint, jobinfo_xstrdup, update_node_config
 *  23.11 to 24.11    32     - resv_test
 *  25.05, 25.11      13     only what slurmctld calls through the select interface
 *  26.05             14     + job_mem_reduce */
#ifndef NVL_SELECT_VOID
#define NVL_SELECT_VOID(name, params, args) NVL_SELECT_ENTRY(void, name, params, args)
#endif
#ifndef NVL_SELECT_HOOK
#define NVL_SELECT_HOOK NVL_SELECT_ENTRY
#endif

#define NVL_UP_TO_24_11 (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(25, 5, 0))
#define NVL_UP_TO_22_05 (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0))

/* The parameter lists are declarations, which clang-format takes for expressions. */
/* clang-format off */

#if NVL_UP_TO_24_11
NVL_SELECT_ENTRY(int, state_save, (char* dir_name), (dir_name))
NVL_SELECT_ENTRY(int, state_restore, (char* dir_name), (dir_name))
NVL_SELECT_ENTRY(int, job_init, (nvl_list_t job_list), (job_list))
#endif
NVL_SELECT_ENTRY(int, node_init, (void), ())
NVL_SELECT_HOOK(int, job_test, (NVL_JOB_TEST_PARAMS), ())
NVL_SELECT_ENTRY(int, job_begin, (job_record_t* job_ptr), (job_ptr))
NVL_SELECT_ENTRY(int, job_ready, (job_record_t* job_ptr), (job_ptr))
NVL_SELECT_HOOK(int, job_expand, (job_record_t* from_job_ptr, job_record_t* to_job_ptr),
                (from_job_ptr, to_job_ptr))
NVL_SELECT_HOOK(int, job_resized, (job_record_t* job_ptr, node_record_t* node_ptr),
                (job_ptr, node_ptr))
#if NVL_UP_TO_22_05
NVL_SELECT_ENTRY(int, job_signal, (job_record_t* job_ptr, int signal), (job_ptr, signal))
#endif
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
NVL_SELECT_VOID(job_mem_reduce, (job_record_t* job_ptr), (job_ptr))
#endif
NVL_SELECT_HOOK(int, job_fini, (job_record_t* job_ptr), (job_ptr))
NVL_SELECT_ENTRY(int, job_suspend, (job_record_t* job_ptr, bool indf_susp), (job_ptr, indf_susp))
NVL_SELECT_ENTRY(int, job_resume, (job_record_t* job_ptr, bool indf_susp), (job_ptr, indf_susp))
#if NVL_UP_TO_24_11
NVL_SELECT_ENTRY(bitstr_t*, step_pick_nodes,
                 (job_record_t* job_ptr, select_jobinfo_t* jobinfo, uint32_t node_count,
                  bitstr_t** avail_nodes),
                 (job_ptr, jobinfo, node_count, avail_nodes))
NVL_SELECT_ENTRY(int, step_start, (step_record_t* step_ptr), (step_ptr))
NVL_SELECT_ENTRY(int, step_finish, (step_record_t* step_ptr, bool killing_step),
                 (step_ptr, killing_step))
NVL_SELECT_ENTRY(int, select_nodeinfo_pack,
                 (select_nodeinfo_t* nodeinfo, buf_t* buffer, uint16_t protocol_version),
                 (nodeinfo, buffer, protocol_version))
NVL_SELECT_ENTRY(int, select_nodeinfo_unpack,
                 (select_nodeinfo_t** nodeinfo, buf_t* buffer, uint16_t protocol_version),
                 (nodeinfo, buffer, protocol_version))
NVL_SELECT_ENTRY(select_nodeinfo_t*, select_nodeinfo_alloc, (void), ())
NVL_SELECT_ENTRY(int, select_nodeinfo_free, (select_nodeinfo_t* nodeinfo), (nodeinfo))
#endif
NVL_SELECT_ENTRY(int, select_nodeinfo_set_all, (void), ())
NVL_SELECT_HOOK(int, select_nodeinfo_set, (job_record_t* job_ptr), (job_ptr))
#if NVL_UP_TO_24_11
NVL_SELECT_ENTRY(int, select_nodeinfo_get,
                 (select_nodeinfo_t* nodeinfo, enum select_nodedata_type dinfo,
                  enum node_states state, void* data),
                 (nodeinfo, dinfo, state, data))
NVL_SELECT_ENTRY(select_jobinfo_t*, select_jobinfo_alloc, (void), ())
NVL_SELECT_ENTRY(int, select_jobinfo_free, (select_jobinfo_t* jobinfo), (jobinfo))
NVL_SELECT_ENTRY(int, select_jobinfo_set,
                 (select_jobinfo_t* jobinfo, enum select_jobdata_type data_type, void* data),
                 (jobinfo, data_type, data))
NVL_SELECT_ENTRY(int, select_jobinfo_get,
                 (select_jobinfo_t* jobinfo, enum select_jobdata_type data_type, void* data),
                 (jobinfo, data_type, data))
NVL_SELECT_ENTRY(select_jobinfo_t*, select_jobinfo_copy, (select_jobinfo_t* jobinfo), (jobinfo))
NVL_SELECT_ENTRY(int, select_jobinfo_pack,
                 (select_jobinfo_t* jobinfo, buf_t* buffer, uint16_t protocol_version),
                 (jobinfo, buffer, protocol_version))
NVL_SELECT_ENTRY(int, select_jobinfo_unpack,
                 (select_jobinfo_t** jobinfo, buf_t* buffer, uint16_t protocol_version),
                 (jobinfo, buffer, protocol_version))
#endif
#if NVL_UP_TO_22_05
NVL_SELECT_ENTRY(char*, select_jobinfo_sprint,
                 (select_jobinfo_t* jobinfo, char* buf, size_t size, int mode),
                 (jobinfo, buf, size, mode))
NVL_SELECT_ENTRY(char*, select_jobinfo_xstrdup, (select_jobinfo_t* jobinfo, int mode),
                 (jobinfo, mode))
#endif
#if NVL_UP_TO_24_11
NVL_SELECT_ENTRY(int, get_info_from_plugin,
                 (enum select_plugindata_info dinfo, job_record_t* job_ptr, void* data),
                 (dinfo, job_ptr, data))
#endif
#if NVL_UP_TO_22_05
NVL_SELECT_ENTRY(int, update_node_config, (int index), (index))
#endif
NVL_SELECT_HOOK(int, reconfigure, (void), ())
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 11, 0)
NVL_SELECT_ENTRY(bitstr_t*, resv_test,
                 (resv_desc_msg_t* resv_desc_ptr, uint32_t node_cnt, bitstr_t* avail_bitmap,
                  bitstr_t** core_bitmap),
                 (resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap))
#endif
/* clang-format on */

#undef NVL_UP_TO_24_11
#undef NVL_UP_TO_22_05
#undef NVL_SELECT_ENTRY
#undef NVL_SELECT_VOID
#undef NVL_SELECT_HOOK
