// Tests for the placement line (placement_line.h): the quoting rule, and one example of each
// event compared with tests/fixtures/plugin/placement_lines.txt, the file the line's one
// parser is tested on (tests/slurm/placement_log_test.py): both sides read the same lines.
// NVLPLACE_UPDATE_GOLDEN=1 rewrites the file; review the diff, and the parser's test.
#include "plugin/placement_line.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nvlplace::plugin {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kGolden[] = "tests/fixtures/plugin/placement_lines.txt";

TEST(PlacementLineTest, QuotesOnlyWhatNeedsIt) {
  struct Case {
    std::string value, want;
  };
  std::vector<Case> cases = {
      {"node03:4-7", "node03:4-7"},
      {"node00:2-3,6-7", "node00:2-3,6-7"},
      {"96.9", "96.9"},
      {"", "\"\""},
      {"best fit under leaf0", "\"best fit under leaf0\""},
      {"nvl=prefer", "\"nvl=prefer\""},  // '=' is quoted: a bare value never holds one
      {"say \"hi\"", "\"say \\\"hi\\\"\""},
      {"a\\b", "\"a\\\\b\""},
      {"two\nlines\tand\r", "\"two\\nlines\\tand\\r\""},
      {std::string("esc\x1b[31m\x7f", 9), "\"esc\\x1b[31m\\x7f\""},
      {"caf\xc3\xa9", "\"caf\xc3\xa9\""},  // UTF-8 kept, but quoted
  };
  for (const Case& c : cases) EXPECT_EQ(QuoteValue(c.value), c.want) << c.value;
}

TEST(PlacementLineTest, EveryEventHasItsOwnName) {
  std::set<std::string> names;
  for (int e = 0; e <= static_cast<int>(Event::kCandidateTaken); ++e) {
    names.insert(EventName(static_cast<Event>(e)));
  }
  EXPECT_EQ(names.size(), 11u);
  EXPECT_EQ(names.count("unknown"), 0u);
}

LineRequest Tp8x2() {
  LineRequest r;
  r.gpus = 16;
  r.tp = 8;
  r.dp = 2;
  return r;
}

LinePlacement TwoNodes() {
  LinePlacement p;
  p.gpus = {{"node2", {0, 1, 2, 3, 4, 5, 6, 7}}, {"node3", {0, 1, 2, 3, 4, 5, 6, 7}}};
  p.domains = {"node2", "node3"};
  p.span_domains = 2;
  p.span_nodes = 2;
  p.span_tier = "leaf";
  p.score = 96.94;
  p.origin = "best fit under leaf0";
  return p;
}

LinePlacement OneIsland() {
  LinePlacement p;
  p.gpus = {{"node01", {4, 5, 6, 7}}};
  p.domains = {"node01:nvl1"};
  p.span_domains = 1;
  p.span_nodes = 1;
  p.span_tier = "node";
  p.score = 99.6;
  p.origin = "best fit under node01";
  return p;
}

