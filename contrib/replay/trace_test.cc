// Tests for the trace readers: one fixture per format, format detection, malformed lines.
#include "contrib/replay/trace.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/limits.h"
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

// Reads `text` as `format`; not strict.
Trace ReadText(const std::string& text, TraceFormat format, TraceOptions options = {}) {
  absl::StatusOr<Trace> t = ReadTrace(text, "t", format, options);
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
  EXPECT_EQ(t.problems[0],
            "tests/fixtures/traces/bad-native.csv:3: duration 'abc' is not a number of seconds "
            "from 0 to 1000000000");
  EXPECT_THAT(t.problems[1], HasSubstr("bad-native.csv:4: 4 fields, the header has 5"));
  EXPECT_THAT(t.problems[2], HasSubstr(":5: tp 'eight' is not a whole number from 0 to 65536"));
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
  EXPECT_EQ(t.jobs[0].nodes, 2);           // NNodes 2: 16 / 2 = 8 GPUs on each
  EXPECT_EQ(t.jobs[0].gpu_model, "h100");  // gres/gpu:h100=16 repeats gres/gpu=16
  EXPECT_EQ(t.jobs[1].gpu_model, "");      // gres/gpu=4 only: any model
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, 3600);
  EXPECT_DOUBLE_EQ(t.jobs[1].submit, 600);  // 00:10:00 after the first submit
  EXPECT_EQ(t.skipped["no GPU"], 1);
  EXPECT_EQ(t.skipped["never started or not finished (Start/End Unknown)"], 1);
  EXPECT_EQ(t.skipped["job step (JobID with '.'; its job's line is replayed)"], 1);  // 101.batch
}

// Typed GPU TRES (issue 11): a job whose AllocTRES has only gres/gpu:TYPE=N was skipped as
// "no GPU", NNodes was ignored, and job steps were dropped without a count.
TEST(TraceTest, SacctTypedGpusNodesAndSteps) {
  Trace t = Read("tests/fixtures/traces/sacct-typed.txt");
  ASSERT_EQ(t.format, TraceFormat::kSacct);
  struct Want {
    const char* id;
    int gpus, nodes;
    const char* model;
  };
  const std::vector<Want> want = {
      {"201", 8, 1, "h100"},   // gres/gpu:h100=8 alone
      {"202", 16, 2, "A100"},  // typed and untyped agree; the type as written
      {"203", 4, 1, ""},       // untyped: any model
      {"204", 16, 2, "h100"},
      {"205", 8, 1, "b200"},   // read; the replay refuses a model its cluster lacks
      {"208", 6, 0, "h100"},   // 6 GPUs on NNodes 4 do not split evenly: any number of nodes
      {"209", 2, 1, "A100"},   // GRES/GPU:A100: the name in any case
      {"210", 24, 3, "h100"},  // 24 / 3 = 8 per node
  };
  ASSERT_EQ(t.jobs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].id);
    EXPECT_EQ(t.jobs[i].id, want[i].id);
    EXPECT_EQ(t.jobs[i].gpus, want[i].gpus);
    EXPECT_EQ(t.jobs[i].nodes, want[i].nodes);
    EXPECT_EQ(t.jobs[i].gpu_model, want[i].model);
    EXPECT_EQ(RequestOf(t.jobs[i]).gpu_model, want[i].model);
  }
  EXPECT_EQ(t.skipped["job step (JobID with '.'; its job's line is replayed)"], 2);
  EXPECT_EQ(t.skipped["GPUs of several types (gres/gpu:TYPE for two TYPEs)"], 1);  // 206
  EXPECT_EQ(t.skipped["GPUs of a type and of no type (gres/gpu:TYPE below gres/gpu)"],
            1);  // 207: gres/gpu:h100=8 of gres/gpu=16
  EXPECT_EQ(t.skipped.size(), 3u);
  EXPECT_EQ(t.relaxed["NNodes does not divide the GPUs: replayed on any number of nodes"], 1);
  EXPECT_EQ(t.relaxed.size(), 1u);
  // 211: End before Start, a malformed line with its place and reason.
  EXPECT_EQ(t.malformed, 1);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0],
            "tests/fixtures/traces/sacct-typed.txt:14: End is before Start (-1800 s): not a run "
            "time");
}

