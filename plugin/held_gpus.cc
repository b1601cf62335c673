// The GPUs held by running jobs, per node and per job (held_gpus.h).
#include "plugin/held_gpus.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace {

// The GPUs held on one node: gpus[k] by jobs[k], ascending by (gpu, job).
struct NodeHeld {
  std::vector<int> gpus;
  std::vector<uint32_t> jobs;
};

}  // namespace

struct nvl_held {
  std::vector<NodeHeld> by_node;  // by node index
  // Per job: the nodes where it holds GPUs.
  absl::flat_hash_map<uint32_t, std::vector<int>> by_job;
};

namespace {

// Removes `job`'s GPUs from `node`.
void Unhold(nvl_held* held, uint32_t job, int node) {
  if (node < 0 || static_cast<size_t>(node) >= held->by_node.size()) return;
  NodeHeld& n = held->by_node[node];
  size_t kept = 0;
  for (size_t k = 0; k < n.jobs.size(); ++k) {
    if (n.jobs[k] == job) continue;
    n.gpus[kept] = n.gpus[k];
    n.jobs[kept] = n.jobs[k];
    ++kept;
  }
  n.gpus.resize(kept);
  n.jobs.resize(kept);
}

void AddOrThrow(nvl_held* held, uint32_t job, int node, const int* gpus, int count) {
  if (count <= 0) return;
  if (static_cast<size_t>(node) >= held->by_node.size()) held->by_node.resize(node + 1);
  NodeHeld& n = held->by_node[node];
  std::vector<std::pair<int, uint32_t>> list;
  list.reserve(n.gpus.size() + count);
  for (size_t k = 0; k < n.gpus.size(); ++k) list.emplace_back(n.gpus[k], n.jobs[k]);
  for (int k = 0; k < count; ++k) list.emplace_back(gpus[k], job);
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  n.gpus.resize(list.size());
  n.jobs.resize(list.size());
  for (size_t k = 0; k < list.size(); ++k) {
    n.gpus[k] = list[k].first;
    n.jobs[k] = list[k].second;
  }
  auto& nodes = held->by_job[job];
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
}

}  // namespace

extern "C" {

nvl_held_t* nvl_held_new(void) { return new (std::nothrow) nvl_held(); }

void nvl_held_free(nvl_held_t* held) { delete held; }

void nvl_held_clear(nvl_held_t* held) {
  if (!held) return;
  held->by_node.clear();
  held->by_job.clear();
}

int nvl_held_add(nvl_held_t* held, uint32_t job, int node, const int* gpus, int count) {
  if (!held) return -1;
  if (node < 0 || (count > 0 && !gpus)) {
    nvl_held_clear(held);
    return -1;
  }
  try {
    AddOrThrow(held, job, node, gpus, count);
    return 0;
  } catch (...) {  // std::bad_alloc: a view that is wrong is worse than none
    nvl_held_clear(held);
    return -1;
  }
}

void nvl_held_drop(nvl_held_t* held, uint32_t job) {
  if (!held) return;
  auto it = held->by_job.find(job);
  if (it == held->by_job.end()) return;
  for (int node : it->second) Unhold(held, job, node);
  held->by_job.erase(it);
}

int nvl_held_node(const nvl_held_t* held, int node, const int** gpus, const uint32_t** jobs) {
  *gpus = nullptr;
  *jobs = nullptr;
  if (!held || node < 0 || static_cast<size_t>(node) >= held->by_node.size()) return 0;
  const NodeHeld& n = held->by_node[node];
  *gpus = n.gpus.data();
  *jobs = n.jobs.data();
  return static_cast<int>(n.gpus.size());
}

int nvl_held_matches(const nvl_held_t* held, int node, const int* alloc, int count) {
  const int* gpus = nullptr;
  const uint32_t* jobs = nullptr;
  int held_count = nvl_held_node(held, node, &gpus, &jobs);
  int k = 0;
  for (int i = 0; i < held_count; ++i) {
    if (i > 0 && gpus[i] == gpus[i - 1]) continue;  // one GPU, two jobs
    if (k >= count || alloc[k] != gpus[i]) return 0;
    ++k;
  }
  return k == count ? 1 : 0;
}

int nvl_held_jobs(const nvl_held_t* held) {
  return held ? static_cast<int>(held->by_job.size()) : 0;
}

}  // extern "C"
