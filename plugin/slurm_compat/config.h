/* Stands in for the config.h of a configured Slurm build when building against the
 * installed Slurm (a -DSLURM_BUILD_DIR= build finds that tree's own config.h first): the
 * internal headers used by the select plugin (job_record_t, node_record_t, gres and select
 * types) have no configuration-dependent fields in 22.05; NDEBUG turns xassert() off as in
 * release builds. */
#ifndef NVLPLACE_PLUGIN_SLURM_COMPAT_CONFIG_H_
#define NVLPLACE_PLUGIN_SLURM_COMPAT_CONFIG_H_
#ifndef NDEBUG
#define NDEBUG 1
#endif
#endif
