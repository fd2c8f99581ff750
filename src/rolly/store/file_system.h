// FileSystem: the step-level file operations the folder backend does all its I/O through, so a
// test can stop it at any step (SimulatedFileSystem) or fail one kind of step (a FileSystemWrapper
// subclass), and a port can put its own calls underneath. PosixFileSystem is the real one.
//
// Each call is one step a crash can fall between: creating a file, opening one to overwrite it,
// appending to it, syncing it, closing it, renaming, syncing a directory, and so on. Nothing here
// retries a failed step or hides one: the caller decides (the folder backend fails the write).
//
// Paths are plain strings, '/'-separated, given whole by the caller (the folder backend joins its
// folder and a FileName). Names returned by ListDir are bare names, without the directory.
//
// Statuses, the same for every call and implementation:
//   Ok             the step happened.
//   NotFound       the path (or its directory) does not exist.
//   NoSpace        the device or the user's quota is full (ENOSPC, EDQUOT).
//   StorageFailed  anything else; the message names the step, the path and the system's reason.
//
// Thread rules: a FileSystem may be called from any thread; implementations here are safe to call
// from several threads at once. A WritableFile is used by one thread at a time.
// Ownership: a WritableFile is owned by the caller; destroying it closes it without reporting
// (call Close to learn whether closing worked). A FileSystem must outlive its WritableFiles.

#ifndef ROLLY_STORE_FILE_SYSTEM_H_
#define ROLLY_STORE_FILE_SYSTEM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"

namespace rolly::store {

// A file open for writing, from FileSystem::NewWritableFile.
class WritableFile {
 public:
  virtual ~WritableFile();
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  // Appends every byte of `data` (a short write is retried until all are written or one fails).
  virtual Status Append(ByteView data) = 0;
  // Writes every byte of `data` at `offset`, over what is there and past the end (a gap before
  // `offset` reads as zeros), without moving where Append writes next. For a file opened by
  // NewWritableFile only.
  virtual Status WriteAt(std::uint64_t offset, ByteView data) = 0;
  // Makes the bytes appended so far durable (fsync). A failure means they may not be: the caller
  // must not assume any of them survive a crash, and must not retry and then trust the file.
  virtual Status Sync() = 0;
  // Closes the file. After Close (whatever it answered), Append and Sync answer StorageFailed.
  virtual Status Close() = 0;

 protected:
  WritableFile() = default;
};

class FileSystem {
 public:
  virtual ~FileSystem();
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;

  // Creates `path`, or truncates it when it exists, and opens it for writing. NotFound when its
  // directory does not exist.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;
  // Opens `path` for writing over its bytes from the start, creating it when missing, without
  // truncating it first: Append overwrites the old bytes in place (and goes on past their end),
  // and Close cuts the file to the bytes appended when it held more. The file keeps its inode and
  // its name, so no directory entry changes; but a crash or a failed step part way leaves a mix
  // of old and new bytes, and a reader sees the file change as it is written. For files whose
  // readers check every byte and fall back to another copy (slot indexes). NotFound when the
  // directory does not exist.
  virtual Result<std::unique_ptr<WritableFile>> OpenForOverwrite(const std::string& path) = 0;
  // Asks the system to start writing out the file's bytes not yet on the disk, without waiting:
  // a hint, which makes nothing durable and reports nothing, and is no step. PosixFileSystem does
  // on Linux (sync_file_range); the default does nothing.
  virtual void StartWriteBack(const std::string& path) { (void)path; }
  // Renames `from` to `to`, atomically replacing `to` if it exists (rename(2)). The new name is
  // durable only after SyncDir of its directory.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Makes the directory's entries (files created, renamed or removed in it) durable (fsync).
  virtual Status SyncDir(const std::string& dir) = 0;
  // At most `max_bytes` bytes from the start of the file (all of it when shorter; pass
  // std::numeric_limits<std::size_t>::max() for the whole file).
  virtual Result<Bytes> ReadFile(const std::string& path, std::size_t max_bytes) = 0;
  // Removes a file. NotFound when there is none.
  virtual Status Remove(const std::string& path) = 0;
  // The names of every entry of the directory (files and subdirectories, not "." or ".."), in no
  // particular order. NotFound when the directory does not exist.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Bytes an unprivileged writer may still put in the directory's file system (statvfs f_bavail).
  virtual Result<std::uint64_t> FreeSpace(const std::string& dir) = 0;
  // Whether a file or directory of that path exists.
  virtual Result<bool> Exists(const std::string& path) = 0;
  // Creates the directory and any missing parents; Ok when it already exists.
  virtual Status CreateDir(const std::string& dir) = 0;

 protected:
  FileSystem() = default;
};

// Forwards every call to another FileSystem, which it does not own and which must outlive it.
// Subclass it and override the steps a test wants to change (fail every Sync, lie about free
// space), as leveldb's EnvWrapper.
class FileSystemWrapper : public FileSystem {
 public:
  explicit FileSystemWrapper(FileSystem* target) : target_(target) {}
  FileSystem* target() const { return target_; }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return target_->NewWritableFile(path);
  }
  Result<std::unique_ptr<WritableFile>> OpenForOverwrite(const std::string& path) override {
    return target_->OpenForOverwrite(path);
  }
  void StartWriteBack(const std::string& path) override { target_->StartWriteBack(path); }
  Status Rename(const std::string& from, const std::string& to) override {
    return target_->Rename(from, to);
  }
  Status SyncDir(const std::string& dir) override { return target_->SyncDir(dir); }
  Result<Bytes> ReadFile(const std::string& path, std::size_t max_bytes) override {
    return target_->ReadFile(path, max_bytes);
  }
  Status Remove(const std::string& path) override { return target_->Remove(path); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    return target_->ListDir(dir);
  }
  Result<std::uint64_t> FreeSpace(const std::string& dir) override {
    return target_->FreeSpace(dir);
  }
  Result<bool> Exists(const std::string& path) override { return target_->Exists(path); }
  Status CreateDir(const std::string& dir) override { return target_->CreateDir(dir); }

 private:
  FileSystem* target_;
};

// The operating system's files, through POSIX calls: every descriptor is opened with O_CLOEXEC
// and owned by one RAII handle, so none leaks on any path; calls interrupted by a signal (EINTR)
// are retried, except close, which Linux never needs retried.
class PosixFileSystem : public FileSystem {
 public:
  PosixFileSystem() = default;

  // One shared instance, for backends given no file system.
  static std::shared_ptr<FileSystem> Default();

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> OpenForOverwrite(const std::string& path) override;
  void StartWriteBack(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;
  Result<Bytes> ReadFile(const std::string& path, std::size_t max_bytes) override;
  Status Remove(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Result<std::uint64_t> FreeSpace(const std::string& dir) override;
  Result<bool> Exists(const std::string& path) override;
  Status CreateDir(const std::string& dir) override;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_FILE_SYSTEM_H_
