// random: a seeded pseudo-random score per candidate, a baseline with no knowledge at all.
#include "policies/scorers.h"

namespace nvlplace {
namespace {

class RandomScorer : public Scorer {
 public:
  explicit RandomScorer(uint64_t seed) : seed_(seed) {}
  absl::string_view Name() const override { return "random"; }
  // FNV-1a over the seed and the GPU ids, mapped to [0, 100].
  double Score(const ScoringContext&, const CandidateFacts& facts) const override {
    uint64_t h = 1469598103934665603ull ^ seed_;
    for (GpuId g : facts.ranks) {
      h ^= static_cast<uint64_t>(g);
      h *= 1099511628211ull;
    }
    return static_cast<double>(h % 10001) / 100.0;
  }

 private:
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Scorer> MakeRandomScorer(uint64_t seed) {
  return std::make_unique<RandomScorer>(seed);
}

}  // namespace nvlplace
