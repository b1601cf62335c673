// Fuzzes ReadTrace in every format (the first byte: format, --strict, --skip-shared, scheduler),
// then replays the first jobs read on lab-islands as `nvlplace replay` would (firstfit: cheap).
#include <memory>
#include <string>
#include <vector>

#include "contrib/replay/simulator.h"
#include "contrib/replay/trace.h"
#include "placement/engine/engine.h"
#include "policies/policy_loader.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

constexpr size_t kMaxReplayJobs = 4;  // enough for queueing and backfill, fast per input

const nvlplace::Engine& LabEngine() {
  static const nvlplace::Engine* engine = [] {
    auto policy =
        nvlplace::LoadPolicy(std::string(NVLPLACE_SOURCE_DIR) + "/configs/policies/firstfit.yaml");
    FUZZ_CHECK(policy.ok(), "%s", nvlplace::fuzz::Message(policy.status()).c_str());
    return new nvlplace::Engine(nvlplace::fuzz::LabIslands(), *policy);
  }();
  return *engine;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nvlplace::replay;
  if (size == 0) return 0;
  // First byte: bits 0-2 format (kAuto .. kPhilly, 7 is kAuto), bit 3 strict, bit 4
  // skip_shared, bit 5 the fifo scheduler.
  const uint8_t mode = data[0];
  TraceFormat format = static_cast<TraceFormat>((mode & 7) % 7);
  TraceOptions options;
  options.strict = mode & 0x08;
  options.skip_shared = mode & 0x10;
  auto trace = ReadTrace(nvlplace::fuzz::AsText(data + 1, size - 1), "fuzz.trace", format, options);
  if (!trace.ok()) return 0;
  FUZZ_CHECK(trace->format != TraceFormat::kAuto, "format left as auto");
  FUZZ_CHECK(trace->problems.size() <= 20, "%zu problems kept", trace->problems.size());
  FUZZ_CHECK(!options.strict || trace->malformed == 0, "strict read kept %d malformed lines",
             trace->malformed);
  for (size_t i = 1; i < trace->jobs.size(); ++i) {
    FUZZ_CHECK(!(trace->jobs[i].submit < trace->jobs[i - 1].submit), "jobs not sorted at %zu", i);
  }
  std::vector<TraceJob> jobs(trace->jobs.begin(),
                             trace->jobs.begin() + std::min(trace->jobs.size(), kMaxReplayJobs));
  SimOptions sim;
  sim.scheduler = mode & 0x20 ? Scheduler::kFifo : Scheduler::kBackfill;
  SimResult result = Simulate(LabEngine(), jobs, sim);
  FUZZ_CHECK(result.jobs.size() == jobs.size(), "%zu records for %zu jobs", result.jobs.size(),
             jobs.size());
  return 0;
}