// A job that never ran was malformed when sacct also printed Submit=Unknown: Submit was
// read first. It is skipped as never started, whatever its Submit; one that ran needs it.
TEST(TraceTest, SacctJobThatNeverRanIsSkippedWhateverItsSubmit) {
  Trace t = ReadText(
      "JobID|Submit|Start|End|NNodes|AllocTRES\n"
      "1|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T01:00:00|1|gres/gpu=8\n"
      "2|Unknown|Unknown|Unknown|1|\n"
      "3||None||0|\n"
      "4|Unknown|2024-01-01T00:00:10|Unknown|1|gres/gpu=8\n"  // started, never ended
      "5|Unknown|2024-01-01T00:00:10|2024-01-01T01:00:00|1|gres/gpu=8\n",
      TraceFormat::kSacct);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "1");
  EXPECT_EQ(t.skipped["never started or not finished (Start/End Unknown)"], 3);  // 2, 3, 4
  EXPECT_EQ(t.skipped.size(), 1u);
  EXPECT_EQ(t.malformed, 1);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_THAT(t.problems[0], HasSubstr("t:6: Submit 'Unknown' is not a time"));
}

// sacct --parsable2 does not escape '|': a JobName "a|b" shifted the columns after it and
// the 16-GPU job was counted as "no GPU", since rows of more fields than the header were
// read. Such a row is malformed; the one empty field more that --parsable ends each line
// with is still read.
TEST(TraceTest, SacctRowOfMoreFieldsThanTheHeaderIsMalformed) {
  const std::string text =
      "JobID|Submit|Start|End|JobName|NNodes|AllocTRES\n"
      "1|0|10|3600|train|2|cpu=8,gres/gpu=16\n"
      "2|0|10|3600|a|b|2|cpu=8,gres/gpu=16\n"
      "3|0|10|3600|x|1|2|cpu=8,gres/gpu=16\n"
      "4|0|10|3600|train|2|cpu=8,gres/gpu=16|\n"  // --parsable
      "5|0|10|3600|train|2|cpu=8,gres/gpu=16||\n";
  Trace t = ReadText(text, TraceFormat::kSacct);
  ASSERT_EQ(t.jobs.size(), 2u);
  for (const TraceJob& j : t.jobs) {
    EXPECT_EQ(j.gpus, 16) << j.id;
    EXPECT_EQ(j.nodes, 2) << j.id;
  }
  EXPECT_EQ(t.jobs[0].id, "1");
  EXPECT_EQ(t.jobs[1].id, "4");
  EXPECT_TRUE(t.skipped.empty());  // no job read as "no GPU"
  EXPECT_EQ(t.malformed, 3);
  ASSERT_EQ(t.problems.size(), 3u);
  EXPECT_EQ(t.problems[0],
            "t:3: 8 fields, the header has 7: a field holds '|', which sacct does not escape; "
            "leave free-text columns (JobName, Comment, ...) out of --format, or remove the '|' "
            "from that line");
  EXPECT_THAT(t.problems[1], HasSubstr("t:4: 8 fields, the header has 7: a field holds '|'"));
  EXPECT_THAT(t.problems[2], HasSubstr("t:6: 9 fields, the header has 7: a field holds '|'"));
  TraceOptions strict;
  strict.strict = true;
  EXPECT_THAT(ReadTrace(text, "s.txt", TraceFormat::kAuto, strict),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("s.txt:3: 8 fields, the header has 7: a field holds '|'")));
  // --parsable ends the header with '|' too: then a row has its number of fields exactly.
  Trace p = ReadText(
      "JobID|Submit|Start|End|NNodes|AllocTRES|\n"
      "1|0|10|3600|2|cpu=8,gres/gpu=16|\n"
      "2|0|10|3600|2|cpu=8,gres/gpu=16||\n",
      TraceFormat::kAuto);
  EXPECT_EQ(p.format, TraceFormat::kSacct);
  ASSERT_EQ(p.jobs.size(), 1u);
  EXPECT_EQ(p.jobs[0].gpus, 16);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_THAT(p.problems[0], HasSubstr("t:3: 8 fields, the header has 7"));
}

