// A test binary that links tests/heap_probe.cc has every operator new counted: the heap in
// use and its peak (a size header in front of each block keeps the count exact), and one
// chosen allocation can be made to fail on purpose.
#ifndef NVLPLACE_TESTS_HEAP_PROBE_H_
#define NVLPLACE_TESTS_HEAP_PROBE_H_

#include <cstddef>

namespace nvlplace::testing {

size_t HeapInUse();
size_t HeapPeak();
void ResetHeapPeak();  // the peak becomes what is in use now

// Heap bytes allocated at the peak while `f` runs, above what was in use before.
template <typename F>
size_t PeakHeapOf(F f) {
  size_t before = HeapInUse();
  ResetHeapPeak();
  f();
  return HeapPeak() - before;
}

// The n-th allocation from now (0: the next) throws std::bad_alloc, once; -1: none.
void FailAllocationIn(long n);
// True once the allocation chosen by FailAllocationIn has failed.
bool AllocationFailed();

}  // namespace nvlplace::testing

#endif  // NVLPLACE_TESTS_HEAP_PROBE_H_
