// Strict, never-throwing reading of YAML documents with file:line:col: path: errors.
#ifndef NVLPLACE_PLACEMENT_FORMATS_YAML_READER_H_
#define NVLPLACE_PLACEMENT_FORMATS_YAML_READER_H_

#include <algorithm>
#include <cmath>
#include <exception>
#include <istream>
#include <new>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"
#include "placement/model/topology.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace nvlplace::yaml {

namespace internal {

// An istream over text that is not copied.
class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(absl::string_view text) {
    char* p = const_cast<char*>(text.data());
    setg(p, p, p + text.size());
  }
};

// Thrown by the counting pass to stop at the first node past a limit.
struct TooBig {
  YAML::Mark mark;
  std::string message;
};

// Counts the nodes of the first document (scalars, nulls, lists, mappings and alias uses)
// and their nesting, without building them, and stops past the limits.
class Counter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Open(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Open(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Count(const YAML::Mark& mark) {
    if (++nodes_ > limits::kMaxYamlNodes) {
      throw TooBig{mark, absl::StrCat("the document holds more than ", limits::kMaxYamlNodes,
                                      " YAML values, lists and mappings; is this the right "
                                      "file?")};
    }
  }
  void Open(const YAML::Mark& mark) {
    Count(mark);
    if (++depth_ > limits::kMaxYamlDepth) {
      throw TooBig{mark, absl::StrCat("lists and mappings nest more than ", limits::kMaxYamlDepth,
                                      " levels deep here")};
    }
  }
  size_t nodes_ = 0;
  int depth_ = 0;
};

inline SourceLoc MarkLoc(const std::string& file, const YAML::Mark& mark) {
  SourceLoc loc;
  loc.file = file;
  if (!mark.is_null()) {
    loc.line = mark.line + 1;  // yaml-cpp marks are 0-based
    loc.col = mark.column + 1;
  }
  return loc;
}

}  // namespace internal

// Parses a document; a syntax error reads "file:line:col: bad YAML: ...". The document is
// first counted without being built: more than limits::kMaxYamlNodes nodes or nesting past
// limits::kMaxYamlDepth is refused at the node that crosses the limit (yaml-cpp holds about
// 500 bytes per node). Any exception (std::bad_alloc too) becomes a Status.
inline absl::StatusOr<YAML::Node> LoadYaml(absl::string_view text, const std::string& file) {
  try {
    {
      internal::ViewBuf buf(text);
      std::istream in(&buf);
      YAML::Parser parser(in);
      internal::Counter counter;
      parser.HandleNextDocument(counter);
    }
    internal::ViewBuf buf(text);
    std::istream in(&buf);
    return YAML::Load(in);
  } catch (const internal::TooBig& e) {
    return absl::InvalidArgumentError(FormatAt(internal::MarkLoc(file, e.mark), e.message));
  } catch (const YAML::Exception& e) {
    // yaml-cpp may quote the offending character: escaped like every byte from a file.
    return absl::InvalidArgumentError(FormatAt(internal::MarkLoc(file, e.mark),
                                               absl::StrCat("bad YAML: ", Printable(e.msg, 200))));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        FormatAt(SourceLoc{file, 0, 0, ""}, "out of memory while reading the YAML"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(FormatAt(SourceLoc{file, 0, 0, ""}, Printable(e.what())));
  }
}

// What reading one document may cost beyond its own size: the YAML nodes visited (a node
// reached through an alias is visited again each time) and the names expanded from its
// hostlists. Readers that follow aliases into lists share one Budget through Where.
struct Budget {
  size_t nodes_visited = 0;
  size_t names = 0;
};

// A position in the document: the file, the YAML node and its path.
struct Where {
  const std::string* file;
  YAML::Node node;
  std::string path;
  Budget* budget = nullptr;  // optional: counts the nodes visited below

  SourceLoc Loc() const {
    SourceLoc loc = internal::MarkLoc(*file, node.Mark());
    loc.path = path;
    return loc;
  }
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(FormatAt(Loc(), message));
  }
  Where Child(YAML::Node child, absl::string_view key) const {
    return Where{file, std::move(child), absl::StrCat(path, "/", key), budget};
  }
  // Counts one more node visited; an error once the budget is spent (aliases that repeat a
  // large part of the document).
  absl::Status Visit() const {
    if (budget == nullptr || ++budget->nodes_visited <= limits::kMaxYamlNodes) {
      return absl::OkStatus();
    }
    return Error(absl::StrCat("reading the document visits more than ", limits::kMaxYamlNodes,
                              " YAML values: aliases (*name) repeat too much of it"));
  }
};

// Turns an exception thrown while reading at `w` into a Status.
inline absl::Status ExceptionAt(const Where& w, const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return absl::ResourceExhaustedError(FormatAt(w.Loc(), "out of memory while reading here"));
  }
  if (const auto* y = dynamic_cast<const YAML::Exception*>(&e)) {
    return w.Error(absl::StrCat("cannot read this value: ", Printable(y->msg, 200)));
  }
  return w.Error(absl::StrCat("cannot read this value: ", Printable(e.what(), 200)));
}

