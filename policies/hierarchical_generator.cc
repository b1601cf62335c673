// hierarchical: best fit from each part of the fabric that holds the job, tightest first, and
// beside each the fewest hosts under the same part.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "policies/generators.h"

namespace nvlplace {
namespace {

class HierarchicalGenerator : public Generator {
 public:
  absl::string_view Name() const override { return "hierarchical"; }
  // Best fit from each HNode of the lowest level that can hold k chunks (the tightest first,
  // up to ctx.candidates), and from a quarter as many of the level above; for a job of more
  // than ctx.candidate_gpus / 16 GPUs, max(2, ctx.candidate_gpus / its GPUs) per level. Beside each
  // best fit from a fabric level, the fewest-hosts take from the same HNode
  // (SearchState::TakeBalanced) when it spans several hosts and differs.
  std::vector<Candidate> Generate(const SearchState& s, int k,
                                  const GenerateContext& ctx) const override {
    std::vector<Candidate> out;
    Starts starts;
    const Hierarchy& h = s.hierarchy();
    if (s.total_capacity() < k) return out;
    int lowest = 0;
    while (s.best_capacity_at_level(lowest) < k) ++lowest;
    for (int level = lowest; level < std::min(lowest + 2, h.num_levels()); ++level) {
      int budget = level == lowest ? ctx.candidates : std::max(1, ctx.candidates / 4);
      // A large job: fewer, so that a decision scores a bounded number of GPUs.
      int64_t job_gpus = std::max<int64_t>(int64_t{k} * s.chunk_size(), 1);
      budget = static_cast<int>(
          std::min<int64_t>(budget, std::max<int64_t>(2, ctx.candidate_gpus / job_gpus)));
      // The tightest first, so that the big free blocks stay whole for big jobs.
      for (int id : s.TightestAtLevel(level, k, budget)) FromHNode(s, id, k, &starts, &out);
    }
    return out;
  }

 private:
  // Where each best fit so far started (SearchState::BestFitStart): its GPUs' fingerprint
  // and the chunks it took per host, ascending by host.
  struct Start {
    int start;
    uint64_t fingerprint;  // of its GPUs
    HostChunks taken;
  };
  using Starts = absl::InlinedVector<Start, 8>;

  // Appends the best fit from `hnode` and, for a part of the fabric, its fewest-hosts take
  // when that uses two hosts or more and other GPUs. A best fit that starts where an earlier
  // one did (the upper level's part whose tightest child was taken already: the usual case
  // for a large job) takes the same GPUs: it is not offered again (the engine would drop it
  // as the earlier one's GPUs, after copying and comparing them). The fewest-hosts take is
  // told the best fit's chunks per host: when it would take just those (nine times in ten on
  // a rail fabric), it takes nothing.
  static void FromHNode(const SearchState& s, int hnode, int k, Starts* starts,
                        std::vector<Candidate>* out) {
    const Hierarchy& h = s.hierarchy();
    int start = s.BestFitStart(hnode, k);
    auto earlier = std::find_if(starts->begin(), starts->end(),
                                [&](const Start& taken) { return taken.start == start; });
    if (earlier == starts->end()) {
      Candidate c;
      c.origin = {"best fit", h.nodes()[hnode].label};
      c.ranks.reserve(static_cast<size_t>(k) * s.chunk_size());
      // Counted only for a best fit over several hosts: a fewest-hosts take of two or more
      // never gives one host's GPUs.
      HostChunks taken;
      const bool several = start >= static_cast<int>(h.hosts().size());
      s.TakeBestFit(hnode, k, &c.ranks, several ? &taken : nullptr);
      std::sort(taken.begin(), taken.end());
      c.fingerprint = SetFingerprint(s.topology(), c.ranks);
      earlier = starts->insert(starts->end(), {start, *c.fingerprint, std::move(taken)});
      out->push_back(std::move(c));
    }
    const uint64_t fit = earlier->fingerprint;
    if (hnode < static_cast<int>(h.hosts().size())) return;  // one host: nothing to even
    // A part that holds just the job gives all it has to any take: the best fit's GPUs.
    if (s.capacity(hnode) == k) return;
    // A part with a host that holds the job: its fewest hosts are that one host, and a take
    // of one host is never offered beside the best fit; not listed only to find that out.
    if (s.max_host_capacity(hnode) >= k) return;
    Candidate even;
    even.origin = {"fewest hosts", h.nodes()[hnode].label};
    const HostChunks* fit_taken = earlier->taken.empty() ? nullptr : &earlier->taken;
    if (s.TakeBalanced(hnode, k, &even.ranks, fit_taken) < 2) return;
    even.fingerprint = SetFingerprint(s.topology(), even.ranks);
    if (*even.fingerprint != fit) out->push_back(std::move(even));
  }
};

}  // namespace

std::unique_ptr<Generator> MakeHierarchicalGenerator() {
  return std::make_unique<HierarchicalGenerator>();
}

}  // namespace nvlplace
