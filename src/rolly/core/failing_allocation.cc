// The replaced operator new and delete of failing_allocation.h, over malloc and free.

#include "rolly/core/failing_allocation.h"

#include <cstdlib>
#include <new>

namespace {

// The allocations this thread may still make before one fails; negative: none fails.
thread_local long allocations_left = -1;

void* Allocate(std::size_t size) {
  if (allocations_left == 0) {
    allocations_left = -1;
    throw std::bad_alloc();
  }
  if (allocations_left > 0) --allocations_left;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace rolly::test_support {

void FailAllocationAfter(long n) { allocations_left = n < 0 ? -1 : n; }

}  // namespace rolly::test_support

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
