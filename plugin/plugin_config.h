// nvlplace.yaml, the select plugin's configuration beside slurm.conf: parsing and loading
// (topology, policy with optional weight overrides, log level, fallback candidates).
#ifndef NVLPLACE_PLUGIN_PLUGIN_CONFIG_H_
#define NVLPLACE_PLUGIN_PLUGIN_CONFIG_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/engine/engine.h"
#include "placement/engine/policy.h"
#include "placement/model/request.h"
#include "placement/model/topology.h"

namespace nvlplace::plugin {

enum LogLevel { kLogError = 0, kLogInfo = 1, kLogDebug = 2 };

struct PluginConfig {
  std::string file;             // nvlplace.yaml itself
  std::string topology;         // absolute, or relative to the current directory
  SourceLoc topology_loc;       // where `topology:` was written
  std::string policy = "topo";  // a name, or a path made absolute like `topology`
  SourceLoc policy_loc;
  std::vector<std::pair<std::string, double>> weights;  // overrides, validated
  LogLevel log_level = kLogInfo;
  int candidates = 3;  // node sets tried before cons_tres's own choice
  NvlMode default_nvl = NvlMode::kStrict;
  // A measurement: in RUN_NOW also ask cons_tres where it alone would put each job nvlplace
  // places (one more cons_tres call per job started) and log it beside the placement.
  bool compare_cons_tres = false;
  // Slurm runs topology/block on the multi-node NVLink domains (the blocks of `nvlplace export
  // slurm`): a job block keeps inside one block gets a node set inside one domain, as block
  // would accept it (RequestSpec::slurm_blocks).
  bool slurm_blocks = false;
  // The NVLink health file (nvlink-health.yaml: split racks, trays with NVLink down), absolute
  // or relative like `topology`; "": none. Read at load and whenever it changes.
  std::string nvlink_health;
  SourceLoc nvlink_health_loc;
};

// What a file was when it was read (a change of any of them means it changed).
struct FileStamp {
  bool exists = false;
  int64_t mtime_ns = 0;
  int64_t size = 0;
  uint64_t inode = 0;
  bool operator==(const FileStamp& o) const {
    return exists == o.exists && mtime_ns == o.mtime_ns && size == o.size && inode == o.inode;
  }
};
FileStamp StampOf(const std::string& path);

// Parses the text of nvlplace.yaml. Never throws. Errors are InvalidArgument
// "file:line:col: #/path: message": bad YAML, unknown or duplicate key, missing topology,
// unknown log level, scorer or mode, a weight that is not a positive number up to 1e6.
// Relative paths are resolved against the directory of `file`.
absl::StatusOr<PluginConfig> ParsePluginConfig(absl::string_view text, const std::string& file);

// A configuration with its topology, policy and engine, ready to place jobs.
struct LoadedConfig {
  PluginConfig config;
  std::shared_ptr<const Topology> topology;
  std::shared_ptr<const Policy> policy;
  std::unique_ptr<Engine> engine;
  FileStamp health_stamp;       // the NVLink health file as it was read
  std::string health_describe;  // DescribeNvlinkHealth, or "" without a health file
  // The files as they were read, for a snapshot (snapshot.h).
  std::string topology_text, health_text;
};

// Reads the file, then the topology and the policy it names. Every error names the file
// and line of nvlplace.yaml, followed by the topology's or policy's own file:line error.
absl::StatusOr<std::unique_ptr<LoadedConfig>> LoadPluginConfig(const std::string& path);

}  // namespace nvlplace::plugin

#endif  // NVLPLACE_PLUGIN_PLUGIN_CONFIG_H_
