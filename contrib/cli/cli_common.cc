// Shared plumbing for the nvlplace subcommands: exit codes, file output, error printing.
#include "contrib/cli/cli_common.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>

#include "absl/strings/str_cat.h"

namespace nvlplace::cli {

int Fail(const absl::Status& status) {
  std::cerr << "nvlplace: " << status.message() << "\n";
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kResourceExhausted:
      return kExitBadInput;
    default:
      return kExitFailure;
  }
}

CLI::Option* AddMaxGpusOption(CLI::App* cmd, TopologyLimits* topology_limits) {
  return cmd
      ->add_option("--max-gpus", topology_limits->max_gpus,
                   absl::StrCat("most GPUs the cluster file may describe (default ",
                                limits::kDefaultMaxClusterGpus, ")"))
      ->check(CLI::Range(int64_t{1}, int64_t{std::numeric_limits<int32_t>::max()}));
}

absl::Status WriteOutput(const std::string& path, absl::string_view text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return std::cout ? absl::OkStatus() : absl::UnavailableError("cannot write to stdout");
  }
  std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", tmp, ": ", std::strerror(errno)));
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) {
      return absl::UnavailableError(absl::StrCat("cannot write ", tmp, ": ", std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", tmp, " to ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace nvlplace::cli
