// The replay subcommand of nvlplace: a trace through the engine under several policies.
#include "contrib/cli/cmd_replay.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "contrib/cli/cli_common.h"
#include "contrib/replay/report.h"
#include "contrib/replay/simulator.h"
#include "contrib/replay/trace.h"
#include "placement/formats/nvlink_health_yaml.h"
#include "placement/formats/read_file.h"
#include "placement/formats/topology_yaml.h"
#include "placement/model/limits.h"
#include "policies/policy_loader.h"

namespace nvlplace::cli {
namespace {

constexpr int kMaxThreads = 1024;
// Policies in one replay: each keeps a record per trace job.
constexpr size_t kMaxPolicies = 16;
constexpr char kBaselinePolicy[] = "topo";  // the slowdown model's baseline placement
// A charting library inlined into report.html: ECharts' is about 1 MB.
constexpr size_t kMaxChartLibraryBytes = 16 << 20;

struct ReplayArgs {
  std::string topology;
  std::string nvlink_health;  // "": the cluster as its file says
  std::string trace;
  std::string format = "auto";
  std::string policies = "topo,pack,firstfit,random";
  std::string scheduler = "backfill";
  double load_scale = 1.0;
  double comm_share = 0.0;
  std::string out;
  uint64_t seed = 1;
  bool strict = false;
  bool skip_shared = false;
  int threads = 0;
  // The charting library inlined into report.html: the one contrib/setup.sh fetches, or
  // "none" for plain SVG plots. The default, when absent, also gives SVG plots.
  std::string chart_lib = NVLPLACE_DEFAULT_CHART_LIB;
};

// A finite number from lo to hi, not NaN, not inf; a nonzero value below 1e-300 (a denormal)
// is refused even when lo is 0. Help shows "[lo..hi]".
CLI::Validator FiniteNumber(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v;
        if (!absl::SimpleAtod(text, &v) || !std::isfinite(v) || v < lo || v > hi ||
            (v != 0 && std::fabs(v) < 1e-300)) {
          return absl::StrCat(QuoteUserText(text), " is not a number from ", lo, " to ", hi);
        }
        text = absl::StrFormat("%.17g", v);  // exactly v, in a form CLI11 reads
        return "";
      },
      absl::StrCat("[", lo, "..", hi, "]"));
}

// A whole decimal number from lo to hi, rewritten in plain decimal for CLI11 (which reads
// "010" as octal and "-1" as 2^64 - 1 for an unsigned option).
template <typename T>
CLI::Validator WholeNumber(T lo, T hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        T v;
        bool negative = text.find('-') != std::string::npos;
        if ((negative && std::is_unsigned_v<T>) || !absl::SimpleAtoi(text, &v) || v < lo ||
            v > hi) {
          return absl::StrCat(QuoteUserText(text), " is not a whole number from ", lo, " to ", hi);
        }
        text = absl::StrCat(v);
        return "";
      },
      absl::StrCat("[", lo, "..", hi, "]"));
}

