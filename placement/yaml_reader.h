// Strict, never-throwing reading of YAML documents with file:line:col: path: errors.
#ifndef NVLPLACE_PLACEMENT_YAML_READER_H_
#define NVLPLACE_PLACEMENT_YAML_READER_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "placement/status_macros.h"
#include "placement/topology.h"
#include "yaml-cpp/yaml.h"

namespace nvlplace::yaml {

// Parses a document; a syntax error reads "file:line:col: bad YAML: ...".
inline absl::StatusOr<YAML::Node> LoadYaml(absl::string_view text, const std::string& file) noexcept {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    SourceLoc loc;
    loc.file = file;
    if (!e.mark.is_null()) {
      loc.line = e.mark.line + 1;
      loc.col = e.mark.column + 1;
    }
    return absl::InvalidArgumentError(FormatAt(loc, absl::StrCat("bad YAML: ", e.msg)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(FormatAt(SourceLoc{file, 0, 0, ""}, e.what()));
  }
}

// A position in the document: the file, the YAML node and its path.
struct Where {
  const std::string* file;
  YAML::Node node;
  std::string path;

  SourceLoc Loc() const {
    SourceLoc loc;
    loc.file = *file;
    YAML::Mark mark = node.Mark();
    if (!mark.is_null()) {
      loc.line = mark.line + 1;  // yaml-cpp marks are 0-based
      loc.col = mark.column + 1;
    }
    loc.path = path;
    return loc;
  }
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(FormatAt(Loc(), message));
  }
  Where Child(YAML::Node child, absl::string_view key) const {
    return Where{file, std::move(child), absl::StrCat(path, "/", key)};
  }
};

// The keys of one mapping, checked for unknown and duplicated keys up front. Each value is
// read at most once through Take, so lookups never go through yaml-cpp's throwing operator[].
class MapReader {
 public:
  static absl::StatusOr<MapReader> Make(const Where& where,
                                        std::vector<absl::string_view> allowed) noexcept {
    MapReader r;
    r.where_ = where;
    if (!where.node.IsMap()) {
      return where.Error(absl::StrCat("expected a mapping with keys ", absl::StrJoin(allowed, ", ")));
    }
    try {
      for (auto it = where.node.begin(); it != where.node.end(); ++it) {
        Where key_where{where.file, it->first, where.path};
        if (!it->first.IsScalar()) return key_where.Error("a key must be a plain name");
        std::string key = it->first.Scalar();
        key_where.path = absl::StrCat(where.path, "/", key);
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
          return key_where.Error(absl::StrCat("unknown key '", key,
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
    } catch (const YAML::Exception& e) {
      return where.Error(absl::StrCat("cannot read this mapping: ", e.msg));
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

inline absl::StatusOr<std::string> ReadString(const Where& w) noexcept {
  if (!w.node.IsScalar()) return w.Error("expected a string");
  return w.node.Scalar();
}

inline absl::StatusOr<double> ReadNumber(const Where& w) noexcept {
  if (!w.node.IsScalar()) return w.Error("expected a number");
  try {
    return w.node.as<double>();
  } catch (const YAML::Exception&) {
    return w.Error(absl::StrCat("expected a number, not '", w.node.Scalar(), "'"));
  }
}

inline absl::StatusOr<int> ReadInt(const Where& w) noexcept {
  if (!w.node.IsScalar()) return w.Error("expected an integer");
  try {
    return w.node.as<int>();
  } catch (const YAML::Exception&) {
    return w.Error(absl::StrCat("expected an integer, not '", w.node.Scalar(), "'"));
  }
}

inline absl::StatusOr<std::vector<std::string>> ReadStringList(const Where& w) noexcept {
  if (!w.node.IsSequence()) return w.Error("expected a list such as [leaf, spine, core]");
  std::vector<std::string> out;
  for (size_t i = 0; i < w.node.size(); ++i) {
    NVL_ASSIGN_OR_RETURN(std::string s, ReadString(w.Child(w.node[i], absl::StrCat(i))));
    out.push_back(std::move(s));
  }
  return out;
}

// Runs f(item_where) for each element of a sequence.
template <typename F>
absl::Status ForEach(const Where& w, F f) noexcept {
  if (!w.node.IsSequence()) return w.Error("expected a list");
  for (size_t i = 0; i < w.node.size(); ++i) {
    NVL_RETURN_IF_ERROR(f(w.Child(w.node[i], absl::StrCat(i))));
  }
  return absl::OkStatus();
}

}  // namespace nvlplace::yaml

#endif  // NVLPLACE_PLACEMENT_YAML_READER_H_
