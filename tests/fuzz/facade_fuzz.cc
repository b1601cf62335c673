// Fuzzes the one way slurmctld calls the engine: nvl_decide with the values nvl_ctld.c hands
// it (the job's GPU counts, node counts and SPANK environment, every node's free GPU indexes,
// in WILL_RUN the running jobs' end times and backfill's window), then the steps job_test
// takes (node sets in turn, refused or taken with what Slurm would allocate, exhausted) in an
// order the input chooses. Contract checked beyond "no crash": a decision always comes back;
// a negative node count, a NULL node array with a count, and a NULL free or busy list with a
// count are caller errors, left to cons_tres and never read; every node set is on usable,
// known nodes of the caller's array, ascending, with ascending GPUs that are free (TEST_ONLY:
// any), as many nodes as the job allows; a start time is 0 or within [now, the window's end]
// and only with node sets; a hard job never accepts an allocation other than its node set;
// the node array and its GPU lists are read during nvl_decide only (freed when it returns, as
// nvl_ctld.c frees its snapshot).
//
// Input (tests/fuzz/fuzz_common.h ByteReader; the first part is the layout of the earlier
// target, so its findings still reach the same values): flags (bit 0 TEST_ONLY instead of
// RUN_NOW, 1 --exclusive, 2 pass nodes == NULL, 3 pass -num_nodes, 4 facade NULL, 5 job
// NULL, 6 the second configuration, 7 at submit: GPU counts as tres_per_* text); six int32
// (GPUs, nodes, GPUs per node, TP, PP, DP: a non-zero TP/PP/DP becomes NVLPLACE_TP=<value>
// and so on, as the SPANK plugin would write it; nodes > 0 is -N); nvl and max_tier, each a
// length byte (0xff: not given) then bytes; a node count byte; per node: a name byte (0xff
// NULL, 0xfe a length-prefixed string, else "node%02d" of it mod 20, 16-19 unknown), a usable
// byte, a free count byte (bit 7: free_gpus NULL; 0xff: NULL with INT_MAX) and that many
// int8 GPU indexes. Then, for a second decision in WILL_RUN: per node a busy count byte (bit
// 7: busy_gpus and busy_until NULL) and that many (int8 GPU, int32 seconds after now) pairs,
// and the window (two int32, seconds after now; 0: none). Then the steps, a byte each (low
// two bits: candidate, refused, took as decided or with one GPU moved, exhausted; the rest
// the node set's index), applied to both decisions, and to a second look with preemption
// (RUN_NOW), where "took" is cons_tres preempting on the node set's nodes (bit 7: all but
// its last).
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "plugin/nvlplace_facade.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

constexpr int kGpusPerNode = 8;  // every node of lab-islands
constexpr int64_t kNow = 1000000000;
nvl_facade_t* g_facade[2];
nvl_facade_t* g_twin[2];  // the same configurations, their kept states left otherwise

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

void CheckText(const char* text) {
  if (text != nullptr) (void)std::strlen(text);
}

void CheckCandidate(const nvl_candidate_t& c, int i, const std::vector<Entry>& entries,
                    int num_nodes, const nvl_job_t& job, bool any_gpu) {
  FUZZ_CHECK(c.num_nodes >= 1 && c.nodes && c.gpu_offsets && c.gpus && c.describe,
             "node set %d is empty", i);
  CheckText(c.describe);
  FUZZ_CHECK(c.gpu_offsets[0] == 0, "node set %d starts at %d", i, c.gpu_offsets[0]);
  FUZZ_CHECK(c.num_nodes >= static_cast<int64_t>(job.min_nodes) &&
                 (job.max_nodes == 0 || c.num_nodes <= static_cast<int64_t>(job.max_nodes)),
             "node set %d has %d nodes; the job takes %u to %u", i, c.num_nodes, job.min_nodes,
             job.max_nodes);
  for (int k = 0; k < c.num_nodes; ++k) {
    int n = c.nodes[k];
    FUZZ_CHECK(n >= 0 && n < num_nodes, "node index %d of %d", n, num_nodes);
    FUZZ_CHECK(k == 0 || c.nodes[k - 1] < n, "node indexes not ascending");
    const Entry& e = entries[n];
    FUZZ_CHECK(e.name.has_value() && e.usable, "node set %d on unusable or unnamed entry %d", i, n);
    FUZZ_CHECK(c.gpu_offsets[k + 1] > c.gpu_offsets[k], "no GPU on node %d", n);
    for (int j = c.gpu_offsets[k]; j < c.gpu_offsets[k + 1]; ++j) {
      int g = c.gpus[j];
      FUZZ_CHECK(g >= 0 && g < kGpusPerNode, "GPU index %d", g);
      FUZZ_CHECK(j == c.gpu_offsets[k] || c.gpus[j - 1] < g, "GPUs not ascending");
      FUZZ_CHECK(any_gpu || IsFreeIn(entries, *e.name, g), "%s:%d is not free", e.name->c_str(), g);
    }
  }
}

