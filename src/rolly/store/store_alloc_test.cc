// A store request whose allocation fails, on the game thread or on the worker that does its work.
//
// On the game thread: for each request, the calling thread's n-th allocation inside it is made to
// throw std::bad_alloc, for n = 0, 1, 2... until the request goes through. Whatever the request
// throws, the store stays whole: a flush ends (no operation stays counted that will never call
// back), the slot's queue still runs what is asked next, and the store closes.
//
// On the worker: the same sweep over the n-th allocation of the store's only worker thread after
// the request is asked, until its work makes fewer. The request always calls back, Ok or
// StorageFailed, and the store stays whole as above.
//
// The program replaces the global operator new (core/failing_allocation.h), counting allocations
// per thread; only the thread armed (the test's, or the worker) is ever made to fail.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rolly/core/failing_allocation.h"
#include "rolly/core/mailbox.h"
#include "rolly/core/status_matchers.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/store/fault_backend.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/store.h"

namespace rolly::store {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::SizeIs;

constexpr std::chrono::seconds kPatience{30};

format::File MakeFile(std::string title) {
  format::File file;
  file.header.title = std::move(title);
  file.header.save_time_us = 1700000000000000;
  file.chunks.emplace_back(format::kTestChunk, "payload", Bytes(200, 7));
  return file;
}

// A backend that runs every call of `target` on a thread of its own (a pool of one), where the
// target, answering at once, answers too: the store's completions of these calls run on that
// thread, as on a backend with threads of its own. Everything the forwarding needs (the task,
// the callback held apart, the name's copy) is made on the calling thread, so that the only
// allocations on the backend's thread are the target's and those of the store's completions.
// A write's late front is waited for as Backend's default does (StartWhenFrontSet, on the thread
// that sets it), whose pieces are then forwarded here: the thread never blocks on a front.
class OwnThreadBackend : public Backend {
 public:
  explicit OwnThreadBackend(Backend* target) : target_(target) {}
  ~OwnThreadBackend() override {
    WaitUntilIdle();
    thread_.WaitUntilIdle();
  }

  // The backend's thread, to arm.
  WorkerPool& thread() { return thread_; }
  bool can_list() const override { return target_->can_list(); }
  // Callbacks (the store's completions) that threw out to this thread, after they answered.
  int callbacks_that_threw() const { return callbacks_that_threw_.load(); }

 protected:
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override {
    Forward(std::move(done),
            [this, name, bytes = std::move(bytes)](StatusCallback forward) mutable {
              target_->Write(name, std::move(bytes), std::move(forward));
            });
  }
  void StartWritePieces(const FileName& name, std::vector<Bytes> pieces,
                        StatusCallback done) override {
    Forward(std::move(done),
            [this, name, pieces = std::move(pieces)](StatusCallback forward) mutable {
              target_->Write(name, std::move(pieces), std::move(forward));
            });
  }
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override {
    Forward(std::move(done), [this, name, max_bytes](BytesCallback forward) {
      target_->ReadPrefix(name, max_bytes, std::move(forward));
    });
  }
  void StartExists(const FileName& name, ExistsCallback done) override {
    Forward(std::move(done), [this, name](ExistsCallback forward) {
      target_->Exists(name, std::move(forward));
    });
  }
  void StartDelete(const FileName& name, StatusCallback done) override {
    Forward(std::move(done), [this, name](StatusCallback forward) {
      target_->Delete(name, std::move(forward));
    });
  }
  void StartList(ListCallback done) override {
    Forward(std::move(done),
            [this](ListCallback forward) { target_->List(std::move(forward)); });
  }

 private:
  template <typename T>
  struct Held {
    explicit Held(std::function<void(T)> d) : done(std::move(d)) {}
    std::function<void(T)> done;
    std::atomic<bool> answered{false};
  };

  // Posts `call(forward)` to the thread; `forward` answers `done`. When the call throws before
  // it answered (the target's allocation failing: it started nothing), the call answers
  // StorageFailed, as the store takes a call that throws. Throws only before anything is posted.
  template <typename T, typename Call>
  void Forward(std::function<void(T)> done, Call call) {
    auto held = std::make_shared<Held<T>>(std::move(done));
    std::function<void(T)> forward = [held](T value) {
      held->answered.store(true);
      held->done(std::move(value));
    };
    thread_.Post([this, held, forward = std::move(forward), call = std::move(call)]() mutable {
      try {
        call(std::move(forward));
        return;
      } catch (...) {
        if (held->answered.exchange(true)) {
          ++callbacks_that_threw_;  // the answer stands; what it threw reached this thread
          return;
        }
      }
      try {
        held->done(T(StorageFailedError("the backend's call threw")));
      } catch (...) {
        ++callbacks_that_threw_;
      }
    });
  }

