// Microsoft's Philly trace: a JSON array of {jobid, submitted_time, attempts[{start_time,
// end_time, detail[{ip, gpus[]}]}]}; GPUs of the first attempt, run time of all attempts (a
// job with an attempt that has no start_time or end_time is skipped: it has no run time).
// Read as SAX events: one job in memory at a time, each token bounded first.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "contrib/replay/readers/trace_reader.h"
#include "nlohmann/json.hpp"

namespace nvlplace::replay::readers {
namespace {

constexpr char kNotPhilly[] = "not a JSON array of Philly jobs";
// Reasons a job is skipped (the keys of Trace::skipped).
constexpr char kPhillyNoAttempt[] = "no attempt (never ran)";
constexpr char kPhillyNotRun[] =
    "an attempt never started or not finished (no start_time or end_time)";

// Counts the lines the JSON parser has read: the parser pulls bytes through this iterator.
class LineCountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  LineCountingIterator(const char* p, int* line) : p_(p), line_(line) {}
  reference operator*() const { return *p_; }
  LineCountingIterator& operator++() {
    if (*p_ == '\n') ++*line_;
    ++p_;
    return *this;
  }
  LineCountingIterator operator++(int) {
    LineCountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const LineCountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const LineCountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  int* line_;
};

// The Philly schema as SAX events: [ {jobid, submitted_time, attempts: [ {start_time,
// end_time, detail: [ {ip, gpus: [...]} ]} ]} ]. Other keys are skipped. Holds one job.
class PhillySax : public nlohmann::json_sax<nlohmann::json> {
 public:
  // Nesting deeper than this is refused (the schema needs 6 levels).
  static constexpr size_t kMaxDepth = 64;

  PhillySax(Reader& r, const int* line) : r_(r), line_(line) {}

  // The first fatal error (bad JSON, strict mode, too many jobs); OK otherwise.
  const absl::Status& status() const { return status_; }
  bool saw_array() const { return saw_array_; }

  bool null() override { return Scalar(Kind::kNull, ""); }
  bool boolean(bool) override { return Scalar(Kind::kOther, ""); }
  bool number_integer(number_integer_t) override { return Scalar(Kind::kOther, ""); }
  bool number_unsigned(number_unsigned_t) override { return Scalar(Kind::kOther, ""); }
  bool number_float(number_float_t, const string_t&) override { return Scalar(Kind::kOther, ""); }
  bool string(string_t& val) override { return Scalar(Kind::kString, val); }
  bool binary(binary_t&) override { return Scalar(Kind::kOther, ""); }
  bool start_object(std::size_t) override { return Open(/*object=*/true); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(/*object=*/false); }
  bool end_array() override { return Close(); }
  bool key(string_t& val) override {
    if (!stack_.empty()) stack_.back().key = val.size() <= 32 ? val : std::string("?");
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // nlohmann's message shows the last token read (<U+0000> for control bytes): cut it short.
    absl::string_view what = ex.what();
    if (what.size() > 300) what = what.substr(0, 300);
    status_ = absl::InvalidArgumentError(
        absl::StrCat(r_.file(), ":", *line_ + 1, ": not valid JSON: ", what));
    return false;
  }

 private:
  enum class Kind { kNull, kString, kOther };
  // What a container is, from its parent and key.
  enum class Ctx { kJobs, kJob, kAttempts, kAttempt, kDetails, kDetail, kGpus, kSkip };
  struct Frame {
    Ctx ctx;
    bool object;
    std::string key;  // objects: the key of the value being read
  };
  struct Job {
    int index = 0;
    int line = 0;
    std::string error;  // the first problem
    std::string id;
    bool has_submit = false, has_attempts = false;
    double submit = 0;
    int attempts = 0;
    bool first_has_detail = false;
    int64_t gpus = 0;         // of the first attempt
    double duration = 0;      // of all attempts
    bool unfinished = false;  // an attempt without start_time or end_time (still running)
    // The times of the attempt being read, when given.
    double start = 0, end = 0;
    bool has_start = false, has_end = false;
  };

