// Tests for yaml::Document: the nodes yaml-cpp's YAML::Load builds (libyaml parses them, in one
// pass), with their positions; and the readers' number conversions, as yaml-cpp's.
#include "placement/formats/yaml_document.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/read_file.h"
#include "placement/formats/yaml_reader.h"
#include "tests/status_matchers.h"
#include "yaml-cpp/yaml.h"

namespace nvlplace::yaml {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

// Walks both trees side by side (at most `budget` nodes and 20 levels: aliases may make
// cycles) and reports the first difference of type, position, text or children.
void ExpectSameTree(const YAML::Node& want, Node got, const std::string& path, int& budget) {
  if (--budget < 0 || std::count(path.begin(), path.end(), '/') > 20) return;
  SCOPED_TRACE(path);
  ASSERT_EQ(want.IsNull(), got.IsNull());
  ASSERT_EQ(want.IsScalar(), got.IsScalar());
  ASSERT_EQ(want.IsSequence(), got.IsSequence());
  ASSERT_EQ(want.IsMap(), got.IsMap());
  // An empty value's place differs: libyaml's is where the value is missing (after "key:"
  // or "-"), yaml-cpp's the next token's. The readers name the key's path there anyway.
  if (!want.IsNull()) {
    EXPECT_EQ(want.Mark().line, got.Mark().line);
    EXPECT_EQ(want.Mark().column, got.Mark().column);
    EXPECT_EQ(want.Mark().is_null(), got.Mark().is_null());
  }
  if (want.IsScalar()) {
    EXPECT_EQ(want.Scalar(), std::string(got.Scalar()));
  }
  ASSERT_EQ(want.size(), got.size());
  size_t i = 0;
  for (auto it = want.begin(); it != want.end(); ++it, ++i) {
    if (want.IsSequence()) {
      ExpectSameTree(*it, got.Item(i), absl::StrCat(path, "/", i), budget);
    } else {
      ExpectSameTree(it->first, got.Key(i), absl::StrCat(path, "/key", i), budget);
      ExpectSameTree(it->second, got.ValueAt(i), absl::StrCat(path, "/value", i), budget);
    }
  }
}

void ExpectLikeYamlCpp(const std::string& text) {
  SCOPED_TRACE(text.substr(0, 200));
  absl::StatusOr<Document> doc = LoadYaml(text, "t.yaml");
  ASSERT_THAT(doc, IsOk());
  int budget = 100000;
  ExpectSameTree(YAML::Load(text), doc->root(), "#", budget);
}

TEST(DocumentTest, NodesAsYamlCppBuildsThem) {
  for (const char* text : {
           "",
           "# only a comment\n",
           "---\n",
           "~",
           "null",
           "a: 1\nb: [x, ~, null, '', \"\"]\nc:\n",
           "{a: 1, a: 2, b: {c: [1, [2, [3]]]}}",
           "- &x {k: v}\n- *x\n- *x\n",
           "&s [*s, *s]",
           "? [a, b]\n: c\n? ~\n: d\n",
           "key: |\n  block\n  text\nother: >\n  folded\n  text\n",
           "a: !!str 12\nb: !tag x\nc: !!null ''\n",
           "- 'it''s'\n- \"tab\\there\\u00e9\"\n-   spaced  \n",
           "first: doc\n---\nsecond: doc\n",
           "  indented:\n    - 1\n    -\n    - 3\n",
           "a: &v ~\nb: *v\n",
           "[a, b, {c: d}, [e]]",
       }) {
    ExpectLikeYamlCpp(text);
  }
}

// Every YAML file of the project: clusters, policies, plugin configurations, fixtures (the
// bad ones too, where they parse).
TEST(DocumentTest, EveryYamlFileAsYamlCppBuildsIt) {
  int files = 0;
  for (const char* dir : {"configs", "tests/fixtures"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (e.path().extension() != ".yaml") continue;
      absl::StatusOr<std::string> text = ReadFileToString(e.path().string());
      ASSERT_THAT(text, IsOk());
      YAML::Node want;
      try {
        want = YAML::Load(*text);
      } catch (const YAML::Exception&) {
        continue;  // bad YAML: the error fixtures check its message
      }
      SCOPED_TRACE(e.path().string());
      absl::StatusOr<Document> doc = LoadYaml(*text, e.path().string());
      if (!doc.ok()) {
        // Only what the limits refuse (YAML::Load builds it anyway), and bytes that are not
        // UTF-8, which libyaml refuses and yaml-cpp took (the bad fixtures).
        EXPECT_THAT(doc, StatusIs(absl::StatusCode::kInvalidArgument,
                                  ::testing::AnyOf(HasSubstr("more than"),
                                                   HasSubstr("bad YAML: invalid"))));
        continue;
      }
      int budget = 200000;
      ExpectSameTree(want, doc->root(), "#", budget);
      ++files;
    }
  }
  EXPECT_GE(files, 40) << "run from the source root";
}

TEST(DocumentTest, ErrorsNameTheirPlace) {
  EXPECT_THAT(LoadYaml("a: [1, 2\n", "t.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.yaml:2:1: bad YAML: did not find expected ',' or ']' "
                                 "(while parsing a flow sequence at line 1)")));
  EXPECT_THAT(LoadYaml("a: 1\nb: \xff\n", "t.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.yaml:2:4: bad YAML: invalid leading UTF-8 octet (byte 0xff); the file "
                       "must be UTF-8 text without control characters"));
  EXPECT_THAT(LoadYaml("a: *nowhere\n", "t.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.yaml:1:4: bad YAML: the referenced anchor is not defined"));
  std::string deep = std::string(65, '[') + std::string(65, ']');
  EXPECT_THAT(LoadYaml(deep, "t.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.yaml:1:65: lists and mappings nest more than 64 levels deep here"));
}

