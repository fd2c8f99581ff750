// Tests of Store: the two-copy rule, damage and fallback, every status of every call, the order of
// requests from many threads, flush, the slot index, and destruction with work in flight. Stores
// run over MemoryBackend, and over FaultBackend where a test needs failures, delays or answers
// from other threads. Every callback is checked to run on the test's thread, the game thread.

#include "rolly/store/store.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "rolly/core/checksum.h"
#include "rolly/core/mailbox.h"
#include "rolly/core/status_matchers.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/store/fault_backend.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/internal/slot_index_codec.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/store_test_util.h"

namespace rolly::store {
namespace {

using ::testing::HasSubstr;

// A bound for flushes in tests; they finish long before it.
constexpr std::chrono::seconds kPatience{60};

Bytes Payload(std::size_t size, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(size);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

format::File MakeFile(std::string title, std::size_t size = 300, std::uint32_t seed = 1) {
  format::File file;
  file.header.title = std::move(title);
  file.header.save_time_us = 1700000000000000 + seed;
  file.chunks.emplace_back(format::kTestChunk, "payload", Payload(size, seed));
  return file;
}

FileName SlotFile(std::string_view slot, Copy copy, std::string_view prefix = "rolly") {
  return FileName::ForSlot(prefix, slot, copy).value();
}
FileName IndexFile(Copy copy, std::string_view prefix = "rolly") {
  return FileName::ForIndex(prefix, copy).value();
}

Bytes Flipped(Bytes bytes, std::size_t at) {
  bytes.at(at) ^= 0x40;
  return bytes;
}

// A valid file made to look written by format version 2 for readers of version 2 and up: both
// versions in the prelude raised and the prelude checksum recomputed (docs/format.md, "Prelude").
Bytes AsNewerVersion(Bytes bytes) {
  bytes.at(8) = 2;
  bytes.at(9) = 0;
  bytes.at(10) = 2;
  bytes.at(11) = 0;
  const std::uint64_t sum =
      Checksum::Of(ByteView(bytes.data(), format::kPreludeSize - 8)).bits();
  for (int i = 0; i < 8; ++i) bytes.at(56 + i) = static_cast<std::uint8_t>(sum >> (8 * i));
  return bytes;
}

// Counts reads of slot files and of index files, and forwards everything.
class CountingBackend : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;
  int slot_reads() const { return slot_reads_.load(); }
  int index_reads() const { return index_reads_.load(); }
  int writes() const { return writes_.load(); }

 protected:
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override {
    (name.kind() == FileKind::kIndex ? index_reads_ : slot_reads_).fetch_add(1);
    BackendWrapper::StartRead(name, max_bytes, std::move(done));
  }
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override {
    writes_.fetch_add(1);
    BackendWrapper::StartWrite(name, std::move(bytes), std::move(done));
  }

 private:
  std::atomic<int> slot_reads_{0};
  std::atomic<int> index_reads_{0};
  std::atomic<int> writes_{0};
};

// Holds the first index read it is asked for until AnswerHeld, and throws std::bad_alloc (an
// allocation failing in the call) from the index read asked for next, once: the store reading
// both index copies at once, whose second call fails while the first read is still out. After
// AnswerHeld(true) it holds and throws no more.
class HeldThenThrowingIndexReads : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;

  bool threw() const { return threw_.load(); }
  // Passes the held read on to the wrapped backend, which answers it on this thread; with
  // `pass_the_rest`, every read after it is passed on too.
  void AnswerHeld(bool pass_the_rest = false) {
    std::optional<Held> held;
    {
      std::lock_guard lock(mutex_);
      held.swap(held_);
      passing_ = passing_ || pass_the_rest;
    }
    if (held) BackendWrapper::StartRead(held->name, held->max_bytes, std::move(held->done));
  }

 protected:
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override {
    if (name.kind() == FileKind::kIndex && !threw_.load()) {
      std::lock_guard lock(mutex_);
      if (!passing_ && !held_) {
        held_.emplace(Held{name, max_bytes, std::move(done)});
        return;
      }
      if (!passing_) {
        threw_.store(true);
        throw std::bad_alloc();
      }
    }
    BackendWrapper::StartRead(name, max_bytes, std::move(done));
  }

 private:
  struct Held {
    FileName name;
    std::size_t max_bytes;
    BytesCallback done;
  };
  std::mutex mutex_;
  std::optional<Held> held_;
  bool passing_ = false;  // guarded by mutex_
  std::atomic<bool> threw_{false};
};

// Holds the next slot write it is asked for, once armed, until Release passes it on: a save whose
// write is out holds its slot's queue without holding a worker.
class HeldSlotWrite : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;

  void HoldNext() {
    std::lock_guard lock(mutex_);
    armed_ = true;
  }
  // Passes the held write on (the wrapped backend answers it on this thread). False when none is
  // held.
  bool Release() {
    std::optional<Held> held;
    {
      std::lock_guard lock(mutex_);
      held.swap(held_);
    }
    if (!held) return false;
    BackendWrapper::StartWrite(held->name, std::move(held->bytes), std::move(held->done));
    return true;
  }

 protected:
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override {
    {
      std::lock_guard lock(mutex_);
      if (armed_ && name.kind() == FileKind::kSlot) {
        armed_ = false;
        held_.emplace(Held{name, std::move(bytes), std::move(done)});
        return;
      }
    }
    BackendWrapper::StartWrite(name, std::move(bytes), std::move(done));
  }

 private:
  struct Held {
    FileName name;
    Bytes bytes;
    StatusCallback done;
  };
  std::mutex mutex_;
  bool armed_ = false;
  std::optional<Held> held_;
};

class StoreTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(off_game_thread_.load(), 0) << "callbacks ran off the game thread";
  }

  void OnGameThread() {
    if (std::this_thread::get_id() != game_thread_) off_game_thread_.fetch_add(1);
    ++callbacks_;
  }

  // Saves a file titled each of `titles`, in order, into `slot` through a backend object of its
  // own over `memory`: what the stores over one backend object know of a slot is shared, and a
  // test's next part must start knowing nothing.
  void SaveEach(MemoryBackend& memory, std::string_view slot,
                std::initializer_list<const char*> titles);

  // Asks through `ask` (which gets the callback), flushes, and returns what the callback got.
  template <typename T, typename Ask>
  T Run(Store& store, Ask ask) {
    std::optional<T> out;
    ask([this, &out](T value) {
      OnGameThread();
      EXPECT_FALSE(out.has_value()) << "a callback ran twice";
      out.emplace(std::move(value));
    });
    EXPECT_FALSE(out.has_value()) << "the callback ran inside the call that asked";
    EXPECT_OK(store.FlushFor(kPatience));
    if (!out) {
      ADD_FAILURE() << "no callback";
      return T(StorageFailedError("no callback"));
    }
    return std::move(*out);
  }

  Result<SaveInfo> Save(Store& store, std::string_view slot, format::File file) {
    return Run<Result<SaveInfo>>(store, [&](Store::SaveCallback done) {
      store.Save(slot, std::move(file), std::move(done));
    });
  }
  Result<LoadResult> Load(Store& store, std::string_view slot) {
    return Run<Result<LoadResult>>(
        store, [&](Store::LoadCallback done) { store.Load(slot, std::move(done)); });
  }
  Result<LoadResult> Load(Store& store, std::string_view slot, const LoadOptions& options) {
    return Run<Result<LoadResult>>(
        store, [&](Store::LoadCallback done) { store.Load(slot, options, std::move(done)); });
  }
  Result<LoadResult> LoadCopy(Store& store, std::string_view slot, Copy copy) {
    return Run<Result<LoadResult>>(
        store, [&](Store::LoadCallback done) { store.LoadCopy(slot, copy, std::move(done)); });
  }
  Result<format::Header> NewestHeader(Store& store, std::string_view slot) {
    return Run<Result<format::Header>>(store, [&](Store::HeaderCallback done) {
      store.ReadNewestHeader(slot, std::move(done));
    });
  }
  Status Delete(Store& store, std::string_view slot) {
    return Run<Status>(store, [&](std::function<void(Status)> done) {
      store.Delete(slot, std::move(done));
    });
  }
  Result<SaveInfo> CopySlot(Store& store, std::string_view from, std::string_view to) {
    return Run<Result<SaveInfo>>(store, [&](Store::SaveCallback done) {
      store.CopySlot(from, to, std::move(done));
    });
  }
  Result<SlotList> List(Store& store) {
    return Run<Result<SlotList>>(
        store, [&](Store::ListCallback done) { store.ListSlots(std::move(done)); });
  }

  // Every file of a memory backend and its bytes.
  static std::map<std::string, Bytes> Snapshot(MemoryBackend& backend) {
    std::map<std::string, Bytes> out;
    Result<std::vector<FileName>> names = ListNow(backend);
    EXPECT_OK(names.status());
    if (!names.ok()) return out;
    for (const FileName& n : *names) out[n.str()] = *backend.Peek(n);
    return out;
  }

  WorkerPool workers_{2};
  Mailbox mailbox_;
  const std::thread::id game_thread_ = std::this_thread::get_id();
  std::atomic<int> off_game_thread_{0};
  int callbacks_ = 0;
};

void StoreTest::SaveEach(MemoryBackend& memory, std::string_view slot,
                         std::initializer_list<const char*> titles) {
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  for (const char* title : titles) {
    ASSERT_OK(Save(store, slot, MakeFile(title)).status()) << title;
  }
}

// --- Two copies ----------------------------------------------------------------------------------

TEST_F(StoreTest, SavesAlternateCopiesWithRisingSequence) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  const Copy expected[] = {Copy::kA, Copy::kB, Copy::kA, Copy::kB};
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(const SaveInfo info,
                         Save(store, "Slot 1", MakeFile("save " + std::to_string(i), 300 + i, i)));
    EXPECT_EQ(info.slot, "Slot 1");
    EXPECT_EQ(info.copy, expected[i]) << i;
    EXPECT_EQ(info.sequence, static_cast<std::uint64_t>(i + 1));
    EXPECT_EQ(info.size, backend.Peek(SlotFile("Slot 1", expected[i]))->size());
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "Slot 1"));
    EXPECT_EQ(loaded.copy, expected[i]);
    EXPECT_EQ(loaded.size, info.size);
    // The copies differ in size (the payloads do), so a size taken from the wrong copy shows.
    if (i > 0) {
      ASSERT_OK_AND_ASSIGN(const LoadResult other,
                           LoadCopy(store, "Slot 1", expected[i - 1]));
      EXPECT_EQ(other.size, backend.Peek(SlotFile("Slot 1", expected[i - 1]))->size());
      EXPECT_NE(other.size, loaded.size);
    }
    EXPECT_EQ(loaded.file.header.title, "save " + std::to_string(i));
    EXPECT_EQ(loaded.file.header.sequence, static_cast<std::uint64_t>(i + 1));
    EXPECT_EQ(loaded.file.header.slot_name, "Slot 1");
    EXPECT_EQ(loaded.file.Find(format::kTestChunk, "payload")->data(), Payload(300 + i, i));
    EXPECT_FALSE(loaded.recovered);
    EXPECT_EQ(loaded.other_state, i == 0 ? CopyState::kMissing : CopyState::kValid);
  }
}

TEST_F(StoreTest, FirstSaveOfASessionContinuesFromTheCopiesOnTheBackend) {
  MemoryBackend backend;
  {
    Store store(backend, workers_, mailbox_);
    ASSERT_OK(Save(store, "s", MakeFile("one")).status());
    ASSERT_OK(Save(store, "s", MakeFile("two")).status());
  }
  Store store(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(store, "s", MakeFile("three")));
  EXPECT_EQ(info.copy, Copy::kA);
  EXPECT_EQ(info.sequence, 3u);
}

