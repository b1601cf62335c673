// Direct tests of the lexer of Slurm's key=value files: lines, words, fields, field readers.
#include "placement/formats/slurm_lexer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/slurm_testing.h"
#include "placement/model/limits.h"
#include "tests/status_matchers.h"

namespace nvlplace::slurm {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

// A table row's name as its test's name.
template <typename Case>
std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

// ---------------------------------------------------------------------------------------
// Lines and words.

// SplitConf then Words, as the importer runs them on "t.conf": each logical line as
// "<line>: word|word", then each annotation as "note <line>: word|word"; or the first error.
absl::StatusOr<std::vector<std::string>> Lex(absl::string_view text) {
  SplitText split = SplitConf(text);
  std::vector<std::string> out;
  for (const auto& [lines, prefix] :
       {std::make_pair(&split.lines, ""), std::make_pair(&split.annotations, "note ")}) {
    for (const TextLine& line : *lines) {
      absl::StatusOr<std::vector<std::string>> words = Words(line.text, "t.conf", line.line);
      if (!words.ok()) return words.status();
      out.push_back(absl::StrCat(prefix, line.line, ": ", absl::StrJoin(*words, "|")));
    }
  }
  return out;
}

struct LexCase {
  std::string name;
  std::string text;
  std::vector<std::string> lexed;  // as Lex renders it
};

class LexTest : public ::testing::TestWithParam<LexCase> {};

TEST_P(LexTest, Reads) {
  absl::StatusOr<std::vector<std::string>> lexed = Lex(GetParam().text);
  ASSERT_THAT(lexed, IsOk());
  EXPECT_EQ(*lexed, GetParam().lexed);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, LexTest,
    ::testing::Values(
        LexCase{"Plain", "a=1 b=2\nc=3", {"1: a=1|b=2", "2: c=3"}},
        LexCase{"TabsAndCrLf", "a=1\t b=2\r\nc=3\r\n", {"1: a=1|b=2", "2: c=3"}},
        // A continued line keeps the number of its first line; the next line counts on.
        LexCase{"Continued", "a=1 \\\n  b=2\nc=3\n", {"1: a=1|b=2", "3: c=3"}},
        // As Slurm's parser: the '\' goes and the next line follows without a space.
        LexCase{"ContinuedTwice", "a=1 \\\nb=2\\\n c=3\nd=4", {"1: a=1|b=2|c=3", "4: d=4"}},
        LexCase{"ContinuedInsideAValue",
                "SwitchName=s1 Nodes=n[1-2],\\\nn[3-4]\n",
                {"1: SwitchName=s1|Nodes=n[1-2],n[3-4]"}},
        LexCase{"ContinuedInsideAWord", "a=1\\\nb=2\n", {"1: a=1b=2"}},
        // An even number of backslashes is no continuation (Slurm's _strip_continuation).
        LexCase{"EvenBackslashes", "a=1 \\\\\nb=2\n", {"1: a=1|\\\\", "2: b=2"}},
        LexCase{"OddBackslashes", "a=x\\\\\\\nb\n", {"1: a=x\\\\b"}},
        LexCase{"ContinuedBeforeComment", "a=1 \\ # why\nb=2\n", {"1: a=1|b=2"}},
        LexCase{"BackslashOnLastLine", "a=1 \\", {"1: a=1"}},
        LexCase{"CommentsAndBlankLines",
                "# header\n\n   \na=1 # trailing \"not a quote\n  # indented\nb=2",
                {"4: a=1", "6: b=2"}},
        LexCase{"EscapedHash", "a=rack\\#1 # \\# in a comment\n", {"1: a=rack#1"}},
        LexCase{"OnlyComments", "# a\n#b\n", {}}, LexCase{"Empty", "", {}}),
    CaseName<LexCase>);

INSTANTIATE_TEST_SUITE_P(
    Annotations, LexTest,
    ::testing::Values(LexCase{"KeptApart",
                              "# nvlplace: cluster name=x\nSwitchName=s Nodes=n\n",
                              {"2: SwitchName=s|Nodes=n", "note 1: cluster|name=x"}},
                      LexCase{"SpacesOptional",
                              "#nvlplace:switch name=s\n   #   nvlplace:   nodes names=n   \n",
                              {"note 1: switch|name=s", "note 2: nodes|names=n"}},
                      LexCase{"OtherCommentsIgnored", "# not nvlplace: x\n# nvlplace x\n", {}},
                      LexCase{"NotAfterCode", "a=1 # nvlplace: cluster\n", {"1: a=1"}}),
    CaseName<LexCase>);

INSTANTIATE_TEST_SUITE_P(
    Quotes, LexTest,
    ::testing::Values(LexCase{"HoldSpaces",
                              "# nvlplace: cluster name=\"odd cluster\"\n",
                              {"note 1: cluster|name=odd cluster"}},
                      LexCase{"InsideAWord", "a\"b c\"d e", {"1: ab cd|e"}},
                      LexCase{"EmptyQuotes", "a=\"\" \"\" b", {"1: a=||b"}},  // "a=", "", "b"
                      LexCase{"AcrossAContinuation", "a=\"x \\\ny\"\n", {"1: a=x y"}}),
    CaseName<LexCase>);

// Slurm's key=value pattern: "[[:space:]]*key[[:space:]]*=[[:space:]]*value".
INSTANTIATE_TEST_SUITE_P(
    SpacesAroundEquals, LexTest,
    ::testing::Values(
        LexCase{"BothSides", "SwitchName = s1 Nodes = n[1-2]\n", {"1: SwitchName=s1|Nodes=n[1-2]"}},
        LexCase{"AfterOnly", "SwitchName=s1 Nodes= n[1-2]\n", {"1: SwitchName=s1|Nodes=n[1-2]"}},
        LexCase{
            "BeforeOnly", "SwitchName=s1 LinkSpeed\t=400\n", {"1: SwitchName=s1|LinkSpeed=400"}},
        LexCase{"QuotedValue", "a = \"x y\" b=1\n", {"1: a=x y|b=1"}},
        LexCase{"EmptyValueAtTheEnd", "a=1 b= \n", {"1: a=1|b="}},
        // Not a key: nothing is joined.
        LexCase{"WordWithoutEquals", "a b=1\n", {"1: a|b=1"}},
        LexCase{"QuotedKey", "\"a\" =1\n", {"1: a|=1"}},
        LexCase{"KeyOfOtherCharacters", "a/b = 1\n", {"1: a/b|=|1"}},
        LexCase{"InAnnotation", "# nvlplace: cluster name = lab\n", {"note 1: cluster|name=lab"}}),
    CaseName<LexCase>);

struct BadLexCase {
  std::string name;
  std::string text;
  std::string message;  // the whole message
};

class BadLexTest : public ::testing::TestWithParam<BadLexCase> {};

TEST_P(BadLexTest, IsRefusedAtItsLine) {
  EXPECT_THAT(Lex(GetParam().text), StatusIs(kInvalid, GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Quotes, BadLexTest,
    ::testing::Values(
        BadLexCase{"OnSecondLine", "a=1\nb=\"x y\nc=2\n",
                   "t.conf:2: a quote is opened but never closed: \"x y; close it on the same "
                   "line"},
        // The line a continued line starts on.
        BadLexCase{"OnContinuedLine", "a=1 \\\nb=\"x\nc=2\n",
                   "t.conf:1: a quote is opened but never closed: \"x; close it on the same "
                   "line"},
        BadLexCase{"ThirdQuote", "a=\"x\" b=\"y\n",
                   "t.conf:1: a quote is opened but never closed: \"y; close it on the same "
                   "line"},
        BadLexCase{"InAnnotation", "a=1\n\n# nvlplace: cluster name=\"lab\n",
                   "t.conf:3: a quote is opened but never closed: \"lab; close it on the same "
                   "line"},
        // 24 bytes of the 31 from the quote on are shown.
        BadLexCase{"LongQuote", "a=\"" + std::string(30, 'x'),
                   "t.conf:1: a quote is opened but never closed: \"" + std::string(23, 'x') +
                       "... (31 bytes); close it on the same line"},
        // Slurm would read "Switches=s1" as the value of Nodes.
        BadLexCase{"KeyAfterEqualsAndSpace", "SwitchName=s1 Nodes= Switches=s1\n",
                   "t.conf:1: Nodes: nothing follows '=' but a space and 'Switches=s1', which "
                   "Slurm reads as this key's value; write the value right after '=', or remove "
                   "the key"},
        BadLexCase{"ControlByteQuoted", "a=\"x\x01y\n",
                   "t.conf:1: a quote is opened but never closed: \"x\\x01y; close it on the "
                   "same line"}),
    CaseName<BadLexCase>);

// ---------------------------------------------------------------------------------------
// Fields.

const std::vector<absl::string_view> kKeys = {"SwitchName", "Switches", "Nodes", "LinkSpeed"};

struct FieldsCase {
  std::string name;
  std::vector<std::string> words;
  std::string fields;  // "Key=value|Key=value"; or, when `error` is set, nothing
  std::string error;   // the whole message
};

class FieldsTest : public ::testing::TestWithParam<FieldsCase> {};

TEST_P(FieldsTest, Parses) {
  const FieldsCase& c = GetParam();
  absl::StatusOr<Fields> f = ParseFields(c.words, "t.conf", 3, kKeys, "topology.conf");
  if (!c.error.empty()) {
    EXPECT_THAT(f, StatusIs(kInvalid, c.error));
    return;
  }
  ASSERT_THAT(f, IsOk());
  EXPECT_EQ(f->file, "t.conf");
  EXPECT_EQ(f->line, 3);
  std::vector<std::string> pairs;
  for (const auto& [k, v] : f->values) pairs.push_back(absl::StrCat(k, "=", v));
  EXPECT_EQ(absl::StrJoin(pairs, "|"), c.fields);
}

const char kKeyList[] =
    "unknown key; topology.conf keys are SwitchName, Switches, Nodes, LinkSpeed";

INSTANTIATE_TEST_SUITE_P(
    Keys, FieldsTest,
    ::testing::Values(
        FieldsCase{
            "CanonicalSpelling", {"switchname=s0", "NODES=n[0-1]"}, "SwitchName=s0|Nodes=n[0-1]"},
        FieldsCase{"InTheOrderWritten", {"Nodes=n0", "SwitchName=s0"}, "Nodes=n0|SwitchName=s0"},
        FieldsCase{"ValueKeepsEquals", {"Nodes=a=b"}, "Nodes=a=b"},
        FieldsCase{"EmptyValue", {"Nodes="}, "Nodes="}, FieldsCase{"NoWords", {}, ""},
        FieldsCase{
            "NotKeyValue", {"SwitchName=s0", "Nodes"}, "", "t.conf:3: Nodes: expected key=value"},
        FieldsCase{"UnknownKey",
                   {"SwitchName=s0", "Speed=1"},
                   "",
                   std::string("t.conf:3: Speed: ") + kKeyList},
        FieldsCase{"EmptyKey", {"=x"}, "", std::string("t.conf:3: ") + kKeyList},
        FieldsCase{"GivenTwice",
                   {"nodes=a", "SwitchName=s", "Nodes=b"},
                   "",
                   "t.conf:3: Nodes: given twice"},
        FieldsCase{"ControlByteInKey",
                   {"No\x01"
                    "des=n0"},
                   "",
                   std::string("t.conf:3: No\\x01des: ") + kKeyList},
        // A key is shown escaped and cut at 80 bytes.
        FieldsCase{"LongWord",
                   {std::string(100, 'k')},
                   "",
                   "t.conf:3: " + std::string(80, 'k') + "... (100 bytes): expected key=value"}),
    CaseName<FieldsCase>);

// A line with one field `key`=`value` (line 3 of t.conf).
Fields Line(absl::string_view key, absl::string_view value) {
  return Fields{"t.conf", 3, {{std::string(key), std::string(value)}}};
}

TEST(FieldsTest, FindAndRequire) {
  Fields f = Line("name", "x");
  ASSERT_NE(f.Find("name"), nullptr);
  EXPECT_EQ(*f.Find("name"), "x");
  EXPECT_EQ(f.Find("Name"), nullptr);  // canonical spelling only
  EXPECT_THAT(Require(f, "name"), IsOk());
  EXPECT_THAT(Require(f, "gpus"), StatusIs(kInvalid, "t.conf:3: gpus: required"));
}

TEST(LineErrorTest, NamesFileLineAndKey) {
  EXPECT_THAT(LineError("t.conf", 7, "Nodes", "bad"), StatusIs(kInvalid, "t.conf:7: Nodes: bad"));
  EXPECT_THAT(LineError("t.conf", 7, "", "bad"), StatusIs(kInvalid, "t.conf:7: bad"));
  EXPECT_THAT(LineError("t.conf", 7, "a\nb", "bad"), StatusIs(kInvalid, "t.conf:7: a\\x0ab: bad"));
  EXPECT_EQ(At("t.conf", 7, "Nodes").line, 7);
}

// ---------------------------------------------------------------------------------------
// Field readers: numbers.

struct NumberCase {
  std::string value;
  bool min_excluded;
  double want;        // when `error` is empty
  std::string error;  // the whole message
};

class BoundedTest : public ::testing::TestWithParam<NumberCase> {};

// Numbers in [0, 10] (0 refused when min_excluded).
TEST_P(BoundedTest, ReadsInRange) {
  const NumberCase& c = GetParam();
  double out = -7;
  absl::Status s = GetBounded(Line("x", c.value), "x", 0, c.min_excluded, 10, "in range", &out);
  if (!c.error.empty()) {
    EXPECT_THAT(s, StatusIs(kInvalid, c.error));
    EXPECT_EQ(out, -7);  // left alone
    return;
  }
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(out, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Numbers, BoundedTest,
    ::testing::Values(NumberCase{"5", true, 5}, NumberCase{"10", true, 10},  // max included
                      NumberCase{"1e1", true, 10}, NumberCase{"0.125", true, 0.125},
                      NumberCase{"0", false, 0},  // min included unless excluded
                      NumberCase{"0", true, 0, "t.conf:3: x: '0' is not in range"},
                      NumberCase{"-1", false, 0, "t.conf:3: x: '-1' is not in range"},
                      NumberCase{"10.5", true, 0, "t.conf:3: x: '10.5' is not in range"},
                      NumberCase{"fast", true, 0, "t.conf:3: x: 'fast' is not a number"},
                      NumberCase{"", true, 0, "t.conf:3: x: '' is not a number"},
                      // Finite numbers only: SimpleAtod reads these as inf or nan.
                      NumberCase{"inf", true, 0, "t.conf:3: x: 'inf' is not a number"},
                      NumberCase{"nan", true, 0, "t.conf:3: x: 'nan' is not a number"},
                      NumberCase{"1e400", true, 0, "t.conf:3: x: '1e400' is not a number"}));

TEST(GetNumberTest, AbsentKeyLeavesOutAlone) {
  double out = -7;
  EXPECT_THAT(GetNumber(Line("x", "1"), "y", &out), IsOk());
  EXPECT_THAT(GetBounded(Line("x", "1"), "y", 0, true, 10, "in range", &out), IsOk());
  EXPECT_EQ(out, -7);
  EXPECT_THAT(GetNumber(Line("x", "-2.5"), "x", &out), IsOk());
  EXPECT_EQ(out, -2.5);  // GetNumber alone has no range
}

struct IntCase {
  std::string value;
  int want;           // when `error` is empty
  std::string error;  // the whole message
};

class GetIntTest : public ::testing::TestWithParam<IntCase> {};

// Whole numbers in [1, 8].
TEST_P(GetIntTest, ReadsInRange) {
  const IntCase& c = GetParam();
  int out = -7;
  absl::Status s = GetInt(Line("x", c.value), "x", 1, 8, &out);
  if (!c.error.empty()) {
    EXPECT_THAT(s, StatusIs(kInvalid, c.error));
    EXPECT_EQ(out, -7);
    return;
  }
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(out, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Ints, GetIntTest,
    ::testing::Values(IntCase{"1", 1}, IntCase{"8", 8},
                      IntCase{"0", 0, "t.conf:3: x: '0' is not a whole number from 1 to 8"},
                      IntCase{"9", 0, "t.conf:3: x: '9' is not a whole number from 1 to 8"},
                      IntCase{"-3", 0, "t.conf:3: x: '-3' is not a whole number from 1 to 8"},
                      IntCase{"1.5", 0, "t.conf:3: x: '1.5' is not an integer"},
                      IntCase{"x", 0, "t.conf:3: x: 'x' is not an integer"},
                      IntCase{"", 0, "t.conf:3: x: '' is not an integer"},
                      // 2^31: past int, refused before the range is looked at.
                      IntCase{"2147483648", 0, "t.conf:3: x: '2147483648' is not an integer"}));

// ---------------------------------------------------------------------------------------
// Field readers: names and hostlists.

struct NameCase {
  std::string name;
  std::string value;
  std::string error;  // the whole message; empty: the value is the name
};

class GetNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(GetNameTest, ChecksTheName) {
  const NameCase& c = GetParam();
  absl::StatusOr<std::string> name = GetName(Line("x", c.value), "x", "switch name");
  if (!c.error.empty()) {
    EXPECT_THAT(name, StatusIs(kInvalid, c.error));
    return;
  }
  ASSERT_THAT(name, IsOk());
  EXPECT_EQ(*name, c.value);
}

INSTANTIATE_TEST_SUITE_P(
    Names, GetNameTest,
    ::testing::Values(
        NameCase{"Plain", "leaf-0"}, NameCase{"Utf8", "sw-\xc3\xbc"},
        NameCase{"EmptyIsForCallers", ""},
        NameCase{"AtTheLimit", std::string(limits::kMaxNameBytes, 'a')},  // 64 bytes
        NameCase{"TooLong", std::string(limits::kMaxNameBytes + 1, 'a'),
                 "t.conf:3: x: switch name '" + std::string(64, 'a') +
                     "... (65 bytes)' is longer than 64 bytes"},
        NameCase{"BadUtf8", "s\xff",
                 "t.conf:3: x: switch name 's\\xff': byte \\xff is not valid UTF-8 (byte 2); "
                 "names are printable UTF-8"},
        NameCase{"Backslash", "rack2\\",
                 "t.conf:3: x: switch name 'rack2\\' has a backslash, which Slurm's files "
                 "read as an escape or a line continuation; rename it"},
        NameCase{"Tab", "a\tb",
                 "t.conf:3: x: switch name 'a\\x09b': control character \\x09 is not allowed "
                 "(byte 2); names are printable UTF-8"}),
    CaseName<NameCase>);

TEST(GetNameTest, AbsentKeyIsEmpty) {
  absl::StatusOr<std::string> name = GetName(Line("x", "s"), "y", "switch name");
  ASSERT_THAT(name, IsOk());
  EXPECT_EQ(*name, "");
}

TEST(GetHostlistTest, AppendsAndCharges) {
  NameBudget budget;
  std::vector<std::string> out = {"first"};
  ASSERT_THAT(GetHostlist(Line("x", "n[1-3],m"), "x", &budget, &out), IsOk());
  EXPECT_THAT(out, ElementsAre("first", "n1", "n2", "n3", "m"));
  EXPECT_EQ(budget.names, 4u);
  ASSERT_THAT(GetHostlist(Line("x", "n1"), "absent", &budget, &out), IsOk());
  EXPECT_EQ(out.size(), 5u);
  EXPECT_EQ(budget.names, 4u);
}

TEST(GetHostlistTest, BadHostlistNamesKeyAndCharacter) {
  NameBudget budget;
  std::vector<std::string> out;
  EXPECT_THAT(GetHostlist(Line("Nodes", "n[0-3"), "Nodes", &budget, &out),
              StatusIs(kInvalid,
                       "t.conf:3: Nodes: bad hostlist \"n[0-3\" at character 2: '[' without a "
                       "matching ']'"));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(budget.names, 0u);
}

// A backslash anywhere in a list: Slurm's parsers strip it as an escape (or continue the line
// at its end), so the nodes would not read back from the files nvlplace writes.
TEST(GetHostlistTest, BackslashIsRefusedBeforeAnythingIsCharged) {
  NameBudget budget;
  std::vector<std::string> out;
  EXPECT_THAT(GetHostlist(Line("Nodes", "n1,n\\2"), "Nodes", &budget, &out),
              StatusIs(kInvalid,
                       "t.conf:3: Nodes: 'n1,n\\2' has a backslash, which Slurm's files read as "
                       "an escape or a line continuation; rename it"));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(budget.names, 0u);
}

TEST(CountNamesTest, CountsWithoutExpanding) {
  NameBudget budget;
  // 2^20 names: counted, never built.
  absl::StatusOr<size_t> count = CountNames(Line("x", "n[0000000-1048575]"), "x", &budget);
  ASSERT_THAT(count, IsOk());
  EXPECT_EQ(*count, size_t{1} << 20);
  EXPECT_EQ(budget.names, size_t{1} << 20);
  count = CountNames(Line("x", "n"), "absent", &budget);
  ASSERT_THAT(count, IsOk());
  EXPECT_EQ(*count, 0u);
  // One more than limits::kMaxHosts in a single hostlist.
  EXPECT_THAT(CountNames(Line("x", "n[0000000-1048576]"), "x", &budget),
              StatusIs(kInvalid, AllOf(StartsWith("t.conf:3: x: bad hostlist"),
                                       HasSubstr("more than 1048576 hosts"))));
  EXPECT_EQ(budget.names, size_t{1} << 20);
}

TEST(CountNamesTest, TheFileBudgetIsShared) {
  NameBudget budget{limits::kMaxNamesPerFile - 3};
  std::vector<std::string> out;
  // 3 names fit exactly; a 4th does not (4,194,304 names per file).
  ASSERT_THAT(GetHostlist(Line("x", "n[1-3]"), "x", &budget, &out), IsOk());
  EXPECT_EQ(budget.names, limits::kMaxNamesPerFile);
  EXPECT_THAT(GetHostlist(Line("x", "m"), "x", &budget, &out),
              StatusIs(kInvalid,
                       "t.conf:3: x: the hostlists of this file expand to more than 4194304 "
                       "names (this one to 1)"));
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(budget.names, limits::kMaxNamesPerFile);
}

// ---------------------------------------------------------------------------------------
// Field readers: islands.

std::string IslandsText(const std::vector<std::vector<int>>& islands) {
  return absl::StrJoin(islands, "/", [](std::string* out, const std::vector<int>& island) {
    absl::StrAppend(out, absl::StrJoin(island, ","));
  });
}

// 0,1,...,n-1 as one island.
std::string Indexes(int n) {
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  return absl::StrJoin(all, ",");
}

struct IslandsCase {
  std::string name;
  std::string value;
  std::string error;  // the whole message; empty: read back as written
};

class GetIslandsTest : public ::testing::TestWithParam<IslandsCase> {};

TEST_P(GetIslandsTest, Reads) {
  const IslandsCase& c = GetParam();
  std::vector<std::vector<int>> islands;
  absl::Status s = GetIslands(Line("islands", c.value), "islands", &islands);
  if (!c.error.empty()) {
    EXPECT_THAT(s, StatusIs(kInvalid, c.error));
    return;
  }
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(IslandsText(islands), c.value);
}

const char kWriteIslands[] = "' is not a GPU index; write islands as 0,1,2,3/4,5,6,7";

INSTANTIATE_TEST_SUITE_P(
    Islands, GetIslandsTest,
    ::testing::Values(
        IslandsCase{"Two", "0,1,2,3/4,5,6,7"}, IslandsCase{"One", "0"},
        IslandsCase{"AsWritten", "3,2/1,0"},  // sorting is the importer's
        IslandsCase{"AtTheLimit", Indexes(limits::kMaxGpusPerNode)},
        IslandsCase{"PastTheLimit", Indexes(limits::kMaxGpusPerNode + 1),
                    "t.conf:3: islands: more than 1024 GPU indexes; list every GPU of a node "
                    "once"},
        IslandsCase{"NotAnIndex", "0,x", std::string("t.conf:3: islands: 'x") + kWriteIslands},
        IslandsCase{"EmptyEntry", "0,,1", std::string("t.conf:3: islands: '") + kWriteIslands},
        IslandsCase{"EmptyIsland", "0/", std::string("t.conf:3: islands: '") + kWriteIslands}),
    CaseName<IslandsCase>);

// ---------------------------------------------------------------------------------------
// Include (parse_config.c _parse_include_directive): the lines of the file named, in place.

using ::nvlplace::testing::MemoryFiles;

// Every line and annotation of `split` in reading order, as "<file>:<line>: <text>" ("note"
// before an annotation's text).
std::vector<std::string> Render(const SplitText& split) {
  std::vector<std::pair<int64_t, std::string>> all;
  for (const TextLine& l : split.lines) {
    all.emplace_back(l.seq, absl::StrCat(split.files[l.file], ":", l.line, ": ",
                                         absl::StripAsciiWhitespace(l.text)));
  }
  for (const TextLine& l : split.annotations) {
    all.emplace_back(l.seq, absl::StrCat(split.files[l.file], ":", l.line, ": note ", l.text));
  }
  std::sort(all.begin(), all.end());
  std::vector<std::string> out;
  for (auto& [seq, text] : all) out.push_back(std::move(text));
  return out;
}

TEST(IncludeTest, IncludedLinesComeInPlaceWithTheirFileAndLine) {
  MemoryFiles m;
  m.files["racks.conf"] =
      "# nvlplace: cluster name=c\nSwitchName=s1 Nodes=n[1-2]\nInclude e.conf\n";
  m.files["e.conf"] = "";
  m.files["more/leaves.conf"] = "\n\nSwitchName=s2 \\\nNodes=n[3-4]\n";
  absl::StatusOr<SplitText> split = ReadConfLines(
      "SwitchName=top Switches=s[1-2]\n"
      "include racks.conf\n"  // any case
      "# nvlplace: switch name=s9 tier=leaf\n"
      "INCLUDE\tmore/leaves.conf   # a comment\n"
      "SwitchName=last Nodes=n9\n",
      "topology.conf", m.Includes());
  ASSERT_THAT(split, IsOk());
  EXPECT_THAT(Render(*split), ElementsAre("topology.conf:1: SwitchName=top Switches=s[1-2]",
                                          "racks.conf:1: note cluster name=c",
                                          "racks.conf:2: SwitchName=s1 Nodes=n[1-2]",
                                          "topology.conf:3: note switch name=s9 tier=leaf",
                                          "more/leaves.conf:3: SwitchName=s2 Nodes=n[3-4]",
                                          "topology.conf:5: SwitchName=last Nodes=n9"));
  EXPECT_THAT(split->files,
              ElementsAre("topology.conf", "racks.conf", "e.conf", "more/leaves.conf"));
  EXPECT_THAT(m.asked, ElementsAre("racks.conf", "e.conf", "more/leaves.conf"));
}

// Slurm reads every relative name from slurm.conf's directory (get_extra_conf_path), not from
// the directory of the file that holds the Include line; by default, the first file's.
TEST(IncludeTest, RelativeNamesAreReadFromOneDirectory) {
  MemoryFiles m;
  m.files["/srv/copy/sub/a.conf"] = "Include b.conf\n";
  m.files["/srv/copy/b.conf"] = "Include /abs/c.conf\n";
  m.files["/abs/c.conf"] = "x=1\n";
  ASSERT_THAT(ReadConfLines("Include sub/a.conf\n", "/srv/copy/topology.conf", m.Includes()),
              IsOk());
  EXPECT_THAT(m.asked, ElementsAre("/srv/copy/sub/a.conf", "/srv/copy/b.conf", "/abs/c.conf"));

  MemoryFiles etc;
  etc.files["/etc/slurm/sub/a.conf"] = "Include b.conf\n";
  etc.files["/etc/slurm/b.conf"] = "x=1\n";
  ASSERT_THAT(ReadConfLines("Include sub/a.conf\n", "topology.conf", etc.Includes("/etc/slurm/")),
              IsOk());
  EXPECT_THAT(etc.asked, ElementsAre("/etc/slurm/sub/a.conf", "/etc/slurm/b.conf"));
}

// Lines that only look like Include are other lines, read as key=value.
TEST(IncludeTest, OtherKeysStartingWithIncludeAreLines) {
  absl::StatusOr<SplitText> split = ReadConfLines("IncludeX=1\nIncludes=2\n", "t.conf", {});
  ASSERT_THAT(split, IsOk());
  EXPECT_THAT(Render(*split), ElementsAre("t.conf:1: IncludeX=1", "t.conf:2: Includes=2"));
}

struct IncludeErrorCase {
  std::string name;
  std::string text;                          // of t.conf
  std::map<std::string, std::string> files;  // the others
  std::string error;                         // a prefix of the message
};

class IncludeErrorTest : public ::testing::TestWithParam<IncludeErrorCase> {};

TEST_P(IncludeErrorTest, IsRefusedAtTheIncludeLine) {
  const IncludeErrorCase& c = GetParam();
  MemoryFiles m;
  m.files = c.files;
  EXPECT_THAT(ReadConfLines(c.text, "t.conf", m.Includes()),
              StatusIs(kInvalid, StartsWith(c.error)));
}

// t.conf includes f1.conf, which includes f2.conf, ... f`n`.conf.
std::map<std::string, std::string> Chain(int n) {
  std::map<std::string, std::string> files;
  for (int i = 1; i <= n; ++i) {
    files[absl::StrCat("f", i, ".conf")] = i < n ? absl::StrCat("Include f", i + 1, ".conf\n") : "";
  }
  return files;
}

std::string Repeated(const std::string& line, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += line;
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Include, IncludeErrorTest,
    ::testing::Values(
        IncludeErrorCase{"Missing",
                         "a=1\nInclude gone.conf\n",
                         {},
                         "t.conf:2: Include: gone.conf: cannot open the file (No such file or "
                         "directory); Slurm reads a relative Include path from the directory of "
                         "slurm.conf (whatever file holds the Include), here '.': fix the path, "
                         "or give that directory (--slurm-conf-dir)"},
        // The error is at the Include line, in the file that holds it.
        IncludeErrorCase{"MissingFromAnIncludedFile",
                         "Include a.conf\n",
                         {{"a.conf", "b=1\n\nInclude /no/such.conf\n"}},
                         "a.conf:3: Include: /no/such.conf: cannot open the file (No such file "
                         "or directory)"},
        IncludeErrorCase{"Cycle",
                         "Include a.conf\n",
                         {{"a.conf", "Include b.conf\n"}, {"b.conf", "Include a.conf\n"}},
                         "b.conf:1: Include: 'a.conf' is being read already (a.conf includes "
                         "b.conf includes a.conf): Slurm would include it again and again until "
                         "it runs out of open files; remove this Include"},
        IncludeErrorCase{"ItselfByAnotherSpelling",
                         "Include ./t.conf\n",
                         {{"t.conf", "x=1\n"}},
                         "t.conf:1: Include: './t.conf' is being read already (t.conf includes "
                         "./t.conf)"},
        // Sixteen files nested are read (t.conf then f1 to f16); a seventeenth is refused.
        IncludeErrorCase{"TooDeep", "Include f1.conf\n", Chain(17),
                         "f16.conf:1: Include: 'f17.conf' would be the 17th file nested by "
                         "Include, past nvlplace's limit of 16 (t.conf includes f1.conf includes "
                         "f2.conf"},
        IncludeErrorCase{"TooMany",
                         Repeated("Include e.conf\n", 1025),
                         {{"e.conf", ""}},
                         "t.conf:1025: Include: more than 1024 files included in all, past "
                         "nvlplace's limit: is an Include repeated?"},
        IncludeErrorCase{"Indented",
                         "  Include a.conf\n",
                         {{"a.conf", ""}},
                         "t.conf:1: Include: Slurm reads Include only at the very start of a "
                         "line (after spaces it is a key=value line, and an error): remove the "
                         "spaces before it"},
        IncludeErrorCase{"WithAnEqualsSign",
                         "Include=a.conf\n",
                         {{"a.conf", ""}},
                         "t.conf:1: Include: Include is followed by a space and a file name, not "
                         "'=': write Include FILE"},
        IncludeErrorCase{"NoName",
                         "x=1\nInclude   # nothing\n",
                         {},
                         "t.conf:2: Include: names no file: write Include FILE"},
        IncludeErrorCase{"TwoNames",
                         "Include a.conf b.conf\n",
                         {},
                         "t.conf:1: Include: 'a.conf b.conf': Slurm reads one file name, up to "
                         "the first space, and refuses the line with more after it; include one "
                         "file per line"},
        IncludeErrorCase{"ClusterName",
                         "Include topology-%c.conf\n",
                         {},
                         "t.conf:1: Include: 'topology-%c.conf': Slurm expands %c (the cluster "
                         "name) only in slurm.conf; here the Include fails: write the file name "
                         "out"},
        IncludeErrorCase{"Glob",
                         "Include topology.d/*.conf\n",
                         {},
                         "t.conf:1: Include: 'topology.d/*.conf': Slurm does not expand '*'"}),
    CaseName<IncludeErrorCase>);

TEST(IncludeTest, TextWithoutAReaderCannotInclude) {
  EXPECT_THAT(ReadConfLines("a=1\nInclude x.conf\n", "t.conf", {}),
              StatusIs(kInvalid,
                       "t.conf:2: Include: 'x.conf': nvlplace was given this file's text, not its "
                       "path, and cannot read the file it includes; give the file itself "
                       "(nvlplace import slurm --topology, --gres)"));
}

TEST(IncludeTest, FilesTogetherAreBounded) {
  MemoryFiles m;
  m.files["big.conf"] = "# " + std::string(limits::kMaxConfigBytes / 2, 'x') + "\n";  // 1 line
  EXPECT_THAT(ReadConfLines("Include big.conf\nInclude big.conf\n", "t.conf", m.Includes()),
              StatusIs(kInvalid, StartsWith("t.conf:2: Include: with 'big.conf', t.conf and the "
                                            "files it includes are larger than 64 MiB")));
}

TEST(LineRefTest, SameFileOrAnother) {
  EXPECT_EQ(LineRef(SourceLoc{"t.conf", 7, 0, ""}, "t.conf"), "line 7");
  EXPECT_EQ(LineRef(SourceLoc{"racks.conf", 7, 0, ""}, "t.conf"), "racks.conf:7");
}

}  // namespace
}  // namespace nvlplace::slurm
