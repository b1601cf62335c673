// nvlplace check hostlist|indexes|gpus: the engine's list parsers, for scripts.
#ifndef NVLPLACE_CONTRIB_CLI_CMD_CHECK_LISTS_H_
#define NVLPLACE_CONTRIB_CLI_CMD_CHECK_LISTS_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace nvlplace::cli {

// Adds the list verbs under `check`.
void AddListChecks(CLI::App* check, std::function<int()>* run);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_CMD_CHECK_LISTS_H_
