// SideTask: a share of a job offered to another thread while the thread that offers it does its
// own share. Whichever thread claims the share first runs it: a worker that picks the posted task
// up, or the offering thread itself once it is done with its own part and joins. So the offering
// thread never waits on a queue: when no worker is free, or the one woken is slow to start, the
// share runs where it was offered, as if it had never been.
//
// The pattern behind a load's split checks and parallel reads: each is worth its hand-off only
// when a core is idle, and costs nothing but the post when none is.
//
// Thread rules: construct, Join, Withdraw and destroy on one thread, the owner. The work runs at
// most once, on the worker that claimed it or on the owner inside Join. What the work touches of
// the owner's (its captures by reference) must outlive the SideTask: the destructor does not
// return while a worker runs it.

#ifndef ROLLY_CORE_SIDE_TASK_H_
#define ROLLY_CORE_SIDE_TASK_H_

#include <functional>
#include <memory>

namespace rolly {

class SideTask {
 public:
  // Somewhere to run a task on another thread: queues `task` to run once (a WorkerPool's Post).
  // It may also run the task at once on the calling thread: the task then leaves the work to Join.
  using Post = std::function<void(std::function<void()>)>;

  // Offers `work` through `post`. With an empty `post`, or one that throws (an allocation failing
  // in a queue), nothing is offered, and Join runs the work.
  SideTask(const Post& post, std::function<void()> work);
  // Withdraws the work unless it was joined or withdrawn (an owner unwinding past its Join).
  ~SideTask();
  SideTask(const SideTask&) = delete;
  SideTask& operator=(const SideTask&) = delete;

  // Runs the work here unless a worker claimed it first, or waits until that worker is done with
  // it. True when a worker ran it. What the work threw on the worker is thrown here (what it
  // throws here leaves Join as it would any call). Once only (asserted).
  bool Join();
  // Takes the work back unrun unless a worker claimed it first; waits until that worker is done
  // with it otherwise, and lets go of what it threw. For an owner that no longer needs the work
  // (its own part failed). Once only, and not after Join (asserted).
  void Withdraw();

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  bool ended_ = false;
};

}  // namespace rolly

#endif  // ROLLY_CORE_SIDE_TASK_H_
