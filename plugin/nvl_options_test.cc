// Tests for the job option values shared by the SPANK and select plugins.
#include "plugin/nvl_options.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "placement/model/limits.h"

namespace {

TEST(NvlOptionsTest, Sizes) {
  char msg[256];
  int v = 0;
  EXPECT_EQ(nvl_parse_size("nvl-tp", "8", &v, msg, sizeof(msg)), 0);
  EXPECT_EQ(v, 8);
  for (const char* bad : {"0", "-2", "4x", "", "99999999999", "1.5", " 4", "+4", "4 "}) {
    EXPECT_EQ(nvl_parse_size("nvl-tp", bad, &v, msg, sizeof(msg)), -1) << bad;
  }
  nvl_parse_size("nvl-tp", "0", &v, msg, sizeof(msg));
  EXPECT_EQ(std::string(msg), "--nvl-tp=0: must be a whole number from 1 to 65536");
}

TEST(NvlOptionsTest, ModesAndTiers) {
  char msg[256], mode[8], tier[16];
  EXPECT_EQ(nvl_parse_mode("nvl", "prefer", mode, msg, sizeof(msg)), 0);
  EXPECT_STREQ(mode, "prefer");
  EXPECT_EQ(nvl_parse_mode("nvl", "always", mode, msg, sizeof(msg)), -1);
  EXPECT_EQ(std::string(msg), "--nvl=always: must be one of strict, prefer, off");
  EXPECT_EQ(nvl_parse_tier("nvl-max-tier", "spine", tier, msg, sizeof(msg)), 0);
  EXPECT_STREQ(tier, "spine");
  EXPECT_EQ(nvl_parse_tier("nvl-max-tier", "rack", tier, msg, sizeof(msg)), -1);
}

// What the SPANK plugin hands on to slurmctld: a value too long for its buffer was cut
// there, so that "0000000000000000000000000000001234" (accepted as 1234) reached slurmctld
// as its first 31 bytes, TP=1.
TEST(NvlOptionsTest, ValuesAreHandedOnInCanonicalForm) {
  char msg[256], out[NVL_OPTION_VALUE_MAX];
  const std::string zeros(30, '0');
  ASSERT_EQ(nvl_option_value("nvl-tp", (zeros + "01234").c_str(), out, msg, sizeof(msg)), 0);
  EXPECT_STREQ(out, "1234");
  ASSERT_EQ(nvl_option_value("nvl-dp", "65536", out, msg, sizeof(msg)), 0);
  EXPECT_STREQ(out, "65536");
  ASSERT_EQ(nvl_option_value("nvl", "prefer", out, msg, sizeof(msg)), 0);
  EXPECT_STREQ(out, "prefer");
  ASSERT_EQ(nvl_option_value("nvl-max-tier", "spine", out, msg, sizeof(msg)), 0);
  EXPECT_STREQ(out, "spine");
  ASSERT_EQ(nvl_option_value("nvl-domain", "one", out, msg, sizeof(msg)), 0);
  EXPECT_STREQ(out, "one");
  EXPECT_EQ(nvl_option_value("nvl-pp", (zeros + "0").c_str(), out, msg, sizeof(msg)), -1);
  EXPECT_EQ(std::string(msg), "--nvl-pp=" + zeros + "0: must be a whole number from 1 to 65536");
  EXPECT_EQ(nvl_option_value("nvl", "strictly", out, msg, sizeof(msg)), -1);
  EXPECT_EQ(std::string(msg), "--nvl=strictly: must be one of strict, prefer, off");
  EXPECT_EQ(nvl_option_value("nvl-ep", "2", out, msg, sizeof(msg)), -1);
  EXPECT_EQ(std::string(msg), "--nvl-ep is not an nvlplace option");
  EXPECT_EQ(nvl_option_value(nullptr, "2", out, msg, sizeof(msg)), -1);
}

TEST(NvlOptionsTest, FromJobEnvironment) {
  char msg[256];
  nvl_job_opts_t o;
  char a[] = "OTHER=1", b[] = "NVLPLACE_TP=4", c[] = "NVLPLACE_NVL=prefer",
       d[] = "NVLPLACE_MAX_TIER=leaf", e[] = "NVLPLACE_TPX=9";
  char* env[] = {a, b, c, d, e};
  EXPECT_EQ(nvl_opts_from_env(env, 5, &o, msg, sizeof(msg)), 1);
  EXPECT_EQ(o.tp, 4);
  EXPECT_EQ(o.pp, 0);
  EXPECT_STREQ(o.nvl, "prefer");
  EXPECT_STREQ(o.max_tier, "leaf");
  EXPECT_EQ(nvl_opts_from_env(env, 1, &o, msg, sizeof(msg)), 0);
  EXPECT_EQ(nvl_opts_from_env(nullptr, 0, &o, msg, sizeof(msg)), 0);
  char f[] = "NVLPLACE_PP=zero";
  char* bad[] = {f};
  EXPECT_EQ(nvl_opts_from_env(bad, 1, &o, msg, sizeof(msg)), -1);
  EXPECT_EQ(std::string(msg), "--nvl-pp=zero: must be a whole number from 1 to 65536");
  // Each value alone is fine; together they are more GPUs than any job (issue 9: this
  // overflowed int in the engine and raised SIGFPE inside slurmctld).
  char g[] = "NVLPLACE_TP=65536", h[] = "NVLPLACE_PP=65536";
  char* big[] = {g, h};
  EXPECT_EQ(nvl_opts_from_env(big, 2, &o, msg, sizeof(msg)), -1);
  EXPECT_EQ(std::string(msg),
            "--nvl-tp=65536 --nvl-pp=65536 --nvl-dp=1: TP x PP x DP = 4294967296 GPUs, more "
            "than a job may have (16777216)");
}

// Which options make a promise the job waits for (the fallback when nvlplace cannot decide).
TEST(NvlOptionsTest, PromisesAJobWaitsFor) {
  struct Case {
    int found;
    int tp;
    const char* nvl;
    const char* max_tier;
    int default_strict;
    int promise;
  } cases[] = {
      {0, 0, "", "", 1, 0},          // no option at all: nothing promised
      {1, 8, "", "", 1, 1},          // --nvl-tp=8 under default_nvl: strict
      {1, 8, "", "", 0, 0},          // --nvl-tp=8 under default_nvl: prefer
      {1, 8, "strict", "", 0, 1},    // --nvl=strict overrides the default
      {1, 8, "prefer", "", 1, 0},    // --nvl=prefer overrides it the other way
      {1, 8, "off", "", 1, 0},       //
      {1, 1, "strict", "", 1, 0},    // TP=1: no group to keep together
      {1, 0, "", "leaf", 0, 1},      // a max tier is always a promise
      {1, 2, "off", "spine", 0, 1},  //
      {-1, 0, "", "", 0, 1},         // unreadable options: held, never run without them
  };
  for (const Case& c : cases) {
    nvl_job_opts_t o{};
    o.tp = c.tp;
    snprintf(o.nvl, sizeof(o.nvl), "%s", c.nvl);
    snprintf(o.max_tier, sizeof(o.max_tier), "%s", c.max_tier);
    EXPECT_EQ(nvl_opts_promise(c.found, &o, c.default_strict), c.promise)
        << "found " << c.found << " tp " << c.tp << " nvl '" << c.nvl << "' tier '" << c.max_tier
        << "' default_strict " << c.default_strict;
  }
}

TEST(NvlOptionsTest, LimitsMatchTheEngine) {
  static_assert(NVL_MAX_GROUP == nvlplace::limits::kMaxGroupSize);
  static_assert(NVL_MAX_JOB_GPUS == nvlplace::limits::kMaxJobGpus);
  nvl_job_opts_t o{};
  char msg[256];
  o.tp = 256;
  o.pp = 256;
  o.dp = 256;  // 2^24: the largest job
  EXPECT_EQ(nvl_check_opts(&o, msg, sizeof(msg)), 0);
  o.dp = 257;
  EXPECT_EQ(nvl_check_opts(&o, msg, sizeof(msg)), -1);
}

// The rank map as the select plugin writes it: a TP=8 job on two trays of rack01 and two of
// rack02, in rank order (gb003 before gb002: tray names interleave the racks).
TEST(NvlOptionsTest, RankMapFindsEachNode) {
  const char* map = "v1 gb001:0-3:nvl72-rack01 gb003:0-3:nvl72-rack01 gb002:0,2:nvl72-rack03/p1";
  struct Case {
    const char* node;
    int rc, node_rank, first_rank, num_gpus;
    const char *gpus, *domain;
  } cases[] = {
      {"gb001", 0, 0, 0, 4, "0-3", "nvl72-rack01"},
      {"gb003", 0, 1, 4, 4, "0-3", "nvl72-rack01"},
      {"gb002", 0, 2, 8, 2, "0,2", "nvl72-rack03/p1"},
      {"gb00", 1, 0, 0, 0, "", ""},
      {"gb0010", 1, 0, 0, 0, "", ""},
  };
  for (const Case& c : cases) {
    nvl_rankmap_entry_t e;
    ASSERT_EQ(nvl_rankmap_find(map, c.node, &e), c.rc) << c.node;
    EXPECT_EQ(e.num_nodes, 3) << c.node;
    if (c.rc != 0) continue;
    EXPECT_EQ(e.node_rank, c.node_rank) << c.node;
    EXPECT_EQ(e.first_rank, c.first_rank) << c.node;
    EXPECT_EQ(e.num_gpus, c.num_gpus) << c.node;
    EXPECT_STREQ(e.gpus, c.gpus);
    EXPECT_STREQ(e.domain, c.domain);
  }
  // Node islands: a domain name holds ':'; two domains on one node.
  nvl_rankmap_entry_t e;
  ASSERT_EQ(nvl_rankmap_find("v1 node00:0-7:node00:nvl0,node00:nvl1", "node00", &e), 0);
  EXPECT_STREQ(e.domain, "node00:nvl0,node00:nvl1");
  EXPECT_EQ(e.num_gpus, 8);
}

TEST(NvlOptionsTest, RankMapRefusesWhatItCannotRead) {
  nvl_rankmap_entry_t e;
  for (const char* bad :
       {"", "v2 a:0:d", "v1x", "v1 a", "v1 a:0", "v1 :0:d", "v1 a::d", "v1 a:0-:d", "v1 a:3-1:d",
        "v1 a:0,:d", "v1 a:x:d", "v1 a:12345678:d", "v1 a:0-16777216:d b:0:d"}) {
    EXPECT_EQ(nvl_rankmap_find(bad, "a", &e), -1) << bad;
  }
  EXPECT_EQ(nvl_rankmap_find(nullptr, "a", &e), -1);
  EXPECT_EQ(nvl_rankmap_find("v1", "a", &e), 1);
  std::string long_domain = "v1 a:0:" + std::string(sizeof(e.domain), 'd');
  EXPECT_EQ(nvl_rankmap_find(long_domain.c_str(), "a", &e), -1);
}

// A node of 16 GPUs without NVLink (one domain per GPU, long names: 373 bytes of domains,
// once cut whole) and a node whose GPUs are in rank order, not by index.
TEST(NvlOptionsTest, RankMapReadsLongDomainListsAndRankOrderedGpus) {
  std::string domains;
  for (int g = 0; g < 16; ++g) {
    domains += (g ? "," : "") + std::string("inference-node-01:gpu") + std::to_string(g);
  }
  ASSERT_GT(domains.size(), 370u);
  std::string map = "v1 inference-node-01:0-15:" + domains + " n1:0,2,1,3:n1:nvl0,n1:nvl1";
  nvl_rankmap_entry_t e;
  ASSERT_EQ(nvl_rankmap_find(map.c_str(), "inference-node-01", &e), 0);
  EXPECT_EQ(e.num_gpus, 16);
  EXPECT_EQ(e.domain, domains);
  ASSERT_EQ(nvl_rankmap_find(map.c_str(), "n1", &e), 0);
  EXPECT_EQ(e.first_rank, 16);
  EXPECT_EQ(e.num_gpus, 4);
  EXPECT_STREQ(e.gpus, "0,2,1,3");
}

TEST(NvlOptionsTest, RankMapFileIsAHostfileInRankOrder) {
  char buf[1024];
  int n = nvl_rankmap_hostfile("v1 gb003:0-3:nvl72-rack01 gb001:0,2:nvl72-rack03/p1", "42", buf,
                               sizeof(buf));
  ASSERT_GT(n, 0);
  std::string text(buf, static_cast<size_t>(n));
  EXPECT_EQ(text.substr(0, 31), "# nvlplace rank map of job 42: ");
  // The hostfile lines, in the map's order (not by name).
  std::string lines = text.substr(text.find("\ngb003") + 1);
  EXPECT_EQ(lines,
            "gb003 slots=4 # node_rank=0 first_rank=0 gpus=0-3 nvlink_domain=nvl72-rack01\n"
            "gb001 slots=2 # node_rank=1 first_rank=4 gpus=0,2 nvlink_domain=nvl72-rack03/p1\n");
  EXPECT_EQ(static_cast<size_t>(n), strlen(buf));
}

TEST(NvlOptionsTest, RankMapFileRefusesABadMapOrASmallBuffer) {
  char buf[1024];
  for (const char* bad : {"", "v1", "v2 a:0:d", "v1 a:0-:d", "v1 a:0:d b"}) {
    EXPECT_EQ(nvl_rankmap_hostfile(bad, "1", buf, sizeof(buf)), -1) << bad;
  }
  EXPECT_EQ(nvl_rankmap_hostfile(nullptr, "1", buf, sizeof(buf)), -1);
  EXPECT_EQ(nvl_rankmap_hostfile("v1 a:0:d", nullptr, buf, sizeof(buf)), -1);
  char small[200];
  EXPECT_EQ(nvl_rankmap_hostfile("v1 a:0:d", "1", small, sizeof(small)), -1);
  EXPECT_EQ(nvl_rankmap_hostfile("v1 a:0:d", "1", buf, 0), -1);
}

}  // namespace