// A progress bar with ETA on a terminal; nothing otherwise.
class Progress {
 public:
  explicit Progress(size_t policies) : done_(policies, 0), start_(Clock::now()) {
    tty_ = isatty(STDERR_FILENO);
  }
  void Update(size_t policy, size_t done, size_t total) {
    if (!tty_) return;
    std::lock_guard<std::mutex> lock(mu_);
    done_[policy] = done;
    size_t sum = 0;
    for (size_t d : done_) sum += d;
    double frac = total ? static_cast<double>(sum) / static_cast<double>(total * done_.size()) : 1;
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    if (elapsed - last_ < 0.2 && frac < 1) return;
    last_ = elapsed;
    int width = 30, fill = static_cast<int>(frac * width);
    double eta = frac > 0 ? elapsed / frac - elapsed : 0;
    std::fprintf(stderr, "\r[%s%s] %5.1f%%  ETA %4.0f s ", std::string(fill, '#').c_str(),
                 std::string(width - fill, '.').c_str(), 100 * frac, eta);
    if (frac >= 1) std::fprintf(stderr, "\n");
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mu_;
  std::vector<size_t> done_;
  Clock::time_point start_;
  double last_ = -1;
  bool tty_ = false;
};

int Replay(const ReplayArgs& a) {
  // The options' ranges are checked when they are parsed; this is the same check once more,
  // before anything is loaded.
  replay::SimOptions options;
  options.scheduler =
      a.scheduler == "fifo" ? replay::Scheduler::kFifo : replay::Scheduler::kBackfill;
  options.load_scale = a.load_scale;
  options.comm_share = a.comm_share;
  absl::Status valid = replay::CheckSimOptions(options);
  if (!valid.ok()) return Fail(valid);
  absl::StatusOr<std::shared_ptr<const Topology>> topo =
      LoadTopologyWithHealth(a.topology, a.nvlink_health);
  if (!topo.ok()) return Fail(topo.status());
  absl::StatusOr<replay::TraceFormat> format = replay::ParseTraceFormat(a.format);
  if (!format.ok()) return Fail(format.status());
  std::vector<std::shared_ptr<const Policy>> policies;
  for (absl::string_view name : absl::StrSplit(a.policies, ',', absl::SkipEmpty())) {
    if (policies.size() == kMaxPolicies) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "--policies names more than ", kMaxPolicies, " policies; replay fewer at once")));
    }
    absl::StatusOr<std::shared_ptr<const Policy>> p = LoadPolicy(std::string(name));
    if (!p.ok()) return Fail(p.status());
    // --seed overrides the seed of seeded policies (1, the default, keeps each one's own).
    policies.push_back(a.seed == 1 ? *p : std::make_shared<const Policy>((*p)->WithSeed(a.seed)));
  }
  if (policies.empty()) return Fail(absl::InvalidArgumentError("--policies names no policy"));
  replay::TraceOptions topts;
  topts.strict = a.strict;
  topts.skip_shared = a.skip_shared;
  absl::StatusOr<replay::Trace> trace;
  {
    absl::StatusOr<std::string> text = ReadFileToString(a.trace, limits::kMaxTraceBytes);
    if (!text.ok()) return Fail(text.status());
    trace = replay::ReadTrace(*text, a.trace, *format, topts);
  }  // the text is freed here: the replay keeps only the jobs
  if (!trace.ok()) return Fail(trace.status());
  for (const std::string& p : trace->problems) std::cerr << "nvlplace: " << p << "\n";
  if (trace->malformed > static_cast<int>(trace->problems.size())) {
    std::cerr << "nvlplace: ... " << trace->malformed - trace->problems.size()
              << " more malformed lines\n";
  }
  // The slowdown model's baseline, the same for every policy: topo's placement of each job
  // on the empty cluster.
  absl::StatusOr<std::shared_ptr<const Policy>> baseline_policy = LoadPolicy(kBaselinePolicy);
  if (!baseline_policy.ok()) return Fail(baseline_policy.status());
  const Engine baseline(*topo, *baseline_policy);
  options.baseline = &baseline;
  replay::ReplayRun run;
  run.topology_file = a.topology;
  run.trace_file = a.trace;
  run.trace = &*trace;
  run.options = options;
  run.seed = a.seed;
  run.topo = topo->get();
  run.results.resize(policies.size());
  if (a.chart_lib != "none" &&
      (a.chart_lib != NVLPLACE_DEFAULT_CHART_LIB || std::filesystem::exists(a.chart_lib))) {
    auto js = ReadFileToString(a.chart_lib, kMaxChartLibraryBytes);
    if (!js.ok()) return Fail(js.status());
    run.chart_library = std::move(*js);
  }
  Progress progress(policies.size());
  // Policies in parallel threads, each with its own engine and cluster state.
  size_t threads = a.threads > 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  std::mutex mu;
  size_t next = 0;
  for (size_t t = 0; t < std::min(threads, policies.size()); ++t) {
    pool.emplace_back([&] {
      while (true) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (next >= policies.size()) return;
          i = next++;
        }
        Engine engine(*topo, policies[i]);
        run.results[i] = replay::Simulate(engine, trace->jobs, options,
                                          [&, i](size_t d, size_t n) { progress.Update(i, d, n); });
      }
    });
  }
  for (std::thread& t : pool) t.join();

  nlohmann::json summary = replay::SummaryJson(run);
  std::cout << "trace " << a.trace << " (" << replay::TraceFormatName(trace->format)
            << "): " << trace->jobs.size() << " jobs, " << trace->malformed << " malformed lines";
  for (const auto& [reason, n] : trace->skipped) std::cout << ", " << n << " skipped: " << reason;
  for (const auto& [reason, n] : trace->relaxed) std::cout << ", " << n << " relaxed: " << reason;
  std::cout << "\n" << replay::SummaryText(summary);
  if (!a.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    if (ec)
      return Fail(
          absl::PermissionDeniedError(absl::StrCat("cannot create ", a.out, ": ", ec.message())));
    absl::Status s = WriteOutput(a.out + "/summary.json", summary.dump(2) + "\n");
    if (s.ok()) {
      s = WriteOutput(a.out + "/jobs.csv",
                      [&run](const OutputSink& emit) { replay::JobsCsv(run, emit); });
    }
    if (s.ok()) s = WriteOutput(a.out + "/report.html", replay::ReportHtml(run, summary));
    if (!s.ok()) return Fail(s);
    std::cout << "wrote " << a.out << "/summary.json, jobs.csv, report.html\n";
  }
  return kExitOk;
}

}  // namespace

