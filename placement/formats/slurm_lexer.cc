// The lexer of Slurm's key=value files: lines, words, fields and the field readers.
#include "placement/formats/slurm_lexer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
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
        out.annotations.push_back({number, std::string(absl::StripAsciiWhitespace(comment))});
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
    if (!absl::StripAsciiWhitespace(pending).empty()) out.lines.push_back({first, pending});
    pending.clear();
    first = 0;
  }
  return out;
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
