// The lexer of Slurm's key=value files: lines, words, fields and the field readers.
#include "placement/formats/slurm_lexer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"

namespace nvlplace::slurm {
namespace {

// The text before an unescaped '#' ("\#" stands for '#', as in Slurm's parser).
std::string StripComment(absl::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
      out += '#';
      ++i;
    } else if (raw[i] == '#') {
      break;
    } else {
      out += raw[i];
    }
  }
  return out;
}

}  // namespace

SourceLoc At(const std::string& file, int line, absl::string_view key) {
  return SourceLoc{file, line, 0, Printable(key)};
}

absl::Status LineError(const std::string& file, int line, absl::string_view key,
                       absl::string_view message) {
  return absl::InvalidArgumentError(FormatAt(At(file, line, key), message));
}

SplitText SplitConf(absl::string_view text) {
  SplitText out;
  std::vector<absl::string_view> physical = absl::StrSplit(text, '\n');
  std::string pending;
  int first = 0;
  for (size_t i = 0; i < physical.size(); ++i) {
    int number = static_cast<int>(i) + 1;
    absl::string_view comment = absl::StripLeadingAsciiWhitespace(physical[i]);
    if (absl::ConsumePrefix(&comment, "#")) {
      comment = absl::StripLeadingAsciiWhitespace(comment);
      if (absl::ConsumePrefix(&comment, kAnnotation)) {
        out.annotations.push_back(
            {number, std::string(absl::StripAsciiWhitespace(comment)), 0, number});
      }
    }
    std::string code = StripComment(physical[i]);
    // As Slurm's parser: an odd number of backslashes ends a continued line (spaces after them
    // aside); the last is removed and the next line follows at once, without a space.
    absl::string_view body = absl::StripTrailingAsciiWhitespace(code);
    size_t kept = body.find_last_not_of('\\');  // npos: nothing but backslashes
    size_t backslashes = kept == absl::string_view::npos ? body.size() : body.size() - kept - 1;
    bool continued = backslashes % 2 == 1;
    if (continued) body.remove_suffix(1);
    if (first == 0) first = number;
    absl::StrAppend(&pending, body, continued ? "" : " ");
    if (continued && i + 1 < physical.size()) continue;
    if (!absl::StripAsciiWhitespace(pending).empty()) {
      out.lines.push_back({first, pending, 0, first});
    }
    pending.clear();
    first = 0;
  }
  return out;
}

std::string LineRef(const SourceLoc& there, absl::string_view here) {
  if (there.file == here || there.file.empty()) return absl::StrCat("line ", there.line);
  return absl::StrCat(there.file, ":", there.line);
}

// ---- Include ------------------------------------------------------------------------------

