// Numbers with a fixed number of decimals for machine-read files (jobs.csv), as printf's
// "%.Nf" writes them, at a fraction of its cost.
#ifndef NVLPLACE_CONTRIB_REPLAY_FIXED_DECIMALS_H_
#define NVLPLACE_CONTRIB_REPLAY_FIXED_DECIMALS_H_

#include <string>

namespace nvlplace::replay {

// Appends `v` with `decimals` digits after the point (none and no point for 0), rounded
// from its exact binary value as printf's "%.Nf" and std::to_chars do: "-1.000", "0.125",
// "inf". A positive value under 1e9 with at most 6 decimals whose scaled value is not a tie
// is written from its scaled integer (to_chars of a double was 1.4% of a 200,000-job replay's
// instructions); every other value goes through to_chars.
void AppendFixed(std::string* out, double v, int decimals);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_FIXED_DECIMALS_H_
