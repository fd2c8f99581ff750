// format_benchmark: the file container's write and read throughput on a 16 MiB save of
// record-like chunks, at zstd levels 1 and 3 and stored, measured in the same run as its peers
// and limits on the same bytes: raw zstd compression and decompression at the same level (reused
// contexts, no container), memcpy of 16 MiB into a fresh buffer, and XXH3 over the file's bytes.
// After Google Benchmark's own table it prints a summary of ratios against those peers and marks
// the targets of the issue (write >= 0.9x raw zstd, read >= 0.9x raw decompression, checksums
// <= 3% of either) PASS or MISS.
//
// Defaults keep a run short and fair on a shared machine (--benchmark_min_time=0.1,
// --benchmark_repetitions=5, --benchmark_enable_random_interleaving=true, so a burst of load hits
// one repetition of several benchmarks rather than every repetition of one); any standard flag
// given on the command line overrides them. Times are CPU times (the process's, so page faults
// count), which other jobs disturb less than wall time; the summary takes the best repetition of
// each benchmark, the console shows the median. For machine-readable results use
// --benchmark_out=FILE --benchmark_out_format=json (the console format is fixed).
//
// Memory: glibc's malloc by default gives big blocks back to the system on free and maps them
// again, so whether an iteration pays ~4000 page faults per 16 MiB depends on what happens to sit
// at the top of the heap, not on the code measured. main() fixes the thresholds so every
// benchmark, library and peers alike, runs against a warm allocator: a "fresh" buffer is newly
// allocated and not written by the program, but its pages are already mapped.
//
// Thread rules: single-threaded, like one save or load on one worker.

#include <benchmark/benchmark.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_support.h"
#include "rolly/core/bytes.h"
#include "rolly/core/checksum.h"
#include "rolly/format/file.h"