// The keys of one mapping, checked for unknown and duplicated keys up front. Each value is
// read at most once through Take, so lookups never go through yaml-cpp's throwing operator[].
class MapReader {
 public:
  static absl::StatusOr<MapReader> Make(const Where& where,
                                        std::vector<absl::string_view> allowed) {
    MapReader r;
    r.where_ = where;
    try {
      if (!where.node.IsMap()) {
        return where.Error(
            absl::StrCat("expected a mapping with keys ", absl::StrJoin(allowed, ", ")));
      }
      for (auto it = where.node.begin(); it != where.node.end(); ++it) {
        Where key_where{where.file, it->first, where.path, where.budget};
        NVL_RETURN_IF_ERROR(key_where.Visit());
        if (!it->first.IsScalar()) return key_where.Error("a key must be a plain name");
        const std::string& key = it->first.Scalar();
        key_where.path = absl::StrCat(where.path, "/", Printable(key));
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
          return key_where.Error(absl::StrCat("unknown key '", Printable(key),
                                              "'; allowed here: ", absl::StrJoin(allowed, ", ")));
        }
        for (const auto& [k, v] : r.entries_) {
          if (k == key) {
            return key_where.Error(absl::StrCat("duplicate key '", key, "' (first on line ",
                                                v.node.Mark().line + 1, ")"));
          }
        }
        r.entries_.emplace_back(key, where.Child(it->second, key));
        // Mark values of null type at their key, where a reader would look.
        if (it->second.IsNull()) r.entries_.back().second.node = it->first;
      }
    } catch (const std::exception& e) {
      return ExceptionAt(where, e);
    }
    return r;
  }

  const Where& where() const { return where_; }

  // The value of `key`, or nullptr when absent.
  const Where* Find(absl::string_view key) const {
    for (const auto& [k, v] : entries_) {
      if (k == key) return &v;
    }
    return nullptr;
  }

  absl::StatusOr<const Where*> Require(absl::string_view key) const {
    const Where* w = Find(key);
    if (w == nullptr) return where_.Error(absl::StrCat("missing key '", key, "'"));
    return w;
  }

 private:
  Where where_;
  std::vector<std::pair<std::string, Where>> entries_;
};

inline absl::StatusOr<std::string> ReadString(const Where& w) {
  try {
    if (!w.node.IsScalar()) return w.Error("expected a string");
    return w.node.Scalar();
  } catch (const std::exception& e) {
    return ExceptionAt(w, e);
  }
}

// A number as yaml-cpp reads it: ".nan" and ".inf" included (see ReadNumberIn).
inline absl::StatusOr<double> ReadNumber(const Where& w) {
  try {
    if (!w.node.IsScalar()) return w.Error("expected a number");
    try {
      return w.node.as<double>();
    } catch (const YAML::Exception&) {
      return w.Error(absl::StrCat("expected a number, not '", Printable(w.node.Scalar()), "'"));
    }
  } catch (const std::exception& e) {
    return ExceptionAt(w, e);
  }
}

// A finite number in [min, max] (min itself refused when `min_excluded`). Otherwise the error
// reads "<rule>, not '<the value>'", so `rule` says what is wanted ("link_gbps must be a
// positive number of Gb/s up to 1000000"). NaN and infinities are refused.
inline absl::StatusOr<double> ReadNumberIn(const Where& w, double min, bool min_excluded,
                                           double max, absl::string_view rule) {
  NVL_ASSIGN_OR_RETURN(double v, ReadNumber(w));
  if (!std::isfinite(v) || v < min || (min_excluded && v == min) || v > max) {
    return w.Error(absl::StrCat(rule, ", not '", Printable(w.node.Scalar()), "'"));
  }
  return v;
}

inline absl::StatusOr<int> ReadInt(const Where& w) {
  try {
    if (!w.node.IsScalar()) return w.Error("expected an integer");
    try {
      return w.node.as<int>();
    } catch (const YAML::Exception&) {
      return w.Error(absl::StrCat("expected an integer, not '", Printable(w.node.Scalar()), "'"));
    }
  } catch (const std::exception& e) {
    return ExceptionAt(w, e);
  }
}

// true or false (YAML 1.2's spelling only: yes/no/on/off are refused).
inline absl::StatusOr<bool> ReadBool(const Where& w) {
  try {
    if (!w.node.IsScalar()) return w.Error("expected true or false");
    const std::string& v = w.node.Scalar();
    if (v == "true") return true;
    if (v == "false") return false;
    return w.Error(absl::StrCat("expected true or false, not '", Printable(v), "'"));
  } catch (const std::exception& e) {
    return ExceptionAt(w, e);
  }
}

// Runs f(item_where) for each element of a sequence.
template <typename F>
absl::Status ForEach(const Where& w, F f) {
  try {
    if (!w.node.IsSequence()) return w.Error("expected a list");
    size_t i = 0;
    for (auto it = w.node.begin(); it != w.node.end(); ++it, ++i) {
      Where item = w.Child(*it, absl::StrCat(i));
      NVL_RETURN_IF_ERROR(item.Visit());
      NVL_RETURN_IF_ERROR(f(item));
    }
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return ExceptionAt(w, e);
  }
}

inline absl::StatusOr<std::vector<std::string>> ReadStringList(const Where& w) {
  if (w.node.Type() != YAML::NodeType::Sequence) {
    return w.Error("expected a list such as [leaf, spine, core]");
  }
  std::vector<std::string> out;
  NVL_RETURN_IF_ERROR(ForEach(w, [&](const Where& item) -> absl::Status {
    NVL_ASSIGN_OR_RETURN(std::string s, ReadString(item));
    out.push_back(std::move(s));
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace nvlplace::yaml

#endif  // NVLPLACE_PLACEMENT_FORMATS_YAML_READER_H_
