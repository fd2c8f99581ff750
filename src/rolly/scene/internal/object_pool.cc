#include "rolly/scene/internal/object_pool.h"

#include <cstdio>
#include <cstdlib>
#include <new>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "rolly/scene/internal/sanitizer.h"

#if ROLLY_SCENE_ASAN
#include <sanitizer/asan_interface.h>
#define ROLLY_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define ROLLY_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define ROLLY_POISON(p, n) ((void)(p), (void)(n))
#define ROLLY_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace rolly::scene::internal {

// At the start of each page.
struct ObjectPool::Page {
  Page* prev = nullptr;  // in its size's list of pages with room, or the empty pages
  Page* next = nullptr;
  void* free = nullptr;     // its freed slots, each holding the next one's address
  std::uint32_t slot = 0;   // its slot size; 0 while empty
  std::uint32_t fresh = 0;  // the offset of its first slot never used
  std::uint32_t live = 0;   // objects in it
};

ObjectPool::Page* ObjectPool::PageOf(void* p) {
  static_assert(sizeof(Page) <= kPageHeader && kRegion % kPage == 0);
  return reinterpret_cast<Page*>(reinterpret_cast<std::uintptr_t>(p) &
                                 ~(std::uintptr_t{kPage} - 1));
}

ObjectPool::~ObjectPool() {
  for (void* region : regions_) {
    ROLLY_UNPOISON(region, kRegion);
    ::operator delete(region, std::align_val_t{kRegion});
  }
}

ObjectPool& ObjectPool::Shared() {
  static ObjectPool* const pool = new ObjectPool();  // never destroyed (see the header)
  return *pool;
}

bool ObjectPool::HasRoom(const Page& page) {
  return page.free != nullptr || page.fresh + page.slot <= kPage;
}

void ObjectPool::Unlink(Page*& head, Page* page) {
  if (page->prev != nullptr) page->prev->next = page->next;
  if (page->next != nullptr) page->next->prev = page->prev;
  if (head == page) head = page->next;
  page->prev = page->next = nullptr;
}

void ObjectPool::PushFront(Page*& head, Page* page) {
  page->prev = nullptr;
  page->next = head;
  if (head != nullptr) head->prev = page;
  head = page;
}

ObjectPool::Page* ObjectPool::TakeEmptyPage() {
  if (empty_ == nullptr) {
    // A new region, its pages listed so that the first is taken first (room for it in regions_
    // first, so that nothing is lost if that throws).
    regions_.reserve(regions_.size() + 1);
    void* region = ::operator new(kRegion, std::align_val_t{kRegion});
#ifdef MADV_HUGEPAGE
    madvise(region, kRegion, MADV_HUGEPAGE);  // a hint: declined, the pages stay small
#endif
    regions_.push_back(region);
    ROLLY_POISON(region, kRegion);
    for (std::size_t at = kRegion; at > 0; at -= kPage) {
      void* start = static_cast<char*>(region) + at - kPage;
      ROLLY_UNPOISON(start, kPageHeader);
      PushFront(empty_, new (start) Page());
    }
  }
  Page* page = empty_;
  Unlink(empty_, page);
  return page;
}

void* ObjectPool::Allocate(std::size_t size) {
  if (size == 0 || size > kMaxPooled) return ::operator new(size);
  const std::size_t index = (size + kSlotStep - 1) / kSlotStep;
  const std::lock_guard lock(mutex_);
  SizeClass& c = classes_[index];
  Page* page = c.room;
  if (page == nullptr) {
    page = TakeEmptyPage();
    page->slot = static_cast<std::uint32_t>(index * kSlotStep);
    page->fresh = kPageHeader;
    ++pages_used_;
    PushFront(c.room, page);
  }
  void* p;
  if (page->free != nullptr) {
    p = page->free;
    ROLLY_UNPOISON(p, page->slot);
    page->free = *static_cast<void**>(p);
    // The next freed slot is asked into cache now: each holds the address of the one after it,
    // so a run of allocations from freed slots would otherwise wait on each in turn.
    if (page->free != nullptr) __builtin_prefetch(page->free);
  } else {
    p = reinterpret_cast<char*>(page) + page->fresh;
    ROLLY_UNPOISON(p, page->slot);
    page->fresh += page->slot;
  }
  ++page->live;
  ++objects_;
  if (!HasRoom(*page)) Unlink(c.room, page);
  return p;
}

void ObjectPool::Free(void* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  if (size == 0 || size > kMaxPooled) {
    ::operator delete(p);
    return;
  }
  const std::size_t index = (size + kSlotStep - 1) / kSlotStep;
  const std::lock_guard lock(mutex_);
  Page* page = PageOf(p);
  if (page->slot != index * kSlotStep || page->live == 0) {
    // A delete of another size than the object's (a class whose destructor is not virtual,
    // deleted through a base) would corrupt the pool: stop here, with the reason.
    std::fprintf(stderr, "ObjectPool::Free: %p was not allocated with size %zu\n", p, size);
    std::abort();
  }
  SizeClass& c = classes_[index];
  const bool had_room = HasRoom(*page);
  --page->live;
  --objects_;
  if (page->live == 0) {
    // Emptied: filled again from its start, by objects of any size.
    if (had_room) Unlink(c.room, page);
    ROLLY_POISON(reinterpret_cast<char*>(page) + kPageHeader, kPage - kPageHeader);
    *page = Page();
    --pages_used_;
    PushFront(empty_, page);
    return;
  }
  *static_cast<void**>(p) = page->free;
  page->free = p;
  ROLLY_POISON(p, page->slot);
  if (!had_room) PushFront(c.room, page);
}

ObjectPool::Stats ObjectPool::stats() const {
  const std::lock_guard lock(mutex_);
  return {regions_.size(), pages_used_, objects_};
}

}  // namespace rolly::scene::internal
