// Shared plumbing for the nvlplace subcommands: exit codes, file output, error printing.
#ifndef NVLPLACE_CONTRIB_CLI_CLI_COMMON_H_
#define NVLPLACE_CONTRIB_CLI_CLI_COMMON_H_

#include <functional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/topology.h"

namespace nvlplace::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the environment failed (cannot write a file)
inline constexpr int kExitBadInput = 2;  // the input is wrong; the message says where

// Prints "nvlplace: <message>" on stderr and returns the exit code for the status: 2 for bad
// input (InvalidArgument, NotFound, FailedPrecondition, OutOfRange, ResourceExhausted: a file
// asked for more than the limits or the machine allow), 1 for the rest.
int Fail(const absl::Status& status);

// Adds "--max-gpus N" to `cmd`: the GPUs one cluster file may describe (limits.h
// kDefaultMaxClusterGpus by default, 1 to 2^31 - 1), stored in topology_limits->max_gpus.
CLI::Option* AddMaxGpusOption(CLI::App* cmd, TopologyLimits* topology_limits);

// Writes `text` to `path` ("-" or empty: stdout), replacing a regular file (or creating one)
// only once complete. Anything else that exists there (/dev/null, a FIFO, a symbolic link) is
// written through in place: renaming over it would replace the device or the link itself.
absl::Status WriteOutput(const std::string& path, absl::string_view text);
// The same with the text made piece by piece: `write` hands each piece, in order, to the
// sink it is given (a file of hundreds of MB need not be held at once).
using OutputSink = std::function<void(absl::string_view piece)>;
using OutputWriter = std::function<void(const OutputSink& emit)>;
absl::Status WriteOutput(const std::string& path, const OutputWriter& write);

// The answer to one line of a batch: the text to print for it (without the newline).
using LineAnswer = std::function<absl::StatusOr<std::string>(absl::string_view line)>;

// Batch mode of the check verbs, for scripts that would otherwise run nvlplace once per item:
// answers each line of `path` ("-": stdin) and prints one line per line read, in order (a
// blank line gives a blank line). The first error stops it: "nvlplace: path:LINE: message",
// exit 2. Lines are at most limits::kMaxConfigBytes bytes.
int AnswerLines(const std::string& path, const LineAnswer& answer);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_CLI_COMMON_H_
