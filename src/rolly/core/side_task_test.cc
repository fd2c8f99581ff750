// SideTask: who runs the share (a worker, the owner), once; what a worker's share threw; and that
// the owner never leaves while a worker runs it.

#include "rolly/core/side_task.h"

#include <atomic>
#include <functional>
#include <future>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "rolly/core/worker_pool.h"

namespace rolly {
namespace {

// Keeps the posted tasks to run them when the test says.
struct HeldPosts {
  std::vector<std::function<void()>> tasks;
  SideTask::Post post() {
    return [this](std::function<void()> t) { tasks.push_back(std::move(t)); };
  }
};

TEST(SideTaskTest, WithoutAPostJoinRunsTheWorkHere) {
  int runs = 0;
  SideTask task({}, [&] { ++runs; });
  EXPECT_FALSE(task.Join());
  EXPECT_EQ(runs, 1);
}

TEST(SideTaskTest, AShareNoWorkerTookRunsOnTheOwnerOnceAndTheLateTaskDoesNothing) {
  HeldPosts held;
  std::thread::id ran_on;
  int runs = 0;
  {
    SideTask task(held.post(), [&] {
      ++runs;
      ran_on = std::this_thread::get_id();
    });
    EXPECT_FALSE(task.Join());
  }
  ASSERT_EQ(held.tasks.size(), 1u);
  std::thread late(held.tasks[0]);  // after the owner is gone: it must touch nothing of it
  late.join();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(SideTaskTest, AShareAWorkerClaimedRunsThereAndJoinWaitsForIt) {
  HeldPosts held;
  std::promise<void> started;
  std::promise<void> release;
  std::thread::id ran_on;
  std::atomic<bool> finished{false};
  SideTask task(held.post(), [&] {
    ran_on = std::this_thread::get_id();
    started.set_value();
    release.get_future().wait();
    finished = true;
  });
  ASSERT_EQ(held.tasks.size(), 1u);
  std::thread worker(held.tasks[0]);
  started.get_future().wait();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release.set_value();
  });
  EXPECT_TRUE(task.Join());
  EXPECT_TRUE(finished);  // Join returned only once the worker was done
  EXPECT_EQ(ran_on, worker.get_id());
  worker.join();
  releaser.join();
}

TEST(SideTaskTest, WhatTheWorkThrewOnAWorkerIsThrownByJoin) {
  HeldPosts held;
  SideTask task(held.post(), [] { throw std::runtime_error("out of room"); });
  std::thread worker(held.tasks[0]);
  worker.join();
  EXPECT_THROW(task.Join(), std::runtime_error);
}

TEST(SideTaskTest, WhatTheWorkThrowsOnTheOwnerLeavesJoin) {
  SideTask task({}, [] { throw std::runtime_error("out of room"); });
  EXPECT_THROW(task.Join(), std::runtime_error);
}

TEST(SideTaskTest, WithdrawTakesAnUnclaimedShareBackUnrun) {
  HeldPosts held;
  int runs = 0;
  {
    SideTask task(held.post(), [&] { ++runs; });
    task.Withdraw();
  }
  std::thread late(held.tasks[0]);  // a worker picking the task up after the withdrawal
  late.join();
  EXPECT_EQ(runs, 0);
}

TEST(SideTaskTest, WithdrawWaitsForAWorkerThatClaimedItAndDropsWhatItThrew) {
  HeldPosts held;
  std::promise<void> started;
  std::atomic<bool> finished{false};
  SideTask task(held.post(), [&] {
    started.set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished = true;
    throw std::runtime_error("not needed anyway");
  });
  std::thread worker(held.tasks[0]);
  started.get_future().wait();
  task.Withdraw();
  EXPECT_TRUE(finished);
  worker.join();
}

TEST(SideTaskTest, DestroyingAnUnjoinedTaskWithdrawsIt) {
  HeldPosts held;
  std::promise<void> started;
  std::atomic<bool> finished{false};
  std::thread worker;
  {
    SideTask task(held.post(), [&] {
      started.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      finished = true;
    });
    worker = std::thread(held.tasks[0]);
    started.get_future().wait();
  }  // an owner unwinding: waits for the worker
  EXPECT_TRUE(finished);
  worker.join();
}

TEST(SideTaskTest, APostThatThrowsOffersNothingAndJoinRunsTheWorkHere) {
  int runs = 0;
  SideTask task([](std::function<void()>) { throw std::bad_alloc(); }, [&] { ++runs; });
  EXPECT_FALSE(task.Join());
  EXPECT_EQ(runs, 1);
}

TEST(SideTaskTest, APostThatRunsTheTaskAtOnceLeavesTheWorkToJoin) {
  int runs = 0;
  SideTask task([](std::function<void()> t) { t(); }, [&] { ++runs; });
  EXPECT_EQ(runs, 0);
  EXPECT_FALSE(task.Join());
  EXPECT_EQ(runs, 1);
}

TEST(SideTaskTest, OnAPoolEveryShareRunsExactlyOnce) {
  WorkerPool pool(2);
  const SideTask::Post post = [&pool](std::function<void()> t) { pool.Post(std::move(t)); };
  std::atomic<int> runs{0};
  for (int i = 0; i < 2000; ++i) {
    SideTask task(post, [&] { runs.fetch_add(1); });
    task.Join();
    // Joined: the share ran, on whichever thread won the claim, and no late task runs it again.
    EXPECT_EQ(runs.load(), i + 1);
  }
  pool.WaitUntilIdle();
  EXPECT_EQ(runs.load(), 2000);
}

}  // namespace
}  // namespace rolly
