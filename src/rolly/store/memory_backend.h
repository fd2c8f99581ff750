// MemoryBackend: files held in memory, for tests, tools and memory slots. Every operation
// completes at once, on the calling thread, and a write is "durable" as soon as it returns.
//
// An optional capacity makes a write that would hold more bytes than it answer NoSpace, so a game
// can test a full disk without filling one.
//
// Thread rules: any thread; operations are serialized by one lock.

#ifndef ROLLY_STORE_MEMORY_BACKEND_H_
#define ROLLY_STORE_MEMORY_BACKEND_H_

#include <cstddef>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "rolly/store/backend.h"

namespace rolly::store {

class MemoryBackend : public Backend {
 public:
  // `capacity`: the most bytes all files together may hold.
  explicit MemoryBackend(std::size_t capacity = std::numeric_limits<std::size_t>::max());
  ~MemoryBackend() override;

  // A copy of a file's bytes, or nullopt; for tests that look behind the store.
  std::optional<Bytes> Peek(const FileName& name) const;
  // Replaces a file's bytes behind the store's back (to damage a copy in a test).
  void Poke(const FileName& name, Bytes bytes);
  // Bytes held by all files.
  std::size_t used() const;

 protected:
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override;
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override;
  void StartExists(const FileName& name, ExistsCallback done) override;
  void StartDelete(const FileName& name, StatusCallback done) override;
  void StartList(ListCallback done) override;

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::string, Bytes> files_;
  std::size_t used_ = 0;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_MEMORY_BACKEND_H_
