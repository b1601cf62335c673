// The plugin's view of the GPUs running jobs hold (plugin/held_gpus.h), under any sequence
// of what slurmctld tells it: adds (job, node, GPUs; negative or huge values included),
// drops and clears, checked after every step against a plain model of the same sequence.
// Record: 1 byte op (mod 3: add, drop, clear), then for add: job (1 byte), node (I8, so
// negative nodes occur), count (1 byte, mod 17) and that many GPU indexes (1 byte each);
// for drop: job (1 byte).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "plugin/held_gpus.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

constexpr int kNodes = 64;  // nodes checked after each step (adds go anywhere up to 127)

// job -> (node, gpu) it holds.
using Model = std::map<uint32_t, std::set<std::pair<int, int>>>;

void Check(const nvl_held_t* held, const Model& model) {
  int jobs = 0;
  for (const auto& [job, gpus] : model) jobs += gpus.empty() ? 0 : 1;
  FUZZ_CHECK(nvl_held_jobs(held) == jobs, "%d jobs held, the model has %d", nvl_held_jobs(held),
             jobs);
  for (int node = 0; node < kNodes; ++node) {
    std::set<std::pair<int, uint32_t>> want;  // (gpu, job)
    std::set<int> distinct;
    for (const auto& [job, gpus] : model)
      for (const auto& [n, g] : gpus)
        if (n == node) {
          want.emplace(g, job);
          distinct.insert(g);
        }
    const int* gpus = nullptr;
    const uint32_t* holders = nullptr;
    int count = nvl_held_node(held, node, &gpus, &holders);
    FUZZ_CHECK(count == static_cast<int>(want.size()), "node %d: %d held, the model has %zu", node,
               count, want.size());
    int k = 0;
    for (const auto& [g, job] : want) {
      FUZZ_CHECK(gpus[k] == g && holders[k] == job, "node %d entry %d: (%d, %u), want (%d, %u)",
                 node, k, gpus[k], holders[k], g, job);
      ++k;
    }
    std::vector<int> alloc(distinct.begin(), distinct.end());
    FUZZ_CHECK(nvl_held_matches(held, node, alloc.data(), static_cast<int>(alloc.size())) == 1,
               "node %d does not match its own GPUs", node);
    alloc.push_back(1000);  // one GPU more than held
    FUZZ_CHECK(nvl_held_matches(held, node, alloc.data(), static_cast<int>(alloc.size())) == 0,
               "node %d matches a GPU it does not hold", node);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<nvl_held_t, decltype(&nvl_held_free)> held(nvl_held_new(), &nvl_held_free);
  FUZZ_CHECK(held != nullptr, "no view");
  Model model;
  nvlplace::fuzz::ByteReader in(data, size);
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    switch (in.U8() % 3) {
      case 0: {
        uint32_t job = in.U8();
        int node = in.I8();
        int count = in.U8() % 17;
        std::vector<int> gpus(count);
        for (int& g : gpus) g = in.U8();
        int rc = nvl_held_add(held.get(), job, node, gpus.data(), count);
        if (node < 0) {
          FUZZ_CHECK(rc == -1, "a negative node was accepted");
          model.clear();  // refused, and the view cleared for a rebuild
        } else {
          FUZZ_CHECK(rc == 0, "add refused");
          for (int g : gpus) model[job].emplace(node, g);
        }
        break;
      }
      case 1: {
        uint32_t job = in.U8();
        nvl_held_drop(held.get(), job);
        model.erase(job);
        break;
      }
      default:
        nvl_held_clear(held.get());
        model.clear();
    }
    Check(held.get(), model);
  }
  return 0;
}