// The row of one field more than its header, the last empty, was taken for a line that sacct
// --parsable ends with '|', even when a JobName held the '|': the columns after it were read
// shifted by one. Row 2: NNodes 'y' was reported instead of the '|'; row 3: AllocTRES '2'
// was read, and the job counted as "no GPU"; row 5: the 16-GPU job of 3590 s was replayed with
// 8 GPUs for 10 s. Such a row is read without its last field only when no shifted reading
// passes the column checks with other values (rows 4, 6).
TEST(TraceTest, SacctRowEndingEmptyWithAPipeInAFieldIsNotReadShifted) {
  Trace t = ReadText(
      "JobID|Submit|Start|End|JobName|NNodes|AllocTRES\n"
      "2|0|10|3600|x|y|2|\n"                       // JobName 'x|y', AllocTRES empty
      "3|0|10|3600|a|1|2|\n"                       // JobName 'a|1', AllocTRES empty
      "4|0|10|3600|train|2|cpu=8,gres/gpu=16|\n",  // --parsable: 'train|2' leaves NNodes bad
      TraceFormat::kSacct);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "4");
  EXPECT_EQ(t.jobs[0].gpus, 16);
  EXPECT_TRUE(t.skipped.empty());  // row 3 is not "no GPU"
  EXPECT_EQ(t.malformed, 2);
  ASSERT_EQ(t.problems.size(), 2u);
  EXPECT_EQ(t.problems[0],
            "t:2: 8 fields, the header has 7: a field holds '|', which sacct does not escape; "
            "leave free-text columns (JobName, Comment, ...) out of --format, or remove the '|' "
            "from that line");
  EXPECT_THAT(t.problems[1], HasSubstr("t:3: 8 fields, the header has 7: a field holds '|'"));

  Trace u = ReadText(
      "JobID|JobName|Submit|Start|End|ReqTRES|AllocTRES|Comment\n"
      "5|p|0|0|10|3600|gres/gpu=8|gres/gpu=16|\n"  // JobName 'p|0', Comment empty
      "6|q|0|10|3600|gres/gpu=8|gres/gpu=8||\n",   // --parsable: no other reading passes
      TraceFormat::kSacct);
  ASSERT_EQ(u.jobs.size(), 1u);
  EXPECT_EQ(u.jobs[0].id, "6");
  EXPECT_EQ(u.jobs[0].gpus, 8);
  EXPECT_DOUBLE_EQ(u.jobs[0].duration, 3590);  // 3600 - 10
  EXPECT_EQ(u.malformed, 1);
  ASSERT_EQ(u.problems.size(), 1u);
  EXPECT_EQ(u.problems[0],
            "t:2: 9 fields, the header has 8, the last empty: either the line ends with '|' (as "
            "sacct --parsable ends each line, and its header) or 'jobname' holds a '|', and "
            "the two readings differ; a field holds '|', which sacct does not escape; leave "
            "free-text columns (JobName, Comment, ...) out of --format, or remove the '|' from "
            "that line");

  // The last column free text: 'a|' and a line ending with '|' read the same job.
  Trace w = ReadText(
      "JobID|Submit|Start|End|NNodes|AllocTRES|JobName\n"
      "7|0|10|3600|2|gres/gpu=16|a|\n",
      TraceFormat::kSacct);
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_EQ(w.jobs[0].gpus, 16);
  EXPECT_EQ(w.malformed, 0);
}

TEST(TraceTest, OpenbGpuSpecNamesTheModel) {
  Trace t = ReadText(
      "name,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time,scheduled_time\n"
      "any,1,1000,,0,100,0\n"
      "nan,1,1000,nan,1,100,1\n"
      "v100,8,1000,V100M32,2,100,2\n"
      "t4,1,500,T4,3,100,3\n"
      "g2,2,1000,G2|g2,4,100,4\n"  // one model named twice: that model
      "v100-any,1,1000,V100M16|V100M32,5,100,5\n"
      "options,4,1000,\"A10|G2|T4|V100M16|V100M32\",6,100,6\n"
      "empty-options,1,1000,|,7,100,7\n",
      TraceFormat::kOpenb);
  ASSERT_EQ(t.jobs.size(), 8u);
  const std::vector<std::string> models = {"", "", "V100M32", "T4", "G2", "", "", ""};
  for (size_t i = 0; i < models.size(); ++i) {
    EXPECT_EQ(t.jobs[i].gpu_model, models[i]) << t.jobs[i].id;
    EXPECT_EQ(t.jobs[i].nodes, 1) << t.jobs[i].id;
  }
  EXPECT_EQ(t.relaxed["gpu_spec names several GPU models: replayed on any model"], 2);
  EXPECT_EQ(t.malformed, 0);
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

// Helios never looked at start_time: a CANCELLED row with an empty start_time and duration
// 0 was replayed as a job that ran. A job with an empty start_time or end_time is skipped
// and counted; a CANCELLED job that started is replayed, the state is not used.
TEST(TraceTest, HeliosJobThatNeverRanIsSkipped) {
  Trace t = ReadText(
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
      "queue\n"
      "j1,u,v,64,8,8,CANCELLED,2020-04-01 00:00:00,,,0,0\n"
      "j2,u,v,8,8,1,COMPLETED,2020-04-01 00:00:01,2020-04-01 00:00:01,2020-04-01 01:00:01,"
      "3600,0\n"
      "j3,u,v,8,8,1,CANCELLED,2020-04-01 00:00:02,2020-04-01 00:00:02,2020-04-01 00:10:02,"
      "600,0\n"
      "j4,u,v,8,8,1,RUNNING,2020-04-01 00:00:03,2020-04-01 00:00:03,,0,0\n"
      "j5,u,v,0,8,1,FAILED,None,None,None,0,0\n"
      "j6,u,v,8,8,1,COMPLETED,2020-04-01 00:00:04,yesterday,2020-04-01 01:00:04,3600,0\n",
      TraceFormat::kAuto);
  EXPECT_EQ(t.format, TraceFormat::kHelios);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "j2");
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, 3600);
  EXPECT_EQ(t.jobs[1].id, "j3");  // cancelled after 600 s of run time
  EXPECT_DOUBLE_EQ(t.jobs[1].duration, 600);
  EXPECT_EQ(t.skipped["never started or not finished (start_time/end_time empty)"], 3);  // 1,4,5
  EXPECT_EQ(t.skipped.size(), 1u);
  EXPECT_EQ(t.malformed, 1);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_THAT(t.problems[0], HasSubstr("t:7: start_time 'yesterday' is not a time"));
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