// nvl_decide as nvl_ctld.c calls it: the node array and its GPU lists are a snapshot freed as
// soon as the call returns (the names stay: slurmctld's node records), so that a decision
// that reads them later is a use after free here.
nvl_decision_t* DecideOnSnapshot(nvl_facade_t* facade, const nvl_job_t* job,
                                 const nvl_node_t* nodes, int count) {
  if (nodes == nullptr || count <= 0) return nvl_decide(facade, job, nodes, count);
  std::vector<nvl_node_t> snapshot(nodes, nodes + count);
  std::deque<std::vector<int>> ints;
  std::deque<std::vector<int64_t>> ends;
  for (nvl_node_t& n : snapshot) {
    if (n.free_gpus != nullptr && n.num_free > 0) {
      n.free_gpus = ints.emplace_back(n.free_gpus, n.free_gpus + n.num_free).data();
    }
    if (n.busy_gpus != nullptr && n.num_busy > 0) {
      n.busy_gpus = ints.emplace_back(n.busy_gpus, n.busy_gpus + n.num_busy).data();
    }
    if (n.busy_until != nullptr && n.num_busy > 0) {
      n.busy_until = ends.emplace_back(n.busy_until, n.busy_until + n.num_busy).data();
    }
  }
  return nvl_decide(facade, job, snapshot.data(), count);
}

