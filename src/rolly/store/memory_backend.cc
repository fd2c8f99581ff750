// MemoryBackend: a sorted map of names to bytes.

#include "rolly/store/memory_backend.h"

#include <algorithm>
#include <utility>

namespace rolly::store {

MemoryBackend::MemoryBackend(std::size_t capacity) : capacity_(capacity) {}

MemoryBackend::~MemoryBackend() { WaitUntilIdle(); }

std::optional<Bytes> MemoryBackend::Peek(const FileName& name) const {
  std::lock_guard lock(mutex_);
  auto it = files_.find(name.str());
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

void MemoryBackend::Poke(const FileName& name, Bytes bytes) {
  std::lock_guard lock(mutex_);
  Bytes& slot = files_[name.str()];
  used_ = used_ - slot.size() + bytes.size();
  slot = std::move(bytes);
}

std::size_t MemoryBackend::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

void MemoryBackend::StartWrite(const FileName& name, Bytes bytes, StatusCallback done) {
  Status result;
  {
    std::lock_guard lock(mutex_);
    auto it = files_.find(name.str());
    const std::size_t old_size = it == files_.end() ? 0 : it->second.size();
    if (bytes.size() > capacity_ || used_ - old_size > capacity_ - bytes.size()) {
      result = NoSpaceError("the memory backend's capacity is full");
    } else {
      // The file's entry first: making it may throw (an allocation), and the count must not
      // have moved then.
      Bytes& slot = it != files_.end() ? it->second : files_[name.str()];
      used_ = used_ - old_size + bytes.size();
      slot = std::move(bytes);
    }
  }
  done(std::move(result));
}

void MemoryBackend::StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) {
  Result<Bytes> result = NotFoundError(name.str());
  {
    std::lock_guard lock(mutex_);
    auto it = files_.find(name.str());
    if (it != files_.end()) {
      const std::size_t n = std::min(max_bytes, it->second.size());
      result = Bytes(it->second.begin(), it->second.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }
  done(std::move(result));
}

void MemoryBackend::StartExists(const FileName& name, ExistsCallback done) {
  bool exists;
  {
    std::lock_guard lock(mutex_);
    exists = files_.count(name.str()) != 0;
  }
  done(exists);
}

void MemoryBackend::StartDelete(const FileName& name, StatusCallback done) {
  {
    std::lock_guard lock(mutex_);
    auto it = files_.find(name.str());
    if (it != files_.end()) {
      used_ -= it->second.size();
      files_.erase(it);
    }
  }
  done(OkStatus());
}

void MemoryBackend::StartList(ListCallback done) {
  std::vector<FileName> names;
  {
    std::lock_guard lock(mutex_);
    names.reserve(files_.size());
    for (const auto& [text, bytes] : files_) {
      if (auto parsed = FileName::Parse(text)) names.push_back(*parsed);
    }
  }
  done(std::move(names));
}

}  // namespace rolly::store