// An attempt without end_time ("None": the job was still running) or without start_time
// added 0 s, and the job was replayed as a 0-second job. Such a job is skipped and counted.
TEST(TraceTest, PhillyJobWithAnUnfinishedAttemptIsSkipped) {
  // A job whose first attempt is `first` (with two GPUs) and whose other attempts are `more`.
  auto job = [](const std::string& id, const std::string& first, const std::string& more) {
    return R"({"jobid": ")" + id + R"(", "submitted_time": "2017-10-03 03:17:01", "attempts": [{)" +
           first + R"(, "detail": [{"ip": "m1", "gpus": ["g0", "g1"]}]})" + more + "]}";
  };
  const std::string start = R"("start_time": "2017-10-03 03:20:00")";
  const std::string end = R"("end_time": "2017-10-03 05:20:00")";
  const std::string text = "[\n" + job("running", start + R"(, "end_time": "None")", "") + ",\n" +
                           job("ok", start + ", " + end, "") + ",\n" +
                           job("no-start", R"("start_time": null, )" + end, "") + ",\n" +
                           job("no-end-key", start, "") + ",\n" +
                           job("second-running", start + ", " + end,
                               R"(, {"start_time": "2017-10-03 06:00:00", "end_time": ""})") +
                           "\n]\n";
  Trace t = ReadText(text, TraceFormat::kPhilly);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "ok");
  EXPECT_EQ(t.jobs[0].gpus, 2);
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, 7200);  // 05:20 - 03:20
  EXPECT_EQ(t.skipped["an attempt never started or not finished (no start_time or end_time)"], 4);
  EXPECT_EQ(t.skipped.size(), 1u);
  EXPECT_EQ(t.malformed, 0);
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

// ---- every numeric field is checked: a bad row is a malformed line, never a job ----------

struct BadRows {
  const char* name;
  TraceFormat format;
  std::string text;                   // one good job, then the bad rows
  int bad;                            // how many rows are malformed
  std::vector<std::string> messages;  // in problems, in order
};

class TraceRowTest : public ::testing::TestWithParam<BadRows> {};

TEST_P(TraceRowTest, BadRowsAreMalformedLines) {
  const BadRows& c = GetParam();
  Trace t = ReadText(c.text, c.format);
  EXPECT_EQ(t.jobs.size(), 1u) << "only the good row is a job";
  EXPECT_EQ(t.malformed, c.bad);
  ASSERT_EQ(t.problems.size(), c.messages.size());
  for (size_t i = 0; i < c.messages.size(); ++i) {
    EXPECT_THAT(t.problems[i], HasSubstr(c.messages[i]));
  }
  for (const TraceJob& j : t.jobs) EXPECT_THAT(CheckTraceJob(j), IsOk());
  // Fatal with --strict, at the first bad line.
  TraceOptions strict;
  strict.strict = true;
  EXPECT_THAT(ReadTrace(c.text, "t", c.format, strict),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.messages[0])));
}

