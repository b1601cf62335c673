// random: hosts in a seeded random order, a baseline with no knowledge at all.
#include <algorithm>
#include <cstdint>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "placement/model/mix64.h"
#include "policies/generators.h"

namespace nvlplace {
namespace {

// A splitmix64 stream: one add and a mix a draw. mt19937_64 filled 312 words per decision
// (9% of a random replay), and std::uniform_int_distribution draws differently in each
// standard library; this stream and Draw give the same order on every build.
class Stream {
 public:
  explicit Stream(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix64(state_++); }
  // A number in [0, n): the high half of a 64 x 64-bit product (bias below 2^-32 for the
  // hosts of any cluster).
  size_t Draw(size_t n) {
    return static_cast<size_t>(absl::Uint128High64(absl::uint128(Next()) * n));
  }

 private:
  uint64_t state_;
};

class RandomGenerator : public Generator {
 public:
  absl::string_view Name() const override { return "random"; }
  bool Seeded() const override { return true; }
  // One candidate: chunks from the hosts in an order shuffled by the seed drawn afresh for
  // this decision (DecisionSeed(ctx.seed, ctx.decision), a splitmix64 stream). The shuffle is a
  // Fisher-Yates that stops once the hosts drawn hold k chunks: a draw per host taken, not
  // per host of the cluster (the whole shuffle of 16,384 hosts was 39% of a 1M-job replay).
  std::vector<Candidate> Generate(const SearchState& s, int k,
                                  const GenerateContext& ctx) const override {
    if (s.total_capacity() < k) return {};
    std::vector<int> order = s.hierarchy().hosts();
    Stream rng(DecisionSeed(ctx.seed, ctx.decision));
    size_t drawn = 0;
    for (int need = k; need > 0 && drawn < order.size(); ++drawn) {
      std::swap(order[drawn], order[drawn + rng.Draw(order.size() - drawn)]);
      need -= s.capacity(order[drawn]);
    }
    order.resize(drawn);
    Candidate c;
    c.origin.what = absl::StrCat("random (seed ", ctx.seed, ")");
    s.TakeInOrder(order, k, &c.ranks);
    return {std::move(c)};
  }
};

}  // namespace

std::unique_ptr<Generator> MakeRandomGenerator() { return std::make_unique<RandomGenerator>(); }

}  // namespace nvlplace
