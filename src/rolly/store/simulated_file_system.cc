// SimulatedFileSystem: inodes with current and durable bytes, directories with current and durable
// entries, one lock.

#include "rolly/store/simulated_file_system.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace rolly::store {
namespace {

// A directory path without trailing slashes ("/" becomes "", the root's key).
std::string NormalizeDir(std::string_view dir) {
  while (!dir.empty() && dir.back() == '/') dir.remove_suffix(1);
  return std::string(dir);
}

// Splits "dir/name" into its directory's key and the name; a bare name lives in ".".
struct SplitPath {
  std::string dir;
  std::string name;
};
SplitPath Split(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {std::string("."), std::string(path)};
  return {NormalizeDir(path.substr(0, slash)), std::string(path.substr(slash + 1))};
}

}  // namespace

// A WritableFile that calls back into the file system under its lock. One opened to overwrite
// writes at its own offset over the inode's bytes, and cuts them there when it closes.
class SimulatedFileSystem::File : public WritableFile {
 public:
  File(SimulatedFileSystem* fs, std::uint64_t generation, std::string path,
       std::shared_ptr<Inode> inode, bool overwrite = false)
      : fs_(fs),
        generation_(generation),
        path_(std::move(path)),
        inode_(std::move(inode)),
        overwrite_(overwrite) {}

  Status Append(ByteView data) override {
    std::lock_guard lock(fs_->mutex_);
    ROLLY_RETURN_IF_ERROR(fs_->Step("write", path_));
    if (closed_) return StorageFailedError(fmt::format("write \"{}\": file closed", path_));
    if (!overwrite_) return fs_->Append(generation_, path_, *inode_, data);
    ROLLY_RETURN_IF_ERROR(fs_->Overwrite(generation_, path_, *inode_, offset_, data));
    offset_ += data.size();
    return OkStatus();
  }

  Status WriteAt(std::uint64_t offset, ByteView data) override {
    std::lock_guard lock(fs_->mutex_);
    ROLLY_RETURN_IF_ERROR(fs_->Step("write", path_));
    if (closed_) return StorageFailedError(fmt::format("write \"{}\": file closed", path_));
    return fs_->Overwrite(generation_, path_, *inode_, static_cast<std::size_t>(offset), data);
  }

  Status Sync() override {
    std::lock_guard lock(fs_->mutex_);
    ROLLY_RETURN_IF_ERROR(fs_->Step("fsync", path_));
    if (closed_) return StorageFailedError(fmt::format("fsync \"{}\": file closed", path_));
    return fs_->SyncFile(generation_, path_, *inode_);
  }

  Status Close() override {
    std::lock_guard lock(fs_->mutex_);
    ROLLY_RETURN_IF_ERROR(fs_->Step("close", path_));
    if (closed_) return StorageFailedError(fmt::format("close \"{}\": file closed", path_));
    closed_ = true;
    ROLLY_RETURN_IF_ERROR(fs_->CloseFile(generation_, path_));
    if (overwrite_ && inode_->current.size() > offset_) inode_->current.resize(offset_);
    return OkStatus();
  }

 private:
  SimulatedFileSystem* const fs_;
  const std::uint64_t generation_;
  const std::string path_;
  const std::shared_ptr<Inode> inode_;
  const bool overwrite_;
  std::size_t offset_ = 0;
  bool closed_ = false;
};

SimulatedFileSystem::SimulatedFileSystem(std::uint64_t capacity) : capacity_(capacity) {
  dirs_[""];
  dirs_["."];
}

SimulatedFileSystem::~SimulatedFileSystem() = default;

Status SimulatedFileSystem::Step(std::string_view what, const std::string& path) {
  ++steps_;
  if (fail_after_ && steps_ > *fail_after_) {
    return StorageFailedError(
        fmt::format("{} \"{}\": simulated failure at step {}", what, path, steps_));
  }
  return OkStatus();
}

SimulatedFileSystem::Directory* SimulatedFileSystem::Parent(const std::string& path,
                                                            std::string* name) {
  SplitPath split = Split(path);
  *name = std::move(split.name);
  auto it = dirs_.find(split.dir);
  return it == dirs_.end() ? nullptr : &it->second;
}