INSTANTIATE_TEST_SUITE_P(
    Formats, TraceRowTest,
    ::testing::Values(
        BadRows{"native_times",
                TraceFormat::kNative,
                "id,submit,duration,gpus\n"
                "ok,0,10,8\n"
                "a,nan,10,8\nb,inf,10,8\nc,-inf,10,8\nd,-5,10,8\n"
                "e,0,nan,8\nf,0,inf,8\ng,0,-1,8\nh,0,1e10,8\n",
                8,
                {"t:3: submit 'nan' is not a time", "t:4: submit 'inf'", "t:5: submit '-inf'",
                 "t:6: submit '-5'", "t:7: duration 'nan' is not a number of seconds",
                 "t:8: duration 'inf'", "t:9: duration '-1'", "t:10: duration '1e10'"}},
        BadRows{"native_counts",
                TraceFormat::kNative,
                "id,submit,duration,gpus,nodes,tp,pp,dp\n"
                "ok,0,10,8,,,,\n"
                "a,0,10,-8,,,,\n"
                "b,0,10,8,,65536,65536,\n"  // 65536 x 65536 wrapped to 0: SIGFPE in replay
                "c,0,10,16777217,,,,\n"
                "d,0,10,8,,65537,,\n"
                "e,0,10,8,,8.5,,\n"
                "f,0,10,8,3,,,\n"  // 8 GPUs on 3 nodes: the nodes were dropped silently
                "g,0,10,8,,2147483647,2,\n",
                7,
                {"t:3: gpus '-8' is not a whole number from 0 to 16777216",
                 "t:4: TP x PP = 65536 x 65536 = 4294967296 does not divide 8 GPUs; it is more",
                 "t:5: gpus '16777217'", "t:6: tp '65537' is not a whole number from 0 to 65536",
                 "t:7: tp '8.5'", "t:8: 8 GPUs do not split evenly over 3 nodes",
                 "t:9: tp '2147483647'"}},
        BadRows{"sacct",
                TraceFormat::kSacct,
                "JobID|Submit|Start|End|AllocTRES\n"
                "1|0|0|100|gres/gpu=8\n"
                "2|nan|0|100|gres/gpu=8\n3|inf|0|100|gres/gpu=8\n4|-inf|0|100|gres/gpu=8\n"
                "5|0|nan|100|gres/gpu=8\n6|0|0|inf|gres/gpu=8\n"
                "7|0|100|50|gres/gpu=8\n"  // End before Start: was a silent zero-length job
                "8|0|0|100|gres/gpu=-8\n"
                "9|2026-01-01T00:00:00x|0|100|gres/gpu=8\n",
                8,
                {"t:3: Submit 'nan' is not a time", "t:4: Submit 'inf'", "t:5: Submit '-inf'",
                 "t:6: Start 'nan'", "t:7: End 'inf'", "t:8: End is before Start (-50 s)",
                 "t:9: AllocTRES 'gres/gpu=-8' has no GPU count",
                 "t:10: Submit '2026-01-01T00:00:00x'"}},
        BadRows{
            "sacct_gpus",
            TraceFormat::kSacct,
            "JobID|Submit|Start|End|NNodes|AllocTRES\n"
            "1|0|0|100|1|gres/gpu:h100=8\n"
            "2|0|0|100|x|gres/gpu=8\n"
            "3|0|0|100|1048577|gres/gpu=8\n"
            "4|0|0|100|1|gres/gpu:=8\n"
            "5|0|0|100|1|gres/gpu:h100=9,gres/gpu=8\n"
            "6|0|0|100|1|gres/gpu=8,gres/gpu=8\n"
            "7|0|0|100|1|gres/gpu:h100=4,gres/gpu:H100=4\n"
            "8|0|0|100|1|gres/gpu:h100=eight\n",
            7,
            {"t:3: NNodes 'x' is not a whole number from 0 to 1048576", "t:4: NNodes '1048577'",
             "t:5: AllocTRES 'gres/gpu:=8' has no GPU type",
             "t:6: AllocTRES has 9 GPUs of type 'h100', more than its gres/gpu=8",
             "t:7: AllocTRES gives 'gres/gpu' twice", "t:8: AllocTRES gives 'gres/gpu:H100' twice",
             "t:9: AllocTRES 'gres/gpu:h100=eight' has no GPU count from 0 to 16777216"}},
        BadRows{
            "openb",
            TraceFormat::kOpenb,
            "name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n"
            "ok,1,1000,0,100,0\n"
            "a,1,1000,nan,100,0\nb,1,1000,inf,100,0\nc,1,1000,-inf,100,0\n"
            "d,1,1000,0,nan,0\ne,1,1000,0,100,inf\n"
            "f,1,1000,0,50,100\n"  // deleted before scheduled
            "g,-1,1000,0,100,0\nh,1,1001,0,100,0\n",
            8,
            {"t:3: creation_time 'nan' is not a time", "t:4: creation_time 'inf'",
             "t:5: creation_time '-inf'", "t:6: deletion_time 'nan'", "t:7: scheduled_time 'inf'",
             "t:8: deletion_time is before scheduled_time", "t:9: num_gpu '-1'",
             "t:10: gpu_milli '1001' is not a whole number from 0 to 1000"}},
        BadRows{"swf",
                TraceFormat::kSwf,
                "; SWF\n"
                "1 0 0 100 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
                "2 nan 0 100 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
                "3 inf 0 100 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
                "4 -inf 0 100 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
                "5 0 0 nan 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
                "6 0 0 -7 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
                "7 0 0 100 -8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n",
                6,
                {"t:3: submit time (field 2) 'nan' is not a time",
                 "t:4: submit time (field 2) 'inf'", "t:5: submit time (field 2) '-inf'",
                 "t:6: run time (field 4) 'nan'", "t:7: run time (field 4) '-7'",
                 "t:8: allocated processors (field 5) '-8' is not a whole number from -1"}},
        BadRows{"helios",
                TraceFormat::kHelios,
                "job_id,gpu_num,submit_time,duration\n"
                "ok,8,0,100\n"
                "a,8,nan,100\nb,8,inf,100\nc,8,-inf,100\n"
                "d,8,0,nan\ne,8,0,-inf\nf,8,0,-100\ng,-8,0,100\n",
                7,
                {"t:3: submit_time 'nan' is not a time", "t:4: submit_time 'inf'",
                 "t:5: submit_time '-inf'", "t:6: duration 'nan'", "t:7: duration '-inf'",
                 "t:8: duration '-100' is not a number of seconds from 0", "t:9: gpu_num '-8'"}},
        BadRows{
            "philly",
            TraceFormat::kPhilly,
            "[\n"
            R"({"jobid": "ok", "submitted_time": "0", "attempts": [{"start_time": "0",
                    "end_time": "100", "detail": [{"ip": "m1", "gpus": ["g0"]}]}]},)"
            "\n"
            R"({"jobid": "a", "submitted_time": "nan", "attempts": []},)"
            "\n"
            R"({"jobid": "b", "submitted_time": "inf", "attempts": []},)"
            "\n"
            R"({"jobid": "c", "submitted_time": "-inf", "attempts": []},)"
            "\n"
            R"({"jobid": "d", "submitted_time": "0", "attempts": [{"start_time": "nan",
                    "end_time": "100", "detail": [{"ip": "m1", "gpus": ["g0"]}]}]},)"
            "\n"
            R"({"jobid": "e", "submitted_time": "0", "attempts": [{"start_time": "100",
                    "end_time": "50", "detail": [{"ip": "m1", "gpus": ["g0"]}]}]},)"
            "\n"
            R"({"jobid": "f", "submitted_time": 5, "attempts": []})"
            "\n]\n",
            6,
            // The line of the job's '{', and its index in the array.
            {"t:4: job 2: submitted_time 'nan' is not a time", "t:5: job 3: submitted_time 'inf'",
             "t:6: job 4: submitted_time '-inf'", "t:7: job 5: start_time 'nan'",
             "t:9: job 6: attempt 1: end_time is before start_time",
             "t:11: job 7: submitted_time is not a string"}}),
    [](const ::testing::TestParamInfo<BadRows>& info) { return std::string(info.param.name); });