namespace {

constexpr absl::string_view kIncludeKey = "Include";

// The directory of `file` ("" for a bare name, "/" for a file at the root).
std::string DirOf(const std::string& file) {
  size_t slash = file.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : file.substr(0, slash);
}

// The file name of an Include line, if `text` is one (Slurm: "include" in any case at the
// start of the line, then a space); nullopt for another line. Errors for a line Slurm would
// refuse, or read as another key=value line, with what to write.
absl::StatusOr<std::optional<std::string>> IncludeName(absl::string_view text,
                                                       const std::string& file, int line) {
  absl::string_view code = absl::StripLeadingAsciiWhitespace(text);
  if (!absl::StartsWithIgnoreCase(code, "include")) return std::nullopt;
  absl::string_view rest = code.substr(7);
  absl::string_view after = absl::StripLeadingAsciiWhitespace(rest);
  const bool spaced = rest.empty() || absl::ascii_isspace(rest[0]);
  if (!spaced && !absl::StartsWith(after, "=")) return std::nullopt;  // another key
  auto error = [&](absl::string_view message) {
    return LineError(file, line, kIncludeKey, message);
  };
  if (absl::StartsWith(after, "=")) {
    return error("Include is followed by a space and a file name, not '=': write Include FILE");
  }
  if (code.size() != text.size()) {
    return error(
        "Slurm reads Include only at the very start of a line (after spaces it is a key=value "
        "line, and an error): remove the spaces before it");
  }
  std::vector<absl::string_view> words =
      absl::StrSplit(after, absl::ByAnyChar(" \t\r\n\v\f"), absl::SkipEmpty());
  if (words.empty()) return error("names no file: write Include FILE");
  if (words.size() > 1) {
    return error(absl::StrCat("'", Printable(absl::StripTrailingAsciiWhitespace(after)),
                              "': Slurm reads one file name, up to the first space, and refuses "
                              "the line with more after it; include one file per line"));
  }
  std::string name(words[0]);
  if (absl::StrContains(name, "%c")) {
    return error(absl::StrCat("'", Printable(name),
                              "': Slurm expands %c (the cluster name) only in slurm.conf; here "
                              "the Include fails: write the file name out"));
  }
  if (absl::StrContains(name, '*')) {
    return error(absl::StrCat("'", Printable(name),
                              "': Slurm does not expand '*' (23.11 refuses it; 25.11 and "
                              "later skip it, silently with DebugFlags=GLOB_SILENCE): include "
                              "each file by its name"));
  }
  return std::optional<std::string>(std::move(name));
}

// Reads a file and the files it includes, in reading order, into one SplitText.
class IncludeReader {
 public:
  IncludeReader(const IncludeFiles& includes, const std::string& file, size_t bytes)
      : includes_(includes),
        dir_(includes.dir.empty() ? DirOf(file) : includes.dir),
        bytes_(bytes) {
    out_.files.push_back(file);
    open_.push_back(Normal(file));
    chain_.push_back(file);
  }

  // The lines of `text`, the text of out_.files[index], with those of the files it includes.
  absl::Status Read(absl::string_view text, int index) {
    SplitText split = SplitConf(text);
    size_t next_note = 0;
    auto notes_before = [&](int line) {
      for (; next_note < split.annotations.size() && split.annotations[next_note].line < line;
           ++next_note) {
        Add(std::move(split.annotations[next_note]), index, &out_.annotations);
      }
    };
    for (TextLine& line : split.lines) {
      notes_before(line.line);
      NVL_ASSIGN_OR_RETURN(std::optional<std::string> name,
                           IncludeName(line.text, out_.files[index], line.line));
      if (name.has_value()) {
        NVL_RETURN_IF_ERROR(Include(*name, index, line.line));
      } else {
        Add(std::move(line), index, &out_.lines);
      }
    }
    notes_before(std::numeric_limits<int>::max());
    return absl::OkStatus();
  }

  SplitText Take() { return std::move(out_); }

 private:
  // A path with "." parts and repeated '/' dropped and "dir/.." folded, as written (the file
  // system is not asked), to find a cycle; a cycle through links is stopped by the depth.
  static std::string Normal(absl::string_view path) {
    const bool absolute = absl::StartsWith(path, "/");
    std::vector<absl::string_view> parts;
    for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
      if (part == ".") continue;
      if (part == ".." && !parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (part != ".." || !absolute || !parts.empty()) {  // "/.." is "/"
        parts.push_back(part);
      }
    }
    return absl::StrCat(absolute ? "/" : "", absl::StrJoin(parts, "/"));
  }

  void Add(TextLine line, int index, std::vector<TextLine>* to) {
    line.file = index;
    line.seq = ++seq_;
    to->push_back(std::move(line));
  }

