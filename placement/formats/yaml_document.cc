// Builds a yaml::Document from the events of libyaml's parser, counting as it goes.
#include "placement/formats/yaml_document.h"

#include <yaml.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "placement/model/limits.h"

namespace nvlplace::yaml {
namespace {

Position PositionOf(const yaml_mark_t& mark) {
  return Position{static_cast<int>(mark.line), static_cast<int>(mark.column)};
}

absl::string_view View(const yaml_char_t* s, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(s), size);
}
absl::string_view View(const yaml_char_t* s) {
  return s == nullptr ? absl::string_view() : absl::string_view(reinterpret_cast<const char*>(s));
}

// A null as yaml-cpp reads one: a plain scalar without a tag that reads nothing, ~ or null.
bool IsNull(const yaml_event_t& e) {
  if (e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE || e.data.scalar.tag != nullptr) return false;
  absl::string_view v = View(e.data.scalar.value, e.data.scalar.length);
  return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
}

// libyaml's parser and its current event, freed however the reading ends (the builder throws
// past the limits).
class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
    }
  }
  ~Parser() {
    Free();
    if (ok_) yaml_parser_delete(&parser_);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // The next event; throws BadYaml with libyaml's problem and where it is.
  const yaml_event_t& Next() {
    Free();
    if (!ok_) throw std::bad_alloc();
    if (yaml_parser_parse(&parser_, &event_) == 0) {
      if (parser_.error == YAML_MEMORY_ERROR) throw std::bad_alloc();
      std::string message(parser_.problem != nullptr ? parser_.problem : "");
      if (parser_.error == YAML_READER_ERROR) {
        // Bytes that are not UTF-8, or a control character: libyaml gives the offset only.
        if (parser_.problem_value >= 0) {
          absl::StrAppend(&message, " (byte 0x", absl::Hex(parser_.problem_value, absl::kZeroPad2),
                          ")");
        }
        absl::StrAppend(&message, "; the file must be UTF-8 text without control characters");
        throw BadYaml{PositionAt(parser_.problem_offset), std::move(message)};
      }
      if (parser_.context != nullptr) {
        absl::StrAppend(&message, " (", parser_.context, " at line ", parser_.context_mark.line + 1,
                        ")");
      }
      throw BadYaml{PositionOf(parser_.problem_mark), std::move(message)};
    }
    has_event_ = true;
    return event_;
  }

 private:
  void Free() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = false;
  }

  // The line and column of byte `offset` of the text.
  Position PositionAt(size_t offset) const {
    Position p{0, 0};
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++p.line;
        p.column = 0;
      } else {
        ++p.column;
      }
    }
    return p;
  }

  absl::string_view text_;
  yaml_parser_t parser_;
  yaml_event_t event_;
  bool ok_ = false;
  bool has_event_ = false;
};

}  // namespace

// Takes the parser's events for one document: each node becomes an Entry as it starts; a
// list's or mapping's children wait in `pending_` (those of the innermost open one last) and
// move to the document's children_ when it ends. Past the limits it throws TooBig at the
// node that crosses them.
class DocumentBuilder {
 public:
  explicit DocumentBuilder(Document& doc) : doc_(doc) {}

  static Document Read(absl::string_view text) {
    Document doc;
    // Offsets and lengths of scalars are 32-bit (kSizeMask): files are far smaller
    // (limits::kMaxConfigBytes).
    if (text.size() > Document::kSizeMask) {
      throw TooBig{Position{},
                   absl::StrCat("the text is larger than ", Document::kSizeMask, " bytes")};
    }
    Parser parser(text);
    DocumentBuilder builder(doc);
    bool in_document = false;
    while (true) {
      const yaml_event_t& e = parser.Next();
      const Position at = PositionOf(e.start_mark);
      switch (e.type) {
        case YAML_DOCUMENT_START_EVENT:
          in_document = true;
          break;
        case YAML_DOCUMENT_END_EVENT:  // the first document only
        case YAML_STREAM_END_EVENT:
          if (!in_document) builder.NoDocument();
          return doc;
        case YAML_ALIAS_EVENT:
          builder.Alias(at, View(e.data.alias.anchor));
          break;
        case YAML_SCALAR_EVENT:
          if (IsNull(e)) {
            builder.Add(at, View(e.data.scalar.anchor), Node::kNull, 0, 0);
          } else {
            builder.Scalar(at, View(e.data.scalar.anchor),
                           View(e.data.scalar.value, e.data.scalar.length));
          }
          break;
        case YAML_SEQUENCE_START_EVENT:
          builder.Open(at, View(e.data.sequence_start.anchor), Node::kSequence);
          break;
        case YAML_MAPPING_START_EVENT:
          builder.Open(at, View(e.data.mapping_start.anchor), Node::kMap);
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          builder.Close();
          break;
        default:  // the stream's start, and nothing else
          break;
      }
    }
  }