void AddReplayCommand(CLI::App& app, std::function<int()>* run) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* c = app.add_subcommand("replay", "Replay a job trace through the engine, per policy");
  c->add_option("--topology", a->topology, "cluster YAML file")->required();
  c->add_option("--nvlink-health", a->nvlink_health,
                "NVLink health file: split racks, trays with NVLink down (configs/FORMAT.md)");
  c->add_option("--trace", a->trace, "trace file")->required();
  c->add_option("--trace-format", a->format, "auto, native, sacct, openb, swf, helios, philly")
      ->check(CLI::IsMember({"auto", "native", "sacct", "openb", "swf", "helios", "philly"}));
  c->add_option("--policies", a->policies,
                absl::StrCat("comma-separated policy names or files, at most ", kMaxPolicies));
  c->add_option("--scheduler", a->scheduler, "fifo or backfill (EASY, run time as estimate)")
      ->check(CLI::IsMember({"fifo", "backfill"}));
  c->add_option("--load-scale", a->load_scale, "divide submit times by this (2: twice the load)")
      ->transform(FiniteNumber(1 / limits::kMaxLoadScale, limits::kMaxLoadScale));
  c->add_option("--comm-share", a->comm_share,
                "slowdown model: share of run time that is communication (0: off)")
      ->transform(FiniteNumber(0, 1));
  c->add_option("--out", a->out, "directory for summary.json, jobs.csv, report.html");
  c->add_option("--seed", a->seed, "seed of the random policy")
      ->transform(WholeNumber<uint64_t>(0, std::numeric_limits<uint64_t>::max()));
  c->add_option("--threads", a->threads, "policies replayed at once (0, the default: one per core)")
      ->transform(WholeNumber<int>(0, kMaxThreads));
  c->add_option("--chart-lib", a->chart_lib,
                "charting library (echarts.min.js) inlined into report.html; none: plain SVG "
                "plots (default: the one contrib/setup.sh fetches, if there)");
  c->add_flag("--strict", a->strict, "a malformed trace line is fatal");
  c->add_flag("--skip-shared", a->skip_shared,
              "openb: skip GPU-sharing pods (gpu_milli < 1000) instead of one GPU each");
  c->callback([run, a] { *run = [a] { return Replay(*a); }; });
}

}  // namespace nvlplace::cli
