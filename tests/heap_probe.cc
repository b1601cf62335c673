// Replaces the global operator new/delete of the test binary it is linked into; see
// heap_probe.h.
#include "tests/heap_probe.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> g_fail_in{-1};  // the allocation that fails, counting down; -1 never
std::atomic<size_t> g_heap_now{0};
std::atomic<size_t> g_heap_peak{0};

void* CountedAlloc(size_t n) {
  long left = g_fail_in.load();
  if (left >= 0) {
    g_fail_in = left - 1;  // fails once, then allocations succeed again
    if (left == 0) throw std::bad_alloc();
  }
  void* p = std::malloc(n + 16);
  if (p == nullptr) throw std::bad_alloc();
  *static_cast<size_t*>(p) = n;
  size_t now = g_heap_now += n;
  size_t peak = g_heap_peak.load();
  while (now > peak && !g_heap_peak.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(p) + 16;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  char* block = static_cast<char*>(p) - 16;
  g_heap_now -= *reinterpret_cast<size_t*>(block);
  std::free(block);
}
}  // namespace

void* operator new(size_t n) { return CountedAlloc(n); }
void* operator new[](size_t n) { return CountedAlloc(n); }
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { CountedFree(p); }

namespace nvlplace::testing {

size_t HeapInUse() { return g_heap_now.load(); }
size_t HeapPeak() { return g_heap_peak.load(); }
void ResetHeapPeak() { g_heap_peak = g_heap_now.load(); }
void FailAllocationIn(long n) { g_fail_in = n; }
bool AllocationFailed() { return g_fail_in.load() < 0; }

}  // namespace nvlplace::testing