 private:
  struct OpenNode {
    uint32_t id;
    size_t first_pending;
  };

  // The text holds no document (empty, or only comments): a null root without a position.
  void NoDocument() {
    doc_.entries_.push_back(
        Document::Entry{-1, -1, 0, static_cast<uint32_t>(Node::kNull) << Document::kKindShift});
    doc_.root_ = static_cast<uint32_t>(doc_.entries_.size() - 1);
  }

  void Count(const Position& mark) {
    if (++nodes_ > limits::kMaxYamlNodes) {
      throw TooBig{mark, absl::StrCat("the document holds more than ", limits::kMaxYamlNodes,
                                      " YAML values, lists and mappings; is this the right "
                                      "file?")};
    }
  }

  void Scalar(const Position& mark, absl::string_view anchor, absl::string_view value) {
    uint32_t begin = static_cast<uint32_t>(doc_.scalars_.size());
    doc_.scalars_.append(value.data(), value.size());
    Add(mark, anchor, Node::kScalar, begin, static_cast<uint32_t>(value.size()));
  }

  // *name: the node its anchor was last put on, placed once more. An alias to an anchor not
  // defined before it is bad YAML (as yaml-cpp's parser says).
  void Alias(const Position& mark, absl::string_view anchor) {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      throw BadYaml{mark, "the referenced anchor is not defined"};
    }
    Count(mark);
    if (doc_.first_alias_.is_null()) doc_.first_alias_ = mark;
    Placed(it->second);
  }

  // A new node, counted, its anchor noted; placed in its parent unless it opens.
  uint32_t New(const Position& mark, absl::string_view anchor, Node::Kind kind, uint32_t begin,
               uint32_t size) {
    Count(mark);
    uint32_t id = static_cast<uint32_t>(doc_.entries_.size());
    doc_.entries_.push_back(
        Document::Entry{mark.line, mark.column, begin,
                        size | (static_cast<uint32_t>(kind) << Document::kKindShift)});
    if (!anchor.empty()) anchors_[std::string(anchor)] = id;
    return id;
  }

  void Add(const Position& mark, absl::string_view anchor, Node::Kind kind, uint32_t begin,
           uint32_t size) {
    Placed(New(mark, anchor, kind, begin, size));
  }

  void Open(const Position& mark, absl::string_view anchor, Node::Kind kind) {
    uint32_t id = New(mark, anchor, kind, 0, 0);
    if (++depth_ > limits::kMaxYamlDepth) {
      throw TooBig{mark, absl::StrCat("lists and mappings nest more than ", limits::kMaxYamlDepth,
                                      " levels deep here")};
    }
    open_.push_back(OpenNode{id, pending_.size()});
  }

  void Close() {
    --depth_;
    OpenNode done = open_.back();
    open_.pop_back();
    Document::Entry& e = doc_.entries_[done.id];
    e.begin = static_cast<uint32_t>(doc_.children_.size());
    e.size_and_kind |= static_cast<uint32_t>(pending_.size() - done.first_pending);
    auto first = pending_.begin() + static_cast<std::ptrdiff_t>(done.first_pending);
    doc_.children_.insert(doc_.children_.end(), first, pending_.end());
    pending_.resize(done.first_pending);
    Placed(done.id);
  }

  // A finished node: a child of the innermost open list or mapping, or the root.
  void Placed(uint32_t id) {
    if (open_.empty()) {
      doc_.root_ = id;
    } else {
      pending_.push_back(id);
    }
  }

  Document& doc_;
  size_t nodes_ = 0;
  int depth_ = 0;
  std::vector<OpenNode> open_;
  std::vector<uint32_t> pending_;
  absl::flat_hash_map<std::string, uint32_t> anchors_;  // per anchor: the node it names
};

Document ReadDocument(absl::string_view text) { return DocumentBuilder::Read(text); }

}  // namespace nvlplace::yaml
