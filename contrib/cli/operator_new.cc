// The `nvlplace` binary's global operator new: large blocks on transparent huge pages.
//
// A model of a million GPUs is over 100 MB written once, and most of a CLI run's load
// was the kernel handing out fresh 4 KiB pages (contrib/bench/RESULTS.md, "Frontier
// scale"). The whole 2 MiB pages inside every block that C++ code allocates (the model's
// arrays, the parsed file's lists, vectors growing while a file is read) are marked for huge
// pages before anything touches them. Memory still comes from malloc and goes back with free
// (the default aligned and nothrow forms of libstdc++ call these or malloc and free too);
// small blocks, C code (libyaml) and the rest of the process keep glibc's defaults. Only this
// executable replaces operator new: the plugin never touches slurmctld's allocator. Left out
// of sanitizer builds, whose runtimes bring their own.
#include <cstdlib>
#include <new>

#include "contrib/cli/huge_pages.h"

// GCC says so with __SANITIZE_*__, clang (14) with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NVLPLACE_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NVLPLACE_SANITIZER_RUNTIME 1
#endif
#endif

#if !defined(NVLPLACE_SANITIZER_RUNTIME)

namespace {

// As the default operator new: malloc, calling the new-handler while there is one and
// malloc fails, else std::bad_alloc.
void* Allocate(std::size_t size) {
  void* p;
  while ((p = std::malloc(size == 0 ? 1 : size)) == nullptr) {
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
  // The size test here, not only in AdviseHugePages: every small allocation passes this way.
  if (size >= nvlplace::cli::kHugePageBytes) nvlplace::cli::AdviseHugePages(p, size);
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

#endif
