// Test support: an allocation made to fail on purpose. A test program linked with the
// rolly_failing_allocation helper has the global operator new and delete replaced by ones that
// count the calling thread's allocations, so that a test can make one of them throw
// std::bad_alloc and see what the code under it does then. A program has one such replacement:
// link the helper into test programs of their own.
//
// Thread rules: each thread has its own count; a test arms only the thread it drives.

#ifndef ROLLY_CORE_FAILING_ALLOCATION_H_
#define ROLLY_CORE_FAILING_ALLOCATION_H_

namespace rolly {
class WorkerPool;
}

namespace rolly::test_support {

// The calling thread's next `n` allocations succeed and the one after throws std::bad_alloc,
// once; with `n` negative none fails (as at the start).
void FailAllocationAfter(long n);

// FailAllocationAfter(n) on the only thread of `pool` (a pool of one), once it is idle.
void FailWorkerAllocationAfter(WorkerPool& pool, long n);
// Disarms the only thread of `pool` once its work is done. True when the failure armed was met;
// false when the thread was still armed, its work having made no more than `n` allocations.
bool DisarmWorker(WorkerPool& pool, long n);

}  // namespace rolly::test_support

#endif  // ROLLY_CORE_FAILING_ALLOCATION_H_
