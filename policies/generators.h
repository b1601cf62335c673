// Factories of the built-in candidate generators, one per file; registry.cc maps names to them.
#ifndef NVLPLACE_POLICIES_GENERATORS_H_
#define NVLPLACE_POLICIES_GENERATORS_H_

#include <memory>

#include "placement/engine/generator.h"

namespace nvlplace {

std::unique_ptr<Generator> MakeHierarchicalGenerator();
std::unique_ptr<Generator> MakeFirstFitGenerator();
std::unique_ptr<Generator> MakeRandomGenerator();

}  // namespace nvlplace

#endif  // NVLPLACE_POLICIES_GENERATORS_H_
