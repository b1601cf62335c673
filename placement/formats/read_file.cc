// Reading a configuration file: regular files only, bounded in size.
#include "placement/formats/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace nvlplace {
namespace {

std::string ByteSize(size_t bytes) {
  if (bytes % (size_t{1} << 20) == 0) return absl::StrCat(bytes >> 20, " MiB");
  return absl::StrCat(bytes, " bytes");
}

absl::Status FileError(const std::string& path, int err) {
  return absl::NotFoundError(
      absl::StrCat(path, ": cannot open the file (", std::strerror(err), ")"));
}

// What a file that is not a regular file is, for the message.
const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

absl::Status NotRegular(const std::string& path, mode_t mode) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": ", FileKind(mode), ", not a regular file; ",
      S_ISDIR(mode) ? "give the path of a file" : "save what it gives to a file and read that"));
}

absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked right after.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    struct stat st;
    if (err == ENXIO && ::stat(path.c_str(), &st) == 0) return NotRegular(path, st.st_mode);
    return FileError(path, err);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return FileError(path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  auto too_big = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": file is larger than ", ByteSize(max_bytes),
                     "; nvlplace reads files up to that size: is this the right file?"));
  };
  if (st.st_size > 0 && static_cast<uint64_t>(st.st_size) > max_bytes) return too_big();
  std::string text;
  text.reserve(static_cast<size_t>(std::max<off_t>(st.st_size, 0)));
  // The size may change while reading (or be 0, as in /proc): read to the end, bounded.
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(absl::StrCat(path, ": read error (", std::strerror(errno), ")"));
    }
    if (n == 0) break;
    if (static_cast<size_t>(n) > max_bytes - text.size()) return too_big();
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  try {
    return ReadFile(path, max_bytes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory while reading"));
  }
}

}  // namespace nvlplace