  void JobError(std::string message) {
    if (job_.error.empty()) job_.error = std::move(message);
  }
  const std::string& Key() const { return stack_.back().key; }

  // ---- Scalars: a value in the container on top of the stack, under Key() in an object

  bool Scalar(Kind kind, absl::string_view val) {
    if (stack_.empty()) return Fail(kNotPhilly);
    switch (stack_.back().ctx) {
      case Ctx::kJobs:
        NotAJob();
        break;
      case Ctx::kJob:
        JobScalar(kind, val);
        break;
      case Ctx::kAttempt:
        AttemptScalar(kind, val);
        break;
      case Ctx::kDetail:
        if (Key() == "gpus" && job_.attempts == 1) {
          gpus_seen_ = true;
          JobError("gpus is not an array");
        }
        break;
      case Ctx::kGpus:
        if (job_.attempts == 1) ++job_.gpus;
        break;
      default:
        break;
    }
    return status_.ok();
  }

  // An entry of the jobs array that is not an object: a malformed job.
  void NotAJob() {
    ++index_;
    Keep(r_.Bad(*line_ + 1, absl::StrCat("job ", index_, ": not a JSON object")));
  }

  void JobScalar(Kind kind, absl::string_view val) {
    if (Key() == "jobid") {
      if (kind == Kind::kString) {
        job_.id = CleanId(val);
      } else {
        JobError("jobid is not a string");
      }
    } else if (Key() == "submitted_time") {
      job_.has_submit = true;
      if (kind != Kind::kString || !ParseTime(val, &job_.submit)) {
        JobError(kind == Kind::kString ? NotATime("submitted_time", val)
                                       : "submitted_time is not a string");
      }
    } else if (Key() == "attempts") {
      job_.has_attempts = true;
      JobError("attempts is not an array");
    }
  }

  void AttemptScalar(Kind kind, absl::string_view val) {
    if (Key() == "start_time" || Key() == "end_time") {
      AttemptTime(Key() == "start_time", kind, val);
    } else if (Key() == "detail" && job_.attempts == 1) {
      job_.first_has_detail = true;
      JobError("detail is not an array");
    }
  }

  // The attempt's start_time (or end_time): a time, or not given (null, "", "None", ...).
  void AttemptTime(bool start, Kind kind, absl::string_view val) {
    if (kind == Kind::kString && !IsNoTime(val)) {
      if (ParseTime(val, start ? &job_.start : &job_.end)) {
        (start ? job_.has_start : job_.has_end) = true;
      } else {
        JobError(NotATime(start ? "start_time" : "end_time", val));
      }
    } else if (kind != Kind::kNull && kind != Kind::kString) {
      JobError(absl::StrCat(Key(), " is not a string"));
    }
  }

  // ---- Containers: each Open* says what the container opened in its parent is -----------

  bool Open(bool object) {
    if (stack_.size() >= kMaxDepth) {
      return Fail(absl::StrCat("JSON nested deeper than ", kMaxDepth, " levels"));
    }
    Ctx ctx = Ctx::kJobs;
    if (stack_.empty()) {
      if (object) return Fail(kNotPhilly);
      saw_array_ = true;
    } else {
      ctx = OpenIn(stack_.back(), object);
    }
    stack_.push_back({ctx, object, ""});
    return status_.ok();
  }

  Ctx OpenIn(const Frame& parent, bool object) {
    switch (parent.ctx) {
      case Ctx::kJobs:
        return OpenJob(object);
      case Ctx::kJob:
        return OpenInJob(parent.key, object);
      case Ctx::kAttempts:
        return OpenAttempt(object);
      case Ctx::kAttempt:
        return OpenInAttempt(parent.key, object);
      case Ctx::kDetails:
        return OpenDetail(object);
      case Ctx::kDetail:
        return OpenInDetail(parent.key, object);
      case Ctx::kGpus:
        ++job_.gpus;  // an entry of any kind is one GPU
        return Ctx::kSkip;
      case Ctx::kSkip:
        return Ctx::kSkip;
    }
    return Ctx::kSkip;
  }

