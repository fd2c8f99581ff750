#include "rolly/scene/internal/object_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "rolly/scene/internal/sanitizer.h"
#include "rolly/scene/objects.h"

namespace rolly::scene::internal {
namespace {

using Pool = ObjectPool;

std::uintptr_t Address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
std::uintptr_t PageStart(const void* p) { return Address(p) & ~(std::uintptr_t{Pool::kPage} - 1); }

TEST(ObjectPoolTest, ObjectsOfOneSizeFollowEachOtherInAPage) {
  Pool pool;
  std::vector<void*> objects;
  for (int i = 0; i < 10; ++i) objects.push_back(pool.Allocate(200));  // slots of 208
  for (std::size_t i = 0; i < objects.size(); ++i) {
    EXPECT_EQ(Address(objects[i]) % 16, 0u);
    EXPECT_EQ(PageStart(objects[i]) + Pool::kPageHeader + i * 208, Address(objects[i]));
    std::memset(objects[i], 0xAB, 200);  // each holds its size
  }
  EXPECT_EQ(pool.stats().objects, 10u);
  EXPECT_EQ(pool.stats().pages_used, 1u);
  EXPECT_EQ(pool.stats().regions, 1u);
  for (void* p : objects) pool.Free(p, 200);
  EXPECT_EQ(pool.stats().objects, 0u);
  EXPECT_EQ(pool.stats().pages_used, 0u);
}

TEST(ObjectPoolTest, AFreedSlotIsTakenAgainFirst) {
  Pool pool;
  void* a = pool.Allocate(48);
  void* b = pool.Allocate(48);
  void* c = pool.Allocate(48);
  pool.Free(b, 48);
  EXPECT_EQ(pool.Allocate(40), b);  // 40 rounds up to the same slot size
  void* d = pool.Allocate(48);
  EXPECT_EQ(Address(d), Address(c) + 48);
  for (void* p : {a, b, c, d}) pool.Free(p, 48);
  EXPECT_EQ(pool.stats().objects, 0u);
}

TEST(ObjectPoolTest, SizesRoundUpToSixteenBytes) {
  Pool pool;
  void* one = pool.Allocate(1);
  void* sixteen = pool.Allocate(16);  // a slot of 16 as 1's
  void* seventeen = pool.Allocate(17);
  void* thirty_two = pool.Allocate(32);  // a slot of 32 as 17's
  EXPECT_EQ(Address(sixteen), Address(one) + 16);
  EXPECT_EQ(Address(thirty_two), Address(seventeen) + 32);
  EXPECT_NE(PageStart(one), PageStart(seventeen));
  pool.Free(one, 1);
  pool.Free(sixteen, 16);
  pool.Free(seventeen, 17);
  pool.Free(thirty_two, 32);
  EXPECT_EQ(pool.stats().pages_used, 0u);
}

TEST(ObjectPoolTest, SizesShareNoPageAndAnEmptiedPageServesAnySize) {
  Pool pool;
  void* small = pool.Allocate(16);
  void* large = pool.Allocate(1000);
  EXPECT_NE(PageStart(small), PageStart(large));
  EXPECT_EQ(pool.stats().pages_used, 2u);
  pool.Free(small, 16);
  EXPECT_EQ(pool.stats().pages_used, 1u);
  // The emptied page is taken again, from its start, by the next size that needs a page.
  void* other = pool.Allocate(500);
  EXPECT_EQ(Address(other), PageStart(small) + Pool::kPageHeader);
  pool.Free(other, 500);
  pool.Free(large, 1000);
  EXPECT_EQ(pool.stats().pages_used, 0u);
}

TEST(ObjectPoolTest, PooledUpToKMaxPooledAndFromTheHeapPastIt) {
  Pool pool;
  void* at_limit = pool.Allocate(Pool::kMaxPooled);
  EXPECT_EQ(pool.stats().objects, 1u);
  void* past = pool.Allocate(Pool::kMaxPooled + 1);
  void* empty = pool.Allocate(0);
  EXPECT_EQ(pool.stats().objects, 1u);  // neither is the pool's
  EXPECT_EQ(pool.stats().pages_used, 1u);
  std::memset(past, 1, Pool::kMaxPooled + 1);
  pool.Free(past, Pool::kMaxPooled + 1);
  pool.Free(empty, 0);
  pool.Free(at_limit, Pool::kMaxPooled);
  pool.Free(nullptr, 64);
  EXPECT_EQ(pool.stats().objects, 0u);
}

TEST(ObjectPoolTest, AFullPageTakesObjectsAgainOnceOneGoes) {
  Pool pool;
  constexpr std::size_t kSlot = 1024;
  constexpr std::size_t kPerPage = (Pool::kPage - Pool::kPageHeader) / kSlot;  // 63
  std::vector<void*> first;
  for (std::size_t i = 0; i < kPerPage; ++i) first.push_back(pool.Allocate(kSlot));
  for (void* p : first) EXPECT_EQ(PageStart(p), PageStart(first[0]));
  void* next = pool.Allocate(kSlot);  // the page is full: a second one
  EXPECT_NE(PageStart(next), PageStart(first[0]));
  EXPECT_EQ(pool.stats().pages_used, 2u);
  pool.Free(first[5], kSlot);
  EXPECT_EQ(pool.Allocate(kSlot), first[5]);
  for (void* p : first) pool.Free(p, kSlot);
  pool.Free(next, kSlot);
  EXPECT_EQ(pool.stats().pages_used, 0u);
}

TEST(ObjectPoolTest, APageInTheMiddleOfItsSizesListEmpties) {
  Pool pool;
  constexpr std::size_t kSlot = 1024;
  constexpr std::size_t kPerPage = (Pool::kPage - Pool::kPageHeader) / kSlot;
  // Three full pages of one size.
  std::vector<std::vector<void*>> pages(3);
  for (auto& page : pages) {
    for (std::size_t i = 0; i < kPerPage; ++i) page.push_back(pool.Allocate(kSlot));
  }
  for (const auto& page : pages) EXPECT_EQ(PageStart(page.front()), PageStart(page.back()));
  // One slot freed in each gives each room: the list of pages with room is the third, the
  // second, the first. The second then empties, from the middle of that list.
  for (auto& page : pages) {
    pool.Free(page.back(), kSlot);
    page.pop_back();
  }
  for (void* p : pages[1]) pool.Free(p, kSlot);
  pages[1].clear();
  EXPECT_EQ(pool.stats().pages_used, 2u);
  // The list still holds the third and the first: their freed slots are taken again, the
  // third's first, and then a page of its own for the next.
  void* a = pool.Allocate(kSlot);
  void* b = pool.Allocate(kSlot);
  EXPECT_EQ(PageStart(a), PageStart(pages[2].front()));
  EXPECT_EQ(PageStart(b), PageStart(pages[0].front()));
  void* c = pool.Allocate(kSlot);
  EXPECT_EQ(pool.stats().pages_used, 3u);
  EXPECT_EQ(Address(c), PageStart(c) + Pool::kPageHeader);
  for (void* p : {a, b, c}) pool.Free(p, kSlot);
  for (const auto& page : pages) {
    for (void* p : page) pool.Free(p, kSlot);
  }
  EXPECT_EQ(pool.stats().pages_used, 0u);
}

TEST(ObjectPoolTest, TakesANewRegionWhenOneIsUsedUp) {
  Pool pool;
  constexpr std::size_t kPagesPerRegion = Pool::kRegion / Pool::kPage;  // 32
  constexpr std::size_t kPerPage = (Pool::kPage - Pool::kPageHeader) / Pool::kMaxPooled;
  std::vector<void*> objects;
  for (std::size_t i = 0; i < kPagesPerRegion * kPerPage; ++i) {
    objects.push_back(pool.Allocate(Pool::kMaxPooled));
  }
  EXPECT_EQ(pool.stats().regions, 1u);
  EXPECT_EQ(pool.stats().pages_used, kPagesPerRegion);
  objects.push_back(pool.Allocate(Pool::kMaxPooled));
  EXPECT_EQ(pool.stats().regions, 2u);
  for (void* p : objects) pool.Free(p, Pool::kMaxPooled);
  EXPECT_EQ(pool.stats().pages_used, 0u);
  // Regions are kept: a world built again reuses them.
  EXPECT_EQ(pool.stats().regions, 2u);
}

TEST(ObjectPoolTest, ThreadsShareIt) {
  Pool pool;
  auto churn = [&pool](std::size_t size) {
    std::vector<void*> held;
    for (int round = 0; round < 20; ++round) {
      for (int i = 0; i < 500; ++i) {
        held.push_back(pool.Allocate(size));
        std::memset(held.back(), round, size);
      }
      for (std::size_t i = 0; i < held.size(); i += 2) pool.Free(held[i], size);
      std::vector<void*> kept;
      for (std::size_t i = 1; i < held.size(); i += 2) kept.push_back(held[i]);
      held = std::move(kept);
    }
    for (void* p : held) pool.Free(p, size);
  };
  std::thread a(churn, 64);
  std::thread b(churn, 64);
  churn(96);
  a.join();
  b.join();
  EXPECT_EQ(pool.stats().objects, 0u);
  EXPECT_EQ(pool.stats().pages_used, 0u);
}

TEST(ObjectPoolDeathTest, FreeingWithAnotherSizeStopsTheProcess) {
  Pool pool;
  void* p = pool.Allocate(32);
  EXPECT_DEATH(pool.Free(p, 64), "was not allocated with size 64");
  EXPECT_DEATH(pool.Free(p, 16), "was not allocated with size 16");
  pool.Free(p, 17);  // any size of the same slot (17 to 32) is the object's
  EXPECT_EQ(pool.stats().objects, 0u);
}

#if ROLLY_SCENE_ASAN
TEST(ObjectPoolDeathTest, AReadOfAFreedSlotIsReportedUnderAddressSanitizer) {
  Pool pool;
  auto* p = static_cast<volatile char*>(pool.Allocate(32));
  void* keep = pool.Allocate(32);  // the page stays in use
  pool.Free(const_cast<char*>(p), 32);
  EXPECT_DEATH((void)p[8], "use-after-poison");
  pool.Free(keep, 32);
}
#endif

// The scene's actors and components: from the shared pool, but from the general heap under
// AddressSanitizer (objects.cc says why).
class PooledProp : public Actor {
 public:
  PooledProp() { AddDefaultComponent<Component>("Part"); }
  char weight[100] = {};
};
class alignas(64) AlignedProp : public Actor {
 public:
  char cache_line[64] = {};
};

TEST(ObjectPoolTest, SceneActorsAndComponentsAreThePools) {
  const std::size_t before = Pool::Shared().stats().objects;
  auto* actor = new PooledProp();
  // The actor, its component and its list of components.
  EXPECT_EQ(Pool::Shared().stats().objects - before, ROLLY_SCENE_ASAN ? 0u : 3u);
  auto* aligned = new AlignedProp();  // from the general heap, aligned as it asks
  EXPECT_EQ(Address(aligned) % 64, 0u);
  EXPECT_EQ(Pool::Shared().stats().objects - before, ROLLY_SCENE_ASAN ? 0u : 3u);
  void* const actor_at = actor;
  const std::set<const void*> part_and_list = {actor->components.front().get(),
                                               actor->components.data()};
  Actor* as_base = actor;
  delete as_base;  // the size reaches the pool through the virtual destructor
  delete static_cast<Actor*>(aligned);
  EXPECT_EQ(Pool::Shared().stats().objects, before);
  if constexpr (!ROLLY_SCENE_ASAN) {
    // Freed into the slots of their sizes: the next actor of the class takes its slot again,
    // and its component and list the two pages the last ones emptied (each page to whichever
    // size asks for one first).
    auto* again = new PooledProp();
    EXPECT_EQ(static_cast<void*>(again), actor_at);
    EXPECT_EQ((std::set<const void*>{again->components.front().get(), again->components.data()}),
              part_and_list);
    delete again;
  }
  // Placement new works as usual.
  alignas(PooledProp) unsigned char room[sizeof(PooledProp)];
  auto* placed = new (room) PooledProp();
  EXPECT_EQ(static_cast<void*>(placed), static_cast<void*>(room));
  // Its part and its list.
  EXPECT_EQ(Pool::Shared().stats().objects - before, ROLLY_SCENE_ASAN ? 0u : 2u);
  placed->~PooledProp();
  EXPECT_EQ(Pool::Shared().stats().objects, before);
}

// What a save and a load read of every actor besides the objects: its tags (and the sample
// game's saved vectors, PooledVectors too) come from the pool up to its largest slot.
TEST(ObjectPoolTest, PooledVectorsComeFromThePoolUpToItsLargestSlot) {
  const std::size_t before = Pool::Shared().stats().objects;
  const std::size_t pooled = ROLLY_SCENE_ASAN ? 0u : 1u;
  auto* actor = new PooledProp();  // the actor, its component and its list: 3 objects
  actor->tags = {Name("Front"), Name("Wood")};
  EXPECT_EQ(Pool::Shared().stats().objects - before, 3 * pooled + pooled);
  actor->tags.resize(100);  // moved to a larger slot: still one object
  EXPECT_EQ(Pool::Shared().stats().objects - before, 3 * pooled + pooled);
  EXPECT_EQ(actor->tags.front(), Name("Front"));
  delete static_cast<Actor*>(actor);
  EXPECT_EQ(Pool::Shared().stats().objects, before);

  {
    PooledVector<std::uint8_t> at_limit;
    at_limit.reserve(Pool::kMaxPooled);
    EXPECT_EQ(Pool::Shared().stats().objects - before, pooled);
    PooledVector<std::uint8_t> past_limit;  // from the general heap
    past_limit.reserve(Pool::kMaxPooled + 1);
    EXPECT_EQ(Pool::Shared().stats().objects - before, pooled);
    past_limit.assign(Pool::kMaxPooled + 1, 7);
    EXPECT_EQ(past_limit.back(), 7);
  }
  EXPECT_EQ(Pool::Shared().stats().objects, before);
}

}  // namespace
}  // namespace rolly::scene::internal