// A save holding the game's own chunk that readers must understand loads through a store told
// of it (StoreOptions::known_chunks); to one that is not, both copies are a newer version's, and
// a save into the slot is refused rather than written over them.
TEST_F(StoreTest, TheGamesOwnMustUnderstandChunkLoadsWhenTheStoreKnowsIt) {
  MemoryBackend memory;
  const format::ChunkId mine("MINE");
  StoreOptions knowing;
  knowing.known_chunks = {mine};
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_, knowing);
    for (const char* title : {"one", "two"}) {
      format::File file = MakeFile(title);
      file.chunks.emplace_back(mine, "", Payload(40, 3), format::kChunkMustUnderstand);
      ASSERT_OK(Save(store, "s", std::move(file)).status()) << title;
    }
    Result<LoadResult> loaded = Load(store, "s");
    ASSERT_OK(loaded.status());
    EXPECT_EQ(loaded->file.header.title, "two");
    EXPECT_EQ(loaded->other_state, CopyState::kValid);
  }
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  EXPECT_THAT(Load(store, "s").status(), StatusIs(StatusCode::kNewerVersion));
  EXPECT_THAT(Save(store, "s", MakeFile("three")).status(),
              StatusIs(StatusCode::kNewerVersion));
}

TEST_F(StoreTest, DamagedNewestCopyFallsBackToTheOther) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("old", 500, 1)).status());
  ASSERT_OK(Save(store, "s", MakeFile("new", 500, 2)).status());
  const FileName b = SlotFile("s", Copy::kB);
  backend.Poke(b, Flipped(*backend.Peek(b), 300));

  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
  EXPECT_EQ(loaded.copy, Copy::kA);
  EXPECT_EQ(loaded.file.header.title, "old");
  EXPECT_TRUE(loaded.recovered);
  EXPECT_EQ(loaded.other_state, CopyState::kDamaged);
  EXPECT_THAT(loaded.other_status, StatusIs(StatusCode::kDamaged));

  // The next save replaces the damaged copy, never the good one.
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(store, "s", MakeFile("newer")));
  EXPECT_EQ(info.copy, Copy::kB);
  EXPECT_EQ(info.sequence, 2u);
}

// A load asked to leave large chunks encoded takes the copy Load takes, with its zstd chunks of
// at least the size asked left encoded, for the caller to decode (format::DecodeChunk).
TEST_F(StoreTest, ALoadLeavesTheChunksAskedForEncoded) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("old", 500, 1)).status());
  format::File file = MakeFile("new", 500, 2);
  Bytes large(200000);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<std::uint8_t>(i / 7 % 13);
  file.chunks.emplace_back(format::kTestChunk, "large", large);
  ASSERT_OK(Save(store, "s", std::move(file)).status());
  for (const std::uint64_t from : {std::uint64_t{large.size()}, std::uint64_t{large.size() + 1}}) {
    LoadOptions options;
    options.leave_encoded_from = from;
    ASSERT_OK_AND_ASSIGN(LoadResult loaded, Load(store, "s", options));
    EXPECT_EQ(loaded.copy, Copy::kB);
    EXPECT_EQ(loaded.file.header.title, "new");
    EXPECT_FALSE(loaded.recovered);
    ASSERT_EQ(loaded.file.chunks.size(), 2u);
    EXPECT_TRUE(loaded.file.chunks[0].is_decoded());  // stored as it is: not zstd
    const format::Chunk& c = loaded.file.chunks[1];
    if (from > large.size()) {
      EXPECT_EQ(c.data(), large);
      continue;
    }
    ASSERT_TRUE(c.is_left_encoded());
    Bytes out(c.decoded_size());
    ASSERT_OK(format::DecodeChunk(c, out, [](std::size_t) {}));
    EXPECT_EQ(out, large);
  }
}

// A load's on_read runs on the worker that read the copy, before the callback is posted, with
// the file the callback then gets as on_read left it; it does not run for a load that found no
// copy; and what it throws fails the load with StorageFailed naming it.
TEST_F(StoreTest, OnReadRunsOnTheWorkerBeforeTheCallbackAndItsThrowFailsTheLoad) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("saved", 500, 1)).status());
  std::atomic<int> runs{0};
  std::atomic<bool> on_game_thread{false};
  LoadOptions options;
  options.on_read = [&](LoadResult& read) {
    ++runs;
    if (std::this_thread::get_id() == game_thread_) on_game_thread = true;
    read.file.header.title = "seen on the worker";
  };
  std::optional<Result<LoadResult>> got;
  store.Load("s", options, [&](Result<LoadResult> r) {
    OnGameThread();
    // Posted once on_read returned: it ran before.
    EXPECT_EQ(runs.load(), 1);
    got.emplace(std::move(r));
  });
  ASSERT_OK(store.FlushFor(kPatience));
  ASSERT_TRUE(got.has_value());
  ASSERT_OK(got->status());
  EXPECT_EQ((*got)->file.header.title, "seen on the worker");
  EXPECT_FALSE(on_game_thread.load());

  // No copy: not found, and on_read does not run.
  EXPECT_THAT(Load(store, "none", options).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_EQ(runs.load(), 1);

  // A throw: StorageFailed naming on_read and the exception; the slot loads afterwards.
  LoadOptions throwing;
  throwing.on_read = [](LoadResult&) { throw std::runtime_error("out of checks"); };
  const Status thrown = Load(store, "s", throwing).status();
  EXPECT_THAT(thrown, StatusIs(StatusCode::kStorageFailed));
  EXPECT_THAT(std::string(thrown.message()), HasSubstr("on_read threw: out of checks"));
  ASSERT_OK_AND_ASSIGN(LoadResult again, Load(store, "s"));
  EXPECT_EQ(again.file.header.title, "saved");
}

// A copy far larger than any file may be (a sparse file of 64 GiB) is read no further than a
// file's bound and one byte (about 1 GiB), and is damaged: the other copy loads. Before the
// bound the store read it whole, and the process ran out of memory.
TEST_F(StoreTest, ACopyLargerThanAnyFileIsDamagedWithoutBeingReadWhole) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  {
    FolderBackend backend(dir.path());
    Store store(backend, workers_, mailbox_);
    ASSERT_OK(Save(store, "s", MakeFile("one")).status());  // copy a
    ASSERT_OK(Save(store, "s", MakeFile("two")).status());  // copy b, the newest
  }
  const std::string path = dir.path() + "/" + SlotFile("s", Copy::kB).str();
  ASSERT_EQ(::truncate(path.c_str(), std::int64_t{64} << 30), 0) << path;
  FolderBackend backend(dir.path());
  Store store(backend, workers_, mailbox_);
  Result<LoadResult> loaded = Load(store, "s");
  ASSERT_OK(loaded.status());
  EXPECT_EQ(loaded->file.header.title, "one");
  EXPECT_EQ(loaded->copy, Copy::kA);
  EXPECT_EQ(loaded->other_state, CopyState::kDamaged);
  EXPECT_THAT(loaded->other_status, StatusIs(StatusCode::kDamaged));
}

TEST_F(StoreTest, BothCopiesDamagedIsDamagedNamingBoth) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("one")).status());
  ASSERT_OK(Save(store, "s", MakeFile("two")).status());
  for (Copy c : {Copy::kA, Copy::kB}) {
    backend.Poke(SlotFile("s", c), Flipped(*backend.Peek(SlotFile("s", c)), 100));
  }
  EXPECT_THAT(Load(store, "s"),
              StatusIs(StatusCode::kDamaged,
                       ::testing::AllOf(HasSubstr("copy a damaged"), HasSubstr("copy b damaged"))));
  EXPECT_THAT(NewestHeader(store, "s"), StatusIs(StatusCode::kDamaged));
}

TEST_F(StoreTest, NeitherCopyIsNotFound) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  EXPECT_THAT(Load(store, "nothing"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(LoadCopy(store, "nothing", Copy::kB), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(NewestHeader(store, "nothing"), StatusIs(StatusCode::kNotFound));
}

TEST_F(StoreTest, NewerVersionCopyIsNeverOverwrittenWhileTheOtherCanTakeTheWrite) {
  MemoryBackend backend;
  Bytes newer;
  {
    Store store(backend, workers_, mailbox_);
    ASSERT_OK(Save(store, "s", MakeFile("from the future")).status());
    newer = AsNewerVersion(*backend.Peek(SlotFile("s", Copy::kA)));
    backend.Poke(SlotFile("s", Copy::kA), newer);
  }
  {
    Store store(backend, workers_, mailbox_);
    EXPECT_THAT(LoadCopy(store, "s", Copy::kA), StatusIs(StatusCode::kNewerVersion));
    EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kNewerVersion));
    for (int i = 0; i < 3; ++i) {
      ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(store, "s", MakeFile("ours")));
      EXPECT_EQ(info.copy, Copy::kB) << i;
      EXPECT_EQ(info.sequence, static_cast<std::uint64_t>(i + 1));
      EXPECT_EQ(*backend.Peek(SlotFile("s", Copy::kA)), newer);
    }
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
    EXPECT_EQ(loaded.copy, Copy::kB);
    EXPECT_EQ(loaded.other_state, CopyState::kNewer);
  }

  // Both copies newer (changed while no store was open): a save is refused and writes nothing.
  // The closed store's last turn ends on a worker just after its reply, and until it has, a store
  // over the backend would take what it knew of the copies: the workers go idle first.
  workers_.WaitUntilIdle();
  backend.Poke(SlotFile("s", Copy::kB), newer);
  Store fresh(backend, workers_, mailbox_);
  EXPECT_THAT(Save(fresh, "s", MakeFile("ours")), StatusIs(StatusCode::kNewerVersion));
  EXPECT_EQ(*backend.Peek(SlotFile("s", Copy::kA)), newer);
  EXPECT_EQ(*backend.Peek(SlotFile("s", Copy::kB)), newer);
  EXPECT_THAT(Load(fresh, "s"), StatusIs(StatusCode::kNewerVersion));
}

TEST_F(StoreTest, CopyHoldingAnotherSlotsHeaderIsDamaged) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "one", MakeFile("one's")).status());
  ASSERT_OK(Save(store, "two", MakeFile("two's first")).status());
  ASSERT_OK(Save(store, "two", MakeFile("two's second")).status());
  // Copy b of "one" now holds "two"'s save with a higher sequence. Read through a backend object
  // of its own, whose stores know nothing of the slot yet, so both copies are read.
  backend.Poke(SlotFile("one", Copy::kB), *backend.Peek(SlotFile("two", Copy::kB)));
  workers_.WaitUntilIdle();
  CountingBackend unknown(&backend);
  Store fresh(unknown, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(fresh, "one"));
  EXPECT_EQ(loaded.copy, Copy::kA);
  EXPECT_EQ(loaded.file.header.title, "one's");
  EXPECT_EQ(loaded.other_state, CopyState::kDamaged);
  EXPECT_THAT(loaded.other_status, StatusIs(StatusCode::kDamaged, HasSubstr("holds slot")));
  EXPECT_THAT(LoadCopy(fresh, "one", Copy::kB), StatusIs(StatusCode::kDamaged));
}

