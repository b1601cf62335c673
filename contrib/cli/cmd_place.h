// The place subcommand of nvlplace: one placement decision, explained.
#ifndef NVLPLACE_CONTRIB_CLI_CMD_PLACE_H_
#define NVLPLACE_CONTRIB_CLI_CMD_PLACE_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace nvlplace::cli {

void AddPlaceCommand(CLI::App& app, std::function<int()>* run);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_CMD_PLACE_H_