namespace {

using rolly::bench::CapturingReporter;
using rolly::bench::Rng;

using rolly::ByteView;
using rolly::Bytes;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::size_t kTotalSize = 16 * kMiB;

// ---------------------------------------------------------------------------------------------
// The save: deterministic record-like bytes.


constexpr std::string_view kClasses[] = {
    "/Script/Game.Door",          "/Script/Game.Chest",        "/Script/Game.Lever",
    "/Script/Game.Torch",         "/Script/Game.NpcVillager",  "/Script/Game.NpcGuard",
    "/Script/Game.Enemy_Wolf",    "/Script/Game.Enemy_Bandit", "/Script/Game.Pickup_Coin",
    "/Script/Game.Pickup_Potion", "/Script/Game.Crate",        "/Script/Game.Barrel",
    "/Script/Game.QuestTrigger",  "/Script/Game.Campfire",     "/Script/Game.Waypoint",
    "/Script/Game.Bridge",        "/Script/Game.Gate",         "/Script/Game.Shrine",
    "/Script/Game.LootSpawner",   "/Script/Game.Horse",
};
constexpr std::string_view kTags[] = {"Locked", "Opened", "Looted", "Hostile", "Asleep",
                                      "Burning", "Quest", "Hidden"};

// A property as a self-describing record writes it: name, saved type, then the value.
void Property(rolly::ByteWriter& w, std::string_view name, std::uint8_t type) {
  w.LengthPrefixed(name);
  w.U8(type);
}

// One record as a tagged, self-describing encoder would lay it out: kind, size, class path,
// GUID, then named properties: a transform (often at rest: identity rotation, unit scale), a few
// ints, a name, sometimes a tag. GUIDs and locations are the incompressible part.
void AppendRecord(Rng& rng, Bytes& out) {
  Bytes r;
  rolly::ByteWriter w(&r);
  const std::uint32_t cls = rng.Below(std::size(kClasses));
  w.Varint(cls);
  w.LengthPrefixed(kClasses[cls]);
  for (int i = 0; i < 2; ++i) w.U64(rng.Next());  // GUID
  // Location on a 1 cm grid of a 4 km map, near the ground.
  Property(w, "RelativeLocation", 0x10);
  w.F32(static_cast<float>(rng.Below(400000)) / 100.0f);
  w.F32(static_cast<float>(rng.Below(400000)) / 100.0f);
  w.F32(static_cast<float>(rng.Below(2000)) / 100.0f);
  Property(w, "RelativeRotation", 0x11);
  const float yaw = rng.OneIn(3) ? static_cast<float>(rng.Below(8) * 45) : 0.0f;
  w.F32(0.0f);
  w.F32(yaw);
  w.F32(0.0f);
  Property(w, "RelativeScale3D", 0x10);
  const float scale = rng.OneIn(8) ? 0.5f * static_cast<float>(1 + rng.Below(4)) : 1.0f;
  for (int i = 0; i < 3; ++i) w.F32(scale);
  // Ints: health, state, counters; mostly small and repetitive.
  Property(w, "Health", 0x02);
  w.Varint(rng.OneIn(4) ? rng.Below(100) : 100);
  Property(w, "State", 0x02);
  w.Varint(rng.Below(4));
  Property(w, "Counter", 0x03);
  w.SignedVarint(rng.OneIn(2) ? 0 : static_cast<std::int64_t>(rng.Below(64)) - 32);
  Property(w, "Flags", 0x04);
  w.U32(rng.OneIn(2) ? 0 : 1u << rng.Below(8));
  // A short name: class-derived with a number.
  const std::string name =
      std::string(kClasses[cls].substr(kClasses[cls].rfind('.') + 1)) + "_" +
      std::to_string(rng.Below(5000));
  Property(w, "DisplayName", 0x20);
  w.LengthPrefixed(name);
  if (rng.OneIn(3)) {
    Property(w, "Tags", 0x21);
    w.Varint(1);
    w.LengthPrefixed(kTags[rng.Below(std::size(kTags))]);
  }
  rolly::ByteWriter o(&out);
  o.U8(0x01);  // record kind
  o.Varint(r.size());
  o.Raw(r);
}

Bytes MakeChunkData(std::uint64_t seed, std::size_t size) {
  Rng rng(seed);
  Bytes out;
  out.reserve(size + 512);
  while (out.size() < size) AppendRecord(rng, out);
  out.resize(size);  // the last record is cut: chunks are opaque bytes to the container
  return out;
}

struct ChunkSpec {
  rolly::format::ChunkId id;
  std::string_view key;
  std::size_t size;
};

// Laid out like a real save: globals, the worlds of a few maps, a few players. 16 MiB in all.
const ChunkSpec kChunkSpecs[] = {
    {rolly::format::kGlobalsChunk, "", 256 * kKiB},
    {rolly::format::kWorldChunk, "/Game/Maps/Overworld", 5 * kMiB},
    {rolly::format::kWorldChunk, "/Game/Maps/Overworld/Dungeon_01", 4 * kMiB},
    {rolly::format::kWorldChunk, "/Game/Maps/City", 3 * kMiB},
    {rolly::format::kWorldChunk, "/Game/Maps/Coast", 3 * kMiB - 256 * kKiB},
    {rolly::format::kPlayerChunk, "0", 256 * kKiB},
    {rolly::format::kPlayerChunk, "1", 256 * kKiB},
    {rolly::format::kPlayerChunk, "2", 256 * kKiB},
    {rolly::format::kPlayerChunk, "3", 256 * kKiB},
};

struct Mode {
  const char* name;  // "zstd1", "zstd3", "stored"
  bool compress;
  int level;
};
constexpr Mode kModes[] = {{"zstd1", true, 1}, {"zstd3", true, 3}, {"stored", false, 0}};

// Everything the benchmarks share, made once before any runs.
struct Fixture {
  rolly::format::File file;
  std::vector<ByteView> chunk_data;  // views into file.chunks
  Bytes concatenated;                // all chunk bytes, for memcpy
  // Per mode (index into kModes).
  Bytes written[std::size(kModes)];
  // Raw zstd frames of each chunk at each compressed mode's level.
  std::vector<Bytes> frames[std::size(kModes)];
};

Fixture* fixture = nullptr;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "format_benchmark: %s\n", what.c_str());
  std::exit(2);
}