TEST(TraceTest, ControlBytesAreEscapedInMessagesAndIds) {
  std::string nul(1, '\0');
  std::string text =
      "id,submit,duration,gpus,nvl\na\x1b[2J,0,10,8,strict\nb,0,10,8,st" + nul + "rict\x07\n";
  Trace t = ReadText(text, TraceFormat::kNative);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].id, "a\\x1b[2J");
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0], "t:3: NVLink mode 'st\\x00rict\\x07' is not one of strict, prefer, off");
  // Long fields are cut in messages.
  Trace l = ReadText("id,submit,duration,gpus\na,0," + std::string(5000, '9') + ",8\nb,0,1,1\n",
                     TraceFormat::kNative);
  ASSERT_EQ(l.problems.size(), 1u);
  EXPECT_THAT(l.problems[0], HasSubstr("... (5000 bytes) is not a number of seconds"));
  EXPECT_LT(l.problems[0].size(), 200u);
}

TEST(TraceTest, PhillyNamesTheRealLine) {
  // The Philly reader used to give the job's index as a line number.
  Trace t = Read("tests/fixtures/traces/philly-lines.json");
  EXPECT_EQ(t.jobs.size(), 2u);
  ASSERT_EQ(t.problems.size(), 2u);
  EXPECT_EQ(t.problems[0],
            "tests/fixtures/traces/philly-lines.json:9: job 2: detail is not an array");
  EXPECT_EQ(t.problems[1], "tests/fixtures/traces/philly-lines.json:14: job 3: no attempts");
  EXPECT_EQ(t.jobs[1].line, 16);
}