// A store that knows a slot's copies (it saved or loaded the slot) reads only the newest on a
// load, checked in full; the other is reported as known. When that copy is not what the store
// knew (damaged since, or another save put in its place), both are read, as for a slot the store
// never saw, and what they hold now is loaded and known from then on.
TEST_F(StoreTest, ALoadOfASlotTheStoreKnowsReadsOnlyTheNewestCopy) {
  MemoryBackend memory;
  CountingBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("one", 300, 1)).status());  // a, sequence 1
  const Bytes first = *memory.Peek(SlotFile("s", Copy::kA));
  ASSERT_OK(Save(store, "s", MakeFile("two", 300, 2)).status());    // b, 2
  ASSERT_OK(Save(store, "s", MakeFile("three", 300, 3)).status());  // a, 3
  int reads = backend.slot_reads();
  auto load = [&](const char* title, Copy copy, int copies_read, CopyState other) {
    SCOPED_TRACE(title);
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
    EXPECT_EQ(loaded.file.header.title, title);
    EXPECT_EQ(loaded.copy, copy);
    EXPECT_EQ(loaded.other_state, other);
    EXPECT_EQ(loaded.recovered, other != CopyState::kValid);
    EXPECT_EQ(backend.slot_reads(), reads + copies_read);
    reads = backend.slot_reads();
  };
  ASSERT_NO_FATAL_FAILURE(load("three", Copy::kA, 1, CopyState::kValid));
  // The older copy damaged behind the store's back: not read, so not seen until it is needed.
  const Bytes second = *memory.Peek(SlotFile("s", Copy::kB));
  memory.Poke(SlotFile("s", Copy::kB), Flipped(second, second.size() - 1));
  ASSERT_NO_FATAL_FAILURE(load("three", Copy::kA, 1, CopyState::kValid));
  memory.Poke(SlotFile("s", Copy::kB), second);
  // The newest copy holds an older save now (its sequence is not the one known): both are read.
  memory.Poke(SlotFile("s", Copy::kA), first);
  ASSERT_NO_FATAL_FAILURE(load("two", Copy::kB, 3, CopyState::kValid));
  ASSERT_NO_FATAL_FAILURE(load("two", Copy::kB, 1, CopyState::kValid));
  // The newest copy damaged: both are read, and the older one is taken.
  memory.Poke(SlotFile("s", Copy::kB), Flipped(second, second.size() - 1));
  ASSERT_NO_FATAL_FAILURE(load("one", Copy::kA, 3, CopyState::kDamaged));
  // Known damaged now: the next load reads only the valid copy, and the next save writes over
  // the damaged one.
  ASSERT_NO_FATAL_FAILURE(load("one", Copy::kA, 1, CopyState::kDamaged));
  ASSERT_OK_AND_ASSIGN(const SaveInfo saved, Save(store, "s", MakeFile("four", 300, 4)));
  EXPECT_EQ(saved.copy, Copy::kB);
  ASSERT_NO_FATAL_FAILURE(load("four", Copy::kB, 1, CopyState::kValid));
}

TEST_F(StoreTest, FailedWriteKeepsThePreviousSaveAndTheNextSaveRetriesTheSameCopy) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("first")).status());  // a, 1

  const auto rule = backend.Add(FaultRule::Fail(StorageFailedError("disk")).On(Op::kWrite));
  EXPECT_THAT(Save(store, "s", MakeFile("second")), StatusIs(StatusCode::kStorageFailed));
  EXPECT_EQ(backend.hits(rule), 1u);
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
  EXPECT_EQ(loaded.file.header.title, "first");

  // A write cut short leaves a copy a load refuses; the good copy stays.
  backend.Add(FaultRule::CutWrite(100).On(Op::kWrite));
  EXPECT_THAT(Save(store, "s", MakeFile("third")), StatusIs(StatusCode::kStorageFailed));
  ASSERT_OK_AND_ASSIGN(const LoadResult after_cut, Load(store, "s"));
  EXPECT_EQ(after_cut.file.header.title, "first");
  EXPECT_EQ(after_cut.copy, Copy::kA);
  EXPECT_EQ(after_cut.other_state, CopyState::kDamaged);
  EXPECT_TRUE(after_cut.recovered);

  ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(store, "s", MakeFile("fourth")));
  EXPECT_EQ(info.copy, Copy::kB);
  EXPECT_EQ(info.sequence, 2u);
  ASSERT_OK_AND_ASSIGN(const LoadResult last, Load(store, "s"));
  EXPECT_EQ(last.file.header.title, "fourth");
  EXPECT_FALSE(last.recovered);
}

TEST_F(StoreTest, LoadCopyReadsOneCopyAndWritesNothing) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("a's")).status());
  ASSERT_OK(Save(store, "s", MakeFile("b's")).status());
  const auto before = Snapshot(backend);

  ASSERT_OK_AND_ASSIGN(const LoadResult a, LoadCopy(store, "s", Copy::kA));
  EXPECT_EQ(a.copy, Copy::kA);
  EXPECT_EQ(a.file.header.title, "a's");
  ASSERT_OK_AND_ASSIGN(const LoadResult b, LoadCopy(store, "s", Copy::kB));
  EXPECT_EQ(b.copy, Copy::kB);
  EXPECT_EQ(b.file.header.title, "b's");

  backend.Poke(SlotFile("s", Copy::kB), Flipped(*backend.Peek(SlotFile("s", Copy::kB)), 200));
  const auto damaged = Snapshot(backend);
  EXPECT_THAT(LoadCopy(store, "s", Copy::kB), StatusIs(StatusCode::kDamaged));
  EXPECT_EQ(Snapshot(backend), damaged);
  backend.Poke(SlotFile("s", Copy::kB), before.at(SlotFile("s", Copy::kB).str()));
  EXPECT_EQ(Snapshot(backend), before);
}

TEST_F(StoreTest, ReadNewestHeaderGivesTheNewestValidCopysHeader) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("one")).status());
  ASSERT_OK(Save(store, "s", MakeFile("two")).status());
  ASSERT_OK_AND_ASSIGN(const format::Header h, NewestHeader(store, "s"));
  EXPECT_EQ(h.title, "two");
  EXPECT_EQ(h.sequence, 2u);
  EXPECT_EQ(h.slot_name, "s");

  // A fresh session finds the newest by inspecting both copies.
  Store fresh(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const format::Header again, NewestHeader(fresh, "s"));
  EXPECT_EQ(again.title, "two");
}

TEST_F(StoreTest, DeleteRemovesBothCopiesAndTheIndexEntry) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "x", MakeFile("x1")).status());
  ASSERT_OK(Save(store, "x", MakeFile("x2")).status());
  ASSERT_OK(Save(store, "y", MakeFile("y1")).status());
  ASSERT_OK(Delete(store, "x"));
  EXPECT_FALSE(backend.Peek(SlotFile("x", Copy::kA)).has_value());
  EXPECT_FALSE(backend.Peek(SlotFile("x", Copy::kB)).has_value());
  EXPECT_THAT(Load(store, "x"), StatusIs(StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].slot, "y");
  // The index on the backend says so too.
  Store fresh(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList listed, List(fresh));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].slot, "y");

  EXPECT_OK(Delete(store, "never saved"));
  // A slot saved after its deletion starts again.
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(store, "x", MakeFile("x3")));
  EXPECT_EQ(info.copy, Copy::kA);
  EXPECT_EQ(info.sequence, 1u);
}

TEST_F(StoreTest, CopySlotWritesTheNewestSaveAsANewSaveOfTheTarget) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "from", MakeFile("old", 800, 1)).status());
  ASSERT_OK(Save(store, "from", MakeFile("new", 800, 2)).status());
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, CopySlot(store, "from", "to"));
  EXPECT_EQ(info.slot, "to");
  EXPECT_EQ(info.copy, Copy::kA);
  EXPECT_EQ(info.sequence, 1u);
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "to"));
  EXPECT_EQ(loaded.file.header.title, "new");
  EXPECT_EQ(loaded.file.header.slot_name, "to");
  EXPECT_EQ(loaded.file.Find(format::kTestChunk, "payload")->data(), Payload(800, 2));
  // The source is untouched.
  ASSERT_OK_AND_ASSIGN(const LoadResult source, Load(store, "from"));
  EXPECT_EQ(source.file.header.slot_name, "from");
  EXPECT_EQ(source.file.header.sequence, 2u);

  EXPECT_THAT(CopySlot(store, "missing", "to"), StatusIs(StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(const LoadResult still, Load(store, "to"));
  EXPECT_EQ(still.file.header.sequence, 1u);
}

TEST_F(StoreTest, InvalidSlotNamesAreInvalidInputThroughTheCallback) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  const std::string names[] = {"", std::string("a\0b", 3), std::string(kMaxSlotNameSize + 1, 'x')};
  for (const std::string& name : names) {
    EXPECT_THAT(Save(store, name, MakeFile("t")), StatusIs(StatusCode::kInvalidInput));
    EXPECT_THAT(Load(store, name), StatusIs(StatusCode::kInvalidInput));
    EXPECT_THAT(LoadCopy(store, name, Copy::kB), StatusIs(StatusCode::kInvalidInput));
    EXPECT_THAT(NewestHeader(store, name), StatusIs(StatusCode::kInvalidInput));
    EXPECT_THAT(Delete(store, name), StatusIs(StatusCode::kInvalidInput));
    EXPECT_THAT(CopySlot(store, name, "ok"), StatusIs(StatusCode::kInvalidInput));
    EXPECT_THAT(CopySlot(store, "ok", name), StatusIs(StatusCode::kInvalidInput));
  }
  // The longest name is fine.
  const std::string longest(kMaxSlotNameSize, 'y');
  ASSERT_OK(Save(store, longest, MakeFile("long")).status());
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, longest));
  EXPECT_EQ(loaded.file.header.slot_name, longest);
}

// --- Every status of every call ------------------------------------------------------------------

TEST_F(StoreTest, SaveStatuses) {
  {
    MemoryBackend backend;
    Store store(backend, workers_, mailbox_);
    EXPECT_OK(Save(store, "s", MakeFile("ok")).status());
    format::File twice = MakeFile("dup");
    twice.chunks.emplace_back(format::kTestChunk, "payload", Bytes{1, 2, 3});
    EXPECT_THAT(Save(store, "s", std::move(twice)), StatusIs(StatusCode::kInvalidInput));
    format::File bad_title = MakeFile(std::string("nul\0", 4));
    EXPECT_THAT(Save(store, "s", std::move(bad_title)), StatusIs(StatusCode::kInvalidInput));
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
    EXPECT_EQ(loaded.file.header.title, "ok");
  }
  {
    MemoryBackend backend(4000);
    StoreOptions options;
    options.keep_index = false;
    Store store(backend, workers_, mailbox_, options);
    EXPECT_OK(Save(store, "s", MakeFile("small", 100)).status());
    EXPECT_THAT(Save(store, "s", MakeFile("big", 5000)), StatusIs(StatusCode::kNoSpace));
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
    EXPECT_EQ(loaded.file.header.title, "small");
  }
  MemoryBackend memory;
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  EXPECT_OK(Save(store, "s", MakeFile("kept")).status());
  backend.Add(FaultRule::Fail(StorageFailedError("broken")).On(Op::kWrite));
  EXPECT_THAT(Save(store, "s", MakeFile("x")), StatusIs(StatusCode::kStorageFailed));
  backend.Add(FaultRule::Fail(SignedOutError("gone")).On(Op::kWrite));
  EXPECT_THAT(Save(store, "s", MakeFile("x")), StatusIs(StatusCode::kSignedOut));
  backend.Add(FaultRule::Fail(NoSpaceError("full")).On(Op::kWrite));
  EXPECT_THAT(Save(store, "s", MakeFile("x")), StatusIs(StatusCode::kNoSpace));
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
  EXPECT_EQ(loaded.file.header.title, "kept");
  // NewerVersion: NewerVersionCopyIsNeverOverwrittenWhileTheOtherCanTakeTheWrite.
}

TEST_F(StoreTest, AFileMadeOnAWorkerIsSavedInTheOrderAskedAndItsFailureWritesNothing) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  EXPECT_OK(Save(store, "s", MakeFile("first")).status());
  const std::map<std::string, Bytes> before = Snapshot(backend);

  // A maker that fails: its status is the save's, and nothing is written.
  std::atomic<int> made_on_game_thread{0};
  const Result<SaveInfo> failed = Run<Result<SaveInfo>>(store, [&](Store::SaveCallback done) {
    store.Save(
        "s",
        [&]() -> Result<format::File> {
          if (std::this_thread::get_id() == game_thread_) made_on_game_thread.fetch_add(1);
          return InvalidDataError("a name is too long");
        },
        std::move(done));
  });
  EXPECT_THAT(failed, StatusIs(StatusCode::kInvalidData));
  EXPECT_EQ(Snapshot(backend), before);
  // No maker at all.
  const Result<SaveInfo> none = Run<Result<SaveInfo>>(store, [&](Store::SaveCallback done) {
    store.Save("s", Store::FileMaker(), std::move(done));
  });
  EXPECT_THAT(none, StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(Snapshot(backend), before);

  // A maker that waits: a delete asked after its save still runs after it, and a load after both
  // finds nothing, whichever thread finished first.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::optional<Result<SaveInfo>> saved;
  std::optional<Status> deleted;
  store.Save(
      "s",
      [&, released]() -> Result<format::File> {
        if (std::this_thread::get_id() == game_thread_) made_on_game_thread.fetch_add(1);
        released.wait();
        return MakeFile("made late");
      },
      [&](Result<SaveInfo> r) {
        OnGameThread();
        EXPECT_FALSE(deleted.has_value()) << "the delete was answered before the save";
        saved.emplace(std::move(r));
      });
  store.Delete("s", [&](Status st) {
    OnGameThread();
    deleted.emplace(st);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(saved.has_value());
  EXPECT_FALSE(deleted.has_value());
  release.set_value();
  EXPECT_OK(store.FlushFor(kPatience));
  ASSERT_TRUE(saved.has_value() && deleted.has_value());
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, *saved);
  EXPECT_EQ(info.sequence, 2u);
  EXPECT_OK(*deleted);
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kNotFound));
  EXPECT_EQ(made_on_game_thread.load(), 0) << "a maker ran on the game thread";
}

