// FolderBackend: temp file, fsync, rename, fsync the folder; all on one I/O thread.

#include "rolly/store/folder_backend.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "rolly/store/internal/thrown_call.h"

namespace rolly::store {
namespace {

// The answer the I/O thread's work for one call makes (StorageFailed when it throws: an allocation
// failing on that thread). A write that threw part way may leave its temporary file, which the
// next start removes.
template <typename T, typename Work>
T Answer(Work&& work) {
  return store_internal::AnswerOf<T>("the folder backend's work", std::forward<Work>(work));
}

// Work after the answer that nothing waits for (removing stale temporary files, asking for a
// write-back): best effort, so a throw there is dropped.
template <typename Work>
void AfterAnswer(Work&& work) noexcept {
  try {
    work();
  } catch (...) {
  }
}

// Keeps the codes `allowed` and turns any other failure into StorageFailed with its message.
Status Only(Status s, std::initializer_list<StatusCode> allowed) {
  if (s.ok()) return s;
  for (StatusCode c : allowed) {
    if (s.code() == c) return s;
  }
  if (s.code() == StatusCode::kStorageFailed) return s;
  return StorageFailedError(s.message());
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

FolderBackend::FolderBackend(std::string folder, FolderBackendOptions options)
    : folder_(std::move(folder)),
      fs_(options.file_system ? std::move(options.file_system) : PosixFileSystem::Default()),
      margin_(options.free_space_margin),
      read_only_(options.read_only),
      io_(1) {
  if (!read_only_) io_.Post([this] { AfterAnswer([this] { Open(); }); });
}

std::optional<Status> FolderBackend::Refused() const {
  if (!read_only_) return std::nullopt;
  return StorageFailedError("the backend of " + folder_ + " only reads");
}

FolderBackend::~FolderBackend() {
  WaitUntilIdle();
  io_.WaitUntilIdle();
}

std::string FolderBackend::PathOf(const FileName& name) const {
  return folder_ + "/" + name.str();
}

std::string FolderBackend::TempPathOf(const FileName& name) const {
  return PathOf(name) + std::string(kTempSuffix);
}

void FolderBackend::Open() {
  if (!EnsureFolder().ok()) return;  // the first write tries again and reports it
  Result<std::vector<std::string>> names = fs_->ListDir(folder_);
  if (!names.ok()) return;
  for (const std::string& entry : *names) {
    if (!EndsWith(entry, kTempSuffix)) continue;
    const std::string_view base = std::string_view(entry).substr(0, entry.size() - kTempSuffix.size());
    // Only our own temporary files: "<FileName>.tmp" where the FileName is in its one form.
    if (!FileName::Parse(base)) continue;
    fs_->Remove(folder_ + "/" + entry).IgnoreError();  // best effort: the next start tries again
  }
}

Status FolderBackend::EnsureFolder() {
  if (folder_ready_) return OkStatus();
  ROLLY_RETURN_IF_ERROR(fs_->CreateDir(folder_));
  folder_ready_ = true;
  return OkStatus();
}

void FolderBackend::RemoveTemp(const std::string& temp) {
  const Status s = fs_->Remove(temp);
  if (!s.ok() && s.code() != StatusCode::kNotFound &&
      std::find(stale_temps_.begin(), stale_temps_.end(), temp) == stale_temps_.end()) {
    stale_temps_.push_back(temp);
  }
}

void FolderBackend::RemoveStaleTemps() {
  for (const std::string& temp : std::exchange(stale_temps_, {})) RemoveTemp(temp);
}

Status FolderBackend::WriteTemp(const std::string& temp, const std::vector<Bytes>& pieces,
                                LateFront* front) {
  ROLLY_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs_->NewWritableFile(temp));
  if (front == nullptr) {
    for (const Bytes& piece : pieces) ROLLY_RETURN_IF_ERROR(file->Append(piece));
  } else {
    // The rest at its place while the front is being made, then the front over the gap: the file
    // is whole before the fsync, and only a whole, synced file is ever renamed.
    std::uint64_t offset = front->size();
    for (const Bytes& piece : pieces) {
      ROLLY_RETURN_IF_ERROR(file->WriteAt(offset, piece));
      offset += piece.size();
    }
    ROLLY_RETURN_IF_ERROR(file->WriteAt(0, front->Take()));
  }
  ROLLY_RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

Status FolderBackend::DoWrite(const FileName& name, const std::vector<Bytes>& pieces,
                              LateFront* front) {
  ROLLY_RETURN_IF_ERROR(EnsureFolder());
  // The check is advisory: a file system that cannot say (statvfs failing) still gets the write,
  // which answers NoSpace itself if the disk is full.
  std::uint64_t size = front != nullptr ? front->size() : 0;
  for (const Bytes& piece : pieces) size += piece.size();
  Result<std::uint64_t> free = fs_->FreeSpace(folder_);
  const auto short_of_space = [&] {
    return free.ok() && (*free < margin_ || *free - margin_ < size);
  };
  if (short_of_space() && !stale_temps_.empty()) {
    // Temporary files earlier failures left hold space this write may need: their removal, due
    // after this write answers, is tried now instead (only on this path, short of space).
    RemoveStaleTemps();
    free = fs_->FreeSpace(folder_);
  }
  if (short_of_space()) {
    return NoSpaceError(fmt::format("{} needs {} bytes and {} to spare; {} bytes are free",
                                    folder_, size, margin_, *free));
  }
  if (name.kind() == FileKind::kIndex && front != nullptr) {
    // Nothing to gain from writing an index out of order: the pieces, front first.
    std::vector<Bytes> whole;
    whole.reserve(pieces.size() + 1);
    whole.push_back(front->Take());
    for (const Bytes& piece : pieces) whole.push_back(piece);
    return DoWrite(name, whole);
  }
  if (name.kind() == FileKind::kIndex) {
    // A slot index is a cache of the saves' headers, in two copies the store writes in turn and
    // checks when read. It is overwritten in place, without fsync: a new file renamed over the
    // old one (or a file truncated and written again) makes ext4 (auto_da_alloc) and others
    // start writing it out at once, which cost each 1 MiB save about a tenth of its time.
    Status s = OverwriteInPlace(PathOf(name), pieces);
    if (s.code() == StatusCode::kNotFound) folder_ready_ = false;
    return s;
  }
  const std::string temp = TempPathOf(name);
  if (Status s = WriteTemp(temp, pieces, front); !s.ok()) {
    // The folder went away under us: make it again at the next write.
    if (s.code() == StatusCode::kNotFound) folder_ready_ = false;
    RemoveTemp(temp);
    return s;
  }
  if (Status s = fs_->Rename(temp, PathOf(name)); !s.ok()) {
    RemoveTemp(temp);
    return s;
  }
  return fs_->SyncDir(folder_);
}

Status FolderBackend::OverwriteInPlace(const std::string& path, const std::vector<Bytes>& pieces) {
  ROLLY_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs_->OpenForOverwrite(path));
  for (const Bytes& piece : pieces) ROLLY_RETURN_IF_ERROR(file->Append(piece));
  return file->Close();
}

void FolderBackend::StartWrite(const FileName& name, Bytes bytes, StatusCallback done) {
  std::vector<Bytes> pieces;
  pieces.push_back(std::move(bytes));
  StartWritePieces(name, std::move(pieces), std::move(done));
}

void FolderBackend::StartWritePieces(const FileName& name, std::vector<Bytes> pieces,
                                     StatusCallback done) {
  io_.Post([this, name, pieces = std::move(pieces), done = std::move(done)] {
    const Status written = Answer<Status>([&] {
      if (std::optional<Status> refused = Refused()) return *refused;
      return Only(DoWrite(name, pieces), {StatusCode::kNoSpace});
    });
    done(written);
    AfterAnswer([&] {
      RemoveStaleTemps();
      // An index is not flushed (see DoWrite). Once its writer has the answer, the system is
      // asked to start writing it out, so the next save's fsync normally flushes it to the disk.
      if (written.ok() && name.kind() == FileKind::kIndex) fs_->StartWriteBack(PathOf(name));
    });
  });
}

void FolderBackend::StartWriteLateFront(const FileName& name, std::shared_ptr<LateFront> front,
                                        std::vector<Bytes> rest, StatusCallback done) {
  io_.Post([this, name, front = std::move(front), rest = std::move(rest),
            done = std::move(done)] {
    const Status written = Answer<Status>([&] {
      if (std::optional<Status> refused = Refused()) return *refused;
      return Only(DoWrite(name, rest, front.get()), {StatusCode::kNoSpace});
    });
    // A write that failed (or was refused) before it needed the front still answers only once it
    // is set: the writer may be reading `rest` until then.
    front->Wait();
    done(written);
    AfterAnswer([&] {
      RemoveStaleTemps();
      if (written.ok() && name.kind() == FileKind::kIndex) fs_->StartWriteBack(PathOf(name));
    });
  });
}

void FolderBackend::StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) {
  io_.Post([this, name, max_bytes, done = std::move(done)] {
    done(Answer<Result<Bytes>>([&]() -> Result<Bytes> {
      Result<Bytes> bytes = fs_->ReadFile(PathOf(name), max_bytes);
      if (bytes.ok()) return bytes;
      return Only(bytes.status(), {StatusCode::kNotFound});
    }));
  });
}

void FolderBackend::StartExists(const FileName& name, ExistsCallback done) {
  io_.Post([this, name, done = std::move(done)] {
    done(Answer<Result<bool>>([&]() -> Result<bool> {
      Result<bool> exists = fs_->Exists(PathOf(name));
      if (exists.ok()) return exists;
      return Only(exists.status(), {});
    }));
  });
}

void FolderBackend::StartDelete(const FileName& name, StatusCallback done) {
  io_.Post([this, name, done = std::move(done)] {
    done(Answer<Status>([&] {
      if (std::optional<Status> refused = Refused()) return *refused;
      Status s = fs_->Remove(PathOf(name));
      if (s.code() == StatusCode::kNotFound) return OkStatus();
      // A removal that a power cut could undo would bring a deleted save back.
      if (s.ok()) s = fs_->SyncDir(folder_);
      return Only(std::move(s), {});
    }));
  });
}

void FolderBackend::StartList(ListCallback done) {
  io_.Post([this, done = std::move(done)] {
    done(Answer<Result<std::vector<FileName>>>([&]() -> Result<std::vector<FileName>> {
      Result<std::vector<std::string>> entries = fs_->ListDir(folder_);
      if (!entries.ok()) {
        if (entries.status().code() == StatusCode::kNotFound) return std::vector<FileName>();
        return Only(entries.status(), {});
      }
      std::vector<FileName> names;
      for (const std::string& entry : *entries) {
        if (auto parsed = FileName::Parse(entry)) names.push_back(*std::move(parsed));
      }
      std::sort(names.begin(), names.end());
      return names;
    }));
  });
}

}  // namespace rolly::store
