// Crash tests of Store over FolderBackend over SimulatedFileSystem: a save is stopped at every
// step of its write path (each file creation, append, fsync, close, rename, folder fsync, and the
// index write after it), the machine "loses power" under each damage model, and a new backend and
// store on what is left must load the last save that reported success, or a newer one, and
// nothing else. Then the next save, made on the crashed file system, is crashed at every step
// again, with the same guarantee.
//
// The grid: two starting states (one copy or both holding saves), three file sizes of
// incompressible data, six damage models, every step. The second crash runs from each distinct
// state the first left behind.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/checksum.h"
#include "rolly/core/mailbox.h"
#include "rolly/core/status_matchers.h"
#include "rolly/core/worker_pool.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/simulated_file_system.h"
#include "rolly/store/store.h"

namespace rolly::store {
namespace {

constexpr char kFolder[] = "/saves";
constexpr char kSlot[] = "Crash Slot";
constexpr std::chrono::seconds kPatience{60};

using Files = std::map<std::string, Bytes>;

// One save asked in a scenario: its title names it, its payload follows from the title.
struct Version {
  std::string title;
  Bytes payload;
};

Bytes Incompressible(std::size_t size, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(size);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

Version MakeVersion(int n, std::size_t size) {
  return Version{"version " + std::to_string(n), Incompressible(size, 7000 + n)};
}

format::File FileOf(const Version& v) {
  format::File file;
  file.header.title = v.title;
  file.chunks.emplace_back(format::kTestChunk, "payload", v.payload);
  return file;
}

struct NamedModel {
  std::string name;
  DamageModel model;
};

std::vector<NamedModel> Models() {
  using Fill = DamageModel::Fill;
  return {
      {"drop unsynced data", DamageModel::DropUnsyncedData()},
      {"drop unsynced names", DamageModel::DropUnsyncedNames()},
      {"tear 512 zeros", DamageModel::TearUnsyncedWrites(512, Fill::kZeros)},
      {"tear 512 garbage", DamageModel::TearUnsyncedWrites(512, Fill::kGarbage, 11)},
      {"tear 4096 zeros", DamageModel::TearUnsyncedWrites(4096, Fill::kZeros)},
      {"tear 4096 garbage", DamageModel::TearUnsyncedWrites(4096, Fill::kGarbage, 13)},
  };
}

class StoreCrashTest : public ::testing::Test {
 protected:
  // A file system holding `files` in the folder, all durable.
  static std::shared_ptr<SimulatedFileSystem> FileSystemWith(const Files& files) {
    auto fs = std::make_shared<SimulatedFileSystem>();
    EXPECT_OK(fs->CreateDir(kFolder));
    for (const auto& [name, bytes] : files) fs->Put(std::string(kFolder) + "/" + name, bytes);
    return fs;
  }

  static Files FilesOf(SimulatedFileSystem& fs) {
    Files out;
    Result<std::vector<std::string>> names = fs.ListDir(kFolder);
    if (!names.ok()) return out;
    for (const std::string& name : *names) {
      if (auto bytes = fs.Peek(std::string(kFolder) + "/" + name)) out[name] = *std::move(bytes);
    }
    return out;
  }

  // Saves `v` through a new backend and store on `fs`; whether the save reported success.
  bool SaveOn(const std::shared_ptr<SimulatedFileSystem>& fs, const Version& v) {
    FolderBackendOptions options;
    options.file_system = fs;
    options.free_space_margin = 0;
    FolderBackend backend(kFolder, options);
    Store store(backend, workers_, mailbox_);
    std::optional<Result<SaveInfo>> result;
    store.Save(kSlot, FileOf(v), [&result](Result<SaveInfo> r) { result.emplace(std::move(r)); });
    EXPECT_OK(store.FlushFor(kPatience));
    EXPECT_TRUE(result.has_value());
    return result.has_value() && result->ok();
  }

  // The title of what a new backend and store load from `fs`, after checking the payload is
  // whole; nullopt (and a failure) when nothing loads.
  std::optional<std::string> LoadFrom(const std::shared_ptr<SimulatedFileSystem>& fs,
                                      const std::vector<Version>& versions) {
    FolderBackendOptions options;
    options.file_system = fs;
    FolderBackend backend(kFolder, options);
    Store store(backend, workers_, mailbox_);
    std::optional<Result<LoadResult>> loaded;
    std::optional<Result<SlotList>> listed;
    store.Load(kSlot, [&loaded](Result<LoadResult> r) { loaded.emplace(std::move(r)); });
    store.ListSlots([&listed](Result<SlotList> r) { listed.emplace(std::move(r)); });
    EXPECT_OK(store.FlushFor(kPatience));
    if (!loaded || !loaded->ok()) {
      ADD_FAILURE() << "nothing loads: "
                    << (loaded ? loaded->status().ToString() : std::string("no callback"));
      return std::nullopt;
    }
    // The index, read or rebuilt, lists the slot.
    EXPECT_TRUE(listed && listed->ok() && listed->value().size() == 1 &&
                listed->value()[0].slot == kSlot);
    const format::File& file = (*loaded)->file;
    const format::Chunk* payload = file.Find(format::kTestChunk, "payload");
    for (const Version& v : versions) {
      if (v.title != file.header.title) continue;
      EXPECT_TRUE(payload != nullptr && payload->data() == v.payload) << v.title << " not whole";
      return file.header.title;
    }
    ADD_FAILURE() << "loaded an unknown save: " << file.header.title;
    return std::nullopt;
  }

  // Steps a save of `v` takes on a file system holding `files`, from the backend's start until
  // its index write ended.
  std::uint64_t StepsOfASave(const Files& files, const Version& v) {
    auto fs = FileSystemWith(files);
    const std::uint64_t start = fs->steps();
    EXPECT_TRUE(SaveOn(fs, v));
    return fs->steps() - start;
  }

  // Saves `v` on a copy of `files`, failing every step after `n`, then crashes under `model`.
  // Returns whether the save reported success, and the files left.
  std::pair<bool, Files> CrashAt(const Files& files, const Version& v, std::uint64_t n,
                                 const DamageModel& model) {
    auto fs = FileSystemWith(files);
    fs->FailAfterStep(fs->steps() + n);
    const bool ok = SaveOn(fs, v);
    fs->Crash(model);
    return {ok, FilesOf(*fs)};
  }

  WorkerPool workers_{2};
  Mailbox mailbox_;
};

// Checks one crash: `files_after` must load `last_ok` or one of `newer`.
void ExpectLoads(const std::optional<std::string>& got, const std::string& last_ok,
                 const std::vector<std::string>& newer, const std::string& where) {
  ASSERT_TRUE(got.has_value()) << where;
  if (*got == last_ok) return;
  for (const std::string& n : newer) {
    if (*got == n) return;
  }
  ADD_FAILURE() << where << ": loaded " << *got << ", but the last save that reported success is "
                << last_ok;
}

TEST_F(StoreCrashTest, LastSuccessfulSaveSurvivesACrashAtEveryStepAndDuringRecovery) {
  const std::size_t kSizes[] = {100, 5 * 1024, 300 * 1024};
  int first_crashes = 0, second_crashes = 0;
  for (int prior = 1; prior <= 2; ++prior) {
    for (const std::size_t size : kSizes) {
      // The starting state: `prior` saves, all reported written.
      std::vector<Version> versions;
      Files start;
      {
        auto fs = FileSystemWith({});
        for (int i = 0; i < prior; ++i) {
          versions.push_back(MakeVersion(i, size));
          ASSERT_TRUE(SaveOn(fs, versions.back()));
        }
        start = FilesOf(*fs);
      }
      const std::string prior_ok = versions.back().title;
      const Version x = MakeVersion(10, size);
      const Version y = MakeVersion(11, size);
      versions.push_back(x);
      versions.push_back(y);
      const std::uint64_t steps = StepsOfASave(start, x);
      ASSERT_GE(steps, 10u) << "a save must take several steps";

      for (const NamedModel& m : Models()) {
        std::set<Files> seen;  // distinct states the first crash left, each recovered from once
        for (std::uint64_t n = 0; n <= steps; ++n) {
          const std::string where = "prior " + std::to_string(prior) + ", size " +
                                    std::to_string(size) + ", " + m.name + ", step " +
                                    std::to_string(n);
          auto [x_ok, after] = CrashAt(start, x, n, m.model);
          ++first_crashes;
          if (n == steps) {
            EXPECT_TRUE(x_ok) << where << ": the save never failed";
          }
          const std::string last_ok = x_ok ? x.title : prior_ok;
          const std::vector<std::string> newer =
              x_ok ? std::vector<std::string>{} : std::vector<std::string>{x.title};
          ExpectLoads(LoadFrom(FileSystemWith(after), versions), last_ok, newer, where);
          if (HasFailure()) return;
          if (!seen.insert(after).second) continue;

          // Recovery: the next save, on what the crash left, crashed at every step.
          const std::uint64_t steps2 = StepsOfASave(after, y);
          for (std::uint64_t k = 0; k <= steps2; ++k) {
            auto [y_ok, after2] = CrashAt(after, y, k, m.model);
            ++second_crashes;
            const std::string where2 = where + ", then step " + std::to_string(k);
            std::vector<std::string> newer2 = newer;
            newer2.push_back(y.title);
            ExpectLoads(LoadFrom(FileSystemWith(after2), versions), y_ok ? y.title : last_ok,
                        y_ok ? std::vector<std::string>{} : newer2, where2);
            if (HasFailure()) return;
          }
        }
      }
    }
  }
  RecordProperty("first_crashes", first_crashes);
  RecordProperty("second_crashes", second_crashes);
  std::printf("%d first crashes, %d crashes during recovery\n", first_crashes, second_crashes);
}

// The slot index is overwritten in place, without fsync, so a crash can leave either index copy
// as it was, or torn. Three slots are saved, their index in both copies; then one slot is saved
// again, crashed at every step (its index write included) under every model. A new store must
// list all three slots, the ones not saved again exactly as they were, and the one saved again
// with its old save or its new one (the index may lag the last save, never invent one): a torn
// index copy is never taken for a good one.
TEST_F(StoreCrashTest, IndexOverwriteCrashedAtEveryStepListsEverySlotAsSaved) {
  const std::vector<std::string> slots = {"alpha", "beta", "gamma"};
  Files start;
  {
    auto fs = FileSystemWith({});
    FolderBackendOptions options;
    options.file_system = fs;
    options.free_space_margin = 0;
    FolderBackend backend(kFolder, options);
    Store store(backend, workers_, mailbox_);
    // Two rounds, so both index copies hold an index.
    for (int round = 0; round < 2; ++round) {
      for (const std::string& slot : slots) {
        format::File file;
        file.header.title = slot + " " + std::to_string(round);
        file.chunks.emplace_back(format::kTestChunk, "payload", Incompressible(2000, round));
        store.Save(slot, std::move(file), [](Result<SaveInfo> r) { EXPECT_OK(r.status()); });
        ASSERT_OK(store.FlushFor(kPatience));
      }
    }
    start = FilesOf(*fs);
  }
  ASSERT_EQ(start.count("rolly.index.a.rsav"), 1u);
  ASSERT_EQ(start.count("rolly.index.b.rsav"), 1u);

  // The save of "beta" again, on a new backend and store, failing every step after `n`.
  auto save_beta = [&](const std::shared_ptr<SimulatedFileSystem>& fs) {
    FolderBackendOptions options;
    options.file_system = fs;
    options.free_space_margin = 0;
    FolderBackend backend(kFolder, options);
    Store store(backend, workers_, mailbox_);
    format::File file;
    file.header.title = "beta 2";
    file.chunks.emplace_back(format::kTestChunk, "payload", Incompressible(2000, 2));
    std::optional<Result<SaveInfo>> saved;
    store.Save("beta", std::move(file), [&saved](Result<SaveInfo> r) { saved.emplace(r); });
    EXPECT_OK(store.FlushFor(kPatience));
    return saved && saved->ok();
  };
  std::uint64_t steps = 0;
  {
    auto fs = FileSystemWith(start);
    const std::uint64_t before = fs->steps();
    ASSERT_TRUE(save_beta(fs));
    steps = fs->steps() - before;
  }
  int torn = 0;     // an index copy left torn: a mix its checksums refuse
  int written = 0;  // an index copy left holding the new index whole
  // Every power cut model, and the process dying with the machine up (nullopt: what it wrote
  // stays, as the system writes it out).
  std::vector<std::pair<std::string, std::optional<DamageModel>>> crashes = {
      {"process killed", std::nullopt}};
  for (const NamedModel& m : Models()) crashes.emplace_back(m.name, m.model);
  for (const auto& [name, model] : crashes) {
    for (std::uint64_t n = 0; n <= steps; ++n) {
      const std::string where = name + ", step " + std::to_string(n);
      auto fs = FileSystemWith(start);
      fs->FailAfterStep(fs->steps() + n);
      const bool ok = save_beta(fs);
      if (model) {
        fs->Crash(*model);
      } else {
        fs->ClearFailure();
      }
      const Files after = FilesOf(*fs);
      for (const char* index : {"rolly.index.a.rsav", "rolly.index.b.rsav"}) {
        if (after.at(index) == start.at(index)) continue;
        ++(format::Verify(after.at(index)).ok() ? written : torn);
      }

      FolderBackendOptions options;
      options.file_system = FileSystemWith(after);
      FolderBackend backend(kFolder, options);
      Store store(backend, workers_, mailbox_);
      std::optional<Result<SlotList>> listed;
      std::optional<Result<LoadResult>> loaded;
      store.ListSlots([&listed](Result<SlotList> r) { listed.emplace(std::move(r)); });
      store.Load("beta", [&loaded](Result<LoadResult> r) { loaded.emplace(std::move(r)); });
      ASSERT_OK(store.FlushFor(kPatience));
      ASSERT_TRUE(listed && listed->ok()) << where;
      ASSERT_TRUE(loaded && loaded->ok()) << where;
      const SlotList& list = listed->value();
      ASSERT_EQ(list.size(), 3u) << where;
      EXPECT_EQ(list[0].slot, "alpha") << where;
      EXPECT_EQ(list[0].title, "alpha 1") << where;
      EXPECT_EQ(list[2].slot, "gamma") << where;
      EXPECT_EQ(list[2].title, "gamma 1") << where;
      EXPECT_EQ(list[1].slot, "beta") << where;
      const std::string loads = (*loaded)->file.header.title;
      if (ok) {
        EXPECT_EQ(loads, "beta 2") << where;
      }
      EXPECT_TRUE(list[1].title == "beta 1" || list[1].title == "beta 2") << where;
      // With the machine up and every step done, the index lists the new save.
      if (!model && n == steps) {
        EXPECT_EQ(list[1].title, "beta 2") << where;
      }
      // A listing that shows the new save names the copy it is in.
      if (list[1].title == "beta 2") {
        EXPECT_EQ(loads, "beta 2") << where;
        EXPECT_EQ(list[1].sequence, 3u) << where;
      }
      if (HasFailure()) return;
    }
  }
  // The grid reached the index write: crashes left index copies torn, and written whole.
  std::printf("index copies: %d torn, %d written whole\n", torn, written);
  EXPECT_GT(torn, 0);
  EXPECT_GT(written, 0);
}

// A crash that leaves the folder's only copy of a first save torn, with no older save: a load
// finds nothing or that save, never a broken one.
TEST_F(StoreCrashTest, FirstSaveEverCrashedLoadsNothingOrThatSave) {
  const Version v = MakeVersion(1, 5000);
  const std::uint64_t steps = StepsOfASave({}, v);
  for (const NamedModel& m : Models()) {
    for (std::uint64_t n = 0; n <= steps; ++n) {
      auto [ok, after] = CrashAt({}, v, n, m.model);
      FolderBackendOptions options;
      options.file_system = FileSystemWith(after);
      FolderBackend backend(kFolder, options);
      Store store(backend, workers_, mailbox_);
      std::optional<Result<LoadResult>> loaded;
      store.Load(kSlot, [&loaded](Result<LoadResult> r) { loaded.emplace(std::move(r)); });
      ASSERT_OK(store.FlushFor(kPatience));
      ASSERT_TRUE(loaded.has_value());
      if (ok) {
        ASSERT_OK(loaded->status()) << m.name << " step " << n;
      }
      if (loaded->ok()) {
        EXPECT_EQ((*loaded)->file.header.title, v.title) << m.name << " step " << n;
        EXPECT_EQ((*loaded)->file.Find(format::kTestChunk, "payload")->data(), v.payload);
      } else {
        // A torn copy is Damaged; no copy at all is NotFound.
        EXPECT_TRUE(loaded->status().code() == StatusCode::kNotFound ||
                    loaded->status().code() == StatusCode::kDamaged)
            << m.name << " step " << n << ": " << loaded->status().ToString();
      }
    }
  }
}

}  // namespace
}  // namespace rolly::store
