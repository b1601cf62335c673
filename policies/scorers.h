// Factories of the built-in scorers, one per file; registry.cc maps names to them.
#ifndef NVLPLACE_POLICIES_SCORERS_H_
#define NVLPLACE_POLICIES_SCORERS_H_

#include <memory>

#include "placement/engine/scorer.h"

namespace nvlplace {

std::unique_ptr<Scorer> MakeNvlinkScorer();
std::unique_ptr<Scorer> MakeTierScorer();
std::unique_ptr<Scorer> MakeCommScorer();
std::unique_ptr<Scorer> MakeFragmentationScorer();
std::unique_ptr<Scorer> MakeModelScorer();
std::unique_ptr<Scorer> MakeFirstFitScorer();
std::unique_ptr<Scorer> MakeRandomScorer();  // seeded by ScoringContext::seed
std::unique_ptr<Scorer> MakeBalanceScorer();
std::unique_ptr<Scorer> MakeSpreadScorer();

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_SCORERS_H_