// For readers of formats whose own parser refuses aliases (Slurm's topology.yaml).
TEST(DocumentTest, FirstAliasIsWhereTheFirstAliasIs) {
  EXPECT_TRUE(ReadDocument("a: &x 1\nb: 2\n").FirstAlias().is_null());
  Position at = ReadDocument("a: &x 1\nb: [2, *x]\nc: *x\n").FirstAlias();
  EXPECT_EQ(at.line, 1);    // 0-based: line 2
  EXPECT_EQ(at.column, 7);  // 0-based: the '*'
}

// The readers' integers and numbers: as yaml-cpp's as<int>() and as<double>().
TEST(ReaderTest, IntegersAsYamlCppReadsThem) {
  std::vector<std::string> texts = {
      "0",           "7",           "-7",         "+7",         "007",        "010",
      "0x1f",        "-0",          "-010",       "1e3",        "1.0",        "12a",
      " 12",         "12 ",         "",           "-",          "--1",        "99999",
      "-1234",       "999999999",   "1000000000", "2147483647", "2147483648", "-2147483648",
      "-2147483649", "12345678901", ".inf",       "0b101",      "0o17",       "٣"};
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    int plain = 0;
    bool ok_plain = internal::PlainDecimal(text, &plain);
    bool ok_yaml = true;
    int yaml = 0;
    try {
      yaml = YAML::Node(text).as<int>();
    } catch (const YAML::Exception&) {
      ok_yaml = false;
    }
    if (ok_plain) {
      EXPECT_TRUE(ok_yaml);
      EXPECT_EQ(plain, yaml);
    }
    std::string doc = absl::StrCat("v: '", text, "'\n");
    absl::StatusOr<Document> d = LoadYaml(doc, "t.yaml");
    ASSERT_THAT(d, IsOk());
    const std::string file = "t.yaml";
    Where top{&file, d->root(), "#"};
    absl::StatusOr<MapReader> m = MapReader::Make(top, {"v"});
    ASSERT_THAT(m, IsOk());
    absl::StatusOr<int> read = ReadInt(*m->Find("v"));
    EXPECT_EQ(read.ok(), ok_yaml);
    if (read.ok() && ok_yaml) {
      EXPECT_EQ(*read, yaml);
    }
  }
}

}  // namespace
}  // namespace nvlplace::yaml
