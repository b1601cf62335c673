// The topology subcommands of nvlplace: validate, show, import, export.
#ifndef NVLPLACE_CONTRIB_CLI_CMD_TOPOLOGY_H_
#define NVLPLACE_CONTRIB_CLI_CMD_TOPOLOGY_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace nvlplace::cli {

// Adds the subcommands to `app`; the chosen one stores its runner in `*run`.
void AddTopologyCommands(CLI::App& app, std::function<int()>* run);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_CMD_TOPOLOGY_H_
