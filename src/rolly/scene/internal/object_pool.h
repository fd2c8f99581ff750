// The memory the reference scene's actors and components live in, kept as an engine keeps its
// objects: those of one size together, in 64 KiB pages carved from 2 MiB regions that Linux is
// asked to back with huge pages (madvise; a kernel that declines leaves them in 4 KiB pages).
//
// Why a scene has one: the library reaches every saved object each time it captures or loads,
// in the order the host visits them. From the general heap, a world built into a heap that the
// last world and its map's JSON churned lands in the holes they left, a median 23 KB apart at
// 100,000 actors; from the pool, objects of one size land in dense runs (a page emptied goes
// back to be filled from its start), and, where the kernel grants huge pages, a walk over them
// needs few address translations. An actor's list of components and the scene's saved vectors
// come from the pool too (objects.h: PooledList, PooledVector); strings longer than they keep
// inline, and other containers, stay on the general heap.
// docs/host.md says why a host's layout matters; docs/performance.md what it measured.
//
// A page holds objects of one slot size (sizes round up to 16 bytes); objects larger than
// kMaxPooled come from ::operator new. A freed slot is taken again first, and a page whose last
// object goes is emptied for any size. Regions are kept until the pool is destroyed: the pool
// holds the most its objects ever needed, as an engine's pools do (for the scene, two worlds:
// OpenMap builds the new one before the old one goes).
//
// Under AddressSanitizer each free slot is poisoned, so a read of a freed object is reported;
// scene objects bypass the pool there (objects.cc), so the sanitizer's quarantine keeps catching
// use after free in the library's handling of destroyed actors.
//
// Thread rules: any thread; one mutex guards the pool (Allocate asks ::operator new for a new
// region while holding it).

#ifndef ROLLY_SCENE_INTERNAL_OBJECT_POOL_H_
#define ROLLY_SCENE_INTERNAL_OBJECT_POOL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace rolly::scene::internal {

class ObjectPool {
 public:
  static constexpr std::size_t kMaxPooled = 2048;
  static constexpr std::size_t kSlotStep = 16;
  static constexpr std::size_t kPage = 64 * 1024;
  static constexpr std::size_t kRegion = 2 * 1024 * 1024;
  // The first bytes of each page hold its header; its slots follow.
  static constexpr std::size_t kPageHeader = 64;

  ObjectPool() = default;
  // Gives the regions back. Every object must have been freed (objects left are not destroyed;
  // their memory goes).
  ~ObjectPool();
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;

  // Memory for an object of `size` bytes, aligned to 16 bytes (objects needing more alignment
  // must not come here). Throws std::bad_alloc when the system has no memory, as operator new.
  void* Allocate(std::size_t size);
  // Gives back `p`, which Allocate(size) returned, with the same `size` (a pooled object freed
  // with a size of another slot aborts the process with a message: the pool would be corrupt).
  void Free(void* p, std::size_t size) noexcept;

  struct Stats {
    std::size_t regions = 0;     // 2 MiB regions held
    std::size_t pages_used = 0;  // pages holding at least one object
    std::size_t objects = 0;     // pooled objects live
  };
  Stats stats() const;

  // The pool the scene's objects use. Never destroyed, so an object may outlive static
  // destruction.
  static ObjectPool& Shared();

 private:
  struct Page;
  // The pages of one slot size with a free slot, most recently freed into first.
  struct SizeClass {
    Page* room = nullptr;
  };
  static constexpr std::size_t kClasses = kMaxPooled / kSlotStep + 1;

  static Page* PageOf(void* p);
  Page* TakeEmptyPage();
  static bool HasRoom(const Page& page);
  static void Unlink(Page*& head, Page* page);
  static void PushFront(Page*& head, Page* page);

  mutable std::mutex mutex_;
  std::array<SizeClass, kClasses> classes_{};
  Page* empty_ = nullptr;  // pages holding no object, for any size
  std::vector<void*> regions_;
  std::size_t pages_used_ = 0;
  std::size_t objects_ = 0;
};

}  // namespace rolly::scene::internal

#endif  // ROLLY_SCENE_INTERNAL_OBJECT_POOL_H_
