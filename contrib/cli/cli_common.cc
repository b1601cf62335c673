// Shared plumbing for the nvlplace subcommands: exit codes, file output, error printing.
#include "contrib/cli/cli_common.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "placement/model/limits.h"

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

namespace {

// Writes `text` into `file` (created or truncated).
absl::Status WriteFile(const std::string& file, const OutputWriter& write) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", file, ": ", std::strerror(errno)));
  }
  write([&out](absl::string_view text) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
  if (!out.flush()) {
    return absl::UnavailableError(absl::StrCat("cannot write ", file, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteOutput(const std::string& path, absl::string_view text) {
  return WriteOutput(path, [text](const OutputSink& emit) { emit(text); });
}

absl::Status WriteOutput(const std::string& path, const OutputWriter& write) {
  if (path.empty() || path == "-") {
    write([](absl::string_view text) { std::cout << text; });
    std::cout.flush();
    return std::cout ? absl::OkStatus() : absl::UnavailableError("cannot write to stdout");
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return WriteFile(path, write);
  std::string tmp = absl::StrCat(path, ".tmp");
  absl::Status written = WriteFile(tmp, write);
  if (!written.ok()) return written;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", tmp, " to ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

namespace {

// The next line of `in` (without its '\n') in *line; false at the end of the input. A line
// longer than limits::kMaxConfigBytes is an error.
absl::StatusOr<bool> NextLine(std::istream& in, std::string* line) {
  line->clear();
  std::streambuf* buf = in.rdbuf();
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    if (c == '\n') return true;
    if (line->size() == limits::kMaxConfigBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("line longer than ", limits::kMaxConfigBytes >> 20, " MiB"));
    }
    line->push_back(static_cast<char>(c));
  }
  return !line->empty();
}

// A blank line is answered with a blank line; an error names the file and line.
absl::StatusOr<std::string> AnswerOne(const LineAnswer& answer, const std::string& line) {
  if (absl::StripAsciiWhitespace(line).empty()) return std::string();
  return answer(line);
}

absl::Status AtLine(const std::string& path, int line_no, const absl::Status& s) {
  return absl::Status(s.code(),
                      absl::StrCat(path == "-" ? "stdin" : path, ":", line_no, ": ", s.message()));
}

}  // namespace

int AnswerLines(const std::string& path, const LineAnswer& answer) {
  std::ifstream file;
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(path, ": is a directory")));
    }
    file.open(path, std::ios::binary);
    if (!file) return Fail(absl::NotFoundError(absl::StrCat("cannot read ", path)));
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string line;
  for (int line_no = 1;; ++line_no) {
    absl::StatusOr<bool> more = NextLine(in, &line);
    if (more.ok() && !*more) break;
    absl::StatusOr<std::string> out = more.ok() ? AnswerOne(answer, line) : more.status();
    if (!out.ok()) return Fail(AtLine(path, line_no, out.status()));
    std::cout << *out << '\n';
  }
  std::cout.flush();
  return std::cout ? kExitOk : Fail(absl::UnavailableError("cannot write to stdout"));
}

}  // namespace nvlplace::cli
