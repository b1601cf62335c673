// Strict, never-throwing reading of YAML documents with file:line:col: path: errors.
#ifndef NVLPLACE_PLACEMENT_FORMATS_YAML_READER_H_
#define NVLPLACE_PLACEMENT_FORMATS_YAML_READER_H_

#include <algorithm>
#include <cmath>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/formats/yaml_document.h"
#include "placement/model/hostlist.h"
#include "placement/model/limits.h"
#include "placement/model/status_macros.h"
#include "placement/model/topology.h"
#include "yaml-cpp/yaml.h"

namespace nvlplace::yaml {

namespace internal {

inline SourceLoc MarkLoc(const std::string& file, const Position& mark) {
  SourceLoc loc;
  loc.file = file;
  if (!mark.is_null()) {
    loc.line = mark.line + 1;  // positions are 0-based
    loc.col = mark.column + 1;
  }
  return loc;
}

}  // namespace internal

// Parses the first document in one pass (ReadDocument); a syntax error reads
// "file:line:col: bad YAML: ...". More than limits::kMaxYamlNodes nodes or nesting past
// limits::kMaxYamlDepth is refused at the node that crosses the limit, before the rest is
// read (16 bytes a node and the text of the scalars). Any exception (std::bad_alloc too)
// becomes a Status.
inline absl::StatusOr<Document> LoadYaml(absl::string_view text, const std::string& file) {
  try {
    return ReadDocument(text);
  } catch (const TooBig& e) {
    return absl::InvalidArgumentError(FormatAt(internal::MarkLoc(file, e.mark), e.message));
  } catch (const BadYaml& e) {
    // libyaml may quote the offending character: escaped like every byte from a file.
    return absl::InvalidArgumentError(FormatAt(
        internal::MarkLoc(file, e.mark), absl::StrCat("bad YAML: ", Printable(e.message, 200))));
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
  Node node;
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
  Where Child(Node child, absl::string_view key) const {
    return Where{file, child, absl::StrCat(path, "/", key), budget};
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

// The keys of one mapping, checked for unknown and duplicated keys up front.
class MapReader {
 public:
  static absl::StatusOr<MapReader> Make(const Where& where,
                                        std::vector<absl::string_view> allowed) {
    MapReader r(where);
    try {
      if (!where.node.IsMap()) {
        return where.Error(
            absl::StrCat("expected a mapping with keys ", absl::StrJoin(allowed, ", ")));
      }
      for (size_t i = 0; i < where.node.size(); ++i) {
        Node key_node = where.node.Key(i);
        Node value = where.node.ValueAt(i);
        Where key_where{where.file, key_node, where.path, where.budget};
        NVL_RETURN_IF_ERROR(key_where.Visit());
        if (!key_node.IsScalar()) return key_where.Error("a key must be a plain name");
        absl::string_view key = key_node.Scalar();
        // An error about the key is at its own path.
        auto key_error = [&](absl::string_view message) {
          key_where.path = absl::StrCat(where.path, "/", Printable(key));
          return key_where.Error(message);
        };
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
          return key_error(absl::StrCat("unknown key '", Printable(key),
                                        "'; allowed here: ", absl::StrJoin(allowed, ", ")));
        }
        for (const auto& [k, v] : r.entries_) {
          if (k == key) {
            return key_error(absl::StrCat("duplicate key '", key, "' (first on line ",
                                          v.node.Mark().line + 1, ")"));
          }
        }
        r.entries_.emplace_back(key, where.Child(value, key));
        // Mark values of null type at their key, where a reader would look.
        if (value.IsNull()) r.entries_.back().second.node = key_node;
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
  explicit MapReader(const Where& where) : where_(where) {}

  Where where_;
  std::vector<std::pair<absl::string_view, Where>> entries_;  // keys in the Document
};

inline absl::StatusOr<std::string> ReadString(const Where& w) {
  try {
    if (!w.node.IsScalar()) return w.Error("expected a string");
    return std::string(w.node.Scalar());
  } catch (const std::exception& e) {
    return ExceptionAt(w, e);
  }
}

namespace internal {

// A scalar converted as yaml-cpp's Node::as<T>() converts it (octal and hex integers, ".inf",
// ".nan"); throws YAML::Exception when it does not read as a T.
template <typename T>
T ScalarAs(absl::string_view scalar) {
  return YAML::Node(std::string(scalar)).as<T>();
}

// Whether `scalar` is a plain decimal of at most 9 digits ("0", "8", "-12"; no sign "+", no
// leading zero, which yaml-cpp reads as octal), and its value: what ScalarAs<int> gives for
// it, without building a YAML::Node.
inline bool PlainDecimal(absl::string_view scalar, int* value) {
  absl::string_view digits = scalar;
  bool negative = !digits.empty() && digits[0] == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 9 || (digits[0] == '0' && digits.size() > 1)) {
    return false;
  }
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *value = negative ? -v : v;
  return true;
}

}  // namespace internal

// A number as yaml-cpp reads it: ".nan" and ".inf" included (see ReadNumberIn).
inline absl::StatusOr<double> ReadNumber(const Where& w) {
  try {
    if (!w.node.IsScalar()) return w.Error("expected a number");
    try {
      return internal::ScalarAs<double>(w.node.Scalar());
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
    int plain;
    if (internal::PlainDecimal(w.node.Scalar(), &plain)) return plain;
    try {
      return internal::ScalarAs<int>(w.node.Scalar());
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
    absl::string_view v = w.node.Scalar();
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
    for (size_t i = 0; i < w.node.size(); ++i) {
      Where item = w.Child(w.node.Item(i), absl::StrCat(i));
      NVL_RETURN_IF_ERROR(item.Visit());
      NVL_RETURN_IF_ERROR(f(item));
    }
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return ExceptionAt(w, e);
  }
}

inline absl::StatusOr<std::vector<std::string>> ReadStringList(const Where& w) {
  if (!w.node.IsSequence()) {
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
