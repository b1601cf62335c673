// What the trace readers (readers/trace_FORMAT.cc, one per format) share: checked numbers
// and times with their messages, the Reader that collects jobs and problems, header-led
// tables. Internal to contrib/replay: callers use trace.h.
#ifndef NVLPLACE_CONTRIB_REPLAY_READERS_TRACE_READER_H_
#define NVLPLACE_CONTRIB_REPLAY_READERS_TRACE_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "contrib/replay/trace.h"
#include "placement/model/limits.h"

namespace nvlplace::replay::readers {

// ---- Fields and messages -----------------------------------------------------------------

// Text from the trace in a message: quoted, control bytes escaped, at most 64 bytes shown.
std::string Esc(absl::string_view text);

// A job id as the outputs show it: as written, control bytes and backslashes escaped as in
// messages and placement lines (EscapeControls: \\, \n, \t, \x1b).
std::string CleanId(absl::string_view id);

// A number of seconds in a message: whole seconds in full (1000000001, not 1e+09).
std::string Secs(double seconds);

inline constexpr int64_t kMaxSecondsInt = static_cast<int64_t>(limits::kMaxSeconds);
inline constexpr int64_t kMaxTimestampInt = static_cast<int64_t>(limits::kMaxTimestamp);

// A time field a trace leaves empty on purpose (never started, still running).
bool IsNoTime(absl::string_view s);

// Seconds since the epoch from "YYYY-MM-DD[T ]HH:MM:SS" (UTC), or a plain number of seconds;
// finite and in [0, kMaxTimestamp]. False for anything else (nan, inf, -5, trailing text, a
// date that does not exist: 2024-02-30, 2023-02-29, 23:59:60).
bool ParseTime(absl::string_view s, double* out);
std::string NotATime(const char* name, absl::string_view s);

// A duration in seconds: finite, in [0, kMaxSeconds].
bool ParseSeconds(absl::string_view s, double* out);
std::string NotSeconds(const char* name, absl::string_view s);

// A duration from two times: end - start, in [0, kMaxSeconds]; empty when fine.
std::string CheckSpan(const char* start_name, double start, const char* end_name, double end);

// A whole number ("8", or "8.0") in [lo, hi].
bool ParseCount(absl::string_view s, int64_t lo, int64_t hi, int* out);
std::string NotACount(const char* name, absl::string_view s, int64_t lo, int64_t hi);

// CheckTraceJob but the submit time: id, duration, GPUs and sizes.
absl::Status CheckJobShape(const TraceJob& j);

// ---- The Reader: jobs and problems of one trace -------------------------------------------

// Collects the jobs a reader finds into a Trace, and its malformed and skipped lines.
class Reader {
 public:
  Reader(const std::string& file, const TraceOptions& options, Trace* trace)
      : file_(file), options_(options), trace_(trace) {}

  // A malformed line: counted, reported, fatal in strict mode.
  absl::Status Bad(int line, absl::string_view message);
  // A job left out on purpose, counted under its reason.
  void Skip(const std::string& reason);
  // Adds a job that passes CheckTraceJob (else the line is malformed), or counts it as
  // skipped ("no GPU") when it asks for none. Too many jobs is fatal. `relaxed`, when set,
  // says what the job was read without; it is counted once the job is added.
  absl::Status AddGpuJob(TraceJob job, const char* relaxed = nullptr);

  const TraceOptions& options() const { return options_; }
  const std::string& file() const { return file_; }

 private:
  const std::string& file_;
  const TraceOptions& options_;
  Trace* trace_;
};

// ---- Header-led tables (native, sacct, openb, helios) -------------------------------------

struct Row;

// How a table is laid out.
struct Table {
  const char* format;                  // its name in messages ("the sacct header ...")
  char sep;                            // between fields
  absl::Span<const char* const> need;  // the (lower-case) columns the header must name
  bool exact;                          // a row has exactly the header's number of fields
  // With `exact`: a row may end with one more field, empty, when the header does not (sacct
  // --parsable ends every line with the separator).
  bool trailing_sep = false;
  // With `exact`: what to do about a row of more fields than the header, added to its
  // message (a field that holds the separator); nullptr for none.
  const char* too_many_hint = nullptr;
  // With `trailing_sep`: the (lower-case) columns that never hold the separator (numbers,
  // times, ids: the columns the reader reads and others of a fixed syntax), and a check of
  // the columns the reader reads (OK when they read as their kind). A row of one field more
  // than the header, the last empty, may end with the separator or hold it in another
  // column, shifting the columns after that one: it is read without its last field only when
  // no shifted reading passes `check` with other values in the `sep_free` columns (see
  // ForEachTableRow). Without `check` it is always read so.
  absl::Span<const char* const> sep_free = {};
  absl::Status (*check)(const Row& row) = nullptr;
};

// One data row of a header-led table: views into the trace's text, valid for the call.
struct Row {
  const std::vector<absl::string_view>& fields;
  const std::map<std::string, int, std::less<>>& cols;
  int line;
  // The field under a (lower-case) header name; "" when the trace has no such column.
  absl::string_view operator[](absl::string_view name) const;
};

// Calls fn(Row) for each data row of a header-led table. The header must name every
// `table.need` column ("file:1: the FORMAT header has no column 'x'"), no column twice, and
// have at most kMaxTraceFields; a row with fewer fields than the header (or another number,
// with `table.exact` but for `table.trailing_sep`, or more than kMaxTraceFields) is
// malformed, counted before it is split. With `table.trailing_sep` and `table.check`, a row
// of one field more, the last empty, under a header that does not end with the separator,
// is read without that field when that is its only reading: if moving the columns of
// `table.sep_free` that follow some other column one field to the right (that column holding
// the separator) gives them other values that pass `check` too, the row is malformed
// ("the two readings differ"), and so it is when the reading without the last field does
// not pass `check`.
// RET the first error of fn.
absl::Status ForEachTableRow(absl::string_view text, const Table& table, Reader& r,
                             absl::FunctionRef<absl::Status(const Row&)> fn);

// ---- The readers, one per format: ReadTrace's table maps each TraceFormat to one ----------

// Reads every job of `text` into r. RET an error only for bad input as a whole (a missing
// column, not JSON, too many jobs) or a malformed line under --strict.
using ReadFn = absl::Status (*)(absl::string_view text, Reader& r);

absl::Status ReadNative(absl::string_view text, Reader& r);  // trace_native.cc
absl::Status ReadSacct(absl::string_view text, Reader& r);   // trace_sacct.cc
absl::Status ReadOpenb(absl::string_view text, Reader& r);   // trace_openb.cc
absl::Status ReadSwf(absl::string_view text, Reader& r);     // trace_swf.cc
absl::Status ReadHelios(absl::string_view text, Reader& r);  // trace_helios.cc
absl::Status ReadPhilly(absl::string_view text, Reader& r);  // trace_philly.cc

}  // namespace nvlplace::replay::readers

#endif  // NVLPLACE_CONTRIB_REPLAY_READERS_TRACE_READER_H_
