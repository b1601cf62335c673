// The last good configuration, kept where slurmctld keeps its state: a copy of nvlplace.yaml
// and of the files it names, written after every good load and read when a load fails with
// no good configuration in memory (a slurmctld restart, or the new process `scontrol
// reconfigure` starts from 23.11 on), so that a typo never turns placement off. And the
// status an admin reads without the log (`nvlplace status`).
#ifndef NVLPLACE_PLUGIN_SNAPSHOT_H_
#define NVLPLACE_PLUGIN_SNAPSHOT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "plugin/plugin_config.h"

namespace nvlplace::plugin {

// Writes DIR/nvlplace.yaml, DIR/topology.yaml, DIR/policy.yaml (the policy in force, weights
// applied) and DIR/nvlink-health.yaml (when one is in force) from `config`, with
// DIR/source naming the nvlplace.yaml they came from. Atomic: written into DIR.new, then
// renamed over DIR; a failure leaves DIR as it was.
absl::Status SaveSnapshot(const LoadedConfig& config, const std::string& dir);

// DIR/nvlplace.yaml, the file LoadPluginConfig reads from a snapshot; DIR/source, the
// nvlplace.yaml it was taken from ("" when unknown).
std::string SnapshotConfigPath(const std::string& dir);
std::string SnapshotSource(const std::string& dir);

// What the admin reads (`nvlplace status`): one JSON object, schema nvlplace.status/1.
struct Status {
  std::string config;        // the nvlplace.yaml slurmctld reads
  std::string in_force;      // "loaded" (that file), "snapshot" (the last good copy), "none"
  std::string describe;      // the configuration in force, as the load line says it
  double loaded_at = 0;      // when the configuration in force was loaded (epoch seconds)
  std::string last_error;    // the last load's error, "" when it loaded
  double last_error_at = 0;  //
  std::string counters;      // the summary line of the configuration in force
};
std::string StatusJson(const Status& status);
absl::StatusOr<Status> ParseStatusJson(const std::string& text, const std::string& file);
// Writes it to PATH atomically (PATH.new renamed over PATH).
absl::Status WriteStatus(const Status& status, const std::string& path);

}  // namespace nvlplace::plugin

#endif  // NVLPLACE_PLUGIN_SNAPSHOT_H_
