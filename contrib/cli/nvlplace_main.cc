// nvlplace: the command line front end of the placement engine.
#include <functional>
#include <iostream>

#include "CLI/CLI.hpp"
#include "contrib/cli/cli_common.h"
#include "contrib/cli/cmd_check.h"
#include "contrib/cli/cmd_place.h"
#include "contrib/cli/cmd_replay.h"
#include "contrib/cli/cmd_topology.h"

int main(int argc, char** argv) {
  CLI::App app{"nvlplace: topology-aware GPU placement for Slurm", "nvlplace"};
  app.require_subcommand(1);
  std::function<int()> run;
  nvlplace::cli::AddTopologyCommands(app, &run);
  nvlplace::cli::AddPlaceCommand(app, &run);
  nvlplace::cli::AddReplayCommand(app, &run);
  nvlplace::cli::AddCheckCommand(app, &run);
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
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "nvlplace: internal error: " << e.what() << "\n";
    return nvlplace::cli::kExitFailure;
  }
}
