// A save asked on the game thread whose allocation fails: the game thread's n-th allocation inside
// SaveSystem::Save (over the reference scene, a store and a MemoryBackend) is made to throw
// std::bad_alloc, for n = 0, 1, 2... until the call goes through. The call throws std::bad_alloc or
// is accepted. One that threw left nothing counted and never calls back: a flush ends, the save
// system's later saves work, a load gives back the world they wrote, and its destructor returns.
// One that was accepted calls back once.
//
// The program replaces the global operator new (core/failing_allocation.h), counting allocations
// per thread; only the test's thread, the game thread, is ever made to fail.
//
// Thread rules: the test thread is the game thread and drives Tick/Flush.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rolly/core/mailbox.h"
#include "rolly/core/failing_allocation.h"
#include "rolly/core/status_matchers.h"
#include "rolly/core/worker_pool.h"
#include "rolly/game/save_system.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/scene/sample_game.h"
#include "rolly/scene/scene.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/store.h"
#include "rolly/world/world.h"
#include "rolly/world/world_diff.h"

namespace rolly::scene {
namespace {

using game::LoadOutcome;
using game::SaveOutcome;
using ::testing::AnyOf;
using ::testing::IsEmpty;

constexpr const char* kMap = "maps/alloc.json";
// A small sample map keeps the sweep (one run per allocation of the save) short.
constexpr int kActors = 8;
constexpr std::chrono::seconds kPatience{30};

Mailbox::Clock::time_point Deadline() { return Mailbox::Clock::now() + kPatience; }

// Counts the save system's save events.
class SaveCounter : public game::SaveEvents {
 public:
  void OnSaveFinished(std::string_view, const Status&) override { ++finished; }
  int finished = 0;
};

Status SaveNow(game::SaveSystem& saves, std::string_view slot) {
  std::optional<Status> got;
  saves.Save(slot, {.title = "test"}, [&](Result<SaveOutcome> r) { got = r.status(); });
  ROLLY_RETURN_IF_ERROR(saves.Flush(Deadline()));
  if (!got) return BlockedError("the save never called back");
  return *got;
}

Status LoadNow(game::SaveSystem& saves, std::string_view slot) {
  std::optional<Status> got;
  saves.Load(slot, {}, [&](Result<LoadOutcome> r) { got = r.status(); });
  ROLLY_RETURN_IF_ERROR(saves.Flush(Deadline()));
  if (!got) return BlockedError("the load never called back");
  return *got;
}

// Eight steps of play each time: no step adds a component in play (the ninth would), so a load
// that opens the saved map gives back the same world by itself.
constexpr int kSteps = 8;

TEST(SaveAllocationTest, ASaveWhoseAllocationFailsLeavesTheSaveSystemWhole) {
  auto registry = std::make_unique<reflect::TypeRegistry>();
  RegisterSceneTypes(*registry);
  RegisterSampleGame(*registry);
  ASSERT_OK(registry->Finish());
  const std::string map = BuildSampleMap(kActors, 5);

  bool went_through = false;
  long failures = 0;
  for (long n = 0; n < 100'000 && !went_through; ++n) {
    SCOPED_TRACE("allocation " + std::to_string(n) + " failing");
    WorkerPool workers(2);
    Mailbox mailbox;
    store::MemoryBackend backend;
    Scene scene(*registry);
    store::Store store(backend, workers, mailbox);
    SaveCounter events;
    {
      game::SaveSystem saves(store, scene, *registry, mailbox, workers);
      saves.SetEvents(&events);
      scene.AddMap(kMap, map);
      ASSERT_OK(scene.Start(kMap));
      ASSERT_OK(PlaySample(scene, kSteps, 1));
      // A save held by the world, as in play: the failing save keeps records from it.
      ASSERT_OK(SaveNow(saves, "slot"));
      ASSERT_OK(PlaySample(scene, kSteps, 2));

      int answered = 0;
      std::optional<Status> status;
      bool threw = false;
      test_support::FailAllocationAfter(n);
      try {
        saves.Save("slot", {.title = "failing"}, [&](Result<SaveOutcome> r) {
          ++answered;
          status = r.status();
        });
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      test_support::FailAllocationAfter(-1);
      went_through = !threw;
      failures += threw ? 1 : 0;
      // A save that threw was not made: nothing of it stays counted, and it never calls back.
      // One that was accepted calls back once, written or StorageFailed (its encoding could not be
      // posted).
      saves.Tick();
      ASSERT_OK(saves.Flush(Deadline()));
      EXPECT_EQ(answered, threw ? 0 : 1);
      EXPECT_EQ(events.finished, threw ? 1 : 2);
      if (status) {
        EXPECT_THAT(*status, AnyOf(IsOk(), StatusIs(StatusCode::kStorageFailed)));
      }

      // The save system goes on: a later save writes this world, and a load gives it back.
      ASSERT_OK(PlaySample(scene, kSteps, 3));
      ASSERT_OK_AND_ASSIGN(auto saved, world::CaptureForCompare(saves.world()));
      ASSERT_OK(SaveNow(saves, "slot"));
      ASSERT_OK(PlaySample(scene, kSteps, 4));
      ASSERT_OK(LoadNow(saves, "slot"));
      ASSERT_OK_AND_ASSIGN(auto loaded, world::CaptureForCompare(saves.world()));
      ASSERT_OK_AND_ASSIGN(auto diff, world::DiffWorlds(saved, loaded, 10));
      EXPECT_THAT(diff, IsEmpty());
    }  // the save system is destroyed
    ASSERT_OK(store.FlushFor(kPatience));
  }  // the store closes
  EXPECT_TRUE(went_through);
  // Capturing the world, making the save's callback and handing the save to the store allocate:
  // the sweep met failures (255 of them on this map).
  EXPECT_GT(failures, 10);
}

// A game for the sweeps on a worker: the sample map on the reference scene, a store over a
// MemoryBackend and a save system, with one worker, its allocations armed by the test.
struct OneWorkerGame {
  explicit OneWorkerGame(const reflect::TypeRegistry& registry)
      : scene(registry), store(backend, workers, mailbox) {
    saves.emplace(store, scene, registry, mailbox, workers);
  }
  // Starts `map`, plays it and saves it into "slot" (`saved`: the world that save holds), and
  // plays on.
  Status Start(const std::string& map, std::vector<world::WorldChunk>* saved) {
    scene.AddMap(kMap, map);
    ROLLY_RETURN_IF_ERROR(scene.Start(kMap));
    ROLLY_RETURN_IF_ERROR(PlaySample(scene, kSteps, 1));
    ROLLY_ASSIGN_OR_RETURN(*saved, world::CaptureForCompare(saves->world()));
    ROLLY_RETURN_IF_ERROR(SaveNow(*saves, "slot"));
    return PlaySample(scene, kSteps, 2);
  }
  // Destroys the save system (which waits for the chunks being made) and flushes the store.
  Status Close() {
    saves.reset();
    return store.FlushFor(kPatience);
  }

  WorkerPool workers{1};
  Mailbox mailbox;
  store::MemoryBackend backend;
  Scene scene;
  store::Store store;
  std::optional<game::SaveSystem> saves;
};

std::unique_ptr<reflect::TypeRegistry> SampleRegistry() {
  auto registry = std::make_unique<reflect::TypeRegistry>();
  RegisterSceneTypes(*registry);
  RegisterSampleGame(*registry);
  if (!registry->Finish().ok()) return nullptr;
  return registry;
}

// Checks that the game's save system goes on: its next save of the world as it is, and a load of
// that save after more play, give the world back.
void SavesAndLoadsAgain(OneWorkerGame& g) {
  ASSERT_OK(PlaySample(g.scene, kSteps, 3));
  ASSERT_OK_AND_ASSIGN(auto saved, world::CaptureForCompare(g.saves->world()));
  ASSERT_OK(SaveNow(*g.saves, "slot"));
  ASSERT_OK(PlaySample(g.scene, kSteps, 4));
  ASSERT_OK(LoadNow(*g.saves, "slot"));
  ASSERT_OK_AND_ASSIGN(auto loaded, world::CaptureForCompare(g.saves->world()));
  ASSERT_OK_AND_ASSIGN(auto diff, world::DiffWorlds(saved, loaded, 10));
  EXPECT_THAT(diff, IsEmpty());
}

// One try of a worker sweep on a game started afresh (`saved`: the chunks of its first save, in
// "slot"), with the n-th allocation of the save system's only worker to fail around what the try
// sweeps; it sets `*failed` to whether an allocation failed (test_support::DisarmWorker).
using WorkerTry = std::function<void(OneWorkerGame& g, const std::vector<world::WorldChunk>& saved,
                                     long n, bool* failed)>;

// Runs `attempt` for n = 0, 1, 2... until a try meets no failure, the save system going on after
// each (SavesAndLoadsAgain, and its destructor returns); expects more than ten tries to meet one.
void SweepWorkerAllocations(const WorkerTry& attempt) {
  const std::unique_ptr<reflect::TypeRegistry> registry = SampleRegistry();
  ASSERT_NE(registry, nullptr);
  const std::string map = BuildSampleMap(kActors, 5);
  bool went_through = false;
  long met = 0;
  for (long n = 0; n < 100'000 && !went_through; ++n) {
    SCOPED_TRACE("worker allocation " + std::to_string(n) + " failing");
    OneWorkerGame g(*registry);
    std::vector<world::WorldChunk> saved;
    ASSERT_OK(g.Start(map, &saved));
    bool failed = false;
    ASSERT_NO_FATAL_FAILURE(attempt(g, saved, n, &failed));
    went_through = !failed;
    met += failed ? 1 : 0;
    SavesAndLoadsAgain(g);
    ASSERT_OK(g.Close());
  }
  EXPECT_TRUE(went_through);
  EXPECT_GT(met, 10);
}

// The same save with the n-th allocation of the save system's only worker failing instead, for
// n = 0, 1, 2... until the save's work on the worker makes fewer: that worker copies the world
// while the game thread lists it, makes the save's chunks (world::CapturedWorld::Make), compresses
// and writes them. The save throws std::bad_alloc on the game thread (a copy's failure leaves the
// capture there) or calls back once, written or StorageFailed; the save system goes on, and its
// destructor returns (it waits for the chunks being made).
TEST(SaveAllocationTest, AWorkerAllocationThatFailsEndsTheSaveWithAStatus) {
  SweepWorkerAllocations([](OneWorkerGame& g, const std::vector<world::WorldChunk>&, long n,
                            bool* failed) {
    int answered = 0;
    std::optional<Status> status;
    bool threw = false;
    test_support::FailWorkerAllocationAfter(g.workers, n);
    try {
      g.saves->Save("slot", {.title = "failing"}, [&](Result<SaveOutcome> r) {
        ++answered;
        status = r.status();
      });
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    ASSERT_OK(g.saves->Flush(Deadline()));
    *failed = test_support::DisarmWorker(g.workers, n);
    EXPECT_EQ(answered, threw ? 0 : 1);
    if (status) {
      EXPECT_THAT(*status, AnyOf(IsOk(), StatusIs(StatusCode::kStorageFailed)));
    }
    if (!*failed) {
      ASSERT_TRUE(status.has_value());
      EXPECT_OK(*status);
    }
  });
}

// A load with the n-th allocation of the save system's only worker failing, for n = 0, 1, 2...
// until the load's work on the worker (the store's read, decode and check of the save, the
// world's check of its records) makes fewer. The load calls back once: Ok, or StorageFailed with
// the world as it was; the save system goes on.
TEST(SaveAllocationTest, AWorkerAllocationThatFailsEndsTheLoadWithAStatus) {
  SweepWorkerAllocations([](OneWorkerGame& g, const std::vector<world::WorldChunk>& saved,
                            long n, bool* failed) {
    ASSERT_OK_AND_ASSIGN(auto played, world::CaptureForCompare(g.saves->world()));
    int answered = 0;
    std::optional<Status> status;
    test_support::FailWorkerAllocationAfter(g.workers, n);
    g.saves->Load("slot", {}, [&](Result<LoadOutcome> r) {
      ++answered;
      status = r.status();
    });
    ASSERT_OK(g.saves->Flush(Deadline()));
    *failed = test_support::DisarmWorker(g.workers, n);
    ASSERT_EQ(answered, 1);
    EXPECT_THAT(*status, AnyOf(IsOk(), StatusIs(StatusCode::kStorageFailed)));
    ASSERT_OK_AND_ASSIGN(auto now, world::CaptureForCompare(g.saves->world()));
    ASSERT_OK_AND_ASSIGN(auto diff, world::DiffWorlds(status->ok() ? saved : played, now, 10));
    EXPECT_THAT(diff, IsEmpty()) << "a failed load changed the world, or an Ok one did not";
    if (!*failed) {
      EXPECT_OK(*status);
    }
  });
}

}  // namespace
}  // namespace rolly::scene