  // Reads the file that line `line` of out_.files[from] includes, in its place.
  absl::Status Include(const std::string& name, int from, int line) {
    const std::string file = out_.files[from];  // a copy: out_.files grows below
    auto error = [&](absl::string_view message) {
      return LineError(file, line, kIncludeKey, message);
    };
    if (!includes_.read) {
      return error(absl::StrCat(
          "'", Printable(name),
          "': nvlplace was given this file's text, not its path, and cannot read the "
          "file it includes; give the file itself (nvlplace import slurm --topology, --gres)"));
    }
    const std::string path = absl::StartsWith(name, "/") || dir_.empty()
                                 ? name
                                 : absl::StrCat(dir_, absl::EndsWith(dir_, "/") ? "" : "/", name);
    const std::string normal = Normal(path);
    auto open = std::find(open_.begin(), open_.end(), normal);
    if (open != open_.end()) {
      std::vector<std::string> cycle(chain_.begin() + (open - open_.begin()), chain_.end());
      cycle.push_back(Printable(path, 1024));
      return error(absl::StrCat("'", Printable(name), "' is being read already (",
                                absl::StrJoin(cycle, " includes "),
                                "): Slurm would include it again and again until it runs out of "
                                "open files; remove this Include"));
    }
    if (open_.size() > static_cast<size_t>(limits::kMaxIncludeDepth)) {
      return error(absl::StrCat(
          "'", Printable(name), "' would be the ", limits::kMaxIncludeDepth + 1,
          "th file nested by Include, past nvlplace's limit of ", limits::kMaxIncludeDepth, " (",
          absl::StrJoin(chain_, " includes "), "): include the files from fewer levels"));
    }
    if (++files_ > limits::kMaxIncludedFiles) {
      return error(absl::StrCat("more than ", limits::kMaxIncludedFiles,
                                " files included in all, past nvlplace's limit: is an Include "
                                "repeated?"));
    }
    absl::StatusOr<std::string> text = includes_.read(path);
    if (!text.ok()) {
      return error(absl::StrCat(
          text.status().message(),
          absl::StartsWith(name, "/")
              ? ""
              : absl::StrCat("; Slurm reads a relative Include path from the directory of "
                             "slurm.conf (whatever file holds the Include), here '",
                             dir_.empty() ? "." : dir_,
                             "': fix the path, or give that directory (--slurm-conf-dir)")));
    }
    if (bytes_ > limits::kMaxConfigBytes || text->size() > limits::kMaxConfigBytes - bytes_) {
      return error(absl::StrCat("with '", Printable(name), "', ", out_.files[0],
                                " and the files it includes are larger than ",
                                limits::kMaxConfigBytes >> 20,
                                " MiB; nvlplace reads up to that: is an Include repeated?"));
    }
    bytes_ += text->size();
    std::string shown = Printable(path, 1024);
    auto known = std::find(out_.files.begin(), out_.files.end(), shown);
    int index = static_cast<int>(known - out_.files.begin());
    if (known == out_.files.end()) out_.files.push_back(std::move(shown));
    open_.push_back(normal);
    chain_.push_back(out_.files[index]);
    absl::Status read = Read(*text, index);
    open_.pop_back();
    chain_.pop_back();
    return read;
  }

  const IncludeFiles& includes_;
  const std::string dir_;
  size_t bytes_;                    // of every file read so far
  int files_ = 0;                   // files included so far
  int64_t seq_ = 0;                 // the last TextLine::seq given
  std::vector<std::string> open_;   // the files being read, outermost first, Normal
  std::vector<std::string> chain_;  // the same as messages name them
  SplitText out_;
};

}  // namespace

absl::StatusOr<SplitText> ReadConfLines(absl::string_view text, const std::string& file,
                                        const IncludeFiles& includes) {
  IncludeReader reader(includes, file, text.size());
  NVL_RETURN_IF_ERROR(reader.Read(text, 0));
  return reader.Take();
}

