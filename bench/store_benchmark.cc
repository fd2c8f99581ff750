// store_benchmark: the store's durable save and its slot list, measured in the same run as the
// peers a game could write by hand on the same disk and the same bytes.
//
// Durable save. Store::Save then Store::Flush (every callback ran: the save's, and the index
// write's), through a FolderBackend in a fresh temporary folder, of a File with one chunk of
// 1 MiB or 16 MiB of seeded, barely compressible bytes. The target runs with compression off, so
// the store writes the same bytes as its peer: plain POSIX open(tmp, O_CREAT|O_TRUNC|O_WRONLY),
// write, fsync, close, rename over the target, open the folder, fsync it, close, alternating
// between two targets as the store alternates its two copies. Target: store <= 1.3x the peer.
// For information the same save at zstd level 3, and with the slot index off (what the index
// write adds), are measured too. Each store is warmed up with two saves before its timed loop, so
// the first save of a session (which reads and checks both copies) is never timed; copying the
// File handed to Save is not timed either (a game builds it anyway).
//
// Slot list. 1,000 slots (a title, ~100 bytes of metadata, a 4 KiB chunk each) are saved once
// through a store. Through the index: a new Store each iteration over the session's FolderBackend
// (nothing cached in memory), ListSlots, Flush; for information also with a new FolderBackend each
// iteration (its start-up scan of the folder included). The peer: list the folder, and for each
// slot file open it, read its 64-byte prelude (format::ReadPrelude), read the rest of its header
// (format::ReadHeader), close: the cheapest way to every slot's header without an index. Target:
// the peer >= 20x slower. Each runs warm (the same files read every iteration) and cold (every file
// of the folder dropped from the page cache first, as at a game's first slot screen).
//
// Defaults (--benchmark_repetitions=5, --benchmark_min_time=0.3,
// --benchmark_enable_random_interleaving=true; any standard flag on the command line overrides
// them) keep a run near a minute on a shared 2-core machine. Times are wall times (the work runs
// on worker and backend threads, and fsync sleeps); the summary takes the best repetition of each
// benchmark and shows the spread (worst/best). Temporary folders live under
// $TMPDIR/rolly-store-bench-<pid> and are removed at exit; fsync timings are the disk's there.
//
// Memory: main() fixes glibc's malloc thresholds as format_benchmark does, so 16 MiB buffers are
// not mapped and unmapped (page faults) in some iterations and not in others.
//
// Thread rules: the benchmark thread is the game thread (it asks, and drains the mailbox in
// Flush); the store's work runs on a pool of two workers and the backends' I/O threads.

#include <benchmark/benchmark.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.h"
#include "rolly/core/bytes.h"
#include "rolly/core/mailbox.h"
#include "rolly/core/status.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/store/file_name.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/store.h"

namespace {

using rolly::bench::CapturingReporter;
using rolly::bench::Rng;

using rolly::Bytes;
using rolly::format::File;
using rolly::store::FolderBackend;
using rolly::store::Store;
using rolly::store::StoreOptions;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::size_t kSlotCount = 1000;
constexpr std::size_t kSlotChunkSize = 4 * kKiB;
constexpr std::chrono::seconds kSetupFlush{120};

void RemoveRoot();

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "store_benchmark: %s\n", what.c_str());
  RemoveRoot();
  std::exit(1);
}


