// Large blocks of the CLI on transparent huge pages (the `nvlplace` binary's operator new).
#ifndef NVLPLACE_CONTRIB_CLI_HUGE_PAGES_H_
#define NVLPLACE_CONTRIB_CLI_HUGE_PAGES_H_

#include <cstddef>

namespace nvlplace::cli {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Marks the whole 2 MiB pages inside [p, p + size) MADV_HUGEPAGE, so that the kernel backs
// them with huge pages when they are first touched (THP mode `madvise`, Debian's default, or
// `always`); a partial huge page at either end stays on 4 KiB pages. RET whether a range was
// marked: false for a block that holds no whole huge page, and where the kernel has no THP
// (nothing changes then).
bool AdviseHugePages(void* p, std::size_t size);

}  // namespace nvlplace::cli

#endif  // NVLPLACE_CONTRIB_CLI_HUGE_PAGES_H_
