// Slurm hostlist expressions: "gpu[001-018]", "a[1-2,5]b[3-4]", "n1,n[3-5]", parsed and printed;
// and the checks every name read from a file goes through.
#ifndef NVLPLACE_PLACEMENT_MODEL_HOSTLIST_H_
#define NVLPLACE_PLACEMENT_MODEL_HOSTLIST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/model/host_names.h"
#include "placement/model/limits.h"

namespace nvlplace {

using limits::kMaxHosts;  // the most names one hostlist expression may expand to

// Reads a hostlist expression into host names, in the order written, kept as runs (each
// range of a term's last bracket one run); ExpandHostlist's syntax, limits and errors.
absl::StatusOr<HostNames> ParseHostlist(absl::string_view expr);

// Expands a hostlist expression into host names, in the order written.
// Full Slurm syntax: comma-separated terms at top level; each term may hold several
// bracket groups ("rack[1-2]-node[01-04]" is the cartesian product, leftmost outermost);
// a bracket holds comma-separated numbers or ranges "lo-hi"; zero padding is kept from
// the width of "lo" ("[001-018]" -> 001..018). Whitespace around terms is ignored.
// Errors (InvalidArgument) name the offending character position: unbalanced or nested
// brackets, empty terms, ranges with hi < lo, non-digit ranges, more than limits::kMaxHosts
// hosts, names longer than limits::kMaxNameBytes, bytes that are not valid UTF-8 or are
// control characters. One linear pass over `expr`; the number of hosts is checked before any
// name is built, so the work and memory are bounded by the input and the limits.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expr);

// The number of names ExpandHostlist(expr) returns, without building them (the same errors).
// Readers check it against their own budgets (GPUs, names per file) before expanding.
absl::StatusOr<size_t> CountHostlist(absl::string_view expr);

// Expands a list of numbers and ranges as written inside a hostlist bracket ("0-3,6": GPU
// indexes, job array task ids), read by the same parser as ExpandHostlist with the same limits
// (at most limits::kMaxHosts values); zero padding is dropped. Errors (InvalidArgument) read
// "bad index list \"<list>\" at character N: ...".
absl::StatusOr<std::vector<uint64_t>> ExpandIndexList(absl::string_view list);

// Prints host names as a Slurm hostlist expression. Names whose trailing digits share a
// prefix and a zero-padded width are merged into one bracket of sorted, de-duplicated
// numbers and ranges ("gpu[001-003,007]"); groups appear in first-seen order and names
// without trailing digits stay as they are ("gpu[001-003,007],login"). Contract:
// set(ExpandHostlist(CompressHostlist(x))) == set(x), and the order is kept too whenever x
// lists each group contiguously in ascending order (as every hostlist we print does).
std::string CompressHostlist(const std::vector<std::string>& hosts);

// Whether `name` may name a cluster, node, switch, NVLink domain, GPU model or tier: at most
// limits::kMaxNameBytes bytes, valid UTF-8, no control character (C0, DEL, C1; NUL included).
// Emptiness is left to the callers, which say what needs a name. The InvalidArgument message
// reads "<what> '<name, escaped>' ..." and has no location: callers prefix "file:line: path: ".
absl::Status CheckName(absl::string_view name, absl::string_view what = "name");

// `text` for an error message: valid printable UTF-8 is kept, every other byte (control
// characters, NUL, invalid UTF-8) is written as \xNN, and at most `max_bytes` of the text are
// shown (then "..." and the full length).
std::string Printable(absl::string_view text, size_t max_bytes = 80);

}  // namespace nvlplace

#endif  // NVLPLACE_PLACEMENT_MODEL_HOSTLIST_H_