TEST_F(StoreTest, LoadStatuses) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(Load(store, ""), StatusIs(StatusCode::kInvalidInput));
  ASSERT_OK(Save(store, "s", MakeFile("one")).status());
  EXPECT_OK(Load(store, "s").status());

  auto rule = backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kRead).FromThenOn());
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kStorageFailed));
  EXPECT_THAT(LoadCopy(store, "s", Copy::kA), StatusIs(StatusCode::kStorageFailed));
  {
    Store fresh(backend, workers_, mailbox_);
    EXPECT_THAT(NewestHeader(fresh, "s"), StatusIs(StatusCode::kStorageFailed));
  }
  backend.Remove(rule);
  rule = backend.Add(FaultRule::Fail(SignedOutError("user")).On(Op::kRead).FromThenOn());
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kSignedOut));
  EXPECT_THAT(LoadCopy(store, "s", Copy::kA), StatusIs(StatusCode::kSignedOut));
  backend.Remove(rule);

  const Bytes good = *memory.Peek(SlotFile("s", Copy::kA));
  memory.Poke(SlotFile("s", Copy::kA), Flipped(good, 90));
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kDamaged));
  memory.Poke(SlotFile("s", Copy::kA), AsNewerVersion(good));
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kNewerVersion));
  memory.Poke(SlotFile("s", Copy::kA), good);
  EXPECT_OK(Load(store, "s").status());
}

TEST_F(StoreTest, DeleteAndListStatuses) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  {
    Store store(backend, workers_, mailbox_);
    ASSERT_OK(Save(store, "s", MakeFile("one")).status());
    EXPECT_OK(Delete(store, "s"));
    ASSERT_OK(Save(store, "s", MakeFile("two")).status());
    const auto rule =
        backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kDelete).FromThenOn());
    EXPECT_THAT(Delete(store, "s"), StatusIs(StatusCode::kStorageFailed));
    backend.Remove(rule);
    ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
    ASSERT_EQ(slots.size(), 1u);
  }
  // A new store that can neither read the index nor list the saves.
  backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kRead).FromThenOn());
  backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kList).FromThenOn());
  Store store(backend, workers_, mailbox_);
  EXPECT_THAT(List(store), StatusIs(StatusCode::kStorageFailed));
}

TEST_F(StoreTest, FlushIsBusyWhileAnOperationOutlastsItsDeadline) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  EXPECT_OK(store.FlushFor(std::chrono::milliseconds(0)));  // nothing asked
  backend.Add(FaultRule::Delay(std::chrono::milliseconds(400)).On(Op::kWrite));
  std::optional<Result<SaveInfo>> saved;
  store.Save("s", MakeFile("slow"), [&](Result<SaveInfo> r) {
    OnGameThread();
    saved.emplace(std::move(r));
  });
  EXPECT_EQ(store.pending(), 1u);
  EXPECT_THAT(store.FlushFor(std::chrono::milliseconds(20)),
              StatusIs(StatusCode::kBusy, HasSubstr("1 operations")));
  EXPECT_FALSE(saved.has_value());
  EXPECT_OK(store.FlushFor(kPatience));
  ASSERT_TRUE(saved.has_value());
  EXPECT_OK(saved->status());
  EXPECT_EQ(store.pending(), 0u);
}

// --- Flush ----------------------------------------------------------------------------------------

TEST_F(StoreTest, SaveAskedRightBeforeFlushIsDurableWhenFlushReturns) {
  static_assert(Store::kQuitFlush == std::chrono::seconds(10));
  static_assert(Store::kBackgroundFlush == std::chrono::seconds(3));
  MemoryBackend memory;
  FaultBackend backend(&memory);
  backend.Add(FaultRule::Delay(std::chrono::milliseconds(30)).FromThenOn());
  Store store(backend, workers_, mailbox_);
  bool heard = false;
  store.Save("quit", MakeFile("last words", 20000, 7), [&](Result<SaveInfo> r) {
    OnGameThread();
    EXPECT_OK(r.status());
    heard = true;
  });
  ASSERT_OK(store.Flush(Mailbox::Clock::now() + Store::kQuitFlush));
  EXPECT_TRUE(heard);
  ASSERT_TRUE(memory.Peek(SlotFile("quit", Copy::kA)).has_value());
  ASSERT_OK_AND_ASSIGN(const format::File file,
                       format::Read(*memory.Peek(SlotFile("quit", Copy::kA))));
  EXPECT_EQ(file.header.title, "last words");
  // The index write it caused is part of the flush too.
  EXPECT_TRUE(memory.Peek(IndexFile(Copy::kA)).has_value());

  store.Save("background", MakeFile("pause"), [&](Result<SaveInfo> r) {
    OnGameThread();
    EXPECT_OK(r.status());
  });
  ASSERT_OK(store.FlushFor(Store::kBackgroundFlush));
  EXPECT_TRUE(memory.Peek(SlotFile("background", Copy::kA)).has_value());
}

// A save's reply is posted before its index write is laid out (on the backend's thread, when the
// backend answers from one); the index change and the write are counted first. So a listing asked
// from the save's callback lists the save, and a flush that heard the save waits for its index
// write too. Repeated, since the reply and the index write race.
TEST_F(StoreTest, SaveCallbackListsTheSaveAndFlushWaitsForItsIndexWrite) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  backend.Add(FaultRule::AnswerElsewhere().FromThenOn());
  Store store(backend, workers_, mailbox_);
  for (std::uint32_t round = 1; round <= 20; ++round) {
    const std::string title = "round " + std::to_string(round);
    std::optional<Result<SlotList>> listed;
    store.Save("slot", MakeFile(title, 2000, round), [&](Result<SaveInfo> r) {
      OnGameThread();
      ASSERT_OK(r.status());
      store.ListSlots([&](Result<SlotList> list) {
        OnGameThread();
        listed.emplace(std::move(list));
      });
    });
    ASSERT_OK(store.FlushFor(kPatience));
    ASSERT_TRUE(listed.has_value());
    ASSERT_OK(listed->status());
    const SlotView* seen = (*listed)->Find("slot");
    ASSERT_NE(seen, nullptr);
    EXPECT_EQ(seen->sequence, round);
    EXPECT_EQ(seen->title, title);
    // The index file itself, read by a store over the memory backend alone (no state shared with
    // the one above): the flush returned after the write.
    Store reader(memory, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList on_disk, List(reader));
    ASSERT_NE(on_disk.Find("slot"), nullptr);
    EXPECT_EQ(on_disk.Find("slot")->sequence, round);
  }
}

// --- Order ----------------------------------------------------------------------------------------

// Eight threads ask for saves, loads and deletes of four slots. The store is a game-thread API,
// so they hand their requests to the game thread (this test's loop), which asks the store in
// arrival order and drains the mailbox between. The backend answers from another thread after
// small seeded delays, so completions race.
TEST_F(StoreTest, RequestsFromManyThreadsRunInOrderPerSlotAndLoseNothing) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 30;
  constexpr int kSlots = 4;
  MemoryBackend memory;
  FaultBackend backend(&memory);
  backend.Add(FaultRule::AnswerElsewhere().FromThenOn());
  std::mt19937 delays(4242);
  for (int n = 1; n <= 3000; ++n) {
    if (delays() % 3 != 0) continue;
    backend.Add(FaultRule::Delay(std::chrono::microseconds(delays() % 1500)).Nth(n));
  }
  Store store(backend, workers_, mailbox_);

  enum class Kind { kSave, kLoad, kDelete };
  struct Request {
    Kind kind;
    int slot;
  };
  std::mutex mutex;
  std::deque<Request> requests;
  std::atomic<int> producers_left{kThreads};
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      std::mt19937 rng(1000 + t);
      for (int i = 0; i < kPerThread; ++i) {
        const unsigned r = rng() % 10;
        const Kind kind = r < 5 ? Kind::kSave : r < 8 ? Kind::kLoad : Kind::kDelete;
        {
          std::lock_guard lock(mutex);
          requests.push_back({kind, static_cast<int>(rng() % kSlots)});
        }
        if (rng() % 4 == 0) std::this_thread::yield();
      }
      producers_left.fetch_sub(1);
    });
  }

  // The model, kept at the time of asking: what each slot holds once earlier requests ran.
  struct SlotModel {
    std::optional<std::string> title;
    std::uint64_t sequence = 0;
    std::vector<int> asked;  // request numbers in the order asked
    std::vector<int> heard;  // in the order called back
  };
  SlotModel model[kSlots];
  int asked = 0;
  int answered = 0;
  auto slot_name = [](int s) { return "slot " + std::to_string(s); };

  auto ask = [&](const Request& q) {
    const int id = asked++;
    SlotModel& m = model[q.slot];
    m.asked.push_back(id);
    switch (q.kind) {
      case Kind::kSave: {
        const std::string title = "save " + std::to_string(id);
        m.title = title;
        const std::uint64_t sequence = ++m.sequence;
        store.Save(slot_name(q.slot), MakeFile(title, 200 + id % 7 * 300, id),
                   [&, id, s = q.slot, title, sequence](Result<SaveInfo> r) {
                     OnGameThread();
                     ++answered;
                     model[s].heard.push_back(id);
                     ASSERT_OK(r.status());
                     EXPECT_EQ(r->sequence, sequence) << title;
                   });
        break;
      }
      case Kind::kLoad:
        store.Load(slot_name(q.slot), [&, id, s = q.slot, expected = m.title](Result<LoadResult> r) {
          OnGameThread();
          ++answered;
          model[s].heard.push_back(id);
          if (!expected) {
            EXPECT_THAT(r, StatusIs(StatusCode::kNotFound)) << "request " << id;
            return;
          }
          ASSERT_OK(r.status()) << "request " << id;
          EXPECT_EQ(r->file.header.title, *expected) << "request " << id;
        });
        break;
      case Kind::kDelete:
        m.title.reset();
        m.sequence = 0;
        store.Delete(slot_name(q.slot), [&, id, s = q.slot](Status st) {
          OnGameThread();
          ++answered;
          model[s].heard.push_back(id);
          EXPECT_OK(st);
        });
        break;
    }
  };

  for (;;) {
    std::deque<Request> taken;
    {
      std::lock_guard lock(mutex);
      taken.swap(requests);
    }
    for (const Request& q : taken) ask(q);
    mailbox_.Drain();
    if (producers_left.load() == 0 && taken.empty()) {
      std::lock_guard lock(mutex);
      if (requests.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (std::thread& t : producers) t.join();
  ASSERT_OK(store.FlushFor(kPatience));
  EXPECT_EQ(asked, kThreads * kPerThread);
  EXPECT_EQ(answered, asked);
  for (int s = 0; s < kSlots; ++s) {
    EXPECT_EQ(model[s].heard, model[s].asked) << "slot " << s;
    // No save lost: the slot holds the last save asked (or nothing after a last delete).
    const Result<LoadResult> last = Load(store, slot_name(s));
    if (model[s].title) {
      ASSERT_OK(last.status());
      EXPECT_EQ(last->file.header.title, *model[s].title);
      EXPECT_EQ(last->file.header.sequence, model[s].sequence);
    } else {
      EXPECT_THAT(last, StatusIs(StatusCode::kNotFound));
    }
  }
  // The index agrees once everything ran.
  ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
  std::vector<std::string> listed, expected;
  for (const SlotView& info : slots) listed.emplace_back(info.slot);
  for (int s = 0; s < kSlots; ++s) {
    if (model[s].title) expected.push_back(slot_name(s));
  }
  EXPECT_EQ(listed, expected);
}

TEST_F(StoreTest, TwoStoresOverOneBackendNeverLoseALaterSave) {
  // Regression: each store kept its own idea of a slot's copies, so a store that had saved once
  // wrote over the newest copy another store had made since, with a lower sequence, and a later
  // load returned the other store's older save.
  MemoryBackend backend;
  Store first(backend, workers_, mailbox_);
  Store second(backend, workers_, mailbox_);
  ASSERT_OK(Save(first, "s", MakeFile("first 1")).status());
  ASSERT_OK(Save(second, "s", MakeFile("second 1")).status());
  ASSERT_OK(Save(second, "s", MakeFile("second 2")).status());
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(first, "s", MakeFile("first 2")));
  EXPECT_EQ(info.sequence, 4u);
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(second, "s"));
  EXPECT_EQ(loaded.file.header.title, "first 2");
  // The index of the prefix lists what both wrote.
  ASSERT_OK(Save(second, "other", MakeFile("o")).status());
  ASSERT_OK(Save(first, "third", MakeFile("t")).status());
  Store fresh(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList slots, List(fresh));
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[0].slot, "other");
  EXPECT_EQ(slots[1].slot, "s");
  EXPECT_EQ(slots[1].title, "first 2");
  EXPECT_EQ(slots[1].sequence, 4u);
  EXPECT_EQ(slots[2].slot, "third");
}