// Barely compressible bytes: random 8-byte words, one in four cut to its low byte (as small
// counters and flags sit among GUIDs and positions), so zstd saves a little.
Bytes SeededBytes(std::uint64_t seed, std::size_t size) {
  Rng rng(seed);
  Bytes out(size);
  for (std::size_t i = 0; i < size; i += 8) {
    std::uint64_t w = rng.Next();
    if ((w >> 62) == 0) w &= 0xFF;
    std::memcpy(out.data() + i, &w, std::min<std::size_t>(8, size - i));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shared state: the game thread's mailbox, the workers, the temporary root.

struct Env {
  std::filesystem::path root;
  std::unique_ptr<rolly::WorkerPool> workers;
  rolly::Mailbox mailbox;
};
Env* env = nullptr;

void RemoveRoot() {
  std::error_code ec;
  if (env != nullptr) std::filesystem::remove_all(env->root, ec);
}

std::string NewFolder(const std::string& name) {
  const std::filesystem::path p = env->root / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// ---------------------------------------------------------------------------------------------
// Durable save.

struct SaveSize {
  const char* name;
  std::size_t bytes;
};
constexpr SaveSize kSaveSizes[] = {{"1MiB", 1 * kMiB}, {"16MiB", 16 * kMiB}};

enum class Variant { kStored, kZstd3, kStoredNoIndex };
constexpr Variant kVariants[] = {Variant::kStored, Variant::kZstd3, Variant::kStoredNoIndex};
const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kStored: return "stored";
    case Variant::kZstd3: return "zstd3";
    case Variant::kStoredNoIndex: return "stored_no_index";
  }
  return "?";
}

File SaveFile(std::size_t size) {
  File f;
  f.header.title = "Chapter 3: The Long Road";
  f.header.game_build = "1.0.0-bench";
  f.header.save_time_us = 1'700'000'000'000'000;
  f.chunks.emplace_back(rolly::format::kWorldChunk, "/Game/Maps/Overworld", SeededBytes(7, size));
  return f;
}

// The save files, built once; and the bytes the store writes with compression off, for the peer.
struct SaveFixture {
  File file[std::size(kSaveSizes)];
  Bytes written[std::size(kSaveSizes)];
};
SaveFixture* save_fixture = nullptr;

void BuildSaveFixture() {
  save_fixture = new SaveFixture;
  for (std::size_t s = 0; s < std::size(kSaveSizes); ++s) {
    save_fixture->file[s] = SaveFile(kSaveSizes[s].bytes);
    File f = save_fixture->file[s];
    f.header.slot_name = "bench";  // as the store sets it
    f.header.sequence = 3;
    auto bytes = rolly::format::Write(f, rolly::format::WriteOptions{false, 0});
    if (!bytes.ok()) Die("format::Write failed: " + std::string(bytes.status().message()));
    save_fixture->written[s] = std::move(bytes).value();
  }
}

// One store per (size, variant) for the whole run, in its own folder: made and warmed up on first
// use, so repetitions and Google Benchmark's iteration probes never pay for it.
struct SaveStore {
  std::unique_ptr<FolderBackend> backend;
  std::unique_ptr<Store> store;
};
std::map<std::string, SaveStore>* save_stores = nullptr;

bool SaveOnce(Store& store, const File& source) {
  bool ok = false;
  store.Save("bench", File(source), [&ok](rolly::Result<rolly::store::SaveInfo> r) { ok = r.ok(); });
  return store.FlushFor(Store::kQuitFlush).ok() && ok;
}

Store& SaveStoreFor(std::size_t s, Variant v) {
  const std::string key = std::string("save-") + kSaveSizes[s].name + "-" + VariantName(v);
  auto it = save_stores->find(key);
  if (it != save_stores->end()) return *it->second.store;
  SaveStore& ss = (*save_stores)[key];
  ss.backend = std::make_unique<FolderBackend>(NewFolder(key));
  StoreOptions options;
  options.write.compress = v == Variant::kZstd3;
  options.write.zstd_level = 3;
  options.keep_index = v != Variant::kStoredNoIndex;
  ss.store = std::make_unique<Store>(*ss.backend, *env->workers, env->mailbox, options);
  // Both copies (and both index copies) exist and are known before anything is timed.
  for (int i = 0; i < 2; ++i) {
    if (!SaveOnce(*ss.store, save_fixture->file[s])) Die("warm-up save failed");
  }
  return *ss.store;
}

// `until_callback`: times the ask until the save's own callback (what a game waits for); the index
// write the save queued finishes in an untimed flush. Otherwise times Save + Flush, index included.
void BM_StoreSave(benchmark::State& state, std::size_t s, Variant v, bool until_callback) {
  Store& store = SaveStoreFor(s, v);
  const File& source = save_fixture->file[s];
  for (auto _ : state) {
    state.PauseTiming();
    File file = source;
    state.ResumeTiming();
    bool called = false, ok = false;
    store.Save("bench", std::move(file),
               [&called, &ok](rolly::Result<rolly::store::SaveInfo> r) {
                 called = true;
                 ok = r.ok();
               });
    if (until_callback) {
      env->mailbox.DrainUntil([&called] { return called; },
                              rolly::Mailbox::Clock::now() + Store::kQuitFlush);
      state.PauseTiming();
    }
    const bool flushed = store.FlushFor(Store::kQuitFlush).ok();
    if (until_callback) state.ResumeTiming();
    if (!flushed || !ok) {
      state.SkipWithError("save failed");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kSaveSizes[s].bytes));
}

bool WriteAll(int fd, const Bytes& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The peer: the same bytes, made durable by hand, alternating between two files.
void BM_PeerSave(benchmark::State& state, std::size_t s) {
  const std::string dir = NewFolder(std::string("peer-") + kSaveSizes[s].name);
  const std::string targets[2] = {dir + "/save.a", dir + "/save.b"};
  const Bytes& bytes = save_fixture->written[s];
  std::size_t turn = 0;
  for (auto _ : state) {
    const std::string& target = targets[turn++ & 1];
    const std::string temp = target + ".tmp";
    const int fd = ::open(temp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && WriteAll(fd, bytes) && ::fsync(fd) == 0;
    if (fd >= 0) ok = ::close(fd) == 0 && ok;
    ok = ok && ::rename(temp.c_str(), target.c_str()) == 0;
    const int dfd = ok ? ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    ok = ok && dfd >= 0 && ::fsync(dfd) == 0;
    if (dfd >= 0) ok = ::close(dfd) == 0 && ok;
    if (!ok) {
      state.SkipWithError("peer write failed");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kSaveSizes[s].bytes));
}

// ---------------------------------------------------------------------------------------------
// Slot list.

std::string* list_folder = nullptr;

std::string SlotName(std::size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "slot%04zu", i);
  return buf;
}

// Made on first use, so a filtered run that lists nothing does not pay for it.
void BuildListFixture() {
  if (list_folder != nullptr) return;
  list_folder = new std::string(NewFolder("list"));
  FolderBackend backend(*list_folder);
  Store store(backend, *env->workers, env->mailbox);
  std::size_t saved = 0;
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    File f;
    char title[96];
    std::snprintf(title, sizeof title, "Chapter %zu: The Long Road to Ashvale, day %zu", i % 12 + 1,
                  i * 7 % 365 + 1);
    f.header.title = title;
    f.header.game_build = "1.0.0-bench";
    f.header.save_time_us = 1'700'000'000'000'000 + static_cast<std::int64_t>(i) * 60'000'000;
    // Metadata as a game keeps it for its slot screen: play time, level, location, party.
    f.header.metadata = SeededBytes(1000 + i, 96);
    Bytes data = SeededBytes(5000 + i, kSlotChunkSize);
    std::fill(data.begin() + kSlotChunkSize / 2, data.end(), std::uint8_t{0x20});
    f.chunks.emplace_back(rolly::format::kWorldChunk, "", std::move(data));
    store.Save(SlotName(i), std::move(f),
               [&saved](rolly::Result<rolly::store::SaveInfo> r) { saved += r.ok() ? 1 : 0; });
  }
  if (!store.FlushFor(kSetupFlush).ok() || saved != kSlotCount) Die("making 1,000 slots failed");
}

// Drops every file of the listing folder from the OS page cache (POSIX_FADV_DONTNEED on clean
// pages), so the next listing reads from the disk as a game's first slot screen of a session does.
void EvictListFolder() {
  DIR* dir = ::opendir(list_folder->c_str());
  if (dir == nullptr) return;
  while (const dirent* e = ::readdir(dir)) {
    const int fd = ::openat(::dirfd(dir), e->d_name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  ::closedir(dir);
}

// Through the index. `new_backend`: a new FolderBackend each iteration too (its start-up scan of
// the folder for stale temporary files included), as at a game's start; otherwise the backend
// lives across iterations, as it does through a game session, and only the Store is new (so the
// index is read from the file, not from memory). `cold`: the page cache is dropped first.
void BM_ListThroughIndex(benchmark::State& state, bool new_backend, bool cold) {
  BuildListFixture();
  std::unique_ptr<FolderBackend> session;
  if (!new_backend) session = std::make_unique<FolderBackend>(*list_folder);
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      EvictListFolder();
      state.ResumeTiming();
    }
    std::unique_ptr<FolderBackend> fresh;
    if (new_backend) fresh = std::make_unique<FolderBackend>(*list_folder);
    Store store(new_backend ? *fresh : *session, *env->workers, env->mailbox);
    std::size_t listed = 0;
    store.ListSlots([&listed](rolly::Result<rolly::store::SlotList> r) {
      if (r.ok()) listed = r->size();
    });
    if (!store.FlushFor(Store::kQuitFlush).ok() || listed != kSlotCount) {
      state.SkipWithError("ListSlots failed");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kSlotCount));
}

// Reads up to `size` bytes at `offset`; false on an error or a short file.
bool ReadAt(int fd, std::uint8_t* out, std::size_t size, std::size_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The peer: every slot file's prelude and header, one open and two reads each.
void BM_ListByHeaders(benchmark::State& state, bool cold) {
  BuildListFixture();
  Bytes buffer;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      EvictListFolder();
      state.ResumeTiming();
    }
    DIR* dir = ::opendir(list_folder->c_str());
    if (dir == nullptr) {
      state.SkipWithError("opendir failed");
      break;
    }
    std::size_t listed = 0;
    bool ok = true;
    while (const dirent* e = ::readdir(dir)) {
      const auto name = rolly::store::FileName::Parse(e->d_name);
      if (!name || name->kind() != rolly::store::FileKind::kSlot) continue;
      const int fd = ::openat(::dirfd(dir), e->d_name, O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        ok = false;
        break;
      }
      buffer.resize(rolly::format::kPreludeSize);
      bool read = ReadAt(fd, buffer.data(), buffer.size(), 0);
      auto prelude = read ? rolly::format::ReadPrelude(buffer)
                          : rolly::Result<rolly::format::Prelude>(rolly::DamagedError("short"));
      if (prelude.ok()) {
        const std::size_t end = prelude->header_end();
        buffer.resize(end);
        read = ReadAt(fd, buffer.data() + rolly::format::kPreludeSize,
                      end - rolly::format::kPreludeSize, rolly::format::kPreludeSize);
      }
      ::close(fd);
      auto header = prelude.ok() && read
                        ? rolly::format::ReadHeader(buffer)
                        : rolly::Result<rolly::format::Header>(rolly::DamagedError("short"));
      if (!header.ok()) {
        ok = false;
        break;
      }
      benchmark::DoNotOptimize(header);
      ++listed;
    }
    ::closedir(dir);
    if (!ok || listed != kSlotCount) {
      state.SkipWithError("reading the headers failed");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kSlotCount));
}