// One example of each event, with the values the parser's test expects.
std::vector<std::pair<std::string, PlacementLine>> Examples() {
  std::vector<std::pair<std::string, PlacementLine>> out;
  {
    PlacementLine l;
    l.event = Event::kPlaced;
    l.request = Tp8x2();
    l.placement = TwoNodes();
    l.slurm_gpus = TwoNodes().gpus;
    l.candidate = 1;
    l.candidates = 2;
    l.relaxations = "none";
    out.push_back({"placed", l});
  }
  {
    // Nodes mode, typed, exclusive, a preferred max tier relaxed, locality traded, and
    // compare_cons_tres's answer.
    PlacementLine l;
    l.event = Event::kPlaced;
    LineRequest r;
    r.gpus = 8;
    r.nodes = 2;
    r.tp = 4;
    r.dp = 2;
    r.nvl = "prefer";
    r.max_tier = "leaf";
    r.max_tier_required = false;
    r.model = "H100";
    r.exclusive = true;
    l.request = r;
    LinePlacement p;
    p.gpus = {{"node00", {4, 5, 6, 7}}, {"node04", {0, 1, 2, 3}}};
    p.domains = {"node00:nvl1", "node04:nvl0"};
    p.span_domains = 2;
    p.span_nodes = 2;
    p.span_tier = "spine";
    p.score = 71.25;
    p.origin = "fewest hosts under spine0";
    p.locality_traded =
        "best fit under leaf1 would be 2 NVLink domains under one leaf, the choice is 2 NVLink "
        "domains under one spine; it scored 70.0 against 71.3: lower fragmentation 40.0 vs "
        "55.0 (weight 5)";
    l.placement = p;
    l.slurm_gpus = p.gpus;
    l.candidate = 2;
    l.candidates = 3;
    l.relaxations = "max-tier leaf preferred but no leaf holds 2 nodes with 4 free GPUs";
    l.cons_tres_alone = std::vector<NodeGpus>{{"node00", {2, 3, 6, 7}}, {"node01", {0, 1, 2, 3}}};
    out.push_back({"placed-typed", l});
  }
  {
    PlacementLine l;
    l.event = Event::kPlaced;
    LineRequest r;
    r.gpus = 4;
    r.tp = 4;
    l.request = r;
    l.placement = OneIsland();
    l.slurm_gpus = OneIsland().gpus;
    l.candidate = 1;
    l.candidates = 1;
    l.relaxations = "none";
    l.cons_tres_alone = std::vector<NodeGpus>{};  // cons_tres alone would not start it
    out.push_back({"placed-alone-none", l});
  }
  {
    PlacementLine l;
    l.event = Event::kDiffers;
    LineRequest r;
    r.gpus = 8;
    l.request = r;
    l.placement = TwoNodes();
    l.slurm_gpus = std::vector<NodeGpus>{{"node00", {0, 1, 2, 3, 4, 5, 6, 7}}};
    l.candidate = 1;
    l.candidates = 3;
    l.relaxations = "cons_tres allocated node00:0-7 instead of node2:0-7 node3:0-7";
    out.push_back({"differs", l});
  }
  {
    PlacementLine l;
    l.event = Event::kRejected;
    l.request = Tp8x2();
    l.placement = TwoNodes();
    l.slurm_gpus = std::vector<NodeGpus>{{"node2", {1, 2, 3, 4, 5, 6, 7}}, {"node3", {4}}};
    l.candidate = 1;
    l.candidates = 2;
    out.push_back({"rejected", l});
  }
  {
    PlacementLine l;
    l.event = Event::kPlacedByConsTres;
    LineRequest r;
    r.gpus = 4;
    l.request = r;
    l.slurm_gpus = std::vector<NodeGpus>{{"node05", {0, 1, 2, 3}}, {"node06", {}}};
    l.candidates = 3;
    l.relaxations = "cons_tres refused the 3 node sets of nvlplace, first node00:0-3";
    out.push_back({"placed-by-cons_tres", l});
  }
  {
    PlacementLine l;
    l.event = Event::kConsTres;
    LineRequest r;
    r.gpus = 2;
    r.nvl = "off";
    l.request = r;
    l.slurm_gpus = std::vector<NodeGpus>{{"node07", {0, 1}}};
    out.push_back({"cons_tres", l});
  }
  {
    PlacementLine l;
    l.event = Event::kWaiting;
    LineRequest r;
    r.gpus = 8;
    r.tp = 4;
    r.dp = 2;
    l.request = r;
    l.why =
        "needs 2 TP groups of 4 GPUs, each inside one NVLink domain; the free NVLink domains "
        "hold only 0 such groups (largest free domain has 2 GPUs, 32 GPUs free in all)";
    out.push_back({"waiting", l});
  }
  {
    PlacementLine l;
    l.event = Event::kWaiting;
    l.request = Tp8x2();
    l.why = "cons_tres refused the 2 node sets that keep it (CPUs, memory or other limits)";
    l.placement = TwoNodes();
    l.candidate = 1;
    l.candidates = 2;
    out.push_back({"waiting-exhausted", l});
  }
  {
    // A requeued job back in the rack it ran in (a failed tray replaced there).
    PlacementLine l;
    l.event = Event::kPlaced;
    l.request = Tp8x2();
    l.placement = TwoNodes();
    l.slurm_gpus = TwoNodes().gpus;
    l.candidate = 1;
    l.candidates = 1;
    l.relaxations = "none";
    l.back_to = {"node2", "node3"};
    out.push_back({"placed-back", l});
  }
  {
    // A request that never resolved: no request fields; the user's bytes quoted and escaped.
    PlacementLine l;
    l.event = Event::kHeld;
    l.why =
        "--nvl-tp='fo\"ur\\n': must be a whole number from 1 to 65536; resubmit with other "
        "--nvl-* options or GPUs";
    out.push_back({"held", l});
  }
  {
    PlacementLine l;
    l.event = Event::kRefused;
    l.mode = "test_only";
    LineRequest r;
    r.gpus = 8;
    r.tp = 8;
    l.request = r;
    l.why =
        "never runnable on this cluster: needs 1 TP group of 8 GPUs inside one NVLink domain; "
        "no NVLink domain holds it (largest domain has 4 GPUs)";
    out.push_back({"refused", l});
  }
  {
    PlacementLine l;
    l.event = Event::kWillRun;
    l.mode = "will_run";
    LineRequest r;
    r.gpus = 4;
    r.tp = 4;
    l.request = r;
    l.start_in = 100;
    l.placement = OneIsland();
    l.candidate = 1;
    l.candidates = 1;
    l.relaxations = "none";
    out.push_back({"will-run", l});
  }
  {
    PlacementLine l;
    l.event = Event::kCandidateRefused;
    l.mode = "will_run";
    l.request = Tp8x2();
    l.placement = TwoNodes();
    l.candidate = 2;
    l.candidates = 2;
    out.push_back({"candidate-refused", l});
  }
  {
    PlacementLine l;
    l.event = Event::kCandidateTaken;
    l.mode = "test_only";
    l.request = Tp8x2();
    l.placement = TwoNodes();
    l.placement->origin = "";  // an empty value
    l.candidate = 1;
    l.candidates = 1;
    out.push_back({"candidate-taken", l});
  }
  {
    // An error on a job nvlplace cannot decide on: every byte a value may carry.
    PlacementLine l;
    l.event = Event::kConsTres;
    l.why = std::string("internal error: a \\ b\tc = d \"e\" \x1b[0m caf\xc3\xa9");
    out.push_back({"cons_tres-error", l});
  }
  return out;
}