TEST_F(StoreTest, SaveRefusesWhenACopyCannotBeReadRatherThanRiskTheLastGoodSave) {
  // Regression: a copy whose read failed (StorageFailed) was taken as holding no save, so the
  // first save of a session could write over the newest save, or write a sequence below it.
  // Each part uses a backend object of its own over the same files: what the stores over one
  // backend object know of a slot is shared, and each part must start knowing nothing.
  MemoryBackend memory;
  ASSERT_NO_FATAL_FAILURE(SaveEach(memory, "s", {"one", "two"}));  // b newest
  {
    // Copy b unreadable, and the write cut: before, the save went to b and tore it.
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    const auto read_b = backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kRead).Nth(2));
    const auto cut = backend.Add(FaultRule::CutWrite(50).On(Op::kWrite));
    EXPECT_THAT(Save(store, "s", MakeFile("three")), StatusIs(StatusCode::kStorageFailed));
    backend.Remove(read_b);
    backend.Remove(cut);
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
    EXPECT_EQ(loaded.file.header.title, "two");
  }
  {
    // Both copies unreadable: before, the save wrote sequence 1 to copy a and a later load
    // returned the older save in b.
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    const auto rule =
        backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kRead).FromThenOn());
    EXPECT_THAT(Save(store, "s", MakeFile("four")), StatusIs(StatusCode::kStorageFailed));
    backend.Remove(rule);
    ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(store, "s", MakeFile("five")));
    EXPECT_EQ(info.copy, Copy::kA);
    EXPECT_EQ(info.sequence, 3u);
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
    EXPECT_EQ(loaded.file.header.title, "five");
  }
}

// A load that cannot read one copy fails with that copy's status rather than return the other,
// which may hold an older save: the next save, made from it, would outrank the newer one.
TEST_F(StoreTest, LoadRefusesWhenACopyCannotBeReadRatherThanReturnAnOlderSave) {
  MemoryBackend memory;
  ASSERT_NO_FATAL_FAILURE(SaveEach(memory, "s", {"one", "two"}));  // b newest
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  // The load reads copies a and b, one of them on another worker when one is free: either read
  // may come first, and a copy that cannot be read fails the load whichever it is.
  auto rule = backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kRead).Nth(2));
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kStorageFailed));
  backend.Remove(rule);
  rule = backend.Add(FaultRule::Fail(SignedOutError("user")).On(Op::kRead).Nth(1));
  EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kSignedOut));
  backend.Remove(rule);
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
  EXPECT_EQ(loaded.file.header.title, "two");
  EXPECT_FALSE(loaded.recovered);
  EXPECT_OK(Load(store, "s").status());
}

// A header read that cannot read one copy fails with that copy's status, as a load does, rather
// than give the other copy's header, which may be an older save's; a slot copy fails the same way
// and writes nothing. Regression: ReadNewestHeader gave the other copy's header (copy a's "one"
// when the newest copy, b, could not be read).
TEST_F(StoreTest, ReadNewestHeaderRefusesWhenACopyCannotBeReadAsLoadDoes) {
  MemoryBackend memory;
  ASSERT_NO_FATAL_FAILURE(SaveEach(memory, "s", {"one", "two"}));  // b newest
  // Runs `ask` on a store over a backend object of its own (so it knows nothing of the slot yet)
  // whose `nth` read fails with `status`. Each call reads copy a, then copy b.
  const auto failing_read = [&](std::uint64_t nth, const Status& status, auto ask) {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    const auto rule = backend.Add(FaultRule::Fail(status).On(Op::kRead).Nth(nth));
    const Status got = ask(store);
    EXPECT_EQ(backend.hits(rule), 1u);
    return got;
  };
  const struct {
    std::uint64_t nth;
    Status status;
  } cases[] = {{2, StorageFailedError("io")}, {1, SignedOutError("user")}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.status.ToString());
    EXPECT_THAT(
        failing_read(c.nth, c.status, [&](Store& s) { return NewestHeader(s, "s").status(); }),
        StatusIs(c.status.code()));
    EXPECT_THAT(failing_read(c.nth, c.status, [&](Store& s) { return Load(s, "s").status(); }),
                StatusIs(c.status.code()));
    EXPECT_THAT(
        failing_read(c.nth, c.status, [&](Store& s) { return CopySlot(s, "s", "t").status(); }),
        StatusIs(c.status.code()));
    EXPECT_FALSE(memory.Peek(SlotFile("t", Copy::kA)).has_value());
    EXPECT_FALSE(memory.Peek(SlotFile("t", Copy::kB)).has_value());
  }
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const format::Header h, NewestHeader(store, "s"));
  EXPECT_EQ(h.title, "two");
  EXPECT_EQ(h.sequence, 2u);
}

// A delete removes the copy without the newest save first, reading which one that is when no
// store knows yet, so a delete cut short leaves the newest save; one that cannot read a copy
// deletes nothing.
TEST_F(StoreTest, ADeleteCutShortLeavesTheNewestSaveNeverAnOlderOne) {
  MemoryBackend memory;
  ASSERT_NO_FATAL_FAILURE(SaveEach(memory, "s", {"one", "two", "three"}));  // a newest
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    const auto rule = backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kRead).Nth(2));
    EXPECT_THAT(Delete(store, "s"), StatusIs(StatusCode::kStorageFailed));
    backend.Remove(rule);
    EXPECT_TRUE(memory.Peek(SlotFile("s", Copy::kA)).has_value());
    EXPECT_TRUE(memory.Peek(SlotFile("s", Copy::kB)).has_value());
  }
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    const auto rule =
        backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kDelete).Nth(2));
    EXPECT_THAT(Delete(store, "s"), StatusIs(StatusCode::kStorageFailed));
    backend.Remove(rule);
  }
  EXPECT_TRUE(memory.Peek(SlotFile("s", Copy::kA)).has_value());
  EXPECT_FALSE(memory.Peek(SlotFile("s", Copy::kB)).has_value());
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
  EXPECT_EQ(loaded.file.header.title, "three");
}

// --- The slot index -------------------------------------------------------------------------------

TEST_F(StoreTest, ListSlotsListsEverySlotFromTheIndexWithoutReadingSaves) {
  MemoryBackend memory;
  CountingBackend backend(&memory);
  {
    Store store(backend, workers_, mailbox_);
    ASSERT_OK(Save(store, "beta", MakeFile("Beta's title", 400, 1)).status());
    ASSERT_OK(Save(store, "alpha", MakeFile("Alpha 1", 400, 2)).status());
    ASSERT_OK(Save(store, "alpha", MakeFile("Alpha 2", 400, 3)).status());
    ASSERT_OK(Save(store, "gamma", MakeFile("Gamma", 400, 4)).status());
  }
  ASSERT_TRUE(memory.Peek(IndexFile(Copy::kA)).has_value());
  const int slot_reads = backend.slot_reads();
  const int index_reads = backend.index_reads();
  Store store(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
  EXPECT_EQ(backend.slot_reads(), slot_reads);  // no save read
  EXPECT_GT(backend.index_reads(), index_reads);
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[0].slot, "alpha");
  EXPECT_EQ(slots[0].title, "Alpha 2");
  EXPECT_EQ(slots[0].save_time_us, 1700000000000000 + 3);
  EXPECT_EQ(slots[0].sequence, 2u);
  EXPECT_EQ(slots[0].copy, Copy::kB);
  EXPECT_EQ(slots[0].size, memory.Peek(SlotFile("alpha", Copy::kB))->size());
  EXPECT_EQ(slots[0].state_a, CopyState::kValid);
  EXPECT_EQ(slots[0].state_b, CopyState::kValid);
  EXPECT_FALSE(slots[0].recovered);
  EXPECT_EQ(slots[1].slot, "beta");
  EXPECT_EQ(slots[1].title, "Beta's title");
  EXPECT_EQ(slots[1].sequence, 1u);
  EXPECT_EQ(slots[1].copy, Copy::kA);
  EXPECT_EQ(slots[1].state_b, CopyState::kMissing);
  EXPECT_EQ(slots[2].slot, "gamma");

  // Listing again reads nothing at all.
  const int reads = backend.slot_reads() + backend.index_reads();
  ASSERT_OK(List(store).status());
  EXPECT_EQ(backend.slot_reads() + backend.index_reads(), reads);
}

// An index that another writer compressed (the store writes its own stored) may be small on disk
// and large decoded: a listing whose backend answers on a thread of its own decodes it on a
// worker, not on that thread, and lists the same.
TEST_F(StoreTest, AnIndexCompressedByAnotherWriterListsTheSame) {
  MemoryBackend memory;
  // 70 slots with a title and metadata at their bounds: about 8 KiB each, well past
  // kQuickIndexBytes decoded.
  constexpr int kSlots = 70;
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    for (int i = 0; i < kSlots; ++i) {
      format::File big = MakeFile(std::string(format::kMaxTitleSize, 'T'));
      big.header.metadata = Bytes(kMaxListedMetadataSize, static_cast<std::uint8_t>(i));
      ASSERT_OK(Save(store, "big " + std::to_string(100 + i), std::move(big)).status());
    }
  }
  for (const Copy copy : {Copy::kA, Copy::kB}) {
    const std::optional<Bytes> index = memory.Peek(IndexFile(copy));
    if (!index) continue;
    ASSERT_OK_AND_ASSIGN(const format::File file, format::Read(*index));
    ASSERT_GT(file.chunks.at(0).data().size(), Store::kQuickIndexBytes);
    format::File fresh;
    fresh.header = file.header;
    for (const format::Chunk& c : file.chunks) fresh.chunks.emplace_back(c.id(), c.key(), c.data());
    ASSERT_OK_AND_ASSIGN(const Bytes compressed, format::Write(fresh));
    ASSERT_LT(compressed.size(), Store::kQuickIndexBytes);
    memory.Poke(IndexFile(copy), compressed);
  }
  FaultBackend backend(&memory);
  backend.Add(FaultRule::AnswerElsewhere().FromThenOn());
  Store store(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
  ASSERT_EQ(slots.size(), static_cast<std::size_t>(kSlots));
  EXPECT_EQ(slots[kSlots - 1].slot, "big " + std::to_string(100 + kSlots - 1));
  EXPECT_EQ(slots[kSlots - 1].title, std::string(format::kMaxTitleSize, 'T'));
  EXPECT_EQ(slots[kSlots - 1].metadata.size(), kMaxListedMetadataSize);
  EXPECT_EQ(slots[kSlots - 1].metadata[0], kSlots - 1);
}

