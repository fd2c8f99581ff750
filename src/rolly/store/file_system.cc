// PosixFileSystem: POSIX calls, each descriptor in one RAII handle, EINTR retried.

#include "rolly/store/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <new>
#include <optional>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace rolly::store {
namespace {

// The status for a failed call: NotFound, NoSpace or StorageFailed with the system's reason.
Status ErrnoStatus(std::string_view step, const std::string& path, int err) {
  const std::string message = fmt::format("{} \"{}\": {}", step, path,
                                          std::error_code(err, std::generic_category()).message());
  switch (err) {
    case ENOENT:
      return NotFoundError(message);
    case ENOSPC:
    case EDQUOT:
      return NoSpaceError(message);
    default:
      return StorageFailedError(message);
  }
}

// Calls `f` until it does not fail with EINTR.
template <typename F>
auto RetryEintr(F f) {
  for (;;) {
    auto r = f();
    if (r != -1 || errno != EINTR) return r;
  }
}

// Owns one descriptor and closes it once.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Gives up ownership without closing (after another owner, such as a DIR*, took it over).
  void Release() { fd_ = -1; }

  // Closes the descriptor and returns close's errno (0 on success). Not retried on EINTR: Linux
  // has released the descriptor by then, and a retry could close one another thread just opened.
  int Close() {
    if (fd_ < 0) return 0;
    const int result = ::close(std::exchange(fd_, -1));
    return result == 0 ? 0 : errno;
  }

 private:
  void Reset() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

  int fd_ = -1;
};

Result<FileDescriptor> Open(const std::string& path, int flags, std::string_view step) {
  const int fd = RetryEintr([&] { return ::open(path.c_str(), flags | O_CLOEXEC, 0644); });
  if (fd < 0) return ErrnoStatus(step, path, errno);
  return FileDescriptor(fd);
}

class PosixWritableFile : public WritableFile {
 public:
  // `cut_above`: for a file opened to overwrite, its size then; Close cuts it to the bytes
  // appended when they are fewer.
  PosixWritableFile(std::string path, FileDescriptor fd,
                    std::optional<std::uint64_t> cut_above = {})
      : path_(std::move(path)), fd_(std::move(fd)), cut_above_(cut_above) {}

  Status Append(ByteView data) override {
    if (!fd_.valid()) return StorageFailedError(fmt::format("write \"{}\": file closed", path_));
    while (!data.empty()) {
      const ssize_t n = RetryEintr([&] { return ::write(fd_.get(), data.data(), data.size()); });
      if (n < 0) return ErrnoStatus("write", path_, errno);
      data = data.subspan(static_cast<std::size_t>(n));
      written_ += static_cast<std::uint64_t>(n);
    }
    return OkStatus();
  }

  Status WriteAt(std::uint64_t offset, ByteView data) override {
    if (!fd_.valid()) return StorageFailedError(fmt::format("write \"{}\": file closed", path_));
    while (!data.empty()) {
      const ssize_t n = RetryEintr(
          [&] { return ::pwrite(fd_.get(), data.data(), data.size(), static_cast<off_t>(offset)); });
      if (n < 0) return ErrnoStatus("write", path_, errno);
      data = data.subspan(static_cast<std::size_t>(n));
      offset += static_cast<std::uint64_t>(n);
    }
    return OkStatus();
  }

  Status Sync() override {
    if (!fd_.valid()) return StorageFailedError(fmt::format("fsync \"{}\": file closed", path_));
    if (RetryEintr([&] { return ::fsync(fd_.get()); }) != 0) {
      return ErrnoStatus("fsync", path_, errno);
    }
    return OkStatus();
  }

  Status Close() override {
    if (!fd_.valid()) return StorageFailedError(fmt::format("close \"{}\": file closed", path_));
    // Only when the file shrinks: a cut to its own size is a call for nothing.
    if (cut_above_ && written_ < *cut_above_ &&
        RetryEintr([&] { return ::ftruncate(fd_.get(), static_cast<off_t>(written_)); }) != 0) {
      const Status s = ErrnoStatus("truncate", path_, errno);
      fd_.Close();
      return s;
    }
    const int err = fd_.Close();
    return err == 0 ? OkStatus() : ErrnoStatus("close", path_, err);
  }

 private:
  const std::string path_;
  FileDescriptor fd_;
  const std::optional<std::uint64_t> cut_above_;
  std::uint64_t written_ = 0;
};

// Closes a DIR* once.
struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};

}  // namespace

WritableFile::~WritableFile() = default;
FileSystem::~FileSystem() = default;

std::shared_ptr<FileSystem> PosixFileSystem::Default() {
  static const std::shared_ptr<FileSystem> instance = std::make_shared<PosixFileSystem>();
  return instance;
}

Result<std::unique_ptr<WritableFile>> PosixFileSystem::NewWritableFile(const std::string& path) {
  Result<FileDescriptor> fd = Open(path, O_WRONLY | O_CREAT | O_TRUNC, "create");
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<WritableFile>(
      std::make_unique<PosixWritableFile>(path, std::move(fd).value()));
}