TEST(TraceTest, PhillyBadJsonIsBadInput) {
  EXPECT_THAT(ReadTrace("[\n{\"jobid\": \"a\",\n  \"submitted_time\": nul}]", "p.json",
                        TraceFormat::kPhilly, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("p.json:3: not valid JSON")));
  EXPECT_THAT(ReadTrace("{\"jobid\": 1}", "p.json", TraceFormat::kPhilly, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("p.json:1: not a JSON array of Philly jobs")));
  // Deep nesting is refused, not followed (the reader keeps one frame per level).
  EXPECT_THAT(ReadTrace(std::string(100000, '[') + std::string(100000, ']'), "p.json",
                        TraceFormat::kPhilly, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested deeper than 64")));
  // A huge array of GPUs is counted, never stored; more than kMaxJobGpus is malformed.
  std::string many = R"([{"jobid": "x", "submitted_time": "0", "attempts": [{"start_time": "0",
      "end_time": "1", "detail": [{"ip": "m", "gpus": [)";
  for (int i = 0; i < 100000; ++i) many += "0,";
  many += R"(0]}]}]}, {"jobid": "y", "submitted_time": "0", "attempts": []}])";
  Trace t = ReadText(many, TraceFormat::kPhilly);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].gpus, 100001);
}

TEST(TraceTest, LongTokensAndIdsAreRefused) {
  // nlohmann buffers a whole string token: a 500 MB string used 2 GB. Refused before parsing.
  std::string big = "[\n{\"jobid\": \"" + std::string(limits::kMaxJsonTokenBytes + 1, 'A') + "\"}]";
  EXPECT_THAT(ReadTrace(big, "p.json", TraceFormat::kPhilly, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("p.json:2: a JSON string longer than 65536 bytes")));
  std::string number = "[\n\n" + std::string(limits::kMaxJsonTokenBytes + 1, '1') + "]";
  EXPECT_THAT(ReadTrace(number, "p.json", TraceFormat::kPhilly, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("p.json:3: a JSON value longer than 65536 bytes")));
  // An id of more than kMaxJobIdBytes makes its line malformed.
  Trace t = ReadText("id,submit,duration,gpus\n" + std::string(257, 'x') + ",0,1,1\nok,0,1,1\n",
                     TraceFormat::kNative);
  EXPECT_EQ(t.jobs.size(), 1u);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0], "t:2: the job id is 257 bytes long; at most 256");
}

TEST(TraceTest, TheTraceSpansAtMostMaxSeconds) {
  // The start is the earliest submit, 5 (line 3): 1e9 s after it is the last time allowed
  // (line 2); line 4 comes 1e9 + 1 s after it. No job is ever before the start.
  Trace t = ReadText(
      "id,submit,duration,gpus\nlast,1000000005,10,8\nfirst,5,10,8\n"
      "late,1000000006,10,8\n",
      TraceFormat::kNative);
  ASSERT_EQ(t.jobs.size(), 2u);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0],
            "t:4: submitted 1000000001 s after the trace start (line 3); a trace spans at most "
            "1000000000 s");
  EXPECT_EQ(t.jobs[0].id, "first");
  EXPECT_DOUBLE_EQ(t.jobs[0].submit, 0);
  EXPECT_DOUBLE_EQ(t.jobs[1].submit, 1e9);
}

// strptime takes any day from 1 to 31 and timegm moved an impossible date on: 2024-02-30
// was read as 2024-03-01. Such a date is a malformed line, as any other bad time.
TEST(TraceTest, ImpossibleDatesAreMalformed) {
  Trace t = ReadText(
      "id,submit,duration,gpus\n"
      "leap,2024-02-29T00:00:00,10,8\n"
      "feb30,2024-02-30T00:00:00,10,8\n"
      "feb29,2023-02-29 00:00:00,10,8\n"
      "apr31,2024-04-31T00:00:00,10,8\n"
      "sec60,2024-01-01T23:59:60,10,8\n"
      "mar1,2024-03-01T00:00:00,10,8\n",
      TraceFormat::kNative);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].id, "leap");
  EXPECT_EQ(t.jobs[1].id, "mar1");
  EXPECT_DOUBLE_EQ(t.jobs[1].submit, 86400);  // 2024-03-01 is one day after 2024-02-29
  EXPECT_EQ(t.malformed, 4);
  ASSERT_EQ(t.problems.size(), 4u);
  EXPECT_EQ(t.problems[0],
            "t:3: submit '2024-02-30T00:00:00' is not a time: give a date YYYY-MM-DDTHH:MM:SS "
            "(UTC) or seconds from 0 to 253402300799");
  EXPECT_THAT(t.problems[1], HasSubstr("t:4: submit '2023-02-29 00:00:00' is not a time"));
  EXPECT_THAT(t.problems[2], HasSubstr("t:5: submit '2024-04-31T00:00:00' is not a time"));
  EXPECT_THAT(t.problems[3], HasSubstr("t:6: submit '2024-01-01T23:59:60' is not a time"));
}

