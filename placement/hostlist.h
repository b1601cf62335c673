// Slurm hostlist expressions: "gpu[001-018]", "a[1-2,5]b[3-4]", "n1,n[3-5]", parsed and printed.
#ifndef NVLPLACE_PLACEMENT_HOSTLIST_H_
#define NVLPLACE_PLACEMENT_HOSTLIST_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace nvlplace {

// Expands a hostlist expression into host names, in the order written.
// Full Slurm syntax: comma-separated terms at top level; each term may hold several
// bracket groups ("rack[1-2]-node[01-04]" is the cartesian product, leftmost outermost);
// a bracket holds comma-separated numbers or ranges "lo-hi"; zero padding is kept from
// the width of "lo" ("[001-018]" -> 001..018). Whitespace around terms is ignored.
// Errors (InvalidArgument) name the offending character position: unbalanced or nested
// brackets, empty terms, ranges with hi < lo, non-digit ranges, more than kMaxHosts hosts.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expr);

// Largest expansion accepted, to keep a typo like "n[0-99999999]" from exhausting memory.
inline constexpr size_t kMaxHosts = 1 << 20;

// Prints host names as a Slurm hostlist expression. Names whose trailing digits share a
// prefix and a zero-padded width are merged into one bracket of sorted, de-duplicated
// numbers and ranges ("gpu[001-003,007]"); groups appear in first-seen order and names
// without trailing digits stay as they are ("gpu[001-003,007],login"). Contract:
// set(ExpandHostlist(CompressHostlist(x))) == set(x), and the order is kept too whenever x
// lists each group contiguously in ascending order (as every hostlist we print does).
std::string CompressHostlist(const std::vector<std::string>& hosts);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_HOSTLIST_H_