Result<std::unique_ptr<WritableFile>> PosixFileSystem::OpenForOverwrite(const std::string& path) {
  // No O_TRUNC: truncating a file and writing it again is what makes some file systems (ext4's
  // auto_da_alloc) flush it at once, as they do a file renamed over another.
  Result<FileDescriptor> fd = Open(path, O_WRONLY | O_CREAT, "open to overwrite");
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoStatus("stat", path, errno);
  if (!S_ISREG(st.st_mode)) {
    return StorageFailedError(fmt::format("open to overwrite \"{}\": not a file", path));
  }
  return std::unique_ptr<WritableFile>(std::make_unique<PosixWritableFile>(
      path, std::move(fd).value(), static_cast<std::uint64_t>(st.st_size)));
}

void PosixFileSystem::StartWriteBack(const std::string& path) {
#if defined(__linux__)
  // Without it Linux holds written pages back for up to half a minute; started now, they are
  // written while the caller goes on, and the next fsync of any file (a save's) normally flushes
  // them out of the disk's cache too. A hint only: its answer does not matter.
  Result<FileDescriptor> fd = Open(path, O_RDONLY, "open");
  if (fd.ok()) ::sync_file_range(fd->get(), 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)path;
#endif
}

Status PosixFileSystem::Rename(const std::string& from, const std::string& to) {
  if (RetryEintr([&] { return ::rename(from.c_str(), to.c_str()); }) != 0) {
    return ErrnoStatus("rename to \"" + to + "\" from", from, errno);
  }
  return OkStatus();
}

Status PosixFileSystem::SyncDir(const std::string& dir) {
  Result<FileDescriptor> fd = Open(dir, O_RDONLY | O_DIRECTORY, "open directory");
  if (!fd.ok()) return fd.status();
  if (RetryEintr([&] { return ::fsync(fd->get()); }) != 0) {
    const int err = errno;
    // A file system that cannot sync directories at all (some network and FUSE ones) says EINVAL;
    // its renames are as durable as it can make them, so that is not a failed sync.
    if (err != EINVAL) return ErrnoStatus("fsync directory", dir, err);
  }
  return OkStatus();
}

Result<Bytes> PosixFileSystem::ReadFile(const std::string& path, std::size_t max_bytes) {
  Result<FileDescriptor> fd = Open(path, O_RDONLY, "open");
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoStatus("stat", path, errno);
  if (S_ISDIR(st.st_mode)) return StorageFailedError(fmt::format("read \"{}\": a directory", path));
  Bytes out;
  // The size is a hint only: the file may change while it is read.
  const auto hint = static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 0);
  // A file too large for memory fails its read (this may run on a backend's own thread, where an
  // exception would end the process).
  try {
    out.reserve(std::min(max_bytes, hint + 1));
  } catch (const std::bad_alloc&) {
    return StorageFailedError(fmt::format("read \"{}\": {} bytes do not fit in memory", path,
                                          std::min(max_bytes, hint + 1)));
  }
  constexpr std::size_t kChunk = 64 * 1024;
  while (out.size() < max_bytes) {
    // What the reserved room holds first: the hinted size and one byte more, so an unchanged file
    // is read, end seen, in one call and one buffer; then a chunk at a time.
    const std::size_t room = out.capacity() - out.size();
    const std::size_t want = std::min(room > 0 ? room : kChunk, max_bytes - out.size());
    const std::size_t old_size = out.size();
    out.resize(old_size + want);
    const ssize_t n = RetryEintr([&] { return ::read(fd->get(), out.data() + old_size, want); });
    if (n < 0) return ErrnoStatus("read", path, errno);
    out.resize(old_size + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  return out;
}

Status PosixFileSystem::Remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return ErrnoStatus("remove", path, errno);
  return OkStatus();
}

Result<std::vector<std::string>> PosixFileSystem::ListDir(const std::string& dir) {
  Result<FileDescriptor> fd = Open(dir, O_RDONLY | O_DIRECTORY, "open directory");
  if (!fd.ok()) return fd.status();
  // fdopendir takes the descriptor over; closedir closes it.
  std::unique_ptr<DIR, DirCloser> handle(::fdopendir(fd->get()));
  if (!handle) return ErrnoStatus("list directory", dir, errno);  // `fd` still owns it
  fd->Release();  // now owned by `handle`
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(handle.get());
    if (entry == nullptr) {
      if (errno != 0) return ErrnoStatus("list directory", dir, errno);
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  return names;
}

Result<std::uint64_t> PosixFileSystem::FreeSpace(const std::string& dir) {
  struct statvfs st {};
  if (RetryEintr([&] { return ::statvfs(dir.c_str(), &st); }) != 0) {
    return ErrnoStatus("statvfs", dir, errno);
  }
  return static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
}

Result<bool> PosixFileSystem::Exists(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return ErrnoStatus("stat", path, errno);
}

Status PosixFileSystem::CreateDir(const std::string& dir) {
  // Each prefix ending before a '/', then the whole path.
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0755) == 0) continue;
    const int err = errno;
    if (err != EEXIST) return ErrnoStatus("create directory", part, err);
    struct stat st {};
    if (::stat(part.c_str(), &st) != 0) return ErrnoStatus("stat", part, errno);
    if (!S_ISDIR(st.st_mode)) {
      return StorageFailedError(fmt::format("create directory \"{}\": a file is there", part));
    }
  }
  return OkStatus();
}

}  // namespace rolly::store