const SimulatedFileSystem::Directory* SimulatedFileSystem::Parent(const std::string& path,
                                                                  std::string* name) const {
  return const_cast<SimulatedFileSystem*>(this)->Parent(path, name);
}

std::uint64_t SimulatedFileSystem::UsedLocked() const {
  std::uint64_t used = 0;
  for (const auto& [key, dir] : dirs_) {
    for (const auto& [name, inode] : dir.current) used += inode->current.size();
  }
  return used;
}

Status SimulatedFileSystem::Append(std::uint64_t generation, const std::string& path, Inode& inode,
                                   ByteView data) {
  if (generation != generation_) {
    return StorageFailedError(fmt::format("write \"{}\": opened before a crash", path));
  }
  if (data.size() > capacity_ || UsedLocked() > capacity_ - data.size()) {
    return NoSpaceError(fmt::format("write \"{}\": the simulated disk is full", path));
  }
  inode.current.insert(inode.current.end(), data.begin(), data.end());
  return OkStatus();
}

Status SimulatedFileSystem::Overwrite(std::uint64_t generation, const std::string& path,
                                      Inode& inode, std::size_t offset, ByteView data) {
  if (generation != generation_) {
    return StorageFailedError(fmt::format("write \"{}\": opened before a crash", path));
  }
  // Only bytes past the old end take more room.
  const std::size_t end = offset + data.size();
  const std::uint64_t grows = end > inode.current.size() ? end - inode.current.size() : 0;
  if (grows > capacity_ || UsedLocked() > capacity_ - grows) {
    return NoSpaceError(fmt::format("write \"{}\": the simulated disk is full", path));
  }
  if (end > inode.current.size()) inode.current.resize(end);
  std::copy(data.begin(), data.end(), inode.current.begin() + static_cast<std::ptrdiff_t>(offset));
  return OkStatus();
}

Status SimulatedFileSystem::SyncFile(std::uint64_t generation, const std::string& path,
                                     Inode& inode) {
  if (generation != generation_) {
    return StorageFailedError(fmt::format("fsync \"{}\": opened before a crash", path));
  }
  inode.durable = inode.current;
  return OkStatus();
}

Status SimulatedFileSystem::CloseFile(std::uint64_t generation, const std::string& path) {
  if (generation != generation_) {
    return StorageFailedError(fmt::format("close \"{}\": opened before a crash", path));
  }
  return OkStatus();
}

Result<std::unique_ptr<WritableFile>> SimulatedFileSystem::NewWritableFile(
    const std::string& path) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("create", path));
  std::string name;
  Directory* dir = Parent(path, &name);
  if (dir == nullptr) return NotFoundError(fmt::format("create \"{}\": no such directory", path));
  if (dirs_.count(NormalizeDir(path)) != 0 || name.empty()) {
    return StorageFailedError(fmt::format("create \"{}\": a directory", path));
  }
  std::shared_ptr<Inode>& inode = dir->current[name];
  if (inode) {
    inode->current.clear();
  } else {
    inode = std::make_shared<Inode>();
  }
  return std::unique_ptr<WritableFile>(std::make_unique<File>(this, generation_, path, inode));
}

Result<std::unique_ptr<WritableFile>> SimulatedFileSystem::OpenForOverwrite(
    const std::string& path) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("open to overwrite", path));
  std::string name;
  Directory* dir = Parent(path, &name);
  if (dir == nullptr) {
    return NotFoundError(fmt::format("open to overwrite \"{}\": no such directory", path));
  }
  if (dirs_.count(NormalizeDir(path)) != 0 || name.empty()) {
    return StorageFailedError(fmt::format("open to overwrite \"{}\": a directory", path));
  }
  std::shared_ptr<Inode>& inode = dir->current[name];
  if (!inode) inode = std::make_shared<Inode>();
  return std::unique_ptr<WritableFile>(
      std::make_unique<File>(this, generation_, path, inode, /*overwrite=*/true));
}