ZSTD_CCtx* MakeCCtx(int level) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  // The same frame the library writes: content size recorded, no checksum, no dictionary ID.
  if (c == nullptr || ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_dictIDFlag, 0))) {
    Die("cannot set up a zstd context");
  }
  return c;
}

void BuildFixture() {
  auto* f = new Fixture;
  std::uint64_t seed = 0x5A7E5A7E;
  for (const ChunkSpec& spec : kChunkSpecs) {
    f->file.chunks.emplace_back(spec.id, std::string(spec.key), MakeChunkData(seed++, spec.size));
  }
  f->file.header.slot_name = "bench";
  f->file.header.title = "format_benchmark";
  f->concatenated.reserve(kTotalSize);
  for (const auto& c : f->file.chunks) {
    f->chunk_data.push_back(c.data());
    f->concatenated.insert(f->concatenated.end(), c.data().begin(), c.data().end());
  }
  if (f->concatenated.size() != kTotalSize) Die("the chunks do not add up to 16 MiB");

  for (std::size_t m = 0; m < std::size(kModes); ++m) {
    auto bytes = rolly::format::Write(f->file, {kModes[m].compress, kModes[m].level});
    if (!bytes.ok()) Die("Write failed: " + std::string(bytes.status().message()));
    f->written[m] = std::move(*bytes);
    auto back = rolly::format::Read(f->written[m]);
    if (!back.ok() || back->chunks.size() != f->file.chunks.size()) Die("Read failed");
    for (std::size_t i = 0; i < back->chunks.size(); ++i) {
      if (back->chunks[i].data() != f->file.chunks[i].data()) Die("Read does not round-trip");
    }
    if (!kModes[m].compress) continue;
    ZSTD_CCtx* cctx = MakeCCtx(kModes[m].level);
    for (ByteView src : f->chunk_data) {
      Bytes frame(ZSTD_compressBound(src.size()));
      const std::size_t n =
          ZSTD_compress2(cctx, frame.data(), frame.size(), src.data(), src.size());
      if (ZSTD_isError(n)) Die("zstd compression failed");
      frame.resize(n);
      f->frames[m].push_back(std::move(frame));
    }
    ZSTD_freeCCtx(cctx);
  }
  fixture = f;
}

// The bytes every checksum of a file covers: everything after the 64-byte prelude.
ByteView AfterPrelude(const Bytes& file) {
  return ByteView(file).subspan(rolly::format::kPreludeSize);
}

// ---------------------------------------------------------------------------------------------
// The library.