// A UTF-8 byte order mark before the header was read as part of its first column ("the
// sacct header has no column 'jobid'") and hid a Philly file's '[' from the detection.
TEST(TraceTest, ByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(DetectTraceFormat(bom + "[\n]\n"), TraceFormat::kPhilly);
  Trace s = ReadText(bom +
                         "JobID|Submit|Start|End|NNodes|AllocTRES\n"
                         "1|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T01:00:00|1|"
                         "cpu=8,gres/gpu=8\n",
                     TraceFormat::kAuto);
  EXPECT_EQ(s.format, TraceFormat::kSacct);
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0].id, "1");
  EXPECT_EQ(s.jobs[0].gpus, 8);
  EXPECT_DOUBLE_EQ(s.jobs[0].duration, 3590);  // 01:00:00 - 00:00:10
  for (TraceFormat f : {TraceFormat::kAuto, TraceFormat::kNative}) {
    Trace n = ReadText(bom + "id,submit,duration,gpus\na,0,10,8\n", f);
    EXPECT_EQ(n.format, TraceFormat::kNative);
    ASSERT_EQ(n.jobs.size(), 1u);
    EXPECT_EQ(n.jobs[0].id, "a");
    EXPECT_EQ(n.malformed, 0);
  }
  Trace p = ReadText(bom + "[\n" +
                         R"({"jobid": "a2", "submitted_time": "2017-10-03 03:18:01", "attempts": [
                         {"start_time": "2017-10-03 03:20:00", "end_time": "2017-10-03 05:20:00",
                          "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]})"
                         "\n]\n",
                     TraceFormat::kAuto);
  EXPECT_EQ(p.format, TraceFormat::kPhilly);
  ASSERT_EQ(p.jobs.size(), 1u);
  EXPECT_EQ(p.jobs[0].id, "a2");
  EXPECT_DOUBLE_EQ(p.jobs[0].duration, 7200);
  // The mark is on line 1: the lines after it keep their numbers.
  Trace bad = ReadText(bom + "submit,duration,gpus\n0,x,8\n0,1,1\n", TraceFormat::kAuto);
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_THAT(bad.problems[0], HasSubstr("t:2: duration 'x'"));
}

TEST(TraceTest, TooManyJobsOrFieldsIsBadInput) {
  TraceOptions two;
  two.max_jobs = 2;
  EXPECT_THAT(ReadTrace("id,submit,duration,gpus\na,0,1,1\nb,0,1,1\nc,0,1,1\n", "t",
                        TraceFormat::kNative, two),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t:4: more than 2 jobs in one trace; split the trace")));
  EXPECT_THAT(ReadTrace("submit,duration,gpus" + std::string(2000, ',') + "\n", "t",
                        TraceFormat::kNative, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t:1: the native header has 2003 fields; at most 1024")));
  // A row of many fields is counted, not split.
  Trace t = ReadText("submit,duration,gpus\n0,1,1\n" + std::string(1 << 20, ',') + "\n",
                     TraceFormat::kNative);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0], "t:3: 1048577 fields, the header has 3");
  EXPECT_THAT(ReadTrace("submit,gpus,Submit,duration\n", "t", TraceFormat::kNative, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t:1: the native header names column 'submit' twice")));
}

TEST(TraceTest, CheckTraceJob) {
  TraceJob j;
  j.gpus = 8;
  EXPECT_THAT(CheckTraceJob(j), IsOk());
  j.submit = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(CheckTraceJob(j),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("submit nan")));
  j.submit = 0;
  j.duration = -std::numeric_limits<double>::infinity();
  EXPECT_THAT(CheckTraceJob(j),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duration -inf")));
  j.duration = 0;
  j.tp = 65536;
  j.pp = 65536;
  EXPECT_THAT(CheckTraceJob(j),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lower tp or pp")));
  j.tp = j.pp = 0;
  j.gpu_model = std::string(limits::kMaxNameBytes, 'h');
  EXPECT_THAT(CheckTraceJob(j), IsOk());
  j.gpu_model += 'h';
  EXPECT_THAT(CheckTraceJob(j),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is longer than 64 bytes")));
}

TEST(TraceTest, FormatNames) {
  EXPECT_THAT(ParseTraceFormat("slurm"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("auto, native, sacct")));
  EXPECT_EQ(*ParseTraceFormat("swf"), TraceFormat::kSwf);
}

}  // namespace
}  // namespace nvlplace::replay
