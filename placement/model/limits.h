// Named limits on every size that comes from a user or a file: checked before use, before
// anything is allocated for it. Documented in configs/FORMAT.md ("Limits").
#ifndef NVLPLACE_PLACEMENT_MODEL_LIMITS_H_
#define NVLPLACE_PLACEMENT_MODEL_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace nvlplace::limits {

// ---- files --------------------------------------------------------------------------------
// Largest configuration file read: cluster YAML, topology.conf, gres.conf, nvidia-smi output,
// busy list, policy file, nvlplace.yaml. Only regular files are read (no FIFO, device or
// directory).
inline constexpr size_t kMaxConfigBytes = size_t{64} << 20;  // 64 MiB
// Include lines of Slurm's topology.conf and gres.conf: files nested one in another (the file
// given is not counted), and files read for one file in all; with them all, the file is at
// most kMaxConfigBytes. Slurm has no bound but its open files: a cycle fails there.
inline constexpr int kMaxIncludeDepth = 16;
inline constexpr int kMaxIncludedFiles = 1024;
// Largest job trace read by replay.
inline constexpr size_t kMaxTraceBytes = size_t{512} << 20;  // 512 MiB

// YAML nodes (values, lists, mappings, alias uses) in one YAML document, counted as the parser
// reports them, so that the rest is not read (yaml::Document keeps 16 bytes per node, yaml-cpp's
// own tree about 500); the same bound applies to the nodes a reader visits, where a node
// reached through an alias (*name) counts each time.
inline constexpr size_t kMaxYamlNodes = size_t{1} << 20;  // 1,048,576
// Nesting of YAML lists and mappings (a cluster file needs 4; yaml-cpp itself stops at 500
// with "bad file").
inline constexpr int kMaxYamlDepth = 64;

// ---- the cluster --------------------------------------------------------------------------
// Names one hostlist expression may expand to (nodes, switches).
inline constexpr size_t kMaxHosts = size_t{1} << 20;  // 1,048,576
// Names the hostlists of one file may expand to, all together (a hostlist repeated through a
// YAML alias counts each time): about 100 bytes each once expanded.
inline constexpr size_t kMaxNamesPerFile = size_t{1} << 22;  // 4,194,304
// Bytes of one name: cluster, node, switch, NVLink domain, GPU model, tier (Slurm prints host
// names into buffers of HOST_NAME_MAX = 64 bytes). Names are also valid UTF-8 without control
// characters.
inline constexpr size_t kMaxNameBytes = 64;
// GPUs on one node.
inline constexpr int kMaxGpusPerNode = 1024;
// Fabric NICs on one node (NodeGroupSpec::nics).
inline constexpr int kMaxNicsPerNode = 1024;
// GPUs in one cluster file, by default; `--max-gpus` (CLI) and `max_gpus` (nvlplace.yaml)
// change it. A file that would expand to more is refused before anything is built for it.
inline constexpr int64_t kDefaultMaxClusterGpus = int64_t{1} << 22;  // 4,194,304
// Fabric tiers (and so the depth of any switch chain).
inline constexpr int kMaxTiers = 16;
// Levels of Slurm's topology/block (BlockSizes: the base size times 2^0 .. 2^15, as Slurm's
// block_record.c allows), and so the values of one BlockSizes line or block_sizes list.
inline constexpr int kMaxBlockLevels = 16;
// The model lists, per switch, the nodes under it and the switches above it. In a
// multi-rooted tree these lists grow with the product of the fan-outs; the pairs they hold
// (counted with repeats while they are merged) are bounded so that a short file cannot ask
// for quadratic work and memory (4 and 16 bytes a pair).
inline constexpr int64_t kMaxSwitchNodePairs = int64_t{1} << 26;      // 67,108,864
inline constexpr int64_t kMaxSwitchAncestorPairs = int64_t{1} << 24;  // 16,777,216
// Bandwidths (GB/s for NVLink and PCIe, Gb/s for fabric links) and latencies (us): finite,
// positive and at most these.
inline constexpr double kMaxBandwidth = 1e6;
inline constexpr double kMaxLatencyUs = 1e6;
inline constexpr double kMaxOversubscription = 1e3;

// ---- a request ----------------------------------------------------------------------------
// TP, PP and DP sizes, each (also the SPANK options' bound, NVL_MAX_GROUP).
inline constexpr int kMaxGroupSize = 65536;
// GPUs and nodes of one job; products of sizes are computed in 64 bits and checked
// against this before they become an int.
inline constexpr int64_t kMaxJobGpus = int64_t{1} << 24;  // 16,777,216
inline constexpr int64_t kMaxJobNodes = int64_t{1} << 20;

// ---- policies and replay ------------------------------------------------------------------
inline constexpr double kMaxWeight = 1e6;
// Submit times, durations and time limits in traces, seconds (about 31 years).
inline constexpr double kMaxSeconds = 1e9;
// Absolute times in traces (a date, or seconds since 1970), before they are taken from the
// trace start: 0 (1970-01-01) up to 9999-12-31T23:59:59 UTC.
inline constexpr double kMaxTimestamp = 253402300799.0;
// Jobs in one trace (replay keeps a record per job and policy), fields on one line, bytes
// of a job id, and bytes of one JSON token (a string or number; the JSON parser buffers it).
inline constexpr size_t kMaxTraceJobs = size_t{1} << 22;  // 4,194,304
inline constexpr size_t kMaxTraceFields = 1024;
inline constexpr size_t kMaxJobIdBytes = 256;
inline constexpr size_t kMaxJsonTokenBytes = size_t{64} << 10;  // 64 KiB
// replay --load-scale: from 1 / kMaxLoadScale to kMaxLoadScale.
inline constexpr double kMaxLoadScale = 1e3;

}  // namespace nvlplace::limits

#endif  // NVLPLACE_PLACEMENT_MODEL_LIMITS_H_
