// firstfit: hosts in index order, lowest GPU indexes first.
#include "policies/generators.h"

namespace nvlplace {
namespace {

class FirstFitGenerator : public Generator {
 public:
  absl::string_view Name() const override { return "firstfit"; }
  // One candidate: as many chunks from each host in index order as it gives.
  std::vector<Candidate> Generate(const SearchState& s, int k,
                                  const GenerateContext&) const override {
    if (s.total_capacity() < k) return {};
    Candidate c;
    c.origin.what = "first fit";
    s.TakeFirstFit(k, &c.ranks);
    return {std::move(c)};
  }
};

}  // namespace

std::unique_ptr<Generator> MakeFirstFitGenerator() { return std::make_unique<FirstFitGenerator>(); }

}  // namespace nvlplace