// ---------------------------------------------------------------------------------------------
// Registration, capture and the summary.

std::string SaveName(std::string_view who, std::size_t s, std::string_view variant = {}) {
  std::string n = "Save/" + std::string(who) + "/" + kSaveSizes[s].name;
  if (!variant.empty()) n += "/" + std::string(variant);
  return n;
}

void RegisterAll() {
  auto reg = [](const std::string& name, auto fn) {
    return benchmark::RegisterBenchmark(name.c_str(), fn)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  for (std::size_t s = 0; s < std::size(kSaveSizes); ++s) {
    for (Variant v : kVariants) {
      reg(SaveName("Store", s, VariantName(v)),
          [s, v](benchmark::State& st) { BM_StoreSave(st, s, v, false); });
    }
    reg(SaveName("Store", s, "stored_until_callback"),
        [s](benchmark::State& st) { BM_StoreSave(st, s, Variant::kStored, true); });
    reg(SaveName("Peer", s), [s](benchmark::State& st) { BM_PeerSave(st, s); });
  }
  for (const bool cold : {false, true}) {
    const std::string cache = cold ? "/cold" : "/warm";
    reg("List/Index" + cache, [cold](benchmark::State& st) { BM_ListThroughIndex(st, false, cold); });
    reg("List/IndexNewBackend" + cache,
        [cold](benchmark::State& st) { BM_ListThroughIndex(st, true, cold); });
    reg("List/PeerHeaders" + cache, [cold](benchmark::State& st) { BM_ListByHeaders(st, cold); });
  }
}


// Cells print with %.2f unless a call says otherwise.
std::string Cell(double v, const char* fmt = "%.2f") { return rolly::bench::Cell(v, fmt); }
using rolly::bench::Mark;

// "best ms (spread)"
std::string Timing(const CapturingReporter& rep, const std::string& name) {
  const double s = rep.Seconds(name);
  if (s <= 0) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f ms (%.2f)", s * 1e3, rep.Spread(name));
  return buf;
}

void PrintSummary(const CapturingReporter& rep) {
  std::printf(
      "\nSummary (wall time per operation, best repetition; (x.xx) = spread, worst/best "
      "repetition;\n[lo-hi] = a ratio's range across repetitions)\n\nDurable save through the "
      "folder backend vs write + fsync + rename + folder fsync by hand, same bytes\n");
  std::printf("  %-6s %-19s %-19s %-24s | %-19s %-6s | %-19s %-19s\n", "size",
              "store: Save+Flush", "peer", "ratio (<=1.3)", "store: ask->callback", "ratio",
              "store, zstd 3", "store, no index");
  for (std::size_t s = 0; s < std::size(kSaveSizes); ++s) {
    const std::string store = SaveName("Store", s, VariantName(Variant::kStored));
    const std::string callback = SaveName("Store", s, "stored_until_callback");
    const std::string peer = SaveName("Peer", s);
    const double st = rep.Seconds(store), pe = rep.Seconds(peer), cb = rep.Seconds(callback);
    const double ratio = st > 0 && pe > 0 ? st / pe : 0;
    // Best store over worst peer, to worst store over best peer.
    const double lo = pe > 0 ? st / rep.Worst(peer) : 0;
    const double hi = pe > 0 ? rep.Worst(store) / pe : 0;
    std::printf("  %-6s %-19s %-19s %5s %-4s [%s-%s] | %-19s %6s | %-19s %-19s\n",
                kSaveSizes[s].name, Timing(rep, store).c_str(), Timing(rep, peer).c_str(),
                Cell(ratio).c_str(), Mark(ratio, 1.3, false), Cell(lo).c_str(), Cell(hi).c_str(),
                Timing(rep, callback).c_str(), Cell(cb > 0 && pe > 0 ? cb / pe : 0).c_str(),
                Timing(rep, SaveName("Store", s, VariantName(Variant::kZstd3))).c_str(),
                Timing(rep, SaveName("Store", s, VariantName(Variant::kStoredNoIndex))).c_str());
  }
  std::printf(
      "  (store and peer write the same %zu / %zu bytes; the store also builds them from the\n"
      "   File (checksums, layout) on every save, the peer writes bytes made once. Save+Flush, the\n"
      "   target, includes the slot index write each save queues (overwritten in place, without\n"
      "   fsync: the index is a checked cache). ask->callback stops at the save's own callback;\n"
      "   zstd 3 and no index are Save+Flush, for information)\n",
      save_fixture->written[0].size(), save_fixture->written[1].size());

  std::printf("\nListing %zu slots: through the index against reading each slot's header\n",
              kSlotCount);
  std::printf("  %-6s %-22s %-22s %-26s %-16s %s\n", "cache", "index (session backend)",
              "index (new backend)", "peer: each slot's header", "ratio (>=20)", "new backend");
  for (const char* cache : {"warm", "cold"}) {
    const std::string index_name = std::string("List/Index/") + cache;
    const std::string fresh_name = std::string("List/IndexNewBackend/") + cache;
    const std::string peer_name = std::string("List/PeerHeaders/") + cache;
    const double index = rep.Seconds(index_name);
    const double fresh = rep.Seconds(fresh_name);
    const double peer = rep.Seconds(peer_name);
    const double ratio = index > 0 && peer > 0 ? peer / index : 0;
    const double fresh_ratio = fresh > 0 && peer > 0 ? peer / fresh : 0;
    std::printf("  %-6s %-22s %-22s %-26s %5s %-4s    %5s\n", cache,
                Timing(rep, index_name).c_str(), Timing(rep, fresh_name).c_str(),
                Timing(rep, peer_name).c_str(), Cell(ratio, "%.1f").c_str(),
                Mark(ratio, 20, true), Cell(fresh_ratio, "%.1f").c_str());
  }
  std::printf(
      "  (index: a new Store over the session's FolderBackend reads both index copies' headers,\n"
      "   then the newest whole, checks it and lists it (ListSlots + Flush); new backend adds the\n"
      "   backend's start-up scan of the folder; peer: readdir, then open + 2 preads + close per\n"
      "   slot. cold: every file of the folder dropped from the page cache with\n"
      "   POSIX_FADV_DONTNEED before each iteration)\n");
}

}  // namespace

int main(int argc, char** argv) {
  rolly::bench::TuneAllocator();
  // Short defaults; flags given on the command line win.
  if (!rolly::bench::InitializeWithDefaults(argc, argv,
                                            {"--benchmark_min_time=0.3", "--benchmark_repetitions=5",
                                             "--benchmark_enable_random_interleaving=true"})) {
    return 1;
  }

  env = new Env;
  env->root = std::filesystem::temp_directory_path() /
              ("rolly-store-bench-" + std::to_string(::getpid()));
  env->workers = std::make_unique<rolly::WorkerPool>(2);
  save_stores = new std::map<std::string, SaveStore>;
  BuildSaveFixture();
  RegisterAll();
  CapturingReporter reporter(CapturingReporter::Time::kReal);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  benchmark::Shutdown();

  // Stores before their backends, both before the workers; then the folders.
  for (auto& [key, ss] : *save_stores) {
    ss.store.reset();
    ss.backend.reset();
  }
  delete save_stores;
  env->workers.reset();
  RemoveRoot();
  delete env;
  delete save_fixture;
  delete list_folder;
  return reporter.errors() ? 1 : 0;
}