absl::StatusOr<std::vector<std::string>> Words(absl::string_view text, const std::string& file,
                                               int line) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, any = false;
  bool key = true;        // the word so far is a bare key, [[:alnum:]_.]+ written unquoted
  bool after_eq = false;  // the word so far is a key and '=', with no value yet
  size_t open_at = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      quoted = !quoted;
      if (quoted) open_at = i;
      any = true;
      key = after_eq = false;
    } else if (!quoted && absl::ascii_isspace(c)) {
      size_t next = i;
      while (next < text.size() && absl::ascii_isspace(text[next])) ++next;
      // Slurm's key=value pattern allows spaces on either side of '=' ("Nodes = n[1-2]").
      bool joins = next < text.size() && ((any && key && text[next] == '=') || after_eq);
      if (joins && after_eq) {
        absl::string_view value = text.substr(next);
        value = value.substr(0, std::min(value.find_first_of(" \t\r\n\v\f"), value.size()));
        if (value.front() != '"' && absl::StrContains(value, '=')) {
          return LineError(file, line, absl::string_view(word).substr(0, word.size() - 1),
                           absl::StrCat("nothing follows '=' but a space and '", Printable(value),
                                        "', which Slurm reads as this key's value; write the "
                                        "value right after '=', or remove the key"));
        }
      }
      i = next - 1;
      if (joins) continue;
      if (any) words.push_back(std::move(word));
      word.clear();
      any = false;
      key = true;
    } else {
      after_eq = !quoted && c == '=' && any && key;
      key = key && !quoted && (absl::ascii_isalnum(c) || c == '_' || c == '.');
      word += c;
      any = true;
    }
  }
  if (quoted) {
    return LineError(
        file, line, "",
        absl::StrCat("a quote is opened but never closed: ",
                     Printable(absl::StripTrailingAsciiWhitespace(text.substr(open_at)), 24),
                     "; close it on the same line"));
  }
  if (any) words.push_back(std::move(word));
  return words;
}

const std::string* Fields::Find(absl::string_view key) const {
  for (const auto& [k, v] : values) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::Status Fields::Error(absl::string_view key, absl::string_view message) const {
  return LineError(file, line, key, message);
}

absl::StatusOr<Fields> ParseFields(const std::vector<std::string>& words, const std::string& file,
                                   int line, const std::vector<absl::string_view>& keys,
                                   absl::string_view what) {
  Fields f{file, line, {}};
  for (const std::string& word : words) {
    size_t eq = word.find('=');
    if (eq == std::string::npos) return f.Error(word, "expected key=value");
    absl::string_view key = absl::string_view(word).substr(0, eq);
    auto known = std::find_if(keys.begin(), keys.end(),
                              [&](absl::string_view k) { return absl::EqualsIgnoreCase(k, key); });
    if (known == keys.end()) {
      return f.Error(key,
                     absl::StrCat("unknown key; ", what, " keys are ", absl::StrJoin(keys, ", ")));
    }
    if (f.Find(*known) != nullptr) return f.Error(*known, "given twice");
    f.values.emplace_back(std::string(*known), word.substr(eq + 1));
  }
  return f;
}

absl::Status Require(const Fields& f, absl::string_view key) {
  return f.Find(key) ? absl::OkStatus() : f.Error(key, "required");
}

absl::Status GetNumber(const Fields& f, absl::string_view key, double* out) {
  const std::string* v = f.Find(key);
  if (v == nullptr) return absl::OkStatus();
  if (!absl::SimpleAtod(*v, out) || !std::isfinite(*out)) {
    return f.Error(key, absl::StrCat("'", Printable(*v), "' is not a number"));
  }
  return absl::OkStatus();
}

absl::Status GetBounded(const Fields& f, absl::string_view key, double min, bool min_excluded,
                        double max, absl::string_view what, double* out) {
  const std::string* v = f.Find(key);
  if (v == nullptr) return absl::OkStatus();
  double x = 0;
  NVL_RETURN_IF_ERROR(GetNumber(f, key, &x));
  if (x < min || (min_excluded && x == min) || x > max) {
    return f.Error(key, absl::StrCat("'", Printable(*v), "' is not ", what));
  }
  *out = x;
  return absl::OkStatus();
}

absl::Status GetInt(const Fields& f, absl::string_view key, int min, int max, int* out) {
  const std::string* v = f.Find(key);
  if (v == nullptr) return absl::OkStatus();
  int x = 0;
  if (!absl::SimpleAtoi(*v, &x)) {
    return f.Error(key, absl::StrCat("'", Printable(*v), "' is not an integer"));
  }
  if (x < min || x > max) {
    return f.Error(
        key, absl::StrCat("'", Printable(*v), "' is not a whole number from ", min, " to ", max));
  }
  *out = x;
  return absl::OkStatus();
}

namespace {

constexpr absl::string_view kBackslash =
    "has a backslash, which Slurm's files read as an escape or a line continuation; rename it";

}  // namespace

absl::Status CheckSlurmName(absl::string_view name, absl::string_view what) {
  NVL_RETURN_IF_ERROR(CheckName(name, what));
  if (absl::StrContains(name, '\\')) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", Printable(name), "' ", kBackslash));
  }
  return absl::OkStatus();
}