// A listing carries metadata up to kMaxListedMetadataSize bytes. Larger metadata (up to a
// header's 1 MiB) stays out of the index, so that even an index of 65,536 such slots is a file
// the store can write; ReadNewestHeader gives it. A rebuilt index leaves it out the same way.
TEST_F(StoreTest, MetadataPastTheListedBoundIsReadFromTheHeader) {
  MemoryBackend memory;
  {
    Store store(memory, workers_, mailbox_);
    format::File at_bound = MakeFile("at bound"), past = MakeFile("past"), most = MakeFile("most");
    at_bound.header.metadata = Bytes(kMaxListedMetadataSize, 'a');
    past.header.metadata = Bytes(kMaxListedMetadataSize + 1, 'p');
    most.header.metadata = Bytes(format::kMaxMetadataSize, 'm');
    ASSERT_OK(Save(store, "at bound", std::move(at_bound)).status());
    ASSERT_OK(Save(store, "most", std::move(most)).status());
    ASSERT_OK(Save(store, "past", std::move(past)).status());
  }
  // The index stays small: a few kilobytes, not the megabyte the metadata holds.
  std::size_t index_size = 0;
  for (const Copy copy : {Copy::kA, Copy::kB}) {
    if (const std::optional<Bytes> index = memory.Peek(IndexFile(copy))) {
      index_size = std::max(index_size, index->size());
    }
  }
  EXPECT_GT(index_size, 0u);
  EXPECT_LT(index_size, 3 * kMaxListedMetadataSize);
  for (const bool rebuilt : {false, true}) {
    SCOPED_TRACE(rebuilt ? "rebuilt from the saves" : "from the index");
    if (rebuilt) {
      memory.Poke(IndexFile(Copy::kA), Bytes{1, 2, 3});
      memory.Poke(IndexFile(Copy::kB), Bytes{1, 2, 3});
    }
    // A backend object of its own: a store knows nothing of the index yet, and reads it.
    CountingBackend counting(&memory);
    Store lister(counting, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList slots, List(lister));
    EXPECT_GT(counting.index_reads(), 0);
    EXPECT_EQ(counting.slot_reads() > 0, rebuilt);
    ASSERT_EQ(slots.size(), 3u);
    EXPECT_TRUE(slots[0].metadata_listed);
    EXPECT_EQ(slots[0].metadata.size(), kMaxListedMetadataSize);
    for (const SlotView* s : {&slots[1], &slots[2]}) {
      EXPECT_FALSE(s->metadata_listed) << s->slot;
      EXPECT_TRUE(s->metadata.empty()) << s->slot;
    }
    ASSERT_OK_AND_ASSIGN(const format::Header h, NewestHeader(lister, "past"));
    EXPECT_EQ(h.metadata, Bytes(kMaxListedMetadataSize + 1, 'p'));
  }
}

// An index written before listed metadata was bounded may hold more of it: its reader refuses
// it as damaged, and the listing is rebuilt from the saves. The same entry forged with metadata
// at the bound is listed from the index, so the refusal is for the metadata's size alone.
TEST_F(StoreTest, AnIndexHoldingMoreMetadataThanListedIsRebuilt) {
  MemoryBackend memory;
  {
    Store store(memory, workers_, mailbox_);
    format::File file = MakeFile("one");
    file.header.metadata = Bytes(kMaxListedMetadataSize + 1, 'x');
    ASSERT_OK(Save(store, "one", std::move(file)).status());
  }
  std::map<Copy, Bytes> written;
  for (const Copy copy : {Copy::kA, Copy::kB}) {
    if (std::optional<Bytes> index = memory.Peek(IndexFile(copy))) written[copy] = *index;
  }
  ASSERT_FALSE(written.empty());
  // Each index copy rewritten with its entry holding `metadata` bytes of metadata, as an older
  // writer laid it out (flag bit 1 clear).
  auto forge = [&](std::size_t metadata) {
    for (const auto& [copy, index] : written) {
      ASSERT_OK_AND_ASSIGN(format::File file, format::Read(index));
      ASSERT_EQ(file.chunks.size(), 1u);
      SlotInfo entry;
      {
        ASSERT_OK_AND_ASSIGN(const SlotList old,
                             store_internal::MakeSlotList(std::make_shared<const Bytes>(
                                 file.chunks[0].data().begin(), file.chunks[0].data().end())));
        ASSERT_EQ(old.size(), 1u);
        entry = SlotInfo(old[0]);
      }
      Bytes sidx;
      ByteWriter w(&sidx);
      w.Varint(1);
      w.LengthPrefixed(entry.slot);
      w.LengthPrefixed(entry.title);
      w.SignedVarint(entry.save_time_us);
      w.Varint(entry.sequence);
      w.Varint(entry.kind);
      w.Varint(entry.game_data_version);
      w.LengthPrefixed(ByteView(Bytes(metadata, 'x')));
      w.Varint(entry.size);
      for (const auto b : {static_cast<std::uint8_t>(entry.copy),
                           static_cast<std::uint8_t>(entry.state_a),
                           static_cast<std::uint8_t>(entry.state_b), std::uint8_t{0}}) {
        w.U8(b);
      }
      format::File forged;
      forged.header = file.header;
      forged.chunks.emplace_back(file.chunks[0].id(), file.chunks[0].key(), std::move(sidx));
      ASSERT_OK_AND_ASSIGN(Bytes bytes, format::Write(forged));
      memory.Poke(IndexFile(copy), std::move(bytes));
    }
  };
  for (const std::size_t metadata : {kMaxListedMetadataSize, kMaxListedMetadataSize + 1}) {
    SCOPED_TRACE(metadata);
    ASSERT_NO_FATAL_FAILURE(forge(metadata));
    const bool past = metadata > kMaxListedMetadataSize;
    CountingBackend counting(&memory);  // of its own: the store reads the index afresh
    Store store(counting, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
    EXPECT_EQ(counting.slot_reads() > 0, past) << "rebuilt from the save's header";
    ASSERT_EQ(slots.size(), 1u);
    EXPECT_EQ(slots[0].title, "one");
    EXPECT_EQ(slots[0].metadata_listed, !past);
    EXPECT_EQ(slots[0].metadata.size(), past ? 0 : kMaxListedMetadataSize);
  }
}

// A slot index lists at most kMaxIndexedSlots (65,536) slots. A save that would make it list one
// more is written and loads, but listing fails StorageFailed until a delete brings the count back
// under the bound; a rebuild from the saves that finds more fails the same way. (Before, the
// store made an index its own reader refused, and listing answered Damaged.)
TEST_F(StoreTest, AnIndexListsAtMostItsBoundOfSlots) {
  constexpr std::size_t kMax = store_internal::kMaxIndexedSlots;
  MemoryBackend memory;
  format::File small;
  small.header.sequence = 1;
  for (std::size_t i = 0; i < kMax; ++i) {
    small.header.slot_name = "s" + std::to_string(i);
    ASSERT_OK_AND_ASSIGN(Bytes bytes, format::Write(small));
    memory.Poke(SlotFile(small.header.slot_name, Copy::kA), std::move(bytes));
  }
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList all, List(store));  // rebuilt from the saves' headers
    EXPECT_EQ(all.size(), kMax);
    ASSERT_OK(Save(store, "t", MakeFile("one more")).status());
    EXPECT_THAT(List(store).status(),
                StatusIs(StatusCode::kStorageFailed, HasSubstr("65537 slots, more than the 65536")));
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "t"));
    EXPECT_EQ(loaded.file.header.title, "one more");
    ASSERT_OK(Delete(store, "s0"));
    ASSERT_OK_AND_ASSIGN(const SlotList again, List(store));
    EXPECT_EQ(again.size(), kMax);
    EXPECT_EQ(again.Find("s0"), nullptr);
    EXPECT_NE(again.Find("t"), nullptr);
  }
  // One more save file, put there by hand, and no index: the rebuild finds too many.
  small.header.slot_name = "u";
  ASSERT_OK_AND_ASSIGN(Bytes bytes, format::Write(small));
  memory.Poke(SlotFile("u", Copy::kA), std::move(bytes));
  ASSERT_OK(DeleteNow(memory, IndexFile(Copy::kA)));
  ASSERT_OK(DeleteNow(memory, IndexFile(Copy::kB)));
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  EXPECT_THAT(List(store).status(), StatusIs(StatusCode::kStorageFailed, HasSubstr("65537 slots")));
}

// A copy under an index's name that is not an index (another kind of save, no SIDX chunk or two,
// a SIDX chunk with a key) is damaged: the listing takes the other copy, never the slots it
// claims.
TEST_F(StoreTest, AnIndexCopyThatIsNotAnIndexIsDamaged) {
  MemoryBackend memory;
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    ASSERT_OK(Save(store, "real", MakeFile("Real")).status());
  }
  ASSERT_TRUE(memory.Peek(IndexFile(Copy::kA)).has_value());
  ASSERT_FALSE(memory.Peek(IndexFile(Copy::kB)).has_value());
  SlotInfo ghost;
  ghost.slot = "ghost";
  ghost.sequence = 1;
  ghost.state_a = CopyState::kValid;
  Bytes ghost_sidx;
  store_internal::EncodeSlotIndex({ghost}, &ghost_sidx);
  // A forged copy b, newer than copy a by its header, each time in another way.
  auto forged = [&](std::uint32_t kind, std::vector<std::string> keys) {
    format::File f;
    f.header.kind = kind;
    f.header.sequence = 100;
    for (const std::string& key : keys) {
      f.chunks.emplace_back(format::kSlotIndexChunk, key, ghost_sidx);
    }
    return *format::Write(f);
  };
  const auto index = static_cast<std::uint32_t>(format::SaveKind::kIndex);
  const auto manual = static_cast<std::uint32_t>(format::SaveKind::kManual);
  // The forgery done right first: the listing takes it (so the others are refused for their
  // flaw alone).
  memory.Poke(IndexFile(Copy::kB), forged(index, {""}));
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
    ASSERT_EQ(slots.size(), 1u);
    EXPECT_EQ(slots[0].slot, "ghost");
  }
  const struct {
    std::uint32_t kind;
    std::vector<std::string> keys;
  } flaws[] = {{manual, {""}}, {index, {}}, {index, {"", "k"}}, {index, {"k"}}};
  for (const auto& flaw : flaws) {
    memory.Poke(IndexFile(Copy::kB), forged(flaw.kind, flaw.keys));
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
    ASSERT_EQ(slots.size(), 1u) << flaw.kind << " " << flaw.keys.size();
    EXPECT_EQ(slots[0].slot, "real");
  }
}

TEST_F(StoreTest, SlotListOwnsItsBytesAndItsCopiesShareThem) {
  MemoryBackend backend;
  std::optional<SlotList> kept;
  {
    Store store(backend, workers_, mailbox_);
    format::File file = MakeFile("Chapter 2", 400, 7);
    file.header.metadata = Payload(96, 8);
    file.header.kind = static_cast<std::uint32_t>(format::SaveKind::kAutosave);
    file.header.game_data_version = 12;
    ASSERT_OK(Save(store, "b", std::move(file)).status());
    ASSERT_OK(Save(store, "a", MakeFile("Chapter 1")).status());
    ASSERT_OK(Save(store, "c", MakeFile("Chapter 3")).status());
    ASSERT_OK_AND_ASSIGN(SlotList listed, List(store));
    kept.emplace(std::move(listed));
  }
  // The store is gone: the list holds its own bytes.
  const SlotList& list = *kept;
  ASSERT_EQ(list.size(), 3u);
  EXPECT_FALSE(list.empty());
  const SlotView* b = list.Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, &list[1]);
  EXPECT_EQ(b->title, "Chapter 2");
  EXPECT_EQ(Bytes(b->metadata.begin(), b->metadata.end()), Payload(96, 8));
  EXPECT_EQ(b->kind, static_cast<std::uint32_t>(format::SaveKind::kAutosave));
  EXPECT_EQ(b->game_data_version, 12u);
  EXPECT_EQ(list.Find("absent"), nullptr);
  EXPECT_EQ(list.Find(""), nullptr);
  EXPECT_EQ(list.Find("bb"), nullptr);

  // A copy views the same bytes; the views stay valid once the original is gone.
  SlotList copy = list;
  EXPECT_EQ(copy[1].title.data(), list[1].title.data());
  kept.reset();
  std::vector<std::string> names;
  for (const SlotView& s : copy) names.emplace_back(s.slot);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(copy[1].title, "Chapter 2");

  // An owned copy of one entry.
  const SlotInfo info(copy[1]);
  EXPECT_EQ(info.slot, "b");
  EXPECT_EQ(info.title, "Chapter 2");
  EXPECT_EQ(info.metadata, Payload(96, 8));
  EXPECT_EQ(info.sequence, copy[1].sequence);
  EXPECT_EQ(info.size, copy[1].size);
  EXPECT_EQ(info.copy, copy[1].copy);

  // Moved from: empty.
  SlotList moved = std::move(copy);
  EXPECT_EQ(moved.size(), 3u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
  EXPECT_TRUE(SlotList().empty());
}

