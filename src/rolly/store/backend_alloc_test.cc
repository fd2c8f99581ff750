// A backend call whose allocation fails on the calling thread: for each operation, of a memory
// backend (which answers on the caller's thread) and of a folder backend (which answers on its
// I/O thread), the calling thread's n-th allocation inside the call is made to throw
// std::bad_alloc, for n = 0, 1, 2... until the call goes through. The allocations are the
// wrapper's (the tracked callback) and the backend's Start function's (a map node, a copy of the
// name, a task posted to the I/O thread). Whatever the call throws, the backend's count of
// operations stays right: it comes back to none (WaitUntilIdle and the destructor do not wait
// for an operation that never started), a call that threw never calls back and one that went
// through calls back once, and the backend still reads what was written.
//
// The program replaces the global operator new (core/failing_allocation.h), counting allocations
// per thread; only the test's thread is ever made to fail.
//
// Also here: a callback that throws std::bad_alloc (an allocation failing in it) still ends its
// operation, so the count comes back to none all the same.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "rolly/core/failing_allocation.h"
#include "rolly/core/status_matchers.h"
#include "rolly/store/backend.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/simulated_file_system.h"

namespace rolly::store {
namespace {

constexpr std::chrono::seconds kPatience{30};

FileName Name(std::string_view slot) { return FileName::ForSlot("alloc", slot, Copy::kA).value(); }

// Whether the backend's count came back to none before kPatience passed (WaitUntilIdle would
// wait for ever on a count that never comes down).
bool Idles(const Backend& backend) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (backend.in_flight() != 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::unique_ptr<Backend> MakeMemory() { return std::make_unique<MemoryBackend>(); }
std::unique_ptr<Backend> MakeFolder() {
  return std::make_unique<FolderBackend>(
      "/saves", FolderBackendOptions{std::make_shared<SimulatedFileSystem>()});
}

struct Kind {
  const char* name;
  std::unique_ptr<Backend> (*make)();
};

void PrintTo(const Kind& kind, std::ostream* os) { *os << kind.name; }
std::string KindName(const ::testing::TestParamInfo<Kind>& kind) { return kind.param.name; }

// What a call is given, made before its allocations are counted: only the backend's own
// allocations are failed.
struct Args {
  // Longer than a short string's own room, so that a copy of a name allocates.
  FileName kept = Name("a slot with a long name that is kept");
  FileName other = Name("a slot with a long name that is written");
  Bytes bytes = Bytes(300, 1);
  std::vector<Bytes> pieces = {Bytes(100, 1), Bytes(200, 2)};
  std::shared_ptr<LateFront> front = std::make_shared<LateFront>(8);
  std::vector<Bytes> rest = {Bytes(200, 2)};
  // The call's callback: counts into `answered` (no allocation of its own), then throws when
  // `throws` is set.
  std::atomic<int> answered = 0;
  bool throws = false;
  template <typename T>
  std::function<void(T)> Done() {
    return [this](T) {
      ++answered;
      if (throws) throw std::bad_alloc();
    };
  }
};

struct Case {
  const char* name;
  std::function<void(Backend&, Args&)> call;
};

const Case kCases[] = {
    {"Write", [](Backend& b, Args& a) { b.Write(a.other, std::move(a.bytes), a.Done<Status>()); }},
    {"Write of pieces",
     [](Backend& b, Args& a) { b.Write(a.other, std::move(a.pieces), a.Done<Status>()); }},
    {"Write with a late front",
     [](Backend& b, Args& a) { b.Write(a.other, a.front, std::move(a.rest), a.Done<Status>()); }},
    {"Read", [](Backend& b, Args& a) { b.Read(a.kept, a.Done<Result<Bytes>>()); }},
    {"ReadPrefix", [](Backend& b, Args& a) { b.ReadPrefix(a.kept, 16, a.Done<Result<Bytes>>()); }},
    {"Exists", [](Backend& b, Args& a) { b.Exists(a.kept, a.Done<Result<bool>>()); }},
    {"Delete", [](Backend& b, Args& a) { b.Delete(a.other, a.Done<Status>()); }},
    {"List", [](Backend& b, Args& a) { b.List(a.Done<Result<std::vector<FileName>>>()); }},
};

class BackendAllocationTest : public ::testing::TestWithParam<Kind> {};

TEST_P(BackendAllocationTest, ACallWhoseAllocationFailsLeavesTheCountRight) {
  for (const Case& c : kCases) {
    bool went_through = false;
    long failures = 0;
    for (long n = 0; n < 10'000 && !went_through; ++n) {
      SCOPED_TRACE(std::string(c.name) + ", allocation " + std::to_string(n) + " failing");
      std::unique_ptr<Backend> backend = GetParam().make();
      Args args;
      ASSERT_THAT(WriteNow(*backend, args.kept, Bytes(100, 7)), IsOk());
      bool threw = false;
      test_support::FailAllocationAfter(n);
      try {
        c.call(*backend, args);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      test_support::FailAllocationAfter(-1);
      went_through = !threw;
      failures += threw ? 1 : 0;
      // The writer sets a late front whatever the call did (nothing waits for it otherwise).
      args.front->Set(Bytes(8, 3));
      if (!Idles(*backend)) {
        // Its destructor would wait for ever: the backend is let go of, not destroyed.
        static_cast<void>(backend.release());
        FAIL() << "an operation stays counted";
      }
      // A call that threw made no operation and never calls back; one that went through calls
      // back once.
      EXPECT_EQ(args.answered.load(), threw ? 0 : 1);
      // A memory backend counts the bytes it holds, whatever failed.
      if (auto* memory = dynamic_cast<MemoryBackend*>(backend.get())) {
        const std::optional<Bytes> written = memory->Peek(args.other);
        EXPECT_EQ(memory->used(), 100u + (written ? written->size() : 0u));
      }
      // The backend still works.
      Result<Bytes> read = ReadNow(*backend, args.kept);
      ASSERT_THAT(read.status(), IsOk());
      EXPECT_EQ(*read, Bytes(100, 7));
    }  // the backend closes
    EXPECT_TRUE(went_through) << c.name;
    // Each call allocates before it is handed on, its tracked callback at least: the sweep met
    // failures (2 to 10 of them), in the wrappers and in the backends' Start functions.
    EXPECT_GT(failures, 1) << c.name;
  }
}

// The folder backend's work runs on its I/O thread, where an allocation failing has no caller to
// reach: for each operation, the I/O thread's n-th allocation from the call's start on is made to
// throw, for n = 0, 1, 2... until the call's work makes fewer (the thread is armed, and disarmed,
// by the callbacks of calls queued before and after it, which run there). Each call answers once,
// its count comes down, and the backend still works.
TEST(FolderBackendAllocationTest, AnIoThreadAllocationThatFailsAnswersOnce) {
  for (const Case& c : kCases) {
    bool went_through = false;
    long failures = 0;
    for (long n = 0; n < 10'000 && !went_through; ++n) {
      SCOPED_TRACE(std::string(c.name) + ", I/O thread allocation " + std::to_string(n) +
                   " failing");
      std::unique_ptr<Backend> backend = MakeFolder();
      Args args;
      ASSERT_THAT(WriteNow(*backend, args.kept, Bytes(100, 7)), IsOk());
      backend->Exists(args.kept, [n](Result<bool>) { test_support::FailAllocationAfter(n); });
      c.call(*backend, args);
      args.front->Set(Bytes(8, 3));
      // Met when the call's work took the failure: not when the disarming call's work did, nor
      // when the thread is still armed once that call answers (probed with n + 1 allocations).
      std::atomic<bool> met{true};
      backend->Exists(args.kept, [n, &met](Result<bool> r) {
        if (!r.ok()) met = false;
        try {
          for (long i = 0; i <= n; ++i) ::operator delete(::operator new(1));
        } catch (const std::bad_alloc&) {
          met = false;
        }
        test_support::FailAllocationAfter(-1);
      });
      if (!Idles(*backend)) {
        static_cast<void>(backend.release());
        FAIL() << "an operation stays counted";
      }
      went_through = !met;
      failures += met ? 1 : 0;
      EXPECT_EQ(args.answered.load(), 1);
      Result<Bytes> read = ReadNow(*backend, args.kept);
      ASSERT_THAT(read.status(), IsOk());
      EXPECT_EQ(*read, Bytes(100, 7));
    }
    EXPECT_TRUE(went_through) << c.name;
    EXPECT_GT(failures, 1) << c.name;
  }
}

// A write with a late front starts when the front is set, on the thread that sets it (a worker
// done encoding), which has no caller to take an exception: an allocation failing there fails the
// write (StorageFailed), answered once, and the count comes down.
TEST_P(BackendAllocationTest, AWriteWhoseLateStartFailsAnswersOnce) {
  bool went_through = false;
  for (long n = 0; n < 10'000 && !went_through; ++n) {
    SCOPED_TRACE("allocation " + std::to_string(n) + " failing");
    std::unique_ptr<Backend> backend = GetParam().make();
    Args args;
    Status answer;
    std::atomic<int> answers = 0;
    backend->Write(args.other, args.front, std::move(args.rest), [&](Status s) {
      answer = s;
      ++answers;
    });
    Bytes front(8, 3);  // made before the count starts: only the backend's allocations fail
    test_support::FailAllocationAfter(n);
    bool threw = false;
    try {
      args.front->Set(std::move(front));
    } catch (...) {
      threw = true;
    }
    test_support::FailAllocationAfter(-1);
    EXPECT_FALSE(threw) << "an exception left the thread that set the front";
    if (!Idles(*backend)) {
      static_cast<void>(backend.release());
      FAIL() << "the write stays counted";
    }
    ASSERT_EQ(answers.load(), 1);
    if (answer.ok()) {
      went_through = true;
      EXPECT_THAT(ReadNow(*backend, args.other), IsOk());
    } else {
      EXPECT_EQ(answer.code(), StatusCode::kStorageFailed) << answer.ToString();
    }
  }
  EXPECT_TRUE(went_through);
}

// A callback that throws ends its operation all the same (backend.h). The memory backend answers
// on the caller's thread, so the exception comes back out of the call, where the test sees it; a
// write with a late front answers on the thread that sets the front, which takes the exception
// and answers StorageFailed to a callback that already ran (nothing). (The folder backend answers
// on its I/O thread, where a throw would end the process: nothing a test could watch.) Either way
// the count comes back to none, so WaitUntilIdle and the destructor return, and the backend still
// works.
TEST(BackendCallbackTest, ACallbackThatThrowsStillEndsItsOperation) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const bool late_front = std::string_view(c.name) == "Write with a late front";
    auto backend = std::make_unique<MemoryBackend>();
    Args args;
    ASSERT_THAT(WriteNow(*backend, args.kept, Bytes(100, 7)), IsOk());
    args.throws = true;
    bool threw = false;
    try {
      c.call(*backend, args);
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    bool set_threw = false;
    try {
      args.front->Set(Bytes(8, 3));  // nothing waits for it but the late front's write
    } catch (...) {
      set_threw = true;
    }
    EXPECT_EQ(threw, !late_front) << "the callback's exception did not come back to the caller";
    EXPECT_FALSE(set_threw) << "an exception left the thread that set the front";
    EXPECT_EQ(args.answered.load(), 1);
    if (!Idles(*backend)) {
      // Its destructor would wait for ever: the backend is let go of, not destroyed.
      static_cast<void>(backend.release());
      FAIL() << "the operation stays counted after its callback threw";
    }
    backend->WaitUntilIdle();  // returns at once: nothing is counted
    // The backend still works.
    ASSERT_THAT(WriteNow(*backend, args.other, Bytes(5, 9)), IsOk());
    Result<Bytes> read = ReadNow(*backend, args.kept);
    ASSERT_THAT(read.status(), IsOk());
    EXPECT_EQ(*read, Bytes(100, 7));
  }  // the backend closes
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendAllocationTest,
                         ::testing::Values(Kind{"Memory", MakeMemory}, Kind{"Folder", MakeFolder}),
                         KindName);

}  // namespace
}  // namespace rolly::store
