// Reading a configuration file: regular files only, bounded in size.
#ifndef NVLPLACE_PLACEMENT_FORMATS_READ_FILE_H_
#define NVLPLACE_PLACEMENT_FORMATS_READ_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "placement/model/limits.h"

namespace nvlplace {

// Reads a whole regular file of at most `max_bytes` bytes. Errors name the path: NotFound when
// it cannot be opened; InvalidArgument for a directory, FIFO, socket or device (checked
// without blocking: a FIFO is opened with O_NONBLOCK) and for a file larger than max_bytes
// ("file is larger than 64 MiB"); DataLoss for a read error.
absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             size_t max_bytes = limits::kMaxConfigBytes);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_FORMATS_READ_FILE_H_