TEST_F(StoreTest, AListIsNotChangedByLaterSavesAndDeletes) {
  MemoryBackend backend;
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "a", MakeFile("A 1")).status());
  ASSERT_OK(Save(store, "b", MakeFile("B 1")).status());
  ASSERT_OK_AND_ASSIGN(const SlotList before, List(store));
  ASSERT_OK(Save(store, "a", MakeFile("A 2 with a longer title")).status());
  ASSERT_OK(Delete(store, "b"));
  ASSERT_OK(Save(store, "c", MakeFile("C 1")).status());
  ASSERT_OK_AND_ASSIGN(const SlotList after, List(store));
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].title, "A 1");
  EXPECT_EQ(before[0].sequence, 1u);
  EXPECT_EQ(before[1].slot, "b");
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].title, "A 2 with a longer title");
  EXPECT_EQ(after[0].sequence, 2u);
  EXPECT_EQ(after[1].slot, "c");
}

// The index as a fresh store lists it, and the slots as the saves say.
std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, Copy>> Summary(
    const SlotList& slots) {
  std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, Copy>> out;
  for (const SlotView& s : slots) out.emplace_back(s.slot, s.title, s.sequence, s.size, s.copy);
  return out;
}

TEST_F(StoreTest, MissingOrDamagedIndexIsRebuiltFromTheHeaders) {
  MemoryBackend backend;
  SlotList original;
  {
    Store store(backend, workers_, mailbox_);
    for (int i = 0; i < 5; ++i) {
      ASSERT_OK(Save(store, "slot " + std::to_string(i % 3), MakeFile("t" + std::to_string(i)))
                    .status());
    }
    ASSERT_OK_AND_ASSIGN(original, List(store));
    ASSERT_EQ(original.size(), 3u);
  }
  // Both index copies exist after several writes; damage the newest: the other one, a write
  // behind, or a rebuild must still list every slot as it is.
  ASSERT_TRUE(backend.Peek(IndexFile(Copy::kB)).has_value());
  {
    Store probe(backend, workers_, mailbox_);
    ASSERT_OK(Save(probe, "slot 0", MakeFile("t5")).status());  // both index copies current
    ASSERT_OK_AND_ASSIGN(original, List(probe));
  }
  for (Copy c : {Copy::kA, Copy::kB}) {
    const Bytes good = *backend.Peek(IndexFile(c));
    backend.Poke(IndexFile(c), Flipped(good, good.size() - 3));
    Store store(backend, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList listed, List(store));
    ASSERT_EQ(listed.size(), 3u);
    // The newest damaged copy may leave the other, one write behind: titles may lag, slots not.
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(listed[i].slot, original[i].slot);
    backend.Poke(IndexFile(c), good);
  }
  // Both gone, deleted behind the store: rebuilt exactly.
  ASSERT_OK(DeleteNow(backend, IndexFile(Copy::kA)));
  ASSERT_OK(DeleteNow(backend, IndexFile(Copy::kB)));
  {
    Store store(backend, workers_, mailbox_);
    ASSERT_OK_AND_ASSIGN(const SlotList rebuilt, List(store));
    EXPECT_EQ(Summary(rebuilt), Summary(original));
  }
  // Both damaged: rebuilt exactly too.
  {
    Store store(backend, workers_, mailbox_);
    ASSERT_OK(Save(store, "slot 1", MakeFile("t6")).status());
    ASSERT_OK(Save(store, "slot 2", MakeFile("t7")).status());
    ASSERT_OK_AND_ASSIGN(original, List(store));
  }
  for (Copy c : {Copy::kA, Copy::kB}) {
    backend.Poke(IndexFile(c), Flipped(*backend.Peek(IndexFile(c)), 70));
  }
  Store store(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList rebuilt, List(store));
  EXPECT_EQ(Summary(rebuilt), Summary(original));
}

// A rebuild that cannot read a save's copy fails and keeps nothing (a later listing or index
// write rebuilds it whole), and a copy whose header holds another slot is not listed as it.
TEST_F(StoreTest, AnIndexRebuildThatCannotReadACopyKeepsNothing) {
  MemoryBackend memory;
  ASSERT_NO_FATAL_FAILURE(SaveEach(memory, "x", {"x1"}));
  ASSERT_NO_FATAL_FAILURE(SaveEach(memory, "y", {"y1", "y2"}));  // b newest
  // Slot z's copy a holds y's older save, as a file copied by hand would.
  memory.Poke(SlotFile("z", Copy::kA), *memory.Peek(SlotFile("y", Copy::kA)));
  ASSERT_OK(DeleteNow(memory, IndexFile(Copy::kA)));
  ASSERT_OK(DeleteNow(memory, IndexFile(Copy::kB)));
  {
    FaultBackend backend(&memory);
    Store store(backend, workers_, mailbox_);
    // The two index copies' first bytes, then x's copy a.
    const auto rule = backend.Add(FaultRule::Fail(StorageFailedError("io")).On(Op::kRead).Nth(3));
    EXPECT_THAT(List(store), StatusIs(StatusCode::kStorageFailed));
    backend.Remove(rule);
    // The index written with this save is rebuilt whole first.
    ASSERT_OK(Save(store, "w", MakeFile("w1")).status());
  }
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList slots, List(store));
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[0].slot, "w");
  EXPECT_EQ(slots[1].slot, "x");
  EXPECT_EQ(slots[2].slot, "y");
  EXPECT_EQ(slots[2].title, "y2");
  EXPECT_EQ(slots[2].copy, Copy::kB);
}

TEST_F(StoreTest, StoreWithoutIndexWritesNothingAtAll) {
  MemoryBackend backend;
  StoreOptions options;
  options.keep_index = false;
  {
    Store store(backend, workers_, mailbox_, options);
    EXPECT_THAT(LoadCopy(store, "s", Copy::kA), StatusIs(StatusCode::kNotFound));
    EXPECT_THAT(Load(store, "s"), StatusIs(StatusCode::kNotFound));
    EXPECT_THAT(NewestHeader(store, "s"), StatusIs(StatusCode::kNotFound));
    ASSERT_OK_AND_ASSIGN(const SlotList none, List(store));
    EXPECT_TRUE(none.empty());
  }
  EXPECT_EQ(backend.used(), 0u);
  EXPECT_TRUE(Snapshot(backend).empty());

  // Over saves another store made, with its index gone: it lists from the headers and still
  // writes no index.
  {
    Store writer(backend, workers_, mailbox_);
    ASSERT_OK(Save(writer, "one", MakeFile("One")).status());
    ASSERT_OK(Save(writer, "two", MakeFile("Two")).status());
  }
  ASSERT_OK(DeleteNow(backend, IndexFile(Copy::kA)));
  ASSERT_OK(DeleteNow(backend, IndexFile(Copy::kB)));
  const auto before = Snapshot(backend);
  Store store(backend, workers_, mailbox_, options);
  ASSERT_OK_AND_ASSIGN(const SlotList listed, List(store));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].title, "One");
  EXPECT_EQ(listed[1].title, "Two");
  EXPECT_OK(LoadCopy(store, "one", Copy::kA).status());
  EXPECT_OK(Load(store, "two").status());
  ASSERT_OK(List(store).status());
  EXPECT_EQ(Snapshot(backend), before);
}

// --- A backend call that throws -----------------------------------------------------------------

// A save whose write call throws (std::bad_alloc from the backend, as from an allocation inside it
// or a game's backend that throws) fails as a failed write: StorageFailed naming it, the copy it
// was writing read again before the next save, the last good save intact, nothing left running.
// Regression: the exception left the worker's task and ended the process.
TEST_F(StoreTest, ASaveWhoseWriteThrowsFailsAsAFailedWrite) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  Store store(backend, workers_, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("first")).status());  // a, 1

  const auto rule = backend.Add(FaultRule::Throw().On(Op::kWrite));
  const Result<SaveInfo> failed = Save(store, "s", MakeFile("second"));
  EXPECT_THAT(failed, StatusIs(StatusCode::kStorageFailed));
  EXPECT_THAT(failed.status().message(), HasSubstr("threw"));
  EXPECT_EQ(backend.hits(rule), 1u);
  EXPECT_EQ(store.pending(), 0u);
  EXPECT_FALSE(memory.Peek(SlotFile("s", Copy::kB)).has_value());

  // The copy is unknown, as after any failed write: the next save reads both copies first.
  const std::uint64_t reads = backend.operations(Op::kRead);
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, Save(store, "s", MakeFile("third")));
  EXPECT_EQ(backend.operations(Op::kRead), reads + 2);
  EXPECT_EQ(info.copy, Copy::kB);
  EXPECT_EQ(info.sequence, 2u);
  ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
  EXPECT_EQ(loaded.file.header.title, "third");
  EXPECT_EQ(loaded.other_state, CopyState::kValid);
  ASSERT_OK_AND_ASSIGN(const LoadResult older, LoadCopy(store, "s", Copy::kA));
  EXPECT_EQ(older.file.header.title, "first");
}

// A FileMaker that throws (a game's exception, or std::bad_alloc in the game's code) fails its
// save with StorageFailed naming the exception: nothing is written, the slot's copies are as they
// were, nothing stays counted, and the slot's next requests run as asked. It throws once its
// save's turn has come (the slot idle: the maker's worker then starts the write), and before it
// (the turn then starts the write). Regression: the exception left the worker's task and ended
// the process.
TEST_F(StoreTest, AFileMakerThatThrowsFailsItsSaveAndWritesNothing) {
  {
    MemoryBackend memory;
    Store store(memory, workers_, mailbox_);
    ASSERT_OK(Save(store, "s", MakeFile("first")).status());  // a, 1
    const std::map<std::string, Bytes> before = Snapshot(memory);
    const struct {
      const char* name;
      Store::FileMaker make;
      const char* named;
    } makers[] = {
        {"runtime_error",
         []() -> Result<format::File> { throw std::runtime_error("the game's own bug"); },
         "the file maker threw: the game's own bug"},
        {"bad_alloc", []() -> Result<format::File> { throw std::bad_alloc(); },
         "the file maker threw: std::bad_alloc"},
        {"not an exception", []() -> Result<format::File> { throw 7; }, "the file maker threw"},
    };
    for (const auto& m : makers) {
      SCOPED_TRACE(m.name);
      const Result<SaveInfo> failed = Run<Result<SaveInfo>>(
          store, [&](Store::SaveCallback done) { store.Save("s", m.make, std::move(done)); });
      EXPECT_THAT(failed, StatusIs(StatusCode::kStorageFailed, HasSubstr(m.named)));
      EXPECT_EQ(store.pending(), 0u);
      EXPECT_EQ(Snapshot(memory), before);
    }
    ASSERT_OK_AND_ASSIGN(const SaveInfo next, Save(store, "s", MakeFile("second")));
    EXPECT_EQ(next.copy, Copy::kB);
    EXPECT_EQ(next.sequence, 2u);
    ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
    EXPECT_EQ(loaded.file.header.title, "second");
  }
  // Before its turn: the save asked before it holds the slot's queue with its write until the
  // throwing maker has run (one worker: once it is idle, the maker has run and its save is
  // waiting for its turn).
  WorkerPool worker(1);
  MemoryBackend memory;
  HeldSlotWrite backend(&memory);
  Store store(backend, worker, mailbox_);
  ASSERT_OK(Save(store, "s", MakeFile("first")).status());  // a, 1
  backend.HoldNext();
  std::optional<Result<SaveInfo>> held, thrown;
  store.Save("s", MakeFile("held"), [&](Result<SaveInfo> r) {
    OnGameThread();
    held.emplace(std::move(r));
  });
  store.Save(
      "s", []() -> Result<format::File> { throw std::runtime_error("late"); },
      [&](Result<SaveInfo> r) {
        OnGameThread();
        EXPECT_TRUE(held.has_value()) << "the later save was answered first";
        thrown.emplace(std::move(r));
      });
  worker.WaitUntilIdle();
  mailbox_.Drain();
  EXPECT_FALSE(held.has_value() || thrown.has_value());
  ASSERT_TRUE(backend.Release());
  EXPECT_OK(store.FlushFor(kPatience));
  ASSERT_TRUE(held.has_value() && thrown.has_value());
  ASSERT_OK_AND_ASSIGN(const SaveInfo info, *held);
  EXPECT_EQ(info.copy, Copy::kB);
  EXPECT_THAT(*thrown, StatusIs(StatusCode::kStorageFailed, HasSubstr("file maker threw: late")));
  EXPECT_EQ(store.pending(), 0u);
  ASSERT_OK_AND_ASSIGN(const LoadResult newest, Load(store, "s"));
  EXPECT_EQ(newest.file.header.title, "held");
  EXPECT_EQ(newest.other_state, CopyState::kValid);
  ASSERT_OK_AND_ASSIGN(const LoadResult older, LoadCopy(store, "s", Copy::kA));
  EXPECT_EQ(older.file.header.title, "first");
  ASSERT_OK_AND_ASSIGN(const SaveInfo next, Save(store, "s", MakeFile("third")));
  EXPECT_EQ(next.copy, Copy::kA);
  EXPECT_EQ(next.sequence, 3u);
}