void BM_Write(benchmark::State& state, std::size_t m) {
  const rolly::format::WriteOptions options{kModes[m].compress, kModes[m].level};
  for (auto _ : state) {
    auto bytes = rolly::format::Write(fixture->file, options);
    if (!bytes.ok()) state.SkipWithError("Write failed");
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

void BM_Read(benchmark::State& state, std::size_t m, bool keep_stored) {
  rolly::format::ReadOptions options;
  options.keep_stored = keep_stored;
  const Bytes& bytes = fixture->written[m];
  for (auto _ : state) {
    auto file = rolly::format::Read(bytes, options);
    if (!file.ok()) state.SkipWithError("Read failed");
    benchmark::DoNotOptimize(file);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

// The checksum work Write and Read each do on a file: the whole file after the prelude, then
// every chunk's stored bytes again with its ID and key (docs/format.md), through the library's
// own XXH3 (header-only build).
void BM_LibraryChecksums(benchmark::State& state, std::size_t m) {
  const Bytes& bytes = fixture->written[m];
  auto file = rolly::format::Read(bytes);
  if (!file.ok()) Die("Read failed");
  for (auto _ : state) {
    benchmark::DoNotOptimize(rolly::Checksum::Of(AfterPrelude(bytes)));
    for (const auto& c : file->chunks) {
      Bytes prefix;
      rolly::ByteWriter w(&prefix);
      w.Raw(c.id().view());
      w.LengthPrefixed(c.key());
      rolly::ChecksumBuilder b;
      b.Add(prefix).Add(c.stored());
      benchmark::DoNotOptimize(b.Finish());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

// ---------------------------------------------------------------------------------------------
// Peers and limits.

// Raw zstd: each chunk into one frame, reused context, preallocated output.
void BM_RawZstdCompress(benchmark::State& state, std::size_t m) {
  ZSTD_CCtx* cctx = MakeCCtx(kModes[m].level);
  std::vector<Bytes> out;
  for (ByteView src : fixture->chunk_data) out.emplace_back(ZSTD_compressBound(src.size()));
  for (auto _ : state) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const ByteView src = fixture->chunk_data[i];
      const std::size_t n =
          ZSTD_compress2(cctx, out[i].data(), out[i].size(), src.data(), src.size());
      if (ZSTD_isError(n)) state.SkipWithError("zstd compression failed");
      benchmark::DoNotOptimize(n);
    }
    benchmark::ClobberMemory();
  }
  ZSTD_freeCCtx(cctx);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

// Raw zstd decompression of the same frames. `fresh`: into newly allocated, untouched buffers,
// as a load must; otherwise into buffers reused across iterations (the decoder's own limit).
void BM_RawZstdDecompress(benchmark::State& state, std::size_t m, bool fresh) {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  const auto& frames = fixture->frames[m];
  std::vector<std::unique_ptr<std::uint8_t[]>> reused;
  for (ByteView src : fixture->chunk_data) {
    reused.push_back(std::make_unique<std::uint8_t[]>(src.size()));
  }
  for (auto _ : state) {
    std::vector<std::unique_ptr<std::uint8_t[]>> outs;
    if (fresh) outs.reserve(frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::size_t size = fixture->chunk_data[i].size();
      std::uint8_t* dst;
      if (fresh) {
        outs.push_back(std::make_unique_for_overwrite<std::uint8_t[]>(size));
        dst = outs.back().get();
      } else {
        dst = reused[i].get();
      }
      const std::size_t n =
          ZSTD_decompressDCtx(dctx, dst, size, frames[i].data(), frames[i].size());
      if (n != size) state.SkipWithError("zstd decompression failed");
    }
    benchmark::DoNotOptimize(outs.data());
    benchmark::ClobberMemory();
  }
  ZSTD_freeDCtx(dctx);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

// memcpy of the 16 MiB into a freshly allocated buffer.
void BM_Memcpy(benchmark::State& state) {
  const Bytes& src = fixture->concatenated;
  for (auto _ : state) {
    auto dst = std::make_unique_for_overwrite<std::uint8_t[]>(src.size());
    std::memcpy(dst.get(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

// One XXH3-64 pass over the file's checksummed bytes: through the library's build of XXH3
// (rolly::Checksum, header-only), and through Debian's compiled libxxhash as a separate peer.
void BM_OneChecksumPass(benchmark::State& state, std::size_t m) {
  const ByteView bytes = AfterPrelude(fixture->written[m]);
  for (auto _ : state) benchmark::DoNotOptimize(rolly::Checksum::Of(bytes));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

void BM_Xxh3(benchmark::State& state, std::size_t m) {
  const ByteView bytes = AfterPrelude(fixture->written[m]);
  for (auto _ : state) benchmark::DoNotOptimize(XXH3_64bits(bytes.data(), bytes.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotalSize));
}

// ---------------------------------------------------------------------------------------------
// Registration, capture and the summary.

std::string Name(std::string_view what, const Mode& mode, std::string_view variant = {}) {
  std::string n = std::string(what) + "/" + mode.name;
  if (!variant.empty()) n += "/" + std::string(variant);
  return n;
}

void RegisterAll() {
  auto reg = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMillisecond);
  };
  for (std::size_t m = 0; m < std::size(kModes); ++m) {
    const Mode& mode = kModes[m];
    reg(Name("Write", mode), [m](benchmark::State& s) { BM_Write(s, m); });
    reg(Name("Read", mode, "load"), [m](benchmark::State& s) { BM_Read(s, m, false); });
    reg(Name("Read", mode, "keep_stored"), [m](benchmark::State& s) { BM_Read(s, m, true); });
    if (mode.compress) {
      reg(Name("RawZstdCompress", mode), [m](benchmark::State& s) { BM_RawZstdCompress(s, m); });
      reg(Name("RawZstdDecompress", mode, "fresh"),
          [m](benchmark::State& s) { BM_RawZstdDecompress(s, m, true); });
      reg(Name("RawZstdDecompress", mode, "reused"),
          [m](benchmark::State& s) { BM_RawZstdDecompress(s, m, false); });
    }
    reg(Name("OneChecksumPass", mode), [m](benchmark::State& s) { BM_OneChecksumPass(s, m); });
    reg(Name("XXH3", mode), [m](benchmark::State& s) { BM_Xxh3(s, m); });
    reg(Name("LibraryChecksums", mode), [m](benchmark::State& s) { BM_LibraryChecksums(s, m); });
  }
  reg("Memcpy/16MiB", [](benchmark::State& s) { BM_Memcpy(s); });
}


double MBps(double seconds) { return seconds > 0 ? kTotalSize / seconds / 1e6 : 0; }

// Cells print with %.0f unless a call says otherwise.
std::string Cell(double v, const char* fmt = "%.0f") { return rolly::bench::Cell(v, fmt); }
using rolly::bench::Mark;

void PrintSummary(const CapturingReporter& rep) {
  const double memcpy_s = rep.Seconds("Memcpy/16MiB");
  std::printf("\nSummary (16 MiB decoded, %zu chunks; MB/s = 1e6 bytes/s of decoded bytes, CPU "
              "time, best repetition; spread = worst/best repetition)\n",
              std::size(kChunkSpecs));
  std::printf("memcpy into a fresh buffer: %s MB/s (spread %.2f)\n\n", Cell(MBps(memcpy_s)).c_str(),
              rep.Spread("Memcpy/16MiB"));

  std::printf("%-7s %12s %12s %9s %6s %8s\n", "mode", "file bytes", "raw zstd", "ratio", "", "");
  for (std::size_t m = 0; m < std::size(kModes); ++m) {
    std::size_t raw = 0;
    for (const Bytes& f : fixture->frames[m]) raw += f.size();
    const std::size_t file_size = fixture->written[m].size();
    std::printf("%-7s %12zu %12s %8.2fx\n", kModes[m].name, file_size,
                raw ? std::to_string(raw).c_str() : "-",
                static_cast<double>(kTotalSize) / static_cast<double>(file_size));
  }

  std::printf("\nWrite                 write   raw zstd  ratio(>=0.9)      vs memcpy\n");
  for (const Mode& mode : kModes) {
    const double w = rep.Seconds(Name("Write", mode));
    const double z = rep.Seconds(Name("RawZstdCompress", mode));
    const double ratio = z > 0 && w > 0 ? z / w : 0;
    std::printf("  %-7s %8s MB/s %6s MB/s  %5s %-4s  %10s\n", mode.name, Cell(MBps(w)).c_str(),
                Cell(MBps(z)).c_str(), Cell(ratio, "%.2f").c_str(), Mark(ratio, 0.9, true),
                Cell(w > 0 ? memcpy_s / w : 0, "%.3f").c_str());
  }

  std::printf(
      "\nRead (load = keep_stored off)  read   read(keep_stored)  raw fresh  ratio(>=0.9)"
      "  raw reused  ratio   vs memcpy\n");
  for (const Mode& mode : kModes) {
    const double r = rep.Seconds(Name("Read", mode, "load"));
    const double rk = rep.Seconds(Name("Read", mode, "keep_stored"));
    const double zf = rep.Seconds(Name("RawZstdDecompress", mode, "fresh"));
    const double zr = rep.Seconds(Name("RawZstdDecompress", mode, "reused"));
    const double ratio = zf > 0 && r > 0 ? zf / r : 0;
    std::printf("  %-7s %20s MB/s %12s MB/s %6s MB/s %5s %-4s %7s MB/s %5s  %10s\n", mode.name,
                Cell(MBps(r)).c_str(), Cell(MBps(rk)).c_str(), Cell(MBps(zf)).c_str(),
                Cell(ratio, "%.2f").c_str(), Mark(ratio, 0.9, true), Cell(MBps(zr)).c_str(),
                Cell(zr > 0 && r > 0 ? zr / r : 0, "%.2f").c_str(),
                Cell(r > 0 ? memcpy_s / r : 0, "%.3f").c_str());
  }

  std::printf(
      "\nChecksums, target <= 3%%: the library's checksum work in Write and in Read (the file after\n"
      "the prelude, then each chunk again with its ID and key), as a share of Write and Read (load)\n"
      "                 work     %% of write    %% of read   | one pass   %% write  %% read | libxxhash\n");
  for (const Mode& mode : kModes) {
    const double l = rep.Seconds(Name("LibraryChecksums", mode));
    const double p = rep.Seconds(Name("OneChecksumPass", mode));
    const double x = rep.Seconds(Name("XXH3", mode));
    const double w = rep.Seconds(Name("Write", mode));
    const double r = rep.Seconds(Name("Read", mode, "load"));
    const double lw = w > 0 ? 100 * l / w : 0;
    const double lr = r > 0 ? 100 * l / r : 0;
    if (l <= 0 || w <= 0 || r <= 0) {
      std::printf("  %-7s (not run)\n", mode.name);
      continue;
    }
    const char* mw = mode.compress ? Mark(lw, 3, false) : "info";
    const char* mr = mode.compress ? Mark(lr, 3, false) : "info";
    std::printf("  %-7s %8.3f ms  %5.1f%% %-4s  %5.1f%% %-4s | %6.3f ms  %5.1f%%  %5.1f%% | %6.3f ms\n",
                mode.name, l * 1e3, lw, mw, lr, mr, p * 1e3, w > 0 ? 100 * p / w : 0,
                r > 0 ? 100 * p / r : 0, x * 1e3);
  }
  std::printf(
      "  (stored: hashing 16 MiB cannot cost 3%% of copying 16 MiB; shown for information)\n");

  std::printf("\nSpread per benchmark (worst/best repetition):");
  int col = 0;
  for (const Mode& mode : kModes) {
    for (const std::string& n :
         {Name("Write", mode), Name("RawZstdCompress", mode), Name("Read", mode, "load"),
          Name("RawZstdDecompress", mode, "fresh")}) {
      if (rep.Seconds(n) <= 0) continue;
      std::printf("%s%-32s %.2f", col++ % 3 == 0 ? "\n  " : "   ", n.c_str(), rep.Spread(n));
    }
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  rolly::bench::TuneAllocator();
  // Short defaults; flags given on the command line win.
  if (!rolly::bench::InitializeWithDefaults(argc, argv,
                                            {"--benchmark_min_time=0.1", "--benchmark_repetitions=5",
                                             "--benchmark_enable_random_interleaving=true"})) {
    return 1;
  }

  BuildFixture();
  RegisterAll();
  CapturingReporter reporter(CapturingReporter::Time::kCpu);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  benchmark::Shutdown();
  return reporter.errors() ? 1 : 0;
}
