// nvlplace status: what slurmctld's nvlplace has in force, read from the status file the
// plugin keeps beside slurmctld's state (plugin/snapshot.h), without reading its log.
#ifndef NVLPLACE_CONTRIB_CLI_CMD_STATUS_H_
#define NVLPLACE_CONTRIB_CLI_CMD_STATUS_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace nvlplace::cli {

// Adds `status` to `app`; when chosen it stores its runner in `*run`.
void AddStatusCommand(CLI::App& app, std::function<int()>* run);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_CMD_STATUS_H_
