// nvlplace: the command line front end of the placement engine.
#include <exception>
#include <functional>
#include <iostream>

#include "CLI/CLI.hpp"
#include "contrib/cli/cli_common.h"
#include "contrib/cli/cmd_check.h"
#include "contrib/cli/cmd_place.h"
#include "contrib/cli/cmd_replay.h"
#include "contrib/cli/cmd_status.h"
#include "contrib/cli/cmd_topology.h"

namespace {

// Builds the command line, parses it and runs the chosen command. RET its exit code.
int Run(int argc, char** argv) {
  CLI::App app{"nvlplace: topology-aware GPU placement for Slurm", "nvlplace"};
  app.require_subcommand(1);
  std::function<int()> run;
  nvlplace::cli::AddTopologyCommands(app, &run);
  nvlplace::cli::AddPlaceCommand(app, &run);
  nvlplace::cli::AddReplayCommand(app, &run);
  nvlplace::cli::AddCheckCommand(app, &run);
  nvlplace::cli::AddStatusCommand(app, &run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the usage hint on stderr
    return nvlplace::cli::kExitBadInput;
  }
  if (!run) return nvlplace::cli::kExitBadInput;
  return run();
}

}  // namespace

// Any exception, from building the commands (CLI11, std::bad_alloc) as from running one, ends
// here with a message and kExitFailure rather than std::terminate.
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "nvlplace: internal error: " << e.what() << "\n";
    return nvlplace::cli::kExitFailure;
  }
}