  Ctx OpenJob(bool object) {
    if (!object) {
      NotAJob();
      return Ctx::kSkip;
    }
    ++index_;
    job_ = Job{};
    job_.index = index_;
    job_.line = *line_ + 1;  // the parser has just read this object's '{'
    return Ctx::kJob;
  }

  Ctx OpenInJob(const std::string& key, bool object) {
    if (key == "attempts") {
      job_.has_attempts = true;
      if (!object) return Ctx::kAttempts;
      JobError("attempts is not an array");
    } else if (key == "jobid" || key == "submitted_time") {
      JobError(absl::StrCat(key, " is not a string"));
    }
    return Ctx::kSkip;
  }

  Ctx OpenAttempt(bool object) {
    if (!object) {
      JobError("an attempt is not a JSON object");
      return Ctx::kSkip;
    }
    ++job_.attempts;
    job_.has_start = job_.has_end = false;
    return Ctx::kAttempt;
  }

  Ctx OpenInAttempt(const std::string& key, bool object) {
    if (key == "detail" && job_.attempts == 1) {
      job_.first_has_detail = true;
      if (!object) return Ctx::kDetails;
      JobError("detail is not an array");
    } else if (key == "start_time" || key == "end_time") {
      JobError(absl::StrCat(key, " is not a string"));
    }
    return Ctx::kSkip;
  }

  Ctx OpenDetail(bool object) {
    if (!object) {
      JobError("a detail entry is not a JSON object");
      return Ctx::kSkip;
    }
    gpus_seen_ = false;
    return Ctx::kDetail;
  }

  Ctx OpenInDetail(const std::string& key, bool object) {
    if (key != "gpus") return Ctx::kSkip;
    gpus_seen_ = true;
    if (!object) return Ctx::kGpus;
    JobError("gpus is not an array");
    return Ctx::kSkip;
  }

  bool Close() {
    if (stack_.empty()) return Fail("unbalanced JSON");
    Ctx ctx = stack_.back().ctx;
    stack_.pop_back();
    switch (ctx) {
      case Ctx::kDetail:
        if (!gpus_seen_) JobError("a detail entry has no gpus");
        break;
      case Ctx::kAttempt:
        EndAttempt();
        break;
      case Ctx::kJob:
        EndJob();
        break;
      default:
        break;
    }
    return status_.ok();
  }

  void EndAttempt() {
    if (job_.has_start && job_.has_end) {
      std::string span = CheckSpan("start_time", job_.start, "end_time", job_.end);
      if (!span.empty()) {
        JobError(absl::StrCat("attempt ", job_.attempts, ": ", span));
      } else {
        job_.duration += job_.end - job_.start;  // each <= kMaxSeconds: no overflow
      }
    } else {
      // No run time to add: the job's would be short of it (0 s when it has one attempt).
      job_.unfinished = true;
    }
    if (job_.attempts == 1 && !job_.first_has_detail) JobError("attempt 1 has no detail");
  }

  // ---- A whole job ------------------------------------------------------------------------

  // What only the whole job shows: keys never given, totals out of bounds.
  void CheckWholeJob() {
    if (!job_.has_submit) JobError("no submitted_time");
    if (!job_.has_attempts) JobError("no attempts");
    if (job_.duration > limits::kMaxSeconds) {
      JobError(absl::StrCat("the attempts' run times add up to ", Secs(job_.duration),
                            " s, more than ", kMaxSecondsInt));
    }
    if (job_.gpus > limits::kMaxJobGpus) {
      JobError(absl::StrCat("attempt 1 has ", job_.gpus, " GPUs, more than ", limits::kMaxJobGpus));
    }
  }