  Backend* const target_;
  std::atomic<int> callbacks_that_threw_{0};
  WorkerPool thread_{1};
};

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

// The store's replies, made ahead, reach the game thread with every allocation failing: posting a
// Mailbox::Made allocates nothing, whatever the queue holds already.
TEST(StoreAllocationTest, PostingAStepMadeAheadAllocatesNothing) {
  Mailbox mailbox;
  std::vector<Mailbox::Made> made;
  int ran = 0;
  for (int i = 0; i < 1000; ++i) made.emplace_back([&ran] { ++ran; });
  test_support::FailAllocationAfter(0);
  for (Mailbox::Made& m : made) mailbox.Post(std::move(m));
  test_support::FailAllocationAfter(-1);
  EXPECT_EQ(mailbox.Drain(), 1000u);
  EXPECT_EQ(ran, 1000);
  // A std::function posted so does allocate its place (and throws when it cannot).
  test_support::FailAllocationAfter(0);
  EXPECT_THROW(mailbox.Post([] {}), std::bad_alloc);
  test_support::FailAllocationAfter(-1);
}

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

// A request for the sweep on the worker, given the store: its callback appends its status.
using WorkerRequest = std::function<void(Store&, std::vector<Status>* answers)>;

auto Answering(std::vector<Status>* answers) {
  return [answers](const auto& r) { answers->push_back(testing_internal::GetStatus(r)); };
}

// A request, the title a load of "slot" finds after it went through (nullptr: no save), and how
// many answers it gets (the first decides the title).
struct WorkerCase {
  const char* name;
  WorkerRequest request;
  const char* title_after;
  std::size_t answers = 1;
  const char* copies_to = nullptr;  // the slot a CopySlot writes, checked after it
};

const WorkerCase kWorkerCases[] = {
    {"Save",
     [](Store& s, std::vector<Status>* a) { s.Save("slot", MakeFile("again"), Answering(a)); },
     "again"},
    {"Save of a file made on the worker",
     [](Store& s, std::vector<Status>* a) {
       s.Save(
           "slot", []() -> Result<format::File> { return MakeFile("made"); }, Answering(a));
     },
     "made"},
    {"Load", [](Store& s, std::vector<Status>* a) { s.Load("slot", Answering(a)); }, "first"},
    {"LoadCopy",
     [](Store& s, std::vector<Status>* a) { s.LoadCopy("slot", Copy::kA, Answering(a)); }, "first"},
    {"ReadNewestHeader",
     [](Store& s, std::vector<Status>* a) { s.ReadNewestHeader("slot", Answering(a)); }, "first"},
    {"Delete", [](Store& s, std::vector<Status>* a) { s.Delete("slot", Answering(a)); }, nullptr},
    {"CopySlot", [](Store& s, std::vector<Status>* a) { s.CopySlot("slot", "copy", Answering(a)); },
     "first", 1, "copy"},
    {"ListSlots", [](Store& s, std::vector<Status>* a) { s.ListSlots(Answering(a)); }, "first"},
    // The second's turn starts on the worker, where the first ends.
    {"ReadNewestHeader, then Load",
     [](Store& s, std::vector<Status>* a) {
       s.ReadNewestHeader("slot", Answering(a));
       s.Load("slot", Answering(a));
     },
     "first", 2},
};

// The copy of "slot" that holds its first save (copy a).
FileName NewestOfSlot() { return FileName::ForSlot("rolly", "slot", Copy::kA).value(); }

// Saves "first" into the slot through `store` over `memory` and gives its newest copy's bytes,
// the sweeps' last good save.
void SaveFirst(Store& store, const MemoryBackend& memory, Bytes* last_good) {
  std::vector<Status> saved;
  store.Save("slot", MakeFile("first"), Answering(&saved));
  ASSERT_THAT(store.FlushFor(kPatience), IsOk());
  ASSERT_THAT(saved, ElementsAre(IsOk()));
  const std::optional<Bytes> copy = memory.Peek(NewestOfSlot());
  ASSERT_TRUE(copy.has_value());
  *last_good = *copy;
}

// A sweep: for each request, on a store that knows the slot and on one that knows nothing,
// `attempt(c, knows, n, &met)` runs it with the n-th allocation of a thread failing (`met`: one
// did), for n = 0, 1, 2... until an attempt meets none; at least `fewest(c, knows)` must have met
// one. `where` names the thread in the trace.
void SweepRequests(std::string_view where,
                   const std::function<long(const WorkerCase&, bool)>& fewest,
                   const std::function<void(const WorkerCase&, bool, long, bool*)>& attempt) {
  for (const WorkerCase& c : kWorkerCases) {
    for (const bool knows : {true, false}) {
      bool went_through = false;
      long failures = 0;
      for (long n = 0; n < 10'000 && !went_through; ++n) {
        SCOPED_TRACE(std::string(c.name) + (knows ? "" : " (knowing nothing)") + ", " +
                     std::string(where) + " allocation " + std::to_string(n) + " failing");
        bool met = false;
        ASSERT_NO_FATAL_FAILURE(attempt(c, knows, n, &met));  // the stores close at its end
        went_through = !met;
        failures += met ? 1 : 0;
      }
      EXPECT_TRUE(went_through) << c.name;
      EXPECT_GE(failures, fewest(c, knows)) << c.name;
    }
  }
}

// The checks after a request of the sweeps, on `store` over `memory` (which held the save
// "first", `last_good`, before it): one answer per request, Ok or StorageFailed; nothing pending;
// a request that failed left the last good save (a delete removes the older copy first, and
// answers Ok once both are gone); a slot copy that went through holds the save, and one that
// failed wrote no valid save; and the slot's queue still runs what comes next, a load finding
// what the request left and a save going through.
void ExpectTheStoreWhole(const WorkerCase& c, Store& store, const MemoryBackend& memory,
                         const std::vector<Status>& answers, const Bytes& last_good) {
  const FileName newest = NewestOfSlot();
  ASSERT_THAT(answers, AllOf(SizeIs(c.answers),
                             Each(AnyOf(IsOk(), StatusIs(StatusCode::kStorageFailed)))));
  EXPECT_EQ(store.pending(), 0u);
  const bool ok = answers[0].ok();
  const std::optional<Bytes> kept = memory.Peek(newest);
  if (!ok) {
    EXPECT_TRUE(kept == last_good) << "the last good save changed";
  }
  if (c.copies_to != nullptr) {
    std::optional<Result<LoadResult>> copied;
    store.Load(c.copies_to, [&copied](Result<LoadResult> r) { copied.emplace(std::move(r)); });
    ASSERT_THAT(store.FlushFor(kPatience), IsOk());
    ASSERT_TRUE(copied.has_value());
    if (ok) {
      ASSERT_THAT(*copied, IsOk());
      EXPECT_EQ((*copied)->file.header.title, "first");
    } else {
      EXPECT_THAT(*copied,
                  AnyOf(StatusIs(StatusCode::kNotFound), StatusIs(StatusCode::kDamaged)));
    }
  }

  std::optional<Result<LoadResult>> loaded;
  store.Load("slot", [&loaded](Result<LoadResult> r) { loaded.emplace(std::move(r)); });
  std::vector<Status> saved_again;
  store.Save("slot", MakeFile("after"), Answering(&saved_again));
  ASSERT_THAT(store.FlushFor(kPatience), IsOk());
  ASSERT_TRUE(loaded.has_value());
  if (!kept) {
    EXPECT_THAT(*loaded, StatusIs(StatusCode::kNotFound));
  } else {
    ASSERT_THAT(*loaded, IsOk());
    EXPECT_EQ((*loaded)->file.header.title,
              ok && c.title_after != nullptr ? c.title_after : "first");
  }
  EXPECT_THAT(saved_again, ElementsAre(IsOk()));
}

// Each request runs on a store that knows the slot and the index already (its own save made
// them), and on one that knows nothing yet (a backend object of its own over the same files), so
// that it reads the copies and the index first. Whatever fails, each request calls back once, Ok
// or StorageFailed; one that failed leaves the last good save as it was (a delete removes the
// older copy first, and answers Ok once both are gone); a slot copy that failed wrote no valid
// save; and a load after it finds what it left.
TEST(StoreAllocationTest, AWorkerAllocationThatFailsEndsTheRequestWithAStatus) {
  // The sweep meets failures: 2 (a listing that knows the index) to some 200 (a slot copy that
  // knows nothing).
  SweepRequests("worker", [](const WorkerCase&, bool) { return 2; },
                [](const WorkerCase& c, bool knows, long n, bool* met) {
    WorkerPool worker(1);
    Mailbox mailbox;
    MemoryBackend memory;
    BackendWrapper other(&memory);
    Store first(memory, worker, mailbox);
    Bytes last_good;
    ASSERT_NO_FATAL_FAILURE(SaveFirst(first, memory, &last_good));
    Store second(other, worker, mailbox);
    Store& store = knows ? first : second;

    std::vector<Status> answers;
    test_support::FailWorkerAllocationAfter(worker, n);
    // The worker waits until the requests are made, so that a second request's turn starts on
    // the worker, where the first ends (it allocates nothing meanwhile).
    std::atomic<bool> asked{false};
    worker.Post([&asked] {
      while (!asked.load()) std::this_thread::yield();
    });
    c.request(store, &answers);
    asked.store(true);
    const Status flushed = store.FlushFor(kPatience);
    *met = test_support::DisarmWorker(worker, n);
    ASSERT_THAT(flushed, IsOk());
    ExpectTheStoreWhole(c, store, memory, answers, last_good);
  });
}

// The same sweep on the backend's own thread: the store runs there what it does once a backend
// call answers (a save's FinishSave, a load's verifying of the second copy, the listing's quick
// path, the index writes that run where the backend answers, the next request's turn...). The
// backend (OwnThreadBackend over the memory backend) runs every call on its one thread, and its
// n-th allocation after the request is asked fails there (the store's worker never fails). The
// same requests, on a store that knows the slot and one that knows nothing, and the same checks:
// one answer per request, Ok or StorageFailed, the last good save kept when it failed, flushes
// end, nothing pending, and the next load and save work; and no completion throws out to the
// backend's thread.
//
// It found a lost answer: Backend::Track's callback copied a failed answer's status to keep it
// (Promised), and that allocation failing lost the callback, so the store waited for good for
// the read ("Save (knowing nothing)", n = 11: a read of copy b answering NotFound).
TEST(StoreAllocationTest, ABackendThreadAllocationThatFailsEndsTheRequestWithAStatus) {
  // Counts met: 5 (LoadCopy) to 71 (CopySlot); none for a listing that knows the index, which
  // asks the backend nothing.
  SweepRequests("backend thread",
                [](const WorkerCase& c, bool knows) {
                  return knows && std::string(c.name) == "ListSlots" ? 0 : 5;
                },
                [](const WorkerCase& c, bool knows, long n, bool* met) {
    WorkerPool worker(1);
    Mailbox mailbox;
    MemoryBackend memory;
    OwnThreadBackend own(&memory);
    OwnThreadBackend other(&memory);
    OwnThreadBackend& backend = knows ? own : other;
    Store first(own, worker, mailbox);
    Bytes last_good;
    ASSERT_NO_FATAL_FAILURE(SaveFirst(first, memory, &last_good));
    Store second(other, worker, mailbox);
    Store& store = knows ? first : second;

    std::vector<Status> answers;
    test_support::FailWorkerAllocationAfter(backend.thread(), n);
    // The worker and the backend's thread wait until the requests are made (allocating nothing
    // meanwhile), so that a second request's turn starts where the first ends.
    std::atomic<bool> asked{false};
    const auto wait_asked = [&asked] {
      while (!asked.load()) std::this_thread::yield();
    };
    worker.Post(wait_asked);
    backend.thread().Post(wait_asked);
    c.request(store, &answers);
    asked.store(true);
    const Status flushed = store.FlushFor(kPatience);
    *met = test_support::DisarmWorker(backend.thread(), n);
    EXPECT_EQ(backend.callbacks_that_threw(), 0);
    ASSERT_THAT(flushed, IsOk());
    ExpectTheStoreWhole(c, store, memory, answers, last_good);
  });
}

}  // namespace
}  // namespace rolly::store
