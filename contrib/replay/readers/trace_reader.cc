// The readers' shared part: checked numbers and times, the Reader, header-led tables.
#include "contrib/replay/readers/trace_reader.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <ctime>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "placement/model/request.h"

namespace nvlplace::replay::readers {

std::string Esc(absl::string_view text) { return QuoteUserText(text); }

std::string CleanId(absl::string_view id) { return EscapeControls(id); }

std::string Secs(double seconds) { return absl::StrFormat("%.12g", seconds); }

bool IsNoTime(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  return s.empty() || s == "Unknown" || s == "None" || s == "null";
}

bool ParseTime(absl::string_view s, double* out) {
  s = absl::StripAsciiWhitespace(s);
  double v;
  if (absl::SimpleAtod(s, &v)) {
    if (!std::isfinite(v) || v < 0 || v > limits::kMaxTimestamp) return false;
    *out = v;
    return true;
  }
  if (s.size() != 19 || (s[10] != 'T' && s[10] != ' ')) return false;
  std::string str(s);
  str[10] = 'T';
  std::tm tm{};
  const char* end = strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return false;
  // timegm moves an impossible date on (2024-02-30 becomes 2024-03-01, 23:59:60 the next
  // minute): a date is one only when its fields come back unchanged.
  const std::tm fields = tm;
  const time_t t = timegm(&tm);
  std::tm back{};
  if (gmtime_r(&t, &back) == nullptr || back.tm_year != fields.tm_year ||
      back.tm_mon != fields.tm_mon || back.tm_mday != fields.tm_mday ||
      back.tm_hour != fields.tm_hour || back.tm_min != fields.tm_min ||
      back.tm_sec != fields.tm_sec) {
    return false;
  }
  v = static_cast<double>(t);
  if (!(v >= 0 && v <= limits::kMaxTimestamp)) return false;
  *out = v;
  return true;
}

std::string NotATime(const char* name, absl::string_view s) {
  return absl::StrCat(name, " ", Esc(s), " is not a time: give a date YYYY-MM-DDTHH:MM:SS (UTC) ",
                      "or seconds from 0 to ", kMaxTimestampInt);
}

bool ParseSeconds(absl::string_view s, double* out) {
  double v;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(s), &v)) return false;
  if (!(v >= 0 && v <= limits::kMaxSeconds)) return false;  // also NaN
  *out = v;
  return true;
}

std::string NotSeconds(const char* name, absl::string_view s) {
  return absl::StrCat(name, " ", Esc(s), " is not a number of seconds from 0 to ", kMaxSecondsInt);
}

std::string CheckSpan(const char* start_name, double start, const char* end_name, double end) {
  if (end < start) {
    return absl::StrCat(end_name, " is before ", start_name, " (", Secs(end - start),
                        " s): not a run time");
  }
  if (end - start > limits::kMaxSeconds) {
    return absl::StrCat(end_name, " - ", start_name, " = ", Secs(end - start), " s is more than ",
                        kMaxSecondsInt, " s");
  }
  return "";
}

bool ParseCount(absl::string_view s, int64_t lo, int64_t hi, int* out) {
  s = absl::StripAsciiWhitespace(s);
  int64_t v;
  if (!absl::SimpleAtoi(s, &v)) {
    double d;
    if (!absl::SimpleAtod(s, &d) || !std::isfinite(d) || d != std::floor(d) || d < -1e18 ||
        d > 1e18) {
      return false;
    }
    v = static_cast<int64_t>(d);
  }
  if (v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

std::string NotACount(const char* name, absl::string_view s, int64_t lo, int64_t hi) {
  return absl::StrCat(name, " ", Esc(s), " is not a whole number from ", lo, " to ", hi);
}

absl::Status CheckJobShape(const TraceJob& j) {
  if (j.id.size() > limits::kMaxJobIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job id is ", j.id.size(), " bytes long; at most ", limits::kMaxJobIdBytes));
  }
  if (!(j.duration >= 0 && j.duration <= limits::kMaxSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "duration ", Secs(j.duration), " is not a number of seconds from 0 to ", kMaxSecondsInt));
  }
  if (j.gpus < 1 || j.gpus > limits::kMaxJobGpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("gpus=", j.gpus, " is not from 1 to ", limits::kMaxJobGpus));
  }
  if (j.gpu_model.size() > limits::kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GPU model ", Esc(j.gpu_model), " is longer than ", limits::kMaxNameBytes, " bytes"));
  }
  return CheckRequestSizes(RequestOf(j));
}