std::string GoldenText() {
  std::string out =
      "# Written by plugin/placement_line_test.cc (NVLPLACE_UPDATE_GOLDEN=1 rewrites it); read\n"
      "# by tests/slurm/placement_log_test.py. One example per line: its name, a tab, the line.\n";
  for (const auto& [name, line] : Examples()) out += name + "\t" + Format(line) + "\n";
  return out;
}

TEST(PlacementLineTest, ExamplesMatchTheFileTheParserReads) {
  std::string want = GoldenText();
  const char* update = std::getenv("NVLPLACE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(kGolden, std::ios::binary) << want;
  }
  std::ifstream in(kGolden, std::ios::binary);
  ASSERT_TRUE(in) << "no " << kGolden << "; run with NVLPLACE_UPDATE_GOLDEN=1 and review it";
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), want) << kGolden << " differs from Format's lines: if the change is "
                             << "meant, run with NVLPLACE_UPDATE_GOLDEN=1, review the diff, and "
                             << "raise kPlacementLineVersion if a field changed or went";
}

TEST(PlacementLineTest, TheVersionComesFirstAndTheLineIsOneLine) {
  for (const auto& [name, line] : Examples()) {
    SCOPED_TRACE(name);
    std::string text = Format(line);
    EXPECT_THAT(text, StartsWith("v=1 event="));
    EXPECT_THAT(text, Not(HasSubstr("\n")));
    EXPECT_THAT(text, Not(HasSubstr("\t")));
  }
}

TEST(PlacementLineTest, ThePlacedLineReads) {
  EXPECT_EQ(Format(Examples()[0].second),
            "v=1 event=placed asked_gpus=16 asked_nodes=any tp=8 pp=1 dp=2 nvl=strict "
            "max_tier=none model=any exclusive=no gpus=\"node2:0-7 node3:0-7\" "
            "domains=node2,node3 span_domains=2 span_nodes=2 span_tier=leaf score=96.9 "
            "origin=\"best fit under leaf0\" slurm_gpus=\"node2:0-7 node3:0-7\" candidate=1 "
            "candidates=2 relaxations=none");
}

}  // namespace
TEST(LineFieldTest, ReadsBareAndQuotedValuesOfAFormattedLine) {
  PlacementLine line;
  line.event = Event::kWaiting;
  line.why = "a \"quoted\" reason\twith\\ controls\x01";
  line.back_to = {"rack 1", "rack=2"};
  const std::string text = "nvlplace: " + Format(line);
  EXPECT_EQ(LineField(text, "event"), "waiting");
  EXPECT_EQ(LineField(text, "why"), line.why);
  EXPECT_EQ(LineField(text, "back_to"), "rack 1,rack=2");
  EXPECT_EQ(LineField(text, "domains"), std::nullopt);
  EXPECT_EQ(LineField(Format(line), "v"), "1");  // with or without the prefix
}

TEST(LineFieldTest, LinesItDoesNotReadGiveNothing) {
  EXPECT_EQ(LineField("v=2 event=placed", "event"), std::nullopt);  // another version
  EXPECT_EQ(LineField("a comment of the site's", "event"), std::nullopt);
  EXPECT_EQ(LineField("v=1 event=placed why=\"no end", "why"), std::nullopt);
  EXPECT_EQ(LineField("v=1 why=\"x\\x4\" event=placed", "event"), std::nullopt);
  EXPECT_EQ(LineField("v=1 why=\"x\"event=placed", "event"), std::nullopt);
  EXPECT_EQ(LineField("", "v"), std::nullopt);
}

}  // namespace nvlplace::plugin
