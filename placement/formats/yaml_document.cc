// Builds a yaml::Document from the events of yaml-cpp's parser, counting as it goes.
#include "placement/formats/yaml_document.h"

#include <cstddef>
#include <istream>
#include <streambuf>
#include <utility>

#include "absl/strings/str_cat.h"
#include "placement/model/limits.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"

namespace nvlplace::yaml {
namespace {

// An istream over text that is not copied.
class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(absl::string_view text) {
    char* p = const_cast<char*>(text.data());
    setg(p, p, p + text.size());
  }
};

}  // namespace

// Takes the parser's events for one document: each node becomes an Entry as it starts; a
// list's or mapping's children wait in `pending_` (those of the innermost open one last) and
// move to the document's children_ when it ends. Past the limits it throws TooBig at the
// node that crosses them.
class DocumentBuilder : public YAML::EventHandler {
 public:
  explicit DocumentBuilder(Document& doc) : doc_(doc) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Add(mark, anchor, Node::kNull, 0, 0);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // The node its anchor was last put on (the parser refuses an alias to an anchor not
    // defined before it: the null is never taken).
    if (anchor >= anchors_.size()) {
      Add(mark, YAML::NullAnchor, Node::kNull, 0, 0);
      return;
    }
    Count(mark);
    Placed(anchors_[anchor]);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    uint32_t begin = static_cast<uint32_t>(doc_.scalars_.size());
    doc_.scalars_ += value;
    Add(mark, anchor, Node::kScalar, begin, static_cast<uint32_t>(value.size()));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, Node::kSequence);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, Node::kMap);
  }
  void OnMapEnd() override { Close(); }

  static Document Read(absl::string_view text) {
    Document doc;
    // Offsets and lengths of scalars are 32-bit (kSizeMask): files are far smaller
    // (limits::kMaxConfigBytes).
    if (text.size() > Document::kSizeMask) {
      throw TooBig{YAML::Mark(),
                   absl::StrCat("the text is larger than ", Document::kSizeMask, " bytes")};
    }
    ViewBuf buf(text);
    std::istream in(&buf);
    YAML::Parser parser(in);
    DocumentBuilder builder(doc);
    if (!parser.HandleNextDocument(builder)) builder.NoDocument();
    return doc;
  }

  // The text holds no document (empty, or only comments): a null root without a position.
  void NoDocument() {
    doc_.entries_.push_back(
        Document::Entry{-1, -1, 0, static_cast<uint32_t>(Node::kNull) << Document::kKindShift});
    doc_.root_ = static_cast<uint32_t>(doc_.entries_.size() - 1);
  }

 private:
  struct OpenNode {
    uint32_t id;
    size_t first_pending;
  };

  void Count(const YAML::Mark& mark) {
    if (++nodes_ > limits::kMaxYamlNodes) {
      throw TooBig{mark, absl::StrCat("the document holds more than ", limits::kMaxYamlNodes,
                                      " YAML values, lists and mappings; is this the right "
                                      "file?")};
    }
  }

  // A new node, counted, its anchor noted; placed in its parent unless it opens.
  uint32_t New(const YAML::Mark& mark, YAML::anchor_t anchor, Node::Kind kind, uint32_t begin,
               uint32_t size) {
    Count(mark);
    uint32_t id = static_cast<uint32_t>(doc_.entries_.size());
    doc_.entries_.push_back(
        Document::Entry{mark.line, mark.column, begin,
                        size | (static_cast<uint32_t>(kind) << Document::kKindShift)});
    if (anchor != YAML::NullAnchor) {
      if (anchor >= anchors_.size()) anchors_.resize(anchor + 1, 0);
      anchors_[anchor] = id;
    }
    return id;
  }

  void Add(const YAML::Mark& mark, YAML::anchor_t anchor, Node::Kind kind, uint32_t begin,
           uint32_t size) {
    Placed(New(mark, anchor, kind, begin, size));
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, Node::Kind kind) {
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
  std::vector<uint32_t> anchors_;  // per anchor the parser numbered: the node it names
};

Document ReadDocument(absl::string_view text) { return DocumentBuilder::Read(text); }

}  // namespace nvlplace::yaml
