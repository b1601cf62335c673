// Fuzzes the C facade the select plugin calls: nvl_facade_place, nvl_facade_more until 0,
// nvl_result_clear, with node arrays and requests built from the input. Contract checked here
// beyond "no crash": a negative node count and a node entry with free_gpus == NULL and
// num_free > 0 are caller errors, refused (NVL_BAD_REQUEST or NVL_INTERNAL) and never read,
// whatever the names or flags; every candidate names usable known nodes of the caller's
// array, ascending, and free GPUs.
//
// Input (tests/fuzz/fuzz_common.h ByteReader): flags (bit 0 ignore_busy, 1 exclusive, 2 pass
// nodes == NULL, 3 pass -num_nodes, 4 facade NULL, 5 request NULL, 6 the second
// configuration); six int32 (gpus, nodes, gpus_per_node, tp, pp, dp); nvl and max_tier, each
// a length byte (0xff: NULL) then bytes; a node count byte; per node: a name byte (0xff NULL,
// 0xfe a length-prefixed string, else "node%02d" of it mod 20, 16-19 unknown), a usable byte,
// a free count byte (bit 7: free_gpus NULL; 0xff: NULL with INT_MAX) and that many int8
// GPU indexes. Then, for nvl_decide in WILL_RUN (backfill's question, with the running
// jobs' end times), read from what is left: per node a busy count byte (bit 7: busy_gpus and
// busy_until NULL) and that many (int8 GPU, int32 seconds after now) pairs, then the window
// (two int32, seconds after now; 0: none). Checked: a NULL busy list with a count is
// refused and never read; a start time is 0 or within [now, the window's end]; every node
// set is on usable known nodes, ascending.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin/nvlplace_facade.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

constexpr int kGpusPerNode = 8;  // every node of lab-islands
nvl_facade_t* g_facade[2];

// The configuration, written to a temporary nvlplace.yaml and loaded once.
nvl_facade_t* Load(const std::string& text) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("nvlplace-facade-fuzz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "nvlplace.yaml").string();
  std::ofstream(path) << text;
  char err[1024] = "";
  nvl_facade_t* f = nvl_facade_load(path.c_str(), err, sizeof(err));
  std::filesystem::remove_all(dir);
  FUZZ_CHECK(f != nullptr, "cannot load %s: %s", text.c_str(), err);
  return f;
}

std::optional<std::string> NullableStr(nvlplace::fuzz::ByteReader& in) {
  uint8_t n = in.U8();
  if (n == 0xff) return std::nullopt;
  std::string s;
  for (uint8_t i = 0; i < n && !in.empty(); ++i) s.push_back(static_cast<char>(in.U8()));
  return s;
}

struct Entry {
  std::optional<std::string> name;
  int usable = 0;
  bool null_free = false;
  int num_free = 0;
  std::vector<int> free;
};

bool IsFreeIn(const std::vector<Entry>& entries, const std::string& name, int gpu) {
  for (const Entry& e : entries) {
    if (e.name && *e.name == name && !e.null_free &&
        std::find(e.free.begin(), e.free.end(), gpu) != e.free.end()) {
      return true;
    }
  }
  return false;
}

