// nvlplace check: scripts and tests ask the CLI instead of re-implementing the topology.
#ifndef NVLPLACE_CONTRIB_CLI_CMD_CHECK_H_
#define NVLPLACE_CONTRIB_CLI_CMD_CHECK_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace nvlplace::cli {

void AddCheckCommand(CLI::App& app, std::function<int()>* run);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_CMD_CHECK_H_