// An index write whose call throws ends as a failed index write: the save it follows answers Ok,
// flushes end, the store's listing holds the change, and the next save writes the index. It
// throws on a worker first (nothing of the index known yet), then on the backend's own thread,
// right after the save's write answered there (the index known and small).
// Regression: the exception ended the process (or, on a backend that answers at once, left the
// index's queue and the store's closing waiting for ever).
TEST_F(StoreTest, AnIndexWriteThatThrowsEndsAndTheNextSaveWritesTheIndex) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  backend.Add(FaultRule::AnswerElsewhere().FromThenOn());
  Store store(backend, workers_, mailbox_);
  for (std::uint32_t round = 1; round <= 2; ++round) {
    SCOPED_TRACE(round);
    // The save's write goes through; its index write, the next write, throws.
    const auto rule = backend.Add(FaultRule::Throw().On(Op::kWrite).Nth(2));
    ASSERT_OK_AND_ASSIGN(const SaveInfo info,
                         Save(store, "s", MakeFile("round " + std::to_string(round))));
    EXPECT_EQ(info.sequence, round);
    EXPECT_EQ(backend.hits(rule), 1u);
    EXPECT_EQ(store.pending(), 0u);
    backend.Remove(rule);
  }
  EXPECT_FALSE(memory.Peek(IndexFile(Copy::kA)).has_value());
  EXPECT_FALSE(memory.Peek(IndexFile(Copy::kB)).has_value());
  ASSERT_OK_AND_ASSIGN(const SlotList listed, List(store));
  ASSERT_NE(listed.Find("s"), nullptr);
  EXPECT_EQ(listed.Find("s")->sequence, 2u);

  ASSERT_OK(Save(store, "s", MakeFile("three")).status());
  Store reader(memory, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList on_disk, List(reader));
  ASSERT_NE(on_disk.Find("s"), nullptr);
  EXPECT_EQ(on_disk.Find("s")->sequence, 3u);
  EXPECT_EQ(on_disk.Find("s")->title, "three");
}

// A read whose call throws fails as a read the backend answered StorageFailed, in every
// operation that reads, on whichever thread it reads: each calls back what it does then, and the
// store goes on. Regression: the exception left a worker's task and ended the process.
TEST_F(StoreTest, AReadWhoseCallThrowsFailsAsAFailedRead) {
  struct Case {
    const char* name;
    std::uint64_t nth;  // the read made to fail, counted from the request
    std::function<Status(Store&)> ask;
  };
  const Case cases[] = {
      {"a save reading the copies", 1,
       [this](Store& s) { return Save(s, "s", MakeFile("three")).status(); }},
      // A fresh store's first index write reads both index copies at once (then the index is
      // known): the first, then the second of those reads fails.
      {"an index write reading the index's copy a", 3,
       [this](Store& s) { return Save(s, "s", MakeFile("three")).status(); }},
      {"an index write reading the index's copy b", 4,
       [this](Store& s) { return Save(s, "s", MakeFile("three")).status(); }},
      {"a load", 2, [this](Store& s) { return Load(s, "s").status(); }},
      {"a load of one copy", 1, [this](Store& s) { return LoadCopy(s, "s", Copy::kB).status(); }},
      {"a header read", 1, [this](Store& s) { return NewestHeader(s, "s").status(); }},
      {"a delete", 1, [this](Store& s) { return Delete(s, "s"); }},
      {"a slot copy", 2, [this](Store& s) { return CopySlot(s, "s", "t").status(); }},
      {"a listing", 1, [this](Store& s) { return List(s).status(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<Status> as_failed;
    for (const FaultRule& fault : {FaultRule::Fail(StorageFailedError("io")), FaultRule::Throw()}) {
      MemoryBackend memory;
      ASSERT_NO_FATAL_FAILURE(SaveEach(memory, "s", {"one", "two"}));
      FaultBackend backend(&memory);
      Store store(backend, workers_, mailbox_);
      const auto rule = backend.Add(fault.On(Op::kRead).Nth(c.nth));
      const Status got = c.ask(store);
      EXPECT_EQ(backend.hits(rule), 1u);
      EXPECT_EQ(store.pending(), 0u);
      if (!as_failed) {
        as_failed = got;
      } else {
        EXPECT_EQ(got.code(), as_failed->code()) << got.ToString();
        if (!got.ok()) {
          EXPECT_THAT(got.message(), HasSubstr("threw"));
        }
      }
      backend.Clear();
      ASSERT_OK_AND_ASSIGN(const LoadResult loaded, Load(store, "s"));
      EXPECT_EQ(loaded.file.header.title, c.nth >= 3 ? "three" : "two");
    }
  }
}

// A listing reads the newest index copy whole from the backend's thread, once both copies'
// first bytes are in. When that read's call throws there, the listing goes on as after a failed
// read (here it rebuilds the index from the saves). Regression: the exception ended the process.
TEST_F(StoreTest, AListingWhoseReadThrowsOnTheBackendsThreadFailsAsAFailedRead) {
  MemoryBackend memory;
  {
    Store store(memory, workers_, mailbox_);
    format::File file = MakeFile("one");
    file.header.metadata = Bytes(kMaxListedMetadataSize, 7);  // an index past its first bytes
    ASSERT_OK(Save(store, "s", std::move(file)).status());
  }
  ASSERT_GT(memory.Peek(IndexFile(Copy::kA))->size(), 4096u);
  std::optional<Status> as_failed;
  for (const FaultRule& fault : {FaultRule::Fail(StorageFailedError("io")), FaultRule::Throw()}) {
    FaultBackend backend(&memory);
    backend.Add(FaultRule::AnswerElsewhere().FromThenOn());
    // Reads 1 and 2 are the copies' first bytes; read 3 the newest copy whole.
    const auto rule = backend.Add(fault.On(Op::kRead).Nth(3));
    Store store(backend, workers_, mailbox_);
    const Result<SlotList> listed = List(store);
    EXPECT_EQ(backend.hits(rule), 1u);
    EXPECT_EQ(store.pending(), 0u);
    if (!as_failed) {
      as_failed = listed.status();
    } else {
      EXPECT_EQ(listed.status().code(), as_failed->code()) << listed.status().ToString();
    }
    ASSERT_OK(listed.status());
    ASSERT_NE(listed->Find("s"), nullptr);
    EXPECT_EQ(listed->Find("s")->title, "one");
  }
}

// An index write on a fresh store reads both index copies at once (ReadBothNow), copy a then copy
// b, with callbacks that refer to the reader's frame. When the call for copy b throws while copy
// a's read is still out, copy b answers StorageFailed and the reader still waits for copy a, then
// the index is rebuilt from the saves and written. Here copy a answers late, from another thread,
// half a second after the throw (AReadWhoseCallThrowsFailsAsAFailedRead has it answered already):
// a reader that went on without it would let the index write end first, and copy a's answer would
// go into a frame that is gone (ASan: stack-use-after-return).
TEST_F(StoreTest, AnIndexReadWhoseCallThrowsStillWaitsForTheOtherCopysLateRead) {
  MemoryBackend memory;
  // Let go of, not destroyed, when its held read cannot be answered (its destructor would wait).
  auto backend = std::make_unique<HeldThenThrowingIndexReads>(&memory);
  std::atomic<bool> flushed{false};
  bool went_on = false;
  // Whether the store read no second index copy while the first was held, for 10 s: it then
  // waits for the held read, which is answered (and no read held after it) so that the test
  // ends instead of hanging until its timeout.
  bool gave_up = false;
  std::thread answerer([&] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!backend->threw() && !flushed.load() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!backend->threw()) {
      gave_up = !flushed.load();
      backend->AnswerHeld(/*pass_the_rest=*/true);
      return;
    }
    // Time for a store that does not wait to end the index write (then the flush returns).
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (!flushed.load() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    went_on = flushed.load();
    if (!went_on) backend->AnswerHeld();
  });
  Result<SaveInfo> saved = StorageFailedError("not saved");
  {
    Store store(*backend, workers_, mailbox_);
    saved = Save(store, "slot", MakeFile("one"));  // its flush waits for the index write too
    flushed.store(true);
    answerer.join();
  }
  ASSERT_FALSE(gave_up) << "the store read one index copy and waited for it: it did not read "
                           "both copies at once (the held read was answered after 10 s)";
  ASSERT_OK(saved.status());
  ASSERT_TRUE(backend->threw()) << "the index was not read as two reads at once";
  if (went_on) {
    static_cast<void>(backend.release());
    FAIL() << "the index write ended before copy a's read answered";
  }
  backend.reset();
  // Copy a missing and copy b unread: the index was rebuilt from the save, and written.
  EXPECT_TRUE(memory.Peek(IndexFile(Copy::kA)).has_value());
  Store reader(memory, workers_, mailbox_);
  ASSERT_OK_AND_ASSIGN(const SlotList slots, List(reader));
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].slot, "slot");
  EXPECT_EQ(slots[0].title, "one");
}

// --- Destruction ----------------------------------------------------------------------------------

TEST_F(StoreTest, DestroyingAStoreWaitsForItsOperationsAndRunsNoCallbackAfterwards) {
  MemoryBackend memory;
  FaultBackend backend(&memory);
  backend.Add(FaultRule::Delay(std::chrono::milliseconds(20)).FromThenOn());
  int called = 0;
  {
    Store store(backend, workers_, mailbox_);
    for (int i = 0; i < 3; ++i) {
      store.Save("s" + std::to_string(i), MakeFile("t"), [&](Result<SaveInfo>) { ++called; });
      store.Load("s0", [&](Result<LoadResult>) { ++called; });
    }
    store.Delete("s1", [&](Status) { ++called; });
    store.ListSlots([&](Result<SlotList>) { ++called; });
  }
  // Every operation finished its work before the destructor returned. (The backend counts an
  // operation until its callback returns, on the backend's own thread, which may be a moment after
  // the store has what it waited for: wait for that before reading the files behind it.)
  backend.WaitUntilIdle();
  EXPECT_TRUE(memory.Peek(SlotFile("s0", Copy::kA)).has_value());
  EXPECT_TRUE(memory.Peek(SlotFile("s2", Copy::kA)).has_value());
  EXPECT_FALSE(memory.Peek(SlotFile("s1", Copy::kA)).has_value());
  mailbox_.Drain();
  EXPECT_EQ(called, 0);
}

}  // namespace
}  // namespace rolly::store
