// FolderBackend: the default backend. Each FileName is one file in one folder, reached through a
// FileSystem (the operating system's by default, a SimulatedFileSystem in crash tests).
//
// A write never leaves a file half written under its name (slot indexes aside, below). It runs
// these steps:
//   1. free space: NoSpace when the folder's file system cannot hold the bytes plus a margin
//      (options.free_space_margin); nothing is written then;
//   2. write every byte to "<name>.tmp" in the same folder (created or truncated); a write of
//      pieces (Backend::Write of a std::vector<Bytes>) appends each piece in turn, never joining
//      them in memory, and the free-space check of step 1 counts their total; a write with a late
//      front (Backend::Write of a LateFront and the rest) writes the rest at its place first, then
//      waits for the front and writes it over the gap left at the start, so the file is whole
//      before step 3;
//   3. fsync it, close it;
//   4. rename it over "<name>" (atomic: a reader sees the old bytes or the new, never a mix);
//   5. fsync the folder, so the new name survives a power cut.
// Ok means all five steps worked. A failed step fails the write: NoSpace when the disk or quota is
// full, StorageFailed otherwise (a failed fsync included: it never reports success, and is never
// retried). After a failure before step 4 the file keeps its old bytes, and the temporary file is
// removed (best effort; a temporary file that could not be removed is retried after each later
// write has answered, or at once by a write that finds too little free space). After a failed
// step 5 the file may hold the new bytes now yet the old after a power cut.
// Nothing is unlinked on the success path. A write with a late front answers only once its front
// is set, whatever step failed.
//
// Slot indexes. A FileName of kind kIndex is a cache: the store keeps it in two copies, writes the
// one that does not hold its newest index, checks every byte it reads, and rebuilds from the
// saves' headers an index that is missing or damaged. Its write runs step 1, then overwrites the
// file in place (FileSystem::OpenForOverwrite: created when missing, cut when the new bytes are
// fewer): no temporary file, no rename, no fsync. A new file renamed over an old one, or a file
// truncated and written again, makes ext4 and other file systems start writing it out at once,
// which cost each save far more than the index's few bytes; an overwrite does not. Ok means the
// bytes are written: readers see them at once, and a crash or kill of the process keeps them (the
// system writes them out; once the write has answered, the backend asks it to start at once,
// FileSystem::StartWriteBack, so the next save's fsync normally flushes them too), but a power cut
// or a crash of the system before they reached the disk (about half a minute at most on Linux's
// defaults) may leave the copy as it was, or torn. A failed write may leave it torn too. A torn copy, old and new bytes mixed, fails its
// checksums, and the store takes the other copy. Never a save's loss.
//
// Temporary files. Operations run one at a time, so at most one "<FileName>.tmp" exists at once,
// and a crash leaves at most one behind. At start (before the first operation) the backend removes
// every "<FileName>.tmp" in the folder; so a stale temporary file is gone once a new backend has
// run anything, a save included. A read-only backend (FolderBackendOptions::read_only) removes
// none, and creates no folder.
//
// Other files. Only names made by FileName's rules, and those names followed by ".tmp", are ever
// written, renamed or removed. Any other file in the folder (the game's own, another program's,
// one that looks like ours but is not in FileName's one form) is never touched, and List leaves it
// out. The folder is created, with its parents, when missing.
//
// Statuses, per operation (see backend.h for the sets): Read and ReadPrefix answer NotFound for a
// file that does not exist (or a folder that does not); Delete answers Ok for one; List answers an
// empty list for a folder that does not exist; every other failure is StorageFailed (NoSpace on
// writes), whose message names the step and the system's reason.
//
// Thread rules: any thread may call. Every operation runs, in the order called, on the backend's
// own I/O thread, never on the caller's; callbacks run on that thread, so they must be quick and
// must not call WaitUntilIdle on this backend. Destroying the backend waits for every operation.
// An allocation failing in an operation's work on the I/O thread answers it StorageFailed, naming
// the exception (a write that failed so may leave its temporary file, which the next start
// removes); the process ends only when even that status cannot be made.
// Ownership: the backend shares ownership of its FileSystem.

#ifndef ROLLY_STORE_FOLDER_BACKEND_H_
#define ROLLY_STORE_FOLDER_BACKEND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rolly/core/worker_pool.h"
#include "rolly/store/backend.h"
#include "rolly/store/file_system.h"

namespace rolly::store {

struct FolderBackendOptions {
  // Where the operations go; null for PosixFileSystem::Default().
  std::shared_ptr<FileSystem> file_system;
  // Free space a write must leave, beyond its own bytes, or it answers NoSpace.
  std::uint64_t free_space_margin = 1024 * 1024;
  // A backend for looking only (an inspector such as `rolly slots`, beside a game that may be
  // saving): it neither creates the folder nor removes temporary files, and every write and
  // delete answers StorageFailed without touching the folder.
  bool read_only = false;
};

class FolderBackend : public Backend {
 public:
  // The suffix of temporary files: "<FileName>.tmp".
  static constexpr std::string_view kTempSuffix = ".tmp";

  // A backend over `folder` (a path; relative paths are relative to the working directory). Does
  // no I/O on the calling thread: creating the folder and removing stale temporary files are the
  // I/O thread's first task, so every operation's callback sees them done.
  explicit FolderBackend(std::string folder, FolderBackendOptions options = {});
  ~FolderBackend() override;

  const std::string& folder() const { return folder_; }
  // The path of a FileName's file, and of its temporary file.
  std::string PathOf(const FileName& name) const;
  std::string TempPathOf(const FileName& name) const;

 protected:
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override;
  // Appends each piece to the temporary file in turn: every step and status of a write, with no
  // concatenation.
  void StartWritePieces(const FileName& name, std::vector<Bytes> pieces,
                        StatusCallback done) override;
  // Writes `rest` to the temporary file at its place (after the front's size) while the front is
  // made, then the front at the start, then the remaining steps of a write as above. Waits for the
  // front before answering, whatever happened (so `rest` outlives it).
  void StartWriteLateFront(const FileName& name, std::shared_ptr<LateFront> front,
                           std::vector<Bytes> rest, StatusCallback done) override;
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override;
  void StartExists(const FileName& name, ExistsCallback done) override;
  void StartDelete(const FileName& name, StatusCallback done) override;
  void StartList(ListCallback done) override;

 private:
  // The answer to a write or delete of a read-only backend, when it is one.
  std::optional<Status> Refused() const;
  // These run on the I/O thread only, and so touch the members below without a lock.
  void Open();
  Status EnsureFolder();
  // `front`, when given, goes before `pieces` (see StartWriteLateFront).
  Status DoWrite(const FileName& name, const std::vector<Bytes>& pieces,
                 LateFront* front = nullptr);
  Status WriteTemp(const std::string& temp, const std::vector<Bytes>& pieces, LateFront* front);
  Status OverwriteInPlace(const std::string& path, const std::vector<Bytes>& pieces);
  void RemoveTemp(const std::string& temp);
  // Tries again to remove the temporary files failed writes left: after a write has answered, so
  // no unlink is on a save's way to its answer, except for a write short of the space they hold.
  void RemoveStaleTemps();

  const std::string folder_;
  const std::shared_ptr<FileSystem> fs_;
  const std::uint64_t margin_;
  const bool read_only_;
  bool folder_ready_ = false;            // the folder was seen to exist or was made
  std::vector<std::string> stale_temps_;  // temporary files failed writes could not remove
  // Last, so it is destroyed first: its destructor runs the tasks still queued, which use the
  // members above.
  WorkerPool io_;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_FOLDER_BACKEND_H_
