// A store request on the game thread whose allocation fails: for each request, the calling
// thread's n-th allocation inside it is made to throw std::bad_alloc, for n = 0, 1, 2... until
// the request goes through. Whatever the request throws, the store stays whole: a flush ends
// (no operation stays counted that will never call back), the slot's queue still runs what is
// asked next, and the store closes.
//
// The program replaces the global operator new (core/failing_allocation.h), counting allocations
// per thread; only the test's thread is ever made to fail.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "rolly/core/mailbox.h"
#include "rolly/core/failing_allocation.h"
#include "rolly/core/status_matchers.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/store.h"

namespace rolly::store {
namespace {

constexpr std::chrono::seconds kPatience{30};

format::File MakeFile(std::string title) {
  format::File file;
  file.header.title = std::move(title);
  file.header.save_time_us = 1700000000000000;
  file.chunks.emplace_back(format::kTestChunk, "payload", Bytes(200, 7));
  return file;
}

// One request, given the store (its callback counts into `answered`).
using Request = std::function<void(Store&, int* answered)>;

struct Case {
  const char* name;
  Request request;
};

const Case kCases[] = {
    {"Save",
     [](Store& s, int* n) { s.Save("slot", MakeFile("again"), [n](Result<SaveInfo>) { ++*n; }); }},
    {"Load", [](Store& s, int* n) { s.Load("slot", [n](Result<LoadResult>) { ++*n; }); }},
    {"LoadCopy",
     [](Store& s, int* n) { s.LoadCopy("slot", Copy::kB, [n](Result<LoadResult>) { ++*n; }); }},
    {"ReadNewestHeader",
     [](Store& s, int* n) { s.ReadNewestHeader("slot", [n](Result<format::Header>) { ++*n; }); }},
    {"Delete", [](Store& s, int* n) { s.Delete("slot", [n](Status) { ++*n; }); }},
    {"CopySlot",
     [](Store& s, int* n) { s.CopySlot("slot", "copy", [n](Result<SaveInfo>) { ++*n; }); }},
    {"ListSlots", [](Store& s, int* n) { s.ListSlots([n](Result<SlotList>) { ++*n; }); }},
    {"Save of a refused name",
     [](Store& s, int* n) { s.Save("", MakeFile("none"), [n](Result<SaveInfo>) { ++*n; }); }},
};

TEST(StoreAllocationTest, ARequestWhoseAllocationFailsLeavesTheStoreWhole) {
  for (const Case& c : kCases) {
    bool went_through = false;
    long failures = 0;
    for (long n = 0; n < 10'000 && !went_through; ++n) {
      SCOPED_TRACE(std::string(c.name) + ", allocation " + std::to_string(n) + " failing");
      WorkerPool workers(2);
      Mailbox mailbox;
      MemoryBackend backend;
      {
        Store store(backend, workers, mailbox);
        int answered = 0;
        store.Save("slot", MakeFile("first"), [&answered](Result<SaveInfo> r) {
          EXPECT_THAT(r.status(), IsOk());
          ++answered;
        });
        ASSERT_THAT(store.FlushFor(kPatience), IsOk());
        answered = 0;
        bool threw = false;
        test_support::FailAllocationAfter(n);
        try {
          c.request(store, &answered);
        } catch (const std::bad_alloc&) {
          threw = true;
        }
        test_support::FailAllocationAfter(-1);
        went_through = !threw;
        failures += threw ? 1 : 0;
        // A request that threw was not made and never calls back; one that went through calls
        // back once, whatever it met on its way.
        ASSERT_THAT(store.FlushFor(kPatience), IsOk());
        EXPECT_EQ(answered, threw ? 0 : 1);
        // The slot's queue still runs what comes next.
        std::optional<Status> loaded;
        store.Load("slot", [&loaded](Result<LoadResult> r) { loaded = r.status(); });
        ASSERT_THAT(store.FlushFor(kPatience), IsOk());
        ASSERT_TRUE(loaded.has_value());
      }  // the store closes
    }
    EXPECT_TRUE(went_through) << c.name;
    // Each request allocates before it is handed on: the sweep met failures (6 to 19 of them).
    EXPECT_GT(failures, 3) << c.name;
  }
}

}  // namespace
}  // namespace rolly::store
