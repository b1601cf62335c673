// Tests for the trace readers: one fixture per format, format detection, malformed lines.
#include "contrib/replay/trace.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/topology_yaml.h"
#include "tests/status_matchers.h"

namespace nvlplace::replay {
namespace {

using ::nvlplace::testing::IsOk;
using ::nvlplace::testing::StatusIs;
using ::testing::HasSubstr;

Trace Read(const std::string& file, TraceFormat format = TraceFormat::kAuto,
           TraceOptions options = {}) {
  absl::StatusOr<std::string> text = ReadFileToString(file);
  EXPECT_THAT(text, IsOk());
  absl::StatusOr<Trace> t = ReadTrace(*text, file, format, options);
  EXPECT_THAT(t, IsOk());
  return t.ok() ? *t : Trace{};
}

TEST(TraceTest, Native) {
  Trace t = Read("tests/fixtures/traces/native.csv");
  EXPECT_EQ(t.format, TraceFormat::kNative);
  ASSERT_EQ(t.jobs.size(), 5u);
  EXPECT_EQ(t.jobs[0].id, "a");
  EXPECT_EQ(t.jobs[0].tp, 8);
  EXPECT_EQ(t.jobs[0].dp, 2);
  EXPECT_EQ(t.jobs[2].nvl, NvlMode::kPrefer);
  EXPECT_EQ(t.jobs[3].nvl, NvlMode::kOff);
  EXPECT_EQ(t.jobs[1].tp, 0);  // not given
  EXPECT_DOUBLE_EQ(t.jobs[4].submit, 40);
  EXPECT_EQ(t.malformed, 0);
}

TEST(TraceTest, MalformedLinesAreCountedAndNamed) {
  Trace t = Read("tests/fixtures/traces/bad-native.csv");
  // Lines 3 (duration abc), 4 (4 fields), 5 (tp eight) are malformed; a and e are read.
  EXPECT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.malformed, 3);
  ASSERT_EQ(t.problems.size(), 3u);
  EXPECT_EQ(t.problems[0], "tests/fixtures/traces/bad-native.csv:3: duration is not a number of seconds >= 0");
  EXPECT_THAT(t.problems[1], HasSubstr("bad-native.csv:4: 4 fields, the header has 5"));
  EXPECT_THAT(t.problems[2], HasSubstr(":5: tp is not a count"));
}

TEST(TraceTest, StrictMakesMalformedFatal) {
  absl::StatusOr<std::string> text = ReadFileToString("tests/fixtures/traces/bad-native.csv");
  ASSERT_THAT(text, IsOk());
  TraceOptions strict;
  strict.strict = true;
  EXPECT_THAT(ReadTrace(*text, "bad.csv", TraceFormat::kAuto, strict),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad.csv:3:")));
}

TEST(TraceTest, Sacct) {
  Trace t = Read("tests/fixtures/traces/sacct.txt");
  EXPECT_EQ(t.format, TraceFormat::kSacct);
  ASSERT_EQ(t.jobs.size(), 2u);  // 101 and 102; the step, the unstarted and the CPU job not
  EXPECT_EQ(t.jobs[0].id, "101");
  EXPECT_EQ(t.jobs[0].gpus, 16);
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, 3600);
  EXPECT_DOUBLE_EQ(t.jobs[1].submit, 600);  // 00:10:00 after the first submit
  EXPECT_EQ(t.skipped["no GPU"], 1);
  EXPECT_EQ(t.skipped["never started or not finished (Start/End Unknown)"], 1);
}

TEST(TraceTest, Swf) {
  Trace t = Read("tests/fixtures/traces/jobs.swf");
  EXPECT_EQ(t.format, TraceFormat::kSwf);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].gpus, 16);
  EXPECT_DOUBLE_EQ(t.jobs[1].duration, 1200);
  EXPECT_EQ(t.skipped["no run time (-1)"], 1);
}

TEST(TraceTest, Helios) {
  Trace t = Read("tests/fixtures/traces/helios.csv");
  EXPECT_EQ(t.format, TraceFormat::kHelios);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[1].gpus, 16);
  EXPECT_DOUBLE_EQ(t.jobs[1].submit, 600);
  EXPECT_EQ(t.skipped["no GPU"], 1);
}

TEST(TraceTest, Philly) {
  Trace t = Read("tests/fixtures/traces/philly.json");
  EXPECT_EQ(t.format, TraceFormat::kPhilly);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].gpus, 4);
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, 3600);
  EXPECT_EQ(t.jobs[1].gpus, 16);  // two machines x 8 GPUs
  EXPECT_EQ(t.skipped["no attempt (never ran)"], 1);
}

TEST(TraceTest, OpenbSharedGpus) {
  Trace t = Read("tests/fixtures/traces/openb-layout.csv");
  EXPECT_EQ(t.format, TraceFormat::kOpenb);
  ASSERT_EQ(t.jobs.size(), 3u);  // the shared pod counts as one GPU; the CPU pod is skipped
  EXPECT_EQ(t.jobs[2].gpus, 8);
  EXPECT_DOUBLE_EQ(t.jobs[2].duration, 7400 - 260);
  TraceOptions skip;
  skip.skip_shared = true;
  Trace s = Read("tests/fixtures/traces/openb-layout.csv", TraceFormat::kAuto, skip);
  EXPECT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.skipped["shared GPU (gpu_milli < 1000)"], 1);
}

TEST(TraceTest, MissingColumnIsBadInput) {
  EXPECT_THAT(ReadTrace("submit,gpus\n1,2\n", "t.csv", TraceFormat::kNative, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:1: the native header has no column 'duration'")));
}

TEST(TraceTest, FormatNames) {
  EXPECT_THAT(ParseTraceFormat("slurm"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("auto, native, sacct")));
  EXPECT_EQ(*ParseTraceFormat("swf"), TraceFormat::kSwf);
}

}  // namespace
}  // namespace nvlplace::replay