// ---- Reader -------------------------------------------------------------------------------

absl::Status Reader::Bad(int line, absl::string_view message) {
  ++trace_->malformed;
  std::string text = absl::StrCat(file_, ":", line, ": ", message);
  if (options_.strict) {
    return absl::InvalidArgumentError(absl::StrCat(text, " (--strict)"));
  }
  if (trace_->problems.size() < 20) trace_->problems.push_back(text);
  return absl::OkStatus();
}

void Reader::Skip(const std::string& reason) { ++trace_->skipped[reason]; }

absl::Status Reader::AddGpuJob(TraceJob job, const char* relaxed) {
  if (job.gpus == 0) {
    Skip("no GPU");
    return absl::OkStatus();
  }
  // The submit time is still absolute here; ReadTrace checks it once the start is known.
  absl::Status valid = CheckJobShape(job);
  if (!valid.ok()) return Bad(job.line, valid.message());
  if (trace_->jobs.size() >= options_.max_jobs) {
    return absl::InvalidArgumentError(absl::StrCat(file_, ":", job.line, ": more than ",
                                                   options_.max_jobs,
                                                   " jobs in one trace; split the trace"));
  }
  trace_->jobs.push_back(std::move(job));
  if (relaxed != nullptr) ++trace_->relaxed[relaxed];
  return absl::OkStatus();
}

// ---- Header-led tables --------------------------------------------------------------------

namespace {

// Fields of a line into `out`, views into it, at most limits::kMaxTraceFields of them
// (callers count first).
void SplitFields(absl::string_view line, char sep, std::vector<absl::string_view>* out) {
  out->clear();
  for (absl::string_view f : absl::StrSplit(line, sep)) {
    f = absl::StripAsciiWhitespace(f);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out->push_back(f);
  }
}

// A table's header: how many fields it has and the column of each (lower-case) name.
struct Header {
  size_t fields = 0;
  std::map<std::string, int, std::less<>> cols;
  bool ends_empty = false;  // its last field is empty: the line ends with the separator
};

// The header of `table` from its first line, `count` fields long (see ForEachTableRow).
absl::StatusOr<Header> ReadHeader(absl::string_view line, size_t count, int line_no,
                                  const Table& table, const std::string& file) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ":", line_no, ": the ", table.format, " header ", what));
  };
  if (count > limits::kMaxTraceFields) {
    return error(absl::StrCat("has ", count, " fields; at most ", limits::kMaxTraceFields));
  }
  std::vector<absl::string_view> names;
  SplitFields(line, table.sep, &names);
  Header header;
  header.fields = names.size();
  header.ends_empty = names.back().empty();
  for (size_t i = 0; i < names.size(); ++i) {
    std::string name = absl::AsciiStrToLower(names[i]);
    if (!header.cols.emplace(name, static_cast<int>(i)).second) {
      return error(absl::StrCat("names column ", Esc(name), " twice"));
    }
  }
  for (const char* c : table.need) {
    if (!header.cols.count(c)) return error(absl::StrCat("has no column '", c, "'"));
  }
  return header;
}

// The column names of `header` by index (lower-case), for messages.
std::vector<absl::string_view> ColumnNames(const Header& header) {
  std::vector<absl::string_view> names(header.fields);
  for (const auto& [name, i] : header.cols) names[i] = name;
  return names;
}