  void EndJob() {
    CheckWholeJob();
    if (!job_.error.empty()) {
      Keep(r_.Bad(job_.line, absl::StrCat("job ", job_.index, ": ", job_.error)));
      return;
    }
    if (job_.attempts == 0) {
      r_.Skip(kPhillyNoAttempt);
      return;
    }
    if (job_.unfinished) {
      r_.Skip(kPhillyNotRun);
      return;
    }
    TraceJob j;
    j.line = job_.line;
    j.id = job_.id.empty() ? absl::StrCat("job", job_.index) : job_.id;
    j.submit = job_.submit;
    j.duration = job_.duration;
    j.gpus = static_cast<int>(job_.gpus);
    Keep(r_.AddGpuJob(std::move(j)));
  }

  bool Fail(absl::string_view message) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(absl::StrCat(r_.file(), ":", *line_ + 1, ": ", message));
    }
    return false;
  }
  void Keep(absl::Status s) {
    if (status_.ok() && !s.ok()) status_ = std::move(s);
  }

  Reader& r_;
  const int* line_;  // lines fully read by the parser
  absl::Status status_;
  std::vector<Frame> stack_;
  bool saw_array_ = false;
  bool gpus_seen_ = false;
  int index_ = 0;  // jobs seen, 1-based
  Job job_;
};

// Follows JSON text a byte at a time and counts the bytes of the token being read: a
// string's from its opening quote, strings and escapes followed; a number's or a literal's
// from its first byte.
class TokenLength {
 public:
  // Takes the next byte. RET false when its token has grown longer than kMaxJsonTokenBytes.
  bool Next(char c) { return in_string_ ? NextInString(c) : NextOutside(c); }
  int token_line() const { return token_line_; }  // where the token being read starts
  bool in_string() const { return in_string_; }

 private:
  bool NextInString(char c) {
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      in_string_ = false;
      token_ = 0;
      return true;
    }
    if (c == '\n') ++line_;  // invalid JSON, reported by the parser
    return ++token_ <= limits::kMaxJsonTokenBytes;
  }

  bool NextOutside(char c) {
    switch (c) {
      case '"':
        in_string_ = true;
        token_ = 0;
        token_line_ = line_;
        return true;
      case '\n':
        ++line_;
        [[fallthrough]];
      case ' ':
      case '\t':
      case '\r':
      case '[':
      case ']':
      case '{':
      case '}':
      case ',':
      case ':':
        token_ = 0;
        return true;
      default:
        if (token_ == 0) token_line_ = line_;
        return ++token_ <= limits::kMaxJsonTokenBytes;
    }
  }

  int line_ = 1, token_line_ = 1;
  size_t token_ = 0;  // bytes of the token being read
  bool in_string_ = false, escaped_ = false;
};

// Refuses a JSON token (a string, a number, a literal) longer than kMaxJsonTokenBytes before
// the parser buffers it: one pass. RET InvalidArgument naming the line where it starts.
absl::Status CheckJsonTokens(absl::string_view text, const std::string& file) {
  TokenLength tokens;
  for (char c : text) {
    if (!tokens.Next(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          file, ":", tokens.token_line(), ": a JSON ", tokens.in_string() ? "string" : "value",
          " longer than ", limits::kMaxJsonTokenBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadPhilly(absl::string_view text, Reader& r) {
  absl::Status tokens = CheckJsonTokens(text, r.file());
  if (!tokens.ok()) return tokens;
  int lines = 0;
  PhillySax sax(r, &lines);
  LineCountingIterator begin(text.data(), &lines), end(text.data() + text.size(), &lines);
  bool ok = nlohmann::json::sax_parse(begin, end, &sax);
  if (!sax.status().ok()) return sax.status();
  if (!ok || !sax.saw_array()) {
    return absl::InvalidArgumentError(absl::StrCat(r.file(), ": ", kNotPhilly));
  }
  return absl::OkStatus();
}

}  // namespace nvlplace::replay::readers
