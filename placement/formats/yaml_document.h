// A YAML document read in one pass of libyaml's parser into compact nodes, counted as read.
#ifndef NVLPLACE_PLACEMENT_FORMATS_YAML_DOCUMENT_H_
#define NVLPLACE_PLACEMENT_FORMATS_YAML_DOCUMENT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace nvlplace::yaml {

class Document;

// A place in the text, 0-based; null (-1) for the root of a file with no document.
struct Position {
  int line = -1;
  int column = -1;
  bool is_null() const { return line < 0; }
};

// One node of a Document: a scalar, a null, a list or a mapping (a null is a plain scalar
// without a tag that reads ~, null, Null, NULL or nothing, as yaml-cpp reads one). An alias (*name)
// is the node its anchor names, so a node can be reached more than once, and can hold itself. A
// cheap handle: valid while its Document lives.
class Node {
 public:
  bool IsNull() const { return kind() == kNull; }
  bool IsScalar() const { return kind() == kScalar; }
  bool IsSequence() const { return kind() == kSequence; }
  bool IsMap() const { return kind() == kMap; }
  // The text of a scalar; empty for the others.
  absl::string_view Scalar() const;
  // Where the node starts (0-based); null for the root of a file with no document.
  Position Mark() const;
  // Items of a list, pairs of a mapping; 0 for the others.
  size_t size() const;
  // Item i of a list.
  Node Item(size_t i) const;
  // The key and the value of pair i of a mapping, in the order written (a key written twice
  // is kept twice).
  Node Key(size_t i) const;
  Node ValueAt(size_t i) const;

 private:
  friend class Document;
  friend class DocumentBuilder;
  enum Kind : uint32_t { kNull, kScalar, kSequence, kMap };

  Node(const Document* doc, uint32_t id) : doc_(doc), id_(id) {}
  Kind kind() const;
  Node Child(size_t i) const;

  const Document* doc_;
  uint32_t id_;
};

// The first document of a text. Build it with ReadDocument.
class Document {
 public:
  Node root() const { return Node(this, root_); }
  // Where the first alias (*name) is; null when the document has none (for readers of
  // formats whose own parser refuses aliases, such as Slurm's topology.yaml).
  Position FirstAlias() const { return first_alias_; }

 private:
  friend class Node;
  friend class DocumentBuilder;

  // 16 bytes a node: a document holds up to limits::kMaxYamlNodes of them.
  struct Entry {
    int32_t line;    // 0-based; -1 for the missing root of an empty file
    int32_t column;  // 0-based; -1 likewise
    uint32_t begin;  // a scalar's first byte in scalars_; a list or mapping's first child in
                     // children_
    uint32_t size_and_kind;  // length of the scalar or number of children (a mapping has two a
                             // pair), and the Node::Kind in the top two bits
  };
  static constexpr int kKindShift = 30;
  static constexpr uint32_t kSizeMask = (uint32_t{1} << kKindShift) - 1;

  std::vector<Entry> entries_;
  std::vector<uint32_t> children_;  // each list's items, each mapping's keys and values, in turn
  std::string scalars_;             // the text of every scalar, one after another
  uint32_t root_ = 0;
  Position first_alias_;
};

// What ReadDocument throws for a document past limits::kMaxYamlNodes nodes (scalars, nulls,
// lists, mappings and alias uses) or nested past limits::kMaxYamlDepth, at the node that
// crosses the limit.
struct TooBig {
  Position mark;
  std::string message;
};

// What ReadDocument throws for text that is not YAML: libyaml's problem, where it is.
struct BadYaml {
  Position mark;
  std::string message;
};

// Reads the first document of `text` in one pass, counting its nodes and nesting as the
// parser reports them and refusing past the limits before the rest is read. Throws TooBig,
// BadYaml and std::bad_alloc: LoadYaml (yaml_reader.h) turns each into a Status. A text with
// no document gives a null root.
Document ReadDocument(absl::string_view text);

// ---- Node, inline: the readers call these for every node.

inline Node::Kind Node::kind() const {
  return static_cast<Kind>(doc_->entries_[id_].size_and_kind >> Document::kKindShift);
}

inline absl::string_view Node::Scalar() const {
  if (!IsScalar()) return {};
  const Document::Entry& e = doc_->entries_[id_];
  return absl::string_view(doc_->scalars_).substr(e.begin, e.size_and_kind & Document::kSizeMask);
}

inline Position Node::Mark() const {
  const Document::Entry& e = doc_->entries_[id_];
  return Position{e.line, e.column};
}

inline size_t Node::size() const {
  if (IsSequence()) return doc_->entries_[id_].size_and_kind & Document::kSizeMask;
  if (IsMap()) return (doc_->entries_[id_].size_and_kind & Document::kSizeMask) / 2;
  return 0;
}

inline Node Node::Child(size_t i) const {
  return Node(doc_, doc_->children_[doc_->entries_[id_].begin + i]);
}

inline Node Node::Item(size_t i) const { return Child(i); }
inline Node Node::Key(size_t i) const { return Child(2 * i); }
inline Node Node::ValueAt(size_t i) const { return Child(2 * i + 1); }

}  // namespace nvlplace::yaml

#endif  // NVLPLACE_PLACEMENT_FORMATS_YAML_DOCUMENT_H_