void CheckResult(const nvl_result_t& r, const std::vector<Entry>& entries, int num_nodes,
                 const nvl_request_t& q, bool ignore_busy) {
  FUZZ_CHECK(r.status >= NVL_PLACED && r.status <= NVL_INTERNAL, "status %d", r.status);
  FUZZ_CHECK(r.request && r.reason && r.relaxations, "NULL text in the result");
  (void)std::strlen(r.request);
  (void)std::strlen(r.reason);
  (void)std::strlen(r.relaxations);
  if (r.status != NVL_PLACED) {
    FUZZ_CHECK(r.num_candidates == 0, "%d candidates, status %d", r.num_candidates, r.status);
    FUZZ_CHECK(*r.reason, "status %d without a reason", r.status);
    return;
  }
  FUZZ_CHECK(r.num_candidates >= 1 && r.num_candidates <= 16 && r.candidates, "%d candidates",
             r.num_candidates);
  for (int c = 0; c < r.num_candidates; ++c) {
    const nvl_candidate_t& cand = r.candidates[c];
    FUZZ_CHECK(cand.num_nodes >= 1 && cand.nodes && cand.gpu_offsets && cand.gpus && cand.describe,
               "candidate %d is empty", c);
    (void)std::strlen(cand.describe);
    FUZZ_CHECK(cand.gpu_offsets[0] == 0, "candidate %d starts at %d", c, cand.gpu_offsets[0]);
    for (int k = 0; k < cand.num_nodes; ++k) {
      int i = cand.nodes[k];
      FUZZ_CHECK(i >= 0 && i < num_nodes, "node index %d of %d", i, num_nodes);
      FUZZ_CHECK(k == 0 || cand.nodes[k - 1] < i, "node indexes not ascending");
      const Entry& e = entries[i];
      FUZZ_CHECK(e.name.has_value(), "candidate on a NULL name");
      FUZZ_CHECK(e.usable, "candidate on unusable entry %d (%s)", i, e.name->c_str());
      FUZZ_CHECK(cand.gpu_offsets[k + 1] > cand.gpu_offsets[k], "no GPU on node %d", i);
      for (int j = cand.gpu_offsets[k]; j < cand.gpu_offsets[k + 1]; ++j) {
        int g = cand.gpus[j];
        FUZZ_CHECK(g >= 0 && g < kGpusPerNode, "GPU index %d", g);
        FUZZ_CHECK(j == cand.gpu_offsets[k] || cand.gpus[j - 1] < g, "GPUs not ascending");
        FUZZ_CHECK(ignore_busy || IsFreeIn(entries, *e.name, g), "%s:%d is not free",
                   e.name->c_str(), g);
      }
    }
    int total = cand.gpu_offsets[cand.num_nodes];
    if (q.gpus > 0 && q.nodes <= 0 && q.gpus_per_node <= 0) {
      FUZZ_CHECK(total == q.gpus, "candidate %d has %d GPUs for %d", c, total, q.gpus);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string topology = std::string(NVLPLACE_SOURCE_DIR) + "/configs/lab-islands.yaml";
  g_facade[0] = Load("topology: " + topology + "\ncandidates: 3\n");
  g_facade[1] =
      Load("topology: " + topology + "\npolicy: pack\ncandidates: 16\ndefault_nvl: prefer\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nvlplace::fuzz::ByteReader in(data, size);
  const uint8_t flags = in.U8();
  const bool ignore_busy = flags & 1;
  nvl_request_t q{};
  q.job_id = 7;
  q.ignore_busy = ignore_busy;
  q.exclusive = (flags >> 1) & 1;
  q.gpus = in.I32();
  q.nodes = in.I32();
  q.gpus_per_node = in.I32();
  q.tp = in.I32();
  q.pp = in.I32();
  q.dp = in.I32();
  std::optional<std::string> nvl = NullableStr(in), tier = NullableStr(in);
  q.nvl = nvl ? nvl->c_str() : nullptr;
  q.max_tier = tier ? tier->c_str() : nullptr;

  std::vector<Entry> entries(in.U8());
  for (Entry& e : entries) {
    uint8_t name = in.U8();
    if (name == 0xfe) {
      e.name = in.Str();
    } else if (name != 0xff) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "node%02d", name % 20);
      e.name = buf;
    }
    e.usable = in.U8() & 1;
    uint8_t count = in.U8();
    e.null_free = count & 0x80;
    e.num_free = count == 0xff ? INT_MAX : count & 0x7f;
    if (!e.null_free) {
      for (int k = 0; k < e.num_free; ++k) e.free.push_back(in.I8());
    }
  }
  std::vector<nvl_node_t> nodes;
  for (const Entry& e : entries) {
    nodes.push_back({e.name ? e.name->c_str() : nullptr, e.usable,
                     e.null_free ? nullptr : e.free.data(), e.num_free});
  }
  const int num_nodes = static_cast<int>(nodes.size());
  const bool null_nodes = flags & 4, negative = flags & 8;
  const bool null_facade = flags & 16, null_request = flags & 32;
  nvl_facade_t* facade = null_facade ? nullptr : g_facade[(flags >> 6) & 1];

  nvl_result_t r;
  int status = nvl_facade_place(facade, null_nodes ? nullptr : nodes.data(),
                                negative ? -num_nodes : num_nodes, null_request ? nullptr : &q, &r);
  FUZZ_CHECK(status == r.status, "returned %d, result says %d", status, r.status);
  bool caller_error = null_facade || null_request || (num_nodes > 0 && (null_nodes || negative));
  bool null_free = false;
  for (const Entry& e : entries) null_free |= e.null_free && e.num_free > 0;
  if (!negative && !null_nodes && null_free) caller_error = true;
  if (caller_error) {
    FUZZ_CHECK(status == NVL_BAD_REQUEST || status == NVL_INTERNAL,
               "caller error not refused (NULL facade, request, nodes or free_gpus): status %d",
               status);
  }
  CheckResult(r, entries, num_nodes, q, ignore_busy);
  int more = 0;
  while (nvl_facade_more(facade, &r)) {
    FUZZ_CHECK(++more <= 16, "nvl_facade_more keeps adding candidates");
    CheckResult(r, entries, num_nodes, q, ignore_busy);
  }
  CheckResult(r, entries, num_nodes, q, ignore_busy);
  nvl_result_clear(&r);
  FUZZ_CHECK(r.priv == nullptr, "nvl_result_clear left its storage");

  if (null_facade || null_nodes || negative) return 0;
  constexpr int64_t kNow = 1000000000;
  std::vector<std::vector<int>> busy(entries.size());
  std::vector<std::vector<int64_t>> until(entries.size());
  bool null_busy = false;
  for (size_t i = 0; i < entries.size() && !in.empty(); ++i) {
    uint8_t count = in.U8();
    for (int k = 0; k < (count & 0x7f); ++k) {
      busy[i].push_back(in.I8());
      until[i].push_back(kNow + in.I32());
    }
    nodes[i].num_busy = count & 0x7f;
    if (count & 0x80) {
      null_busy |= nodes[i].num_busy > 0;
    } else {
      nodes[i].busy_gpus = busy[i].data();
      nodes[i].busy_until = until[i].data();
    }
  }
  nvl_job_t job{};
  job.job_id = 7;
  job.mode = NVL_MODE_WILL_RUN;
  job.gpus_per_job = q.gpus > 0 ? static_cast<uint64_t>(q.gpus) : 0;
  job.gpu_requests = q.gpus > 0 ? 1 : 0;
  job.min_nodes = 1;
  job.now = kNow;
  int32_t from = in.I32(), to = in.I32();
  job.will_run_start = from ? kNow + from : 0;
  job.will_run_end = to ? kNow + to : 0;
  std::string env[2] = {"NVLPLACE_TP=" + std::to_string(q.tp),
                        "NVLPLACE_NVL=" + std::string(q.nvl ? q.nvl : "strict")};
  char* envp[2] = {env[0].data(), env[1].data()};
  job.env = envp;
  job.env_size = 2;
  nvl_decision_t* d = nvl_decide(facade, &job, nodes.data(), num_nodes);
  FUZZ_CHECK(d != nullptr, "no decision");
  int action = nvl_decision_action(d);
  if (null_busy || null_free) {
    FUZZ_CHECK(action == NVL_ACT_CONS_TRES, "a NULL busy or free list was not refused");
  }
  int64_t start = nvl_decision_start_time(d);
  int64_t last = job.will_run_end > 0 ? std::max(job.will_run_end, kNow) : INT64_MAX;
  FUZZ_CHECK(start == 0 || (start >= kNow && start >= job.will_run_start && start <= last),
             "start time %lld outside [now, %lld]", static_cast<long long>(start),
             static_cast<long long>(last));
  FUZZ_CHECK(start == 0 || action == NVL_ACT_TRY, "a start time without node sets");
  for (int c = 0; action == NVL_ACT_TRY && c < 16; ++c) {
    const nvl_candidate_t* cand = nvl_decision_candidate(d, c);
    if (cand == nullptr) {
      FUZZ_CHECK(c > 0, "NVL_ACT_TRY without a node set");
      break;
    }
    for (int k = 0; k < cand->num_nodes; ++k) {
      int i = cand->nodes[k];
      FUZZ_CHECK(i >= 0 && i < num_nodes && entries[i].name && entries[i].usable &&
                     (k == 0 || cand->nodes[k - 1] < i),
                 "node set %d: bad node index %d", c, i);
    }
    nvl_decision_refused(d, c);
  }
  nvl_decision_free(d);
  return 0;
}
