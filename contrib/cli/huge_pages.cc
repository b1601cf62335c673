// Large blocks of the CLI on transparent huge pages (see huge_pages.h).
#include "contrib/cli/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace nvlplace::cli {

bool AdviseHugePages(void* p, std::size_t size) {
  if (p == nullptr) return false;
  // From p to the first huge page boundary, then as many whole huge pages as the block holds.
  const std::size_t lead =
      (kHugePageBytes - reinterpret_cast<std::uintptr_t>(p) % kHugePageBytes) % kHugePageBytes;
  if (size < lead || size - lead < kHugePageBytes) return false;
  const std::size_t whole = (size - lead) / kHugePageBytes * kHugePageBytes;
  return madvise(static_cast<char*>(p) + lead, whole, MADV_HUGEPAGE) == 0;
}

}  // namespace nvlplace::cli
