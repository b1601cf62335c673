// The replay subcommand of nvlplace: a trace through the engine under several policies.
#ifndef NVLPLACE_CONTRIB_CLI_CMD_REPLAY_H_
#define NVLPLACE_CONTRIB_CLI_CMD_REPLAY_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace nvlplace::cli {

void AddReplayCommand(CLI::App& app, std::function<int()>* run);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_CMD_REPLAY_H_
