// Shared plumbing for the nvlplace subcommands: exit codes, file output, error printing.
#ifndef NVLPLACE_CONTRIB_CLI_COMMON_H_
#define NVLPLACE_CONTRIB_CLI_COMMON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace nvlplace::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the environment failed (cannot write a file)
inline constexpr int kExitBadInput = 2;  // the input is wrong; the message says where

// Prints "nvlplace: <message>" on stderr and returns the exit code for the status.
int Fail(const absl::Status& status);

// Writes `text` to `path` ("-" or empty: stdout), replacing the file only once complete.
absl::Status WriteOutput(const std::string& path, absl::string_view text);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_COMMON_H_