Status SimulatedFileSystem::Rename(const std::string& from, const std::string& to) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("rename", from));
  std::string from_name;
  std::string to_name;
  Directory* from_dir = Parent(from, &from_name);
  Directory* to_dir = Parent(to, &to_name);
  if (from_dir == nullptr || to_dir == nullptr || from_dir->current.count(from_name) == 0) {
    return NotFoundError(fmt::format("rename \"{}\" to \"{}\": no such file", from, to));
  }
  if (dirs_.count(NormalizeDir(to)) != 0) {
    return StorageFailedError(fmt::format("rename to \"{}\": a directory", to));
  }
  std::shared_ptr<Inode> inode = std::move(from_dir->current[from_name]);
  from_dir->current.erase(from_name);
  to_dir->current[to_name] = std::move(inode);
  return OkStatus();
}

Status SimulatedFileSystem::SyncDir(const std::string& dir) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("fsync directory", dir));
  auto it = dirs_.find(NormalizeDir(dir));
  if (it == dirs_.end()) return NotFoundError(fmt::format("fsync directory \"{}\": none", dir));
  it->second.durable = it->second.current;
  return OkStatus();
}

Result<Bytes> SimulatedFileSystem::ReadFile(const std::string& path, std::size_t max_bytes) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("read", path));
  if (dirs_.count(NormalizeDir(path)) != 0) {
    return StorageFailedError(fmt::format("read \"{}\": a directory", path));
  }
  std::string name;
  Directory* dir = Parent(path, &name);
  if (dir == nullptr) return NotFoundError(fmt::format("read \"{}\": no such file", path));
  auto it = dir->current.find(name);
  if (it == dir->current.end()) return NotFoundError(fmt::format("read \"{}\": no such file", path));
  const Bytes& bytes = it->second->current;
  const std::size_t n = std::min(max_bytes, bytes.size());
  return Bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
}

Status SimulatedFileSystem::Remove(const std::string& path) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("remove", path));
  if (dirs_.count(NormalizeDir(path)) != 0) {
    return StorageFailedError(fmt::format("remove \"{}\": a directory", path));
  }
  std::string name;
  Directory* dir = Parent(path, &name);
  if (dir == nullptr || dir->current.erase(name) == 0) {
    return NotFoundError(fmt::format("remove \"{}\": no such file", path));
  }
  return OkStatus();
}

Result<std::vector<std::string>> SimulatedFileSystem::ListDir(const std::string& dir) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("list directory", dir));
  const std::string key = NormalizeDir(dir);
  auto it = dirs_.find(key);
  if (it == dirs_.end()) return NotFoundError(fmt::format("list directory \"{}\": none", dir));
  std::vector<std::string> names;
  for (const auto& [name, inode] : it->second.current) names.push_back(name);
  for (const auto& [sub, unused] : dirs_) {
    SplitPath split = Split(sub);
    if (split.dir == key && sub != key && !split.name.empty()) names.push_back(split.name);
  }
  return names;
}

Result<std::uint64_t> SimulatedFileSystem::FreeSpace(const std::string& dir) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("statvfs", dir));
  if (dirs_.count(NormalizeDir(dir)) == 0) {
    return NotFoundError(fmt::format("statvfs \"{}\": no such directory", dir));
  }
  return capacity_ - std::min(capacity_, UsedLocked());
}

Result<bool> SimulatedFileSystem::Exists(const std::string& path) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("stat", path));
  if (dirs_.count(NormalizeDir(path)) != 0) return true;
  std::string name;
  const Directory* dir = Parent(path, &name);
  return dir != nullptr && dir->current.count(name) != 0;
}

Status SimulatedFileSystem::CreateDir(const std::string& dir) {
  std::lock_guard lock(mutex_);
  ROLLY_RETURN_IF_ERROR(Step("create directory", dir));
  const std::string key = NormalizeDir(dir);
  for (std::size_t i = 1; i <= key.size(); ++i) {
    if (i < key.size() && key[i] != '/') continue;
    const std::string part = key.substr(0, i);
    std::string name;
    const Directory* parent = Parent(part, &name);
    if (parent != nullptr && parent->current.count(name) != 0) {
      return StorageFailedError(fmt::format("create directory \"{}\": a file is there", part));
    }
    dirs_[part];
  }
  return OkStatus();
}