absl::Status CheckSlurmList(absl::string_view list) {
  if (absl::StrContains(list, '\\')) {
    return absl::InvalidArgumentError(absl::StrCat("'", Printable(list), "' ", kBackslash));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GetName(const Fields& f, absl::string_view key,
                                    absl::string_view what) {
  const std::string* v = f.Find(key);
  if (v == nullptr) return std::string();
  absl::Status ok = CheckSlurmName(*v, what);
  if (!ok.ok()) return f.Error(key, ok.message());
  return *v;
}

absl::Status ChargeNames(size_t count, NameBudget* budget) {
  if (count > budget->max - budget->names) {
    return absl::InvalidArgumentError(
        absl::StrCat("the hostlists of this file expand to more than ", budget->max,
                     " names (this one to ", count, ")"));
  }
  budget->names += count;
  return absl::OkStatus();
}

absl::StatusOr<size_t> CountNames(const Fields& f, absl::string_view key, NameBudget* budget) {
  const std::string* v = f.Find(key);
  if (v == nullptr) return 0;
  absl::StatusOr<size_t> count = CountHostlist(*v);
  if (!count.ok()) return f.Error(key, count.status().message());
  if (absl::Status charged = ChargeNames(*count, budget); !charged.ok()) {
    return f.Error(key, charged.message());
  }
  return *count;
}

absl::Status GetHostlist(const Fields& f, absl::string_view key, NameBudget* budget,
                         HostNames* out) {
  const std::string* v = f.Find(key);
  if (v == nullptr) return absl::OkStatus();
  if (absl::Status ok = CheckSlurmList(*v); !ok.ok()) return f.Error(key, ok.message());
  NVL_RETURN_IF_ERROR(CountNames(f, key, budget).status());
  absl::StatusOr<HostNames> names = ParseHostlist(*v);
  if (!names.ok()) return f.Error(key, names.status().message());
  out->Append(*names);
  return absl::OkStatus();
}

absl::Status GetHostlist(const Fields& f, absl::string_view key, NameBudget* budget,
                         std::vector<std::string>* out) {
  HostNames names;
  NVL_RETURN_IF_ERROR(GetHostlist(f, key, budget, &names));
  out->insert(out->end(), names.begin(), names.end());
  return absl::OkStatus();
}

absl::Status GetIslands(const Fields& f, absl::string_view key,
                        std::vector<std::vector<int>>* out) {
  const std::string* v = f.Find(key);
  if (v == nullptr) return absl::OkStatus();
  size_t indexes = 0;
  for (absl::string_view part : absl::StrSplit(*v, '/')) {
    out->emplace_back();
    for (absl::string_view index : absl::StrSplit(part, ',')) {
      if (++indexes > static_cast<size_t>(limits::kMaxGpusPerNode)) {
        return f.Error(key, absl::StrCat("more than ", limits::kMaxGpusPerNode,
                                         " GPU indexes; list every GPU of a node once"));
      }
      int gpu;
      if (!absl::SimpleAtoi(index, &gpu)) {
        return f.Error(key, absl::StrCat("'", Printable(index),
                                         "' is not a GPU index; write islands "
                                         "as 0,1,2,3/4,5,6,7"));
      }
      out->back().push_back(gpu);
    }
  }
  return absl::OkStatus();
}

}  // namespace nvlplace::slurm