// The steps of job_test on one decision, as the input orders them.
// `preempts`: a second look with preemption, where cons_tres accepts a node set only by
// preempting (nvl_decision_preempts: its nodes, or all but the last).
void Steps(nvl_decision_t* d, const std::vector<uint8_t>& steps, const std::vector<Entry>& entries,
           int num_nodes, const nvl_job_t& job, bool preempts = false) {
  const bool any_gpu = job.mode != NVL_MODE_RUN_NOW;  // WILL_RUN: GPUs free by its start
  const bool try_sets = nvl_decision_action(d) == NVL_ACT_TRY;
  for (uint8_t step : steps) {
    const int i = step >> 2;
    const nvl_candidate_t* c = nvl_decision_candidate(d, i);
    FUZZ_CHECK(c == nullptr || try_sets, "node set %d without NVL_ACT_TRY (action %d)", i,
               nvl_decision_action(d));
    if (c != nullptr) CheckCandidate(*c, i, entries, num_nodes, job, any_gpu);
    switch (step & 3) {
      case 0:
        break;
      case 1:
        nvl_decision_refused(d, i);
        break;
      case 2: {
        if (c == nullptr) {
          (void)nvl_decision_took(d, -1, nullptr);
          break;
        }
        // As decided, or with the last GPU moved to another index (what cons_tres choosing
        // on its own would look like).
        if (preempts) {
          int n = (step & 0x80) && c->num_nodes > 1 ? c->num_nodes - 1 : c->num_nodes;
          std::vector<int> offsets(n + 1, 0);
          nvl_layout_t nodes{n, c->nodes, offsets.data(), nullptr};
          int ok = nvl_decision_preempts(d, i, &nodes, 1 + (step >> 5));
          FUZZ_CHECK(ok == 0 || ok == 1, "preempts returned %d", ok);
          FUZZ_CHECK(nvl_decision_rankmap(d) == nullptr, "a rank map for a job that waits");
          break;
        }
        std::vector<int> gpus(c->gpus, c->gpus + c->gpu_offsets[c->num_nodes]);
        bool moved = (step & 0x80) && !gpus.empty();
        if (moved) gpus.back() = (gpus.back() + 1) % kGpusPerNode;
        nvl_layout_t got{c->num_nodes, c->nodes, c->gpu_offsets, gpus.data()};
        int ok = nvl_decision_took(d, i, &got);
        FUZZ_CHECK(ok == 0 || ok == 1, "took returned %d", ok);
        FUZZ_CHECK(!nvl_decision_starting(d) || (ok == 1 && job.mode == NVL_MODE_RUN_NOW),
                   "a start waits for slurmctld after took returned %d in mode %d", ok, job.mode);
        // What slurmctld did with it: started the job, or kept it pending.
        if (nvl_decision_starting(d)) {
          if (step & 0x40) {
            nvl_decision_started(d);
          } else {
            nvl_decision_dropped(d, (step & 0x20) ? "NvidiaImexChannels" : nullptr);
            FUZZ_CHECK(nvl_decision_rankmap(d) == nullptr, "a rank map for a dropped start");
          }
          FUZZ_CHECK(!nvl_decision_starting(d), "a start still waits after slurmctld's answer");
        }
        break;
      }
      case 3: {
        int a = nvl_decision_exhausted(d);
        FUZZ_CHECK(a == NVL_ACT_CONS_TRES || a == NVL_ACT_REFUSE, "exhausted: action %d", a);
        break;
      }
    }
    int level = -1;
    CheckText(nvl_decision_log(d, &level));
    CheckText(nvl_decision_comment(d));
    CheckText(nvl_decision_reason(d));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string topology = std::string(NVLPLACE_SOURCE_DIR) + "/configs/lab-islands.yaml";
  const std::string configs[2] = {
      "topology: " + topology + "\ncandidates: 3\n",
      "topology: " + topology + "\npolicy: pack\ncandidates: 16\ndefault_nvl: prefer\n"};
  for (int k = 0; k < 2; ++k) {
    g_facade[k] = Load(configs[k]);
    g_twin[k] = Load(configs[k]);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nvlplace::fuzz::ByteReader in(data, size);
  const uint8_t flags = in.U8();
  const int32_t gpus = in.I32(), nodes_wanted = in.I32(), per_node = in.I32();
  const int32_t sizes[3] = {in.I32(), in.I32(), in.I32()};
  std::optional<std::string> nvl = NullableStr(in), tier = NullableStr(in);

  // The job as _job_of (or, at submit, nvl_ctld_submit_check) fills it.
  std::vector<std::string> env;
  const char* const names[3] = {"NVLPLACE_TP=", "NVLPLACE_PP=", "NVLPLACE_DP="};
  for (int k = 0; k < 3; ++k) {
    if (sizes[k] != 0) env.push_back(names[k] + std::to_string(sizes[k]));
  }
  if (nvl) env.push_back("NVLPLACE_NVL=" + *nvl);
  if (tier) env.push_back("NVLPLACE_MAX_TIER=" + *tier);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  nvl_job_t job{};
  job.job_id = 7;
  job.mode = (flags & 1) ? NVL_MODE_TEST_ONLY : NVL_MODE_RUN_NOW;
  job.gpus_per_job = static_cast<uint32_t>(gpus);
  job.gpus_per_node = static_cast<uint32_t>(per_node);
  job.gpu_requests = gpus != 0 || per_node != 0;
  job.min_nodes = nodes_wanted > 0 ? static_cast<uint32_t>(nodes_wanted) : 1;
  job.max_nodes = nodes_wanted > 0 ? static_cast<uint32_t>(nodes_wanted) : 500000;
  job.whole_node = (flags >> 1) & 1;
  job.env = envp.data();
  job.env_size = static_cast<uint32_t>(envp.size());
  job.now = kNow;
  std::string tres[2];
  if (flags & 0x80) {  // at submit: the description's strings
    tres[0] = "gres/gpu:" + (nvl ? *nvl + ":" : std::string()) + std::to_string(gpus);
    tres[1] = "gres:gpu:" + std::to_string(per_node);
    job.tres_per_job = gpus != 0 ? tres[0].c_str() : nullptr;
    job.tres_per_node = per_node != 0 ? tres[1].c_str() : "";
  }

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
  const bool null_facade = flags & 16, null_job = flags & 32;
  nvl_facade_t* facade = null_facade ? nullptr : g_facade[(flags >> 6) & 1];
  bool null_free = false;
  for (const Entry& e : entries) null_free |= e.null_free && e.num_free > 0;

  // WILL_RUN's busy lists and window, then the steps.
  std::vector<std::vector<int>> busy(entries.size());
  std::vector<std::vector<int64_t>> until(entries.size());
  std::vector<nvl_node_t> will_nodes = nodes;
  bool null_busy = false;
  for (size_t i = 0; i < entries.size() && !in.empty(); ++i) {
    uint8_t count = in.U8();
    for (int k = 0; k < (count & 0x7f); ++k) {
      busy[i].push_back(in.I8());
      until[i].push_back(kNow + in.I32());
    }
    will_nodes[i].num_busy = count & 0x7f;
    if (count & 0x80) {
      null_busy |= will_nodes[i].num_busy > 0;
    } else {
      will_nodes[i].busy_gpus = busy[i].data();
      will_nodes[i].busy_until = until[i].data();
    }
  }
  int32_t from = in.I32(), to = in.I32();
  std::vector<uint8_t> steps;
  while (!in.empty() && steps.size() < 64) steps.push_back(in.U8());

  const nvl_node_t* given = null_nodes ? nullptr : nodes.data();
  const int count = negative ? -num_nodes : num_nodes;
  nvl_decision_t* d = DecideOnSnapshot(facade, null_job ? nullptr : &job, given, count);
  FUZZ_CHECK(d != nullptr, "no decision");
  int action = nvl_decision_action(d);
  FUZZ_CHECK(action >= NVL_ACT_CONS_TRES && action <= NVL_ACT_REFUSE, "action %d", action);
  const bool caller_error = null_job || (num_nodes > 0 && (null_nodes || negative)) ||
                            (!null_nodes && !negative && null_free);
  if (caller_error && !null_facade) {
    FUZZ_CHECK(action == NVL_ACT_CONS_TRES,
               "a caller error (NULL job, nodes or free list) was not left to cons_tres: %d",
               action);
  }
  CheckText(nvl_decision_reason(d));
  if (!caller_error && !null_facade) {
    // The facade keeps its engine state between calls: its twin, whose kept state a decision
    // on every GPU free has just left otherwise, decides the same (action, node sets, start,
    // comment; not the log line, which is once per job and text).
    nvl_facade_t* twin = g_twin[(flags >> 6) & 1];
    std::vector<std::vector<int>> all_free(entries.size());
    std::vector<nvl_node_t> scramble = nodes;
    for (size_t i = 0; i < entries.size(); ++i) {
      for (int g = 0; g < kGpusPerNode; ++g) all_free[i].push_back(g);
      scramble[i].free_gpus = all_free[i].data();
      scramble[i].num_free = kGpusPerNode;
    }
    nvl_job_t run_now = job;
    run_now.mode = NVL_MODE_RUN_NOW;
    nvl_decision_free(nvl_decide(twin, &run_now, scramble.data(), num_nodes));
    nvl_decision_t* t = DecideOnSnapshot(twin, &job, given, count);
    FUZZ_CHECK(nvl_decision_action(t) == action, "the twin's action %d, not %d",
               nvl_decision_action(t), action);
    FUZZ_CHECK(nvl_decision_start_time(t) == nvl_decision_start_time(d), "the twin's start");
    const char* tc = nvl_decision_comment(t);
    const char* dc = nvl_decision_comment(d);
    FUZZ_CHECK((tc == nullptr) == (dc == nullptr) && (tc == nullptr || std::strcmp(tc, dc) == 0),
               "the twin's comment %s, not %s", tc ? tc : "(none)", dc ? dc : "(none)");
    for (int i = 0; i < 2; ++i) {
      const nvl_candidate_t* a = nvl_decision_candidate(d, i);
      const nvl_candidate_t* b = nvl_decision_candidate(t, i);
      FUZZ_CHECK((a == nullptr) == (b == nullptr), "the twin's node set %d", i);
      if (a == nullptr) break;
      FUZZ_CHECK(std::strcmp(a->describe, b->describe) == 0, "the twin's node set %d: %s, not %s",
                 i, b->describe, a->describe);
      FUZZ_CHECK(a->num_nodes == b->num_nodes &&
                     std::equal(a->nodes, a->nodes + a->num_nodes, b->nodes) &&
                     std::equal(a->gpus, a->gpus + a->gpu_offsets[a->num_nodes], b->gpus),
                 "the twin's node set %d differs: %s", i, b->describe);
    }
    nvl_decision_free(t);
  }
  Steps(d, steps, entries, num_nodes, job);
  nvl_decision_free(d);

  // The same job when slurmctld could free no more GPUs (free_is_all): a RUN_NOW refusal that
  // leaves no comment is the one for too few free GPUs, and then the engine could not have
  // placed the job either.
  if (!caller_error && !null_facade && job.mode == NVL_MODE_RUN_NOW) {
    nvl_job_t all = job;
    all.free_is_all = 1;
    nvl_decision_t* q = DecideOnSnapshot(facade, &all, given, count);
    if (nvl_decision_action(q) == NVL_ACT_REFUSE && !nvl_decision_comment(q)) {
      uint64_t free = 0;
      for (const Entry& e : entries)
        free += e.name && e.usable ? static_cast<uint64_t>(e.num_free) : 0;
      const uint64_t needed =
          std::max<uint64_t>(job.gpus_per_job, uint64_t{job.gpus_per_node} * job.min_nodes);
      FUZZ_CHECK(!nvl_decision_hold(q) && free < needed && action != NVL_ACT_TRY,
                 "refused without a comment: %llu GPUs free, %llu needed, action %d without",
                 static_cast<unsigned long long>(free), static_cast<unsigned long long>(needed),
                 action);
    }
    nvl_decision_free(q);
    // A second look, the GPUs of preemptable jobs counted as free: a wait says nothing (the
    // first look's line stands); a node set is offered, and cons_tres preempts for it.
    nvl_job_t again = job;
    again.preempting = 1;
    nvl_decision_t* p = DecideOnSnapshot(facade, &again, given, count);
    if (nvl_decision_action(p) == NVL_ACT_REFUSE) {
      const char* said = nvl_decision_log(p, nullptr);
      FUZZ_CHECK(!nvl_decision_comment(p) && !said, "a second look that refuses said: %s",
                 said ? said : "(a comment only)");
    }
    Steps(p, steps, entries, num_nodes, again, /*preempts=*/true);
    nvl_decision_free(p);
  }

  if (null_facade || null_nodes || negative || null_job) return 0;
  job.mode = NVL_MODE_WILL_RUN;
  job.tres_per_job = job.tres_per_node = nullptr;
  job.will_run_start = from ? kNow + from : 0;
  job.will_run_end = to ? kNow + to : 0;
  d = DecideOnSnapshot(facade, &job, will_nodes.data(), num_nodes);
  FUZZ_CHECK(d != nullptr, "no decision");
  action = nvl_decision_action(d);
  if (null_busy || null_free) {
    FUZZ_CHECK(action == NVL_ACT_CONS_TRES, "a NULL busy or free list was not refused");
  }
  int64_t start = nvl_decision_start_time(d);
  int64_t last = job.will_run_end > 0 ? std::max(job.will_run_end, kNow) : INT64_MAX;
  FUZZ_CHECK(start == 0 || (start >= kNow && start >= job.will_run_start && start <= last),
             "start time %lld outside [now, %lld]", static_cast<long long>(start),
             static_cast<long long>(last));
  FUZZ_CHECK(start == 0 || action == NVL_ACT_TRY, "a start time without node sets");
  Steps(d, steps, entries, num_nodes, job);
  nvl_decision_free(d);

  // Requeued, with a previous SystemComment of the input's text: a placement line whose
  // domains and back_to are the input's strings (quotes, spaces, '=' and all), or the text
  // as it is (a comment that is no line).
  const std::string previous = (flags & 2)
                                   ? nvl.value_or("")
                                   : "nvlplace: v=1 event=placed domains=" + nvl.value_or("") +
                                         " back_to=" + tier.value_or("");
  job.mode = NVL_MODE_RUN_NOW;
  job.restarts = 1;
  job.previous_comment = previous.c_str();
  d = DecideOnSnapshot(facade, &job, nodes.data(), num_nodes);
  FUZZ_CHECK(d != nullptr, "no decision");
  action = nvl_decision_action(d);
  FUZZ_CHECK(action >= NVL_ACT_CONS_TRES && action <= NVL_ACT_REFUSE, "action %d", action);
  Steps(d, steps, entries, num_nodes, job);
  nvl_decision_free(d);
  return 0;
}
