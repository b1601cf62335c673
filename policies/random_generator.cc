// random: hosts in a seeded random order, a baseline with no knowledge at all.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
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

// Swaps of an order's positions i = 0, 1, ... with later ones, undone when it goes (also
// when the decision fails), so that the order is the identity again for the next.
struct Swaps {
  std::vector<int>& order;
  absl::InlinedVector<size_t, 64> with;  // with[i]: the position swapped with i
  void Swap(size_t i, size_t j) {
    with.push_back(j);  // first: should it throw, nothing was swapped
    std::swap(order[i], order[j]);
  }
  ~Swaps() {
    for (size_t i = with.size(); i-- > 0;) std::swap(order[i], order[with[i]]);
  }
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
    // The hosts are HNodes 0 .. n - 1 (Hierarchy::hosts), so the shuffle starts from a
    // per-thread identity order and puts back what it swapped, in reverse: a copy of every
    // host id per decision was 4% of a random replay at 131,072 GPUs.
    thread_local std::vector<int> identity;
    const size_t n = s.hierarchy().hosts().size();
    for (size_t i = identity.size(); i < n; ++i) identity.push_back(static_cast<int>(i));
    Swaps swaps{identity};
    Stream rng(DecisionSeed(ctx.seed, ctx.decision));
    // The hosts drawn that have room, in the order drawn: a full one would give nothing (on
    // a busy cluster most of those drawn).
    std::vector<int> order;
    for (int need = k; need > 0 && swaps.with.size() < n;) {
      const size_t i = swaps.with.size();
      swaps.Swap(i, i + rng.Draw(n - i));
      const int room = s.capacity(identity[i]);
      if (room > 0) order.push_back(identity[i]);
      need -= room;
    }
    Candidate c;
    c.origin.what = absl::StrCat("random (seed ", ctx.seed, ")");
    s.TakeInOrder(order, k, &c.ranks);
    return {std::move(c)};
  }
};

}  // namespace

std::unique_ptr<Generator> MakeRandomGenerator() { return std::make_unique<RandomGenerator>(); }

}  // namespace nvlplace
