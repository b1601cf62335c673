// Numbers as a person reads them: durations in s, min, h or days, counts with thousands
// separators, shares in percent, changes signed.
#ifndef NVLPLACE_CONTRIB_REPLAY_HUMAN_UNITS_H_
#define NVLPLACE_CONTRIB_REPLAY_HUMAN_UNITS_H_

#include <cstdint>
#include <string>

namespace nvlplace::replay {

// "45 s", "12.5 min", "3.2 h", "4.1 days", "11,574 days": under 90 s in seconds, under an hour
// in minutes, under 48 h in hours, else days (one decimal under 100 days). NaN and infinities
// print as "n/a".
std::string HumanDuration(double seconds);

// "3,000", "-1,234,567".
std::string HumanCount(int64_t n);

// A value with one decimal and thousands separators: "1,234.5".
std::string HumanNumber(double x);

// A share (0.686) as "68.6%".
std::string HumanShare(double share);

// A relative change (0.04, -0.123) as "+4.0%", "-12%": one decimal under 10%, none above.
std::string HumanChange(double relative);

}  // namespace nvlplace::replay

#endif  // NVLPLACE_CONTRIB_REPLAY_HUMAN_UNITS_H_
