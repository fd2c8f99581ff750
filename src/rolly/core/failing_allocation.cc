// The replaced operator new and delete of failing_allocation.h, over malloc and free.

#include "rolly/core/failing_allocation.h"

#include <cstdlib>
#include <new>

#include "rolly/core/worker_pool.h"

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

void FailWorkerAllocationAfter(WorkerPool& pool, long n) {
  pool.WaitUntilIdle();
  pool.Post([n] { FailAllocationAfter(n); });
  pool.WaitUntilIdle();
}

bool DisarmWorker(WorkerPool& pool, long n) {
  bool met = true;
  pool.WaitUntilIdle();
  pool.Post([n, &met] {
    try {
      // Calls of the replaced function, which no compiler may leave out (as it may a new
      // expression).
      for (long i = 0; i <= n; ++i) ::operator delete(::operator new(1));
    } catch (const std::bad_alloc&) {
      met = false;
    }
    FailAllocationAfter(-1);
  });
  pool.WaitUntilIdle();
  return met;
}

}  // namespace rolly::test_support

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
