// SimulatedFileSystem: a FileSystem in memory that remembers what is durable, so a test can stop
// a backend at any step and then see what a power cut would have left. Part of the product: games
// and ports use it to crash-test their own storage code, as the library does.
//
// The model. Every file is an object (an inode) with two byte strings: its current bytes (what
// reads see) and its durable bytes (what it held at its last WritableFile::Sync; empty for a new
// file). NewWritableFile truncates the current bytes; Append adds to them; WriteAt writes over them
// at an offset (zeros fill a gap past their end); Sync copies them to the durable bytes. A file from OpenForOverwrite keeps the current bytes: its Appends write over them
// from the start, and its Close cuts them to what was written. Every directory has its current
// entries (name -> file) and its durable entries (the entries at its last SyncDir). NewWritableFile
// or OpenForOverwrite of a new name, Rename and Remove change the current entries only; SyncDir
// copies them to the durable ones. Directories themselves (CreateDir) are durable at once. A
// removed or replaced file lives on while a durable entry still names it.
//
// Steps. Every call on the FileSystem or on one of its WritableFiles is one step, numbered from 1
// (steps() is how many were made). FailAfterStep(n) makes every call after the n-th fail with
// StorageFailed and change nothing, as if the process had died there: run a scenario once to count
// its steps, then once for each n from 0 to that count, Crash, and check what survives.
//
// Crash(model) turns the state into what the machine would find after a power cut, then starts
// afresh: the step limit is lifted, and WritableFiles opened before the crash answer
// StorageFailed. The three models, from mildest to harshest:
//
//   DropUnsyncedData    Every file's current bytes become its durable bytes (a file never synced
//                       becomes empty). Entries are kept as they are: every create, rename and
//                       remove made so far survives, synced or not.
//   DropUnsyncedNames   As DropUnsyncedData, and every directory's entries become its durable
//                       entries: files created since the directory's last SyncDir are gone,
//                       renamed files are back under their old names (with their durable bytes),
//                       removed ones are back.
//   TearUnsyncedWrites  Entries are kept as in DropUnsyncedData. A file whose current bytes differ
//                       from its durable bytes keeps its current length n; let p be the length of
//                       the prefix both share and S the sector size (512 or 4096). Its bytes below
//                       K = max(p, n rounded down to a multiple of S) are its current bytes (whole
//                       sectors reached the disk); the bytes from K to n (the last, partial sector)
//                       are zeros or garbage, as chosen. Files whose bytes are all durable are kept.
//
// An optional capacity bounds the bytes all reachable files hold (current bytes of files named by a
// current entry): an Append past it answers NoSpace and appends nothing, and FreeSpace answers
// what is left.
//
// Thread rules: any thread; one lock serializes every call. Ownership: WritableFiles must not
// outlive the SimulatedFileSystem.

#ifndef ROLLY_STORE_SIMULATED_FILE_SYSTEM_H_
#define ROLLY_STORE_SIMULATED_FILE_SYSTEM_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rolly/store/file_system.h"

namespace rolly::store {

// What a power cut does to data and names that were not made durable; see the file comment.
struct DamageModel {
  enum class Kind : std::uint8_t { kDropUnsyncedData, kDropUnsyncedNames, kTearUnsyncedWrites };
  // What fills the torn part of the last sector.
  enum class Fill : std::uint8_t { kZeros, kGarbage };

  static DamageModel DropUnsyncedData() { return {Kind::kDropUnsyncedData, 4096, Fill::kZeros, 1}; }
  static DamageModel DropUnsyncedNames() {
    return {Kind::kDropUnsyncedNames, 4096, Fill::kZeros, 1};
  }
  // `sector_size` is 512 or 4096; garbage bytes come from `seed`, the same for the same seed.
  static DamageModel TearUnsyncedWrites(std::size_t sector_size, Fill fill,
                                        std::uint64_t seed = 1) {
    return {Kind::kTearUnsyncedWrites, sector_size, fill, seed};
  }

  Kind kind = Kind::kDropUnsyncedData;
  std::size_t sector_size = 4096;
  Fill fill = Fill::kZeros;
  std::uint64_t seed = 1;
};

class SimulatedFileSystem : public FileSystem {
 public:
  // `capacity`: the most bytes all files together may hold.
  explicit SimulatedFileSystem(std::uint64_t capacity = std::numeric_limits<std::uint64_t>::max());
  ~SimulatedFileSystem() override;

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> OpenForOverwrite(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;
  Result<Bytes> ReadFile(const std::string& path, std::size_t max_bytes) override;
  Status Remove(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Result<std::uint64_t> FreeSpace(const std::string& dir) override;
  Result<bool> Exists(const std::string& path) override;
  Status CreateDir(const std::string& dir) override;

  // Steps made so far (calls on the file system and its files, failed ones included).
  std::uint64_t steps() const;
  // Every step after the n-th fails with StorageFailed and changes nothing. FailAfterStep(0) fails
  // every later step; steps() tells where a scenario starts.
  void FailAfterStep(std::uint64_t n);
  // Lifts the limit.
  void ClearFailure();
  // Applies a power cut under `model`, lifts the step limit and invalidates open files.
  void Crash(const DamageModel& model);

  // Test access behind the interface, counted as no step and never failed.
  // The current bytes of a file, or nullopt.
  std::optional<Bytes> Peek(const std::string& path) const;
  // Writes a file's bytes and makes them and its name durable, as a file already on the disk.
  void Put(const std::string& path, Bytes bytes);
  // Whether the file's bytes and its entry are all durable.
  bool IsDurable(const std::string& path) const;

 private:
  struct Inode {
    Bytes current;
    Bytes durable;
  };
  using Entries = std::map<std::string, std::shared_ptr<Inode>>;
  struct Directory {
    Entries current;
    Entries durable;
  };
  class File;

  // Counts a step; StorageFailed when it is past the limit. Called under the lock.
  Status Step(std::string_view what, const std::string& path);
  // The directory holding `path` and the bare name, or nullptr when the directory is missing.
  Directory* Parent(const std::string& path, std::string* name);
  const Directory* Parent(const std::string& path, std::string* name) const;
  std::uint64_t UsedLocked() const;
  // Appends for a File, under the lock.
  Status Append(std::uint64_t generation, const std::string& path, Inode& inode, ByteView data);
  // Writes `data` over the inode's bytes at `offset`, for a File opened to overwrite and for
  // WriteAt.
  Status Overwrite(std::uint64_t generation, const std::string& path, Inode& inode,
                   std::size_t offset, ByteView data);
  Status SyncFile(std::uint64_t generation, const std::string& path, Inode& inode);
  Status CloseFile(std::uint64_t generation, const std::string& path);

  const std::uint64_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::string, Directory> dirs_;
  std::uint64_t steps_ = 0;
  std::optional<std::uint64_t> fail_after_;
  // Bumped by Crash; files of an older generation are dead.
  std::uint64_t generation_ = 0;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_SIMULATED_FILE_SYSTEM_H_