// A row of header.fields + 1 fields in `raw`, the last empty, under a header that does not end
// with the separator: the line ends with the separator (it is read as `raw` without its last
// field, `plain`), or a field holds it and the columns after that field are one field to the
// right. Only the columns of table.sep_free count: a shifted reading is looked at for each
// run of other columns between two of them (the separator anywhere in the run gives them the
// same values). RET "" to read `plain`, else why the row is malformed.
std::string TrailingOrShifted(const std::vector<absl::string_view>& raw, const Header& header,
                              const Table& table, std::vector<absl::string_view>* plain,
                              std::vector<absl::string_view>* shifted) {
  const size_t n = header.fields;
  plain->assign(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<size_t> fixed;  // the sep_free columns, ascending
  for (const char* name : table.sep_free) {
    auto it = header.cols.find(name);
    if (it != header.cols.end()) fixed.push_back(static_cast<size_t>(it->second));
  }
  std::sort(fixed.begin(), fixed.end());
  const bool plain_reads = table.check(Row{*plain, header.cols, 0}).ok();
  std::vector<absl::string_view> names = ColumnNames(header);
  std::vector<std::string> differing;  // columns whose separator gives another valid reading
  // Reading j: the separator in column k, one of those between sep_free columns j - 1 and j,
  // so that sep_free columns j, j + 1, ... read the field after theirs. With it past the last
  // of them, they read as in `plain`.
  for (size_t j = 0; j < fixed.size(); ++j) {
    const size_t k = j == 0 ? 0 : fixed[j - 1] + 1;
    if (k == fixed[j]) continue;  // no column between them
    const auto at = static_cast<std::ptrdiff_t>(k);
    shifted->assign(raw.begin(), raw.begin() + at);
    const char* begin = raw[k].data();
    shifted->push_back(absl::string_view(begin, raw[k + 1].data() + raw[k + 1].size() - begin));
    shifted->insert(shifted->end(), raw.begin() + at + 2, raw.end());
    bool same = true;
    for (size_t c : fixed) same = same && (*shifted)[c] == (*plain)[c];
    if (same || !table.check(Row{*shifted, header.cols, 0}).ok()) continue;
    for (size_t c = k; c < fixed[j] && differing.size() < 3; ++c) {
      differing.push_back(absl::StrCat("'", names[c], "'"));
    }
  }
  const char* hint = table.too_many_hint != nullptr ? table.too_many_hint : "";
  if (!plain_reads) {
    return absl::StrCat(n + 1, " fields, the header has ", n, ": ", hint);
  }
  if (differing.empty()) return "";
  const std::string sep(1, table.sep);
  return absl::StrCat(n + 1, " fields, the header has ", n, ", the last empty: either the line ",
                      "ends with '", sep, "' (as sacct --parsable ends each line, and its header) ",
                      "or ", differing.size() == 1 ? "" : "one of ", absl::StrJoin(differing, ", "),
                      " holds a '", sep, "', and the two readings differ; ", hint);
}

}  // namespace

absl::string_view Row::operator[](absl::string_view name) const {
  auto it = cols.find(name);
  return it == cols.end() || it->second >= static_cast<int>(fields.size()) ? absl::string_view()
                                                                           : fields[it->second];
}

absl::Status ForEachTableRow(absl::string_view text, const Table& table, Reader& r,
                             absl::FunctionRef<absl::Status(const Row&)> fn) {
  int line_no = 0;
  std::optional<Header> header;
  std::vector<absl::string_view> fields;        // each row's, its room kept
  std::vector<absl::string_view> raw, shifted;  // a row that may end with the separator
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    size_t count = static_cast<size_t>(std::count(line.begin(), line.end(), table.sep)) + 1;
    if (!header.has_value()) {
      absl::StatusOr<Header> read = ReadHeader(line, count, line_no, table, r.file());
      if (!read.ok()) return read.status();
      header = std::move(*read);
      continue;
    }
    // One field more, empty, is the separator ending the line (sacct --parsable); when the
    // header ends with it too, the counts already agree.
    const bool trailing =
        table.trailing_sep && !header->ends_empty && count == header->fields + 1 &&
        absl::StripAsciiWhitespace(line.substr(line.rfind(table.sep) + 1)).empty();
    absl::Status s;
    if (count < header->fields || (table.exact && count != header->fields && !trailing) ||
        count > limits::kMaxTraceFields) {
      const char* hint = count > header->fields ? table.too_many_hint : nullptr;
      s = r.Bad(line_no, absl::StrCat(count, " fields, the header has ", header->fields,
                                      hint != nullptr ? ": " : "", hint != nullptr ? hint : ""));
    } else if (trailing && table.check != nullptr) {
      SplitFields(line, table.sep, &raw);
      std::string why = TrailingOrShifted(raw, *header, table, &fields, &shifted);
      s = why.empty() ? fn(Row{fields, header->cols, line_no}) : r.Bad(line_no, why);
    } else {
      SplitFields(line, table.sep, &fields);
      if (trailing) fields.pop_back();
      s = fn(Row{fields, header->cols, line_no});
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace nvlplace::replay::readers