std::uint64_t SimulatedFileSystem::steps() const {
  std::lock_guard lock(mutex_);
  return steps_;
}

void SimulatedFileSystem::FailAfterStep(std::uint64_t n) {
  std::lock_guard lock(mutex_);
  fail_after_ = n;
}

void SimulatedFileSystem::ClearFailure() {
  std::lock_guard lock(mutex_);
  fail_after_.reset();
}

void SimulatedFileSystem::Crash(const DamageModel& model) {
  std::lock_guard lock(mutex_);
  if (model.kind == DamageModel::Kind::kDropUnsyncedNames) {
    for (auto& [key, dir] : dirs_) dir.current = dir.durable;
  }
  // Each surviving file once, whichever entries name it.
  std::set<Inode*> inodes;
  for (auto& [key, dir] : dirs_) {
    for (auto& [name, inode] : dir.current) inodes.insert(inode.get());
  }
  std::uint64_t garbage = model.seed | 1;
  for (Inode* inode : inodes) {
    if (inode->current == inode->durable) continue;
    if (model.kind != DamageModel::Kind::kTearUnsyncedWrites) {
      inode->current = inode->durable;
      continue;
    }
    Bytes& bytes = inode->current;
    const std::size_t n = bytes.size();
    const std::size_t shared = static_cast<std::size_t>(
        std::mismatch(bytes.begin(), bytes.end(), inode->durable.begin(), inode->durable.end())
            .first -
        bytes.begin());
    const std::size_t sector = std::max<std::size_t>(model.sector_size, 1);
    const std::size_t keep = std::min(n, std::max(shared, n / sector * sector));
    for (std::size_t i = keep; i < n; ++i) {
      if (model.fill == DamageModel::Fill::kZeros) {
        bytes[i] = 0;
      } else {
        // xorshift64: cheap, and the same bytes for the same seed.
        garbage ^= garbage << 13;
        garbage ^= garbage >> 7;
        garbage ^= garbage << 17;
        bytes[i] = static_cast<std::uint8_t>(garbage);
      }
    }
    inode->durable = bytes;
  }
  // Whatever is on the disk now is what a fresh boot finds: all of it durable.
  for (auto& [key, dir] : dirs_) dir.durable = dir.current;
  fail_after_.reset();
  ++generation_;
}

std::optional<Bytes> SimulatedFileSystem::Peek(const std::string& path) const {
  std::lock_guard lock(mutex_);
  std::string name;
  const Directory* dir = Parent(path, &name);
  if (dir == nullptr) return std::nullopt;
  auto it = dir->current.find(name);
  if (it == dir->current.end()) return std::nullopt;
  return it->second->current;
}

void SimulatedFileSystem::Put(const std::string& path, Bytes bytes) {
  std::lock_guard lock(mutex_);
  SplitPath split = Split(path);
  const std::string& dir_key = split.dir;
  const std::string& name = split.name;
  for (std::size_t i = 1; i <= dir_key.size(); ++i) {
    if (i == dir_key.size() || dir_key[i] == '/') dirs_[dir_key.substr(0, i)];
  }
  Directory& dir = dirs_[dir_key];
  auto inode = std::make_shared<Inode>();
  inode->current = std::move(bytes);
  inode->durable = inode->current;
  dir.current[name] = inode;
  dir.durable[name] = inode;
}

bool SimulatedFileSystem::IsDurable(const std::string& path) const {
  std::lock_guard lock(mutex_);
  std::string name;
  const Directory* dir = Parent(path, &name);
  if (dir == nullptr) return false;
  auto current = dir->current.find(name);
  auto durable = dir->durable.find(name);
  return current != dir->current.end() && durable != dir->durable.end() &&
         current->second == durable->second &&
         current->second->current == current->second->durable;
}

}  // namespace rolly::store
