// postgres_benchmark: saves per second through PostgresBackend, measured in the same run as the
// server's own limit on the same bytes: plain libpq, one connection per player, each save one
// single-row upsert:
//
//   INSERT INTO rolly_bench_peer.saves (key, bytes) VALUES ($1, $2)
//     ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes
//
// with the bytes sent as a binary parameter (the cheapest statement that leaves one durable row
// per file, which is what one save is), and, for information, COPY ... FROM STDIN (FORMAT binary)
// of the same bytes (one row appended per save; the table is emptied between runs, untimed).
// Target of the issue: the backend >= 0.8x the upsert, for saves of 64 KiB, 1 MiB and 8 MiB with
// 1, 8 and 32 players at once.
//
// Players are threads. Each player has its own PostgresBackend (user key "bench-player-N",
// pool_size 1, schema "rolly_bench") and, for the peers, its own libpq connection, and writes its
// own file, alternating between the file's two copies as the store does
// (bench.slot.save.a.rsav, then .b.rsav; the upsert peer uses the same names as keys, prefixed by
// the player). Every file is written once, small, before anything is timed, so every timed write is
// an overwrite of a row the writer knows (the backend's compare-and-set update; the peer's
// ON CONFLICT branch), as every save after a session's first one is.
//
// The bytes are random: a save reaches a backend zstd-compressed, so the server's own compression
// of large values (pglz) gives up after the first KiB on both sides. Write(Bytes) takes its buffer
// by value and the store moves it in; here each backend save copies the player's buffer first,
// which is timed (about 1 ms of 8 MiB, against tens of milliseconds for the save; main() prints
// the measured cost so the reader can take it off).
//
// A run is one (method, size, players): the players start together and each writes until
// --seconds have passed (at least one save each); saves/second is every save completed over the
// wall time until the last player finished. Runs are repeated (--repetitions, default 5) and
// interleaved backend, upsert, COPY within each repetition (the order turning each time), so a
// burst of load on a shared machine hits one repetition of all three rather than every repetition
// of one; the summary takes the best repetition of each and shows the spread (best/worst
// saves/second, 1.00 = steady). The default run (9 cases, 3 methods, 5 repetitions of 0.5 s)
// takes about two and a half minutes on a busy 2-core machine; 8 MiB x 32 players dominates (each
// of its runs writes at least 256 MiB, one save per player). On such a machine a single case's
// ratio moves by +-0.2 from run to run (fsync latency and scheduling are shared with every other
// job): read a MISS together with the spreads, and repeat it alone (--sizes=, --players=) with
// more --repetitions before believing it.
//
// The server: the libpq connection string in ROLLY_TEST_PG (for example
// "host=127.0.0.1 port=55499 user=postgres dbname=postgres"); without it the program says so and
// exits 0, as a benchmark without its server has nothing to measure. It needs room for
// 2 x players + 1 connections. It leaves nothing behind: the backend's rows are deleted and the
// schemas rolly_bench and rolly_bench_peer dropped at exit. A superuser (or a role with
// BYPASSRLS) skips row-level security, so a run as one does not pay for the backend's policy; run
// as an ordinary role that may create schemas in the database to include it.
//
// Flags: --seconds=S, --repetitions=N, --sizes=64K,1M,8M, --players=1,8,32, --no-copy. Google
// Benchmark flags (--benchmark_*, which tools/run-benchmarks.sh passes to every benchmark) are
// accepted and ignored: this one is a plain program, as its concurrency is explicit.
//
// Memory: main() fixes glibc's malloc thresholds as the other benchmarks do, so the 8 MiB buffers
// are not mapped and unmapped (page faults) in some saves and not in others.
//
// Thread rules: one thread per player during a run; the main thread starts runs and waits.

#include <arpa/inet.h>
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/store/backend.h"
#include "rolly/store/file_name.h"
#include "rolly/store/postgres/postgres_backend.h"

namespace {

using rolly::bench::Rng;

using rolly::Bytes;
using rolly::store::Copy;
using rolly::store::FileName;
using rolly::store::PostgresBackend;
using rolly::store::PostgresOptions;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::string_view kBackendSchema = "rolly_bench";
constexpr std::string_view kPeerSchema = "rolly_bench_peer";
constexpr std::string_view kFilePrefix = "bench";
constexpr std::string_view kSlot = "save";

void Cleanup();
const std::thread::id main_thread = std::this_thread::get_id();

// On the main thread the server is left clean; a player thread cannot tear down what the others
// are using, so it leaves the schemas for the next run (which drops and recreates the peer's).
[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "postgres_benchmark: %s\n", what.c_str());
  if (std::this_thread::get_id() != main_thread) {
    std::fflush(stdout);
    std::_Exit(1);
  }
  Cleanup();
  std::exit(1);
}


Bytes RandomBytes(std::uint64_t seed, std::size_t size) {
  Rng rng(seed);
  Bytes out(size);
  for (std::size_t i = 0; i < size; i += 8) {
    const std::uint64_t w = rng.Next();
    std::memcpy(out.data() + i, &w, std::min<std::size_t>(8, size - i));
  }
  return out;
}

std::string SizeName(std::size_t size) {
  if (size % kMiB == 0) return std::to_string(size / kMiB) + " MiB";
  if (size % kKiB == 0) return std::to_string(size / kKiB) + " KiB";
  return std::to_string(size) + " B";
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---------------------------------------------------------------------------------------------
// Flags.

struct Flags {
  double seconds = 0.5;
  int repetitions = 5;
  std::vector<std::size_t> sizes = {64 * kKiB, 1 * kMiB, 8 * kMiB};
  std::vector<int> players = {1, 8, 32};
  bool copy = true;
};

std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    out.emplace_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

// "64K", "1M", "8M" or a number of bytes; 0 when malformed.
std::size_t ParseSize(const std::string& s) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return 0;
  const std::string_view unit(end);
  if (unit.empty()) return n;
  if (unit == "K" || unit == "k") return n * kKiB;
  if (unit == "M" || unit == "m") return n * kMiB;
  return 0;
}

[[noreturn]] void Usage(const std::string& bad) {
  std::fprintf(stderr,
               "postgres_benchmark: unknown or malformed flag %s\n"
               "usage: postgres_benchmark [--seconds=S] [--repetitions=N] [--sizes=64K,1M,8M]\n"
               "                          [--players=1,8,32] [--no-copy]\n",
               bad.c_str());
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    const auto value = [&](std::string_view name) -> std::string {
      return std::string(a.substr(name.size()));
    };
    if (a.starts_with("--benchmark_")) continue;
    if (a.starts_with("--seconds=")) {
      f.seconds = std::atof(value("--seconds=").c_str());
      if (!(f.seconds > 0)) Usage(argv[i]);
    } else if (a.starts_with("--repetitions=")) {
      f.repetitions = std::atoi(value("--repetitions=").c_str());
      if (f.repetitions < 1) Usage(argv[i]);
    } else if (a.starts_with("--sizes=")) {
      f.sizes.clear();
      for (const std::string& s : SplitCommas(value("--sizes="))) {
        const std::size_t n = ParseSize(s);
        if (n == 0) Usage(argv[i]);
        f.sizes.push_back(n);
      }
      if (f.sizes.empty()) Usage(argv[i]);
    } else if (a.starts_with("--players=")) {
      f.players.clear();
      for (const std::string& s : SplitCommas(value("--players="))) {
        const int n = std::atoi(s.c_str());
        if (n < 1 || n > 256) Usage(argv[i]);
        f.players.push_back(n);
      }
      if (f.players.empty()) Usage(argv[i]);
    } else if (a == "--no-copy") {
      f.copy = false;
    } else {
      Usage(argv[i]);
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// Plain libpq: the peers.

struct PgConnCloser {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, PgConnCloser>;

struct PgResultClearer {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultClearer>;

Conn Connect(const std::string& conninfo) {
  Conn c(PQconnectdb(conninfo.c_str()));
  if (c == nullptr || PQstatus(c.get()) != CONNECTION_OK) {
    Die("cannot connect with ROLLY_TEST_PG: " +
        std::string(c ? PQerrorMessage(c.get()) : "out of memory"));
  }
  return c;
}

void Check(PGconn* c, PGresult* r, ExecStatusType want, std::string_view what) {
  if (PQresultStatus(r) != want) {
    Die(std::string(what) + ": " + PQerrorMessage(c));
  }
}

void Exec(PGconn* c, const std::string& sql) {
  const PgResult r(PQexec(c, sql.c_str()));
  Check(c, r.get(), PGRES_COMMAND_OK, sql);
}

const std::string kUpsertSql = "INSERT INTO " + std::string(kPeerSchema) +
                               ".saves (key, bytes) VALUES ($1, $2) "
                               "ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes";
const std::string kCopySql =
    "COPY " + std::string(kPeerSchema) + ".copied (key, bytes) FROM STDIN (FORMAT binary)";

// One player's connection for the peers, with the upsert prepared.
class PeerPlayer {
 public:
  PeerPlayer(const std::string& conninfo, int player) : conn_(Connect(conninfo)) {
    const PgResult r(PQprepare(conn_.get(), "upsert", kUpsertSql.c_str(), 2, nullptr));
    Check(conn_.get(), r.get(), PGRES_COMMAND_OK, "prepare upsert");
    for (Copy copy : {Copy::kA, Copy::kB}) {
      keys_.push_back("bench-player-" + std::to_string(player) + "/" + FileNameOf(copy).str());
    }
  }

  static FileName FileNameOf(Copy copy) {
    return FileName::ForSlot(kFilePrefix, kSlot, copy).value();
  }

  void Upsert(const Bytes& bytes) {
    const std::string& key = keys_[next_];
    next_ ^= 1;
    const char* values[2] = {key.c_str(), reinterpret_cast<const char*>(bytes.data())};
    const int lengths[2] = {0, static_cast<int>(bytes.size())};
    const int formats[2] = {0, 1};
    const PgResult r(PQexecPrepared(conn_.get(), "upsert", 2, values, lengths, formats, 0));
    Check(conn_.get(), r.get(), PGRES_COMMAND_OK, "upsert");
  }

  // One row (key, bytes) in COPY's binary format: header, tuple, trailer.
  void CopyIn(const Bytes& bytes) {
    const std::string& key = keys_[next_];
    next_ ^= 1;
    {
      const PgResult r(PQexec(conn_.get(), kCopySql.c_str()));
      Check(conn_.get(), r.get(), PGRES_COPY_IN, "COPY");
    }
    std::string head("PGCOPY\n\377\r\n\0", 11);
    const auto u32 = [&](std::uint32_t v) {
      v = htonl(v);
      head.append(reinterpret_cast<const char*>(&v), 4);
    };
    const auto u16 = [&](std::uint16_t v) {
      v = htons(v);
      head.append(reinterpret_cast<const char*>(&v), 2);
    };
    u32(0);  // flags
    u32(0);  // header extension length
    u16(2);  // fields in the tuple
    u32(static_cast<std::uint32_t>(key.size()));
    head += key;
    u32(static_cast<std::uint32_t>(bytes.size()));
    const char trailer[2] = {'\xff', '\xff'};
    if (PQputCopyData(conn_.get(), head.data(), static_cast<int>(head.size())) != 1 ||
        PQputCopyData(conn_.get(), reinterpret_cast<const char*>(bytes.data()),
                      static_cast<int>(bytes.size())) != 1 ||
        PQputCopyData(conn_.get(), trailer, 2) != 1 || PQputCopyEnd(conn_.get(), nullptr) != 1) {
      Die(std::string("COPY data: ") + PQerrorMessage(conn_.get()));
    }
    const PgResult r(PQgetResult(conn_.get()));
    Check(conn_.get(), r.get(), PGRES_COMMAND_OK, "COPY end");
    while (PGresult* extra = PQgetResult(conn_.get())) PQclear(extra);
  }

 private:
  Conn conn_;
  std::vector<std::string> keys_;
  int next_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The backend's players.

class BackendPlayer {
 public:
  BackendPlayer(const std::string& conninfo, int player) {
    PostgresOptions o;
    o.conninfo = conninfo;
    o.user_key = "bench-player-" + std::to_string(player);
    o.schema = std::string(kBackendSchema);
    o.pool_size = 1;
    auto opened = PostgresBackend::Open(std::move(o));
    if (!opened.ok()) Die("PostgresBackend::Open: " + opened.status().ToString());
    backend_ = std::move(opened).value();
    // Rows left by an earlier run that stopped halfway: gone, so the warm-up writes create them.
    for (Copy copy : {Copy::kA, Copy::kB}) {
      const rolly::Status s = rolly::store::DeleteNow(*backend_, PeerPlayer::FileNameOf(copy));
      if (!s.ok()) Die("PostgresBackend delete: " + s.ToString());
    }
  }

  ~BackendPlayer() {
    for (Copy copy : {Copy::kA, Copy::kB}) {
      (void)rolly::store::DeleteNow(*backend_, PeerPlayer::FileNameOf(copy));
    }
    backend_->WaitUntilIdle();
  }

  // The save as the store makes it: the bytes handed over, to the copy not written last.
  void Save(const Bytes& bytes) {
    const FileName name = PeerPlayer::FileNameOf(next_);
    next_ = rolly::store::OtherCopy(next_);
    const rolly::Status s = rolly::store::WriteNow(*backend_, name, Bytes(bytes));
    if (!s.ok()) Die("PostgresBackend write: " + s.ToString());
  }

 private:
  std::unique_ptr<PostgresBackend> backend_;
  Copy next_ = Copy::kA;
};

// ---------------------------------------------------------------------------------------------
// Runs.

enum Method { kBackend = 0, kUpsert = 1, kCopyIn = 2, kMethods = 3 };
constexpr const char* kMethodNames[kMethods] = {"backend", "upsert", "COPY"};

struct Env {
  std::string conninfo;
  Conn admin;
  std::vector<std::unique_ptr<BackendPlayer>> backends;
  std::vector<std::unique_ptr<PeerPlayer>> peers;
};
Env* env = nullptr;

void Cleanup() {
  if (env == nullptr) return;
  Env* e = env;
  env = nullptr;  // Die() from here on must not recurse.
  e->backends.clear();
  e->peers.clear();
  if (e->admin != nullptr) {
    for (std::string_view schema : {kPeerSchema, kBackendSchema}) {
      const PgResult r(PQexec(
          e->admin.get(), ("DROP SCHEMA IF EXISTS " + std::string(schema) + " CASCADE").c_str()));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
        std::fprintf(stderr, "postgres_benchmark: cleanup: %s", PQerrorMessage(e->admin.get()));
      }
    }
  }
  delete e;
}

struct Run {
  std::uint64_t saves = 0;
  double seconds = 0;
  double saves_per_second() const { return seconds > 0 ? static_cast<double>(saves) / seconds : 0; }
};

// `players` threads start together; each saves until `budget` has passed (at least once).
Run TimedRun(Method method, const Bytes& bytes, int players, double budget) {
  std::latch start(players + 1);
  std::atomic<std::uint64_t> saves{0};
  std::vector<Clock::time_point> ends(static_cast<std::size_t>(players));
  Clock::time_point t0;
  const auto deadline = [&] {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget));
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(players));
  for (int p = 0; p < players; ++p) {
    threads.emplace_back([&, p] {
      start.arrive_and_wait();
      const Clock::time_point until = deadline();
      std::uint64_t n = 0;
      do {
        switch (method) {
          case kBackend:
            env->backends[static_cast<std::size_t>(p)]->Save(bytes);
            break;
          case kUpsert:
            env->peers[static_cast<std::size_t>(p)]->Upsert(bytes);
            break;
          case kCopyIn:
          case kMethods:
            env->peers[static_cast<std::size_t>(p)]->CopyIn(bytes);
            break;
        }
        ++n;
      } while (Clock::now() < until);
      ends[static_cast<std::size_t>(p)] = Clock::now();
      saves += n;
    });
  }
  t0 = Clock::now();
  start.arrive_and_wait();
  for (std::thread& t : threads) t.join();
  Run run;
  run.saves = saves.load();
  run.seconds = Seconds(*std::max_element(ends.begin(), ends.end()) - t0);
  if (method == kCopyIn) Exec(env->admin.get(), "TRUNCATE " + std::string(kPeerSchema) + ".copied");
  return run;
}

struct Case {
  std::size_t size = 0;
  int players = 0;
  std::vector<Run> runs[kMethods];

  Run Best(Method m) const {
    Run best;
    for (const Run& r : runs[m]) {
      if (r.saves_per_second() > best.saves_per_second()) best = r;
    }
    return best;
  }
  // Best over worst saves/second, >= 1.
  double Spread(Method m) const {
    double lo = 0, hi = 0;
    for (const Run& r : runs[m]) {
      const double v = r.saves_per_second();
      if (lo == 0 || v < lo) lo = v;
      hi = std::max(hi, v);
    }
    return lo > 0 ? hi / lo : 0;
  }
};

void SetUpPeerTables() {
  PGconn* c = env->admin.get();
  const std::string s(kPeerSchema);
  Exec(c, "DROP SCHEMA IF EXISTS " + s + " CASCADE");
  Exec(c, "CREATE SCHEMA " + s);
  Exec(c, "CREATE TABLE " + s + ".saves (key text PRIMARY KEY, bytes bytea NOT NULL)");
  Exec(c, "CREATE TABLE " + s + ".copied (key text NOT NULL, bytes bytea NOT NULL)");
}

// What a backend save pays for the by-value Bytes it is handed here (the store moves its own).
double CopyMilliseconds(const Bytes& bytes) {
  constexpr int kCopies = 20;
  const Clock::time_point t0 = Clock::now();
  std::size_t sink = 0;
  for (int i = 0; i < kCopies; ++i) {
    const Bytes copy(bytes);
    sink += copy[copy.size() / 2];
  }
  const double ms = Seconds(Clock::now() - t0) * 1e3 / kCopies;
  return sink == static_cast<std::size_t>(-1) ? 0 : ms;
}

void PrintSummary(const Flags& flags, const std::vector<Case>& cases) {
  std::printf(
      "\npostgres_benchmark summary: best of %d runs of %.2f s each; spread = best/worst "
      "saves/s;\nMiB/s = saves/s x size. Limit = plain libpq single-row upsert, binary bytea, "
      "same players. Target: backend >= 0.8x limit.\n\n",
      flags.repetitions, flags.seconds);
  std::printf("%-8s %7s | %10s %9s %6s | %10s %9s %6s | %6s %-5s", "size", "players", "backend/s",
              "MiB/s", "spread", "limit/s", "MiB/s", "spread", "ratio", "");
  if (flags.copy) std::printf(" | %10s %9s %6s", "COPY/s", "MiB/s", "spread");
  std::printf("\n");
  int misses = 0;
  for (const Case& c : cases) {
    const double mib = static_cast<double>(c.size) / static_cast<double>(kMiB);
    const double b = c.Best(kBackend).saves_per_second();
    const double l = c.Best(kUpsert).saves_per_second();
    const double ratio = l > 0 ? b / l : 0;
    const bool pass = ratio >= 0.8;
    misses += pass ? 0 : 1;
    std::printf("%-8s %7d | %10.1f %9.1f %6.2f | %10.1f %9.1f %6.2f | %6.2f %-5s",
                SizeName(c.size).c_str(), c.players, b, b * mib, c.Spread(kBackend), l, l * mib,
                c.Spread(kUpsert), ratio, pass ? "PASS" : "MISS");
    if (flags.copy) {
      const double k = c.Best(kCopyIn).saves_per_second();
      std::printf(" | %10.1f %9.1f %6.2f", k, k * mib, c.Spread(kCopyIn));
    }
    std::printf("\n");
  }
  std::printf("\n%d of %zu cases PASS the 0.8x target.\n", static_cast<int>(cases.size()) - misses,
              cases.size());
}

}  // namespace

int main(int argc, char** argv) {
  rolly::bench::TuneAllocator();
  const Flags flags = ParseFlags(argc, argv);
  const char* conninfo = std::getenv("ROLLY_TEST_PG");
  if (conninfo == nullptr || *conninfo == '\0') {
    std::printf("ROLLY_TEST_PG is not set: postgres_benchmark needs a server\n");
    return 0;
  }
  env = new Env;
  env->conninfo = conninfo;
  env->admin = Connect(env->conninfo);
  // No NOTICEs from DROP ... IF EXISTS.
  Exec(env->admin.get(), "SET client_min_messages = warning");
  {
    const PgResult r(PQexec(env->admin.get(),
                            "SELECT version(), current_setting('fsync'), "
                            "current_setting('synchronous_commit')"));
    Check(env->admin.get(), r.get(), PGRES_TUPLES_OK, "SELECT version()");
    std::printf("server: %s\nfsync=%s synchronous_commit=%s\n", PQgetvalue(r.get(), 0, 0),
                PQgetvalue(r.get(), 0, 1), PQgetvalue(r.get(), 0, 2));
  }
  SetUpPeerTables();

  const int max_players = *std::max_element(flags.players.begin(), flags.players.end());
  const Clock::time_point setup = Clock::now();
  const Bytes small = RandomBytes(1, 4 * kKiB);
  for (int p = 0; p < max_players; ++p) {
    env->backends.push_back(std::make_unique<BackendPlayer>(env->conninfo, p));
    env->peers.push_back(std::make_unique<PeerPlayer>(env->conninfo, p));
    // Both copies of every file exist, and the backend knows their versions.
    for (int i = 0; i < 2; ++i) {
      env->backends.back()->Save(small);
      env->peers.back()->Upsert(small);
    }
  }
  std::printf("%d players set up in %.1f s\n", max_players, Seconds(Clock::now() - setup));

  std::vector<Case> cases;
  for (std::size_t size : flags.sizes) {
    const Bytes bytes = RandomBytes(size, size);
    std::printf("%s: copying the bytes for Write(Bytes) costs %.3f ms a save (included)\n",
                SizeName(size).c_str(), CopyMilliseconds(bytes));
    std::fflush(stdout);
    for (int players : flags.players) {
      Case c;
      c.size = size;
      c.players = players;
      for (int rep = 0; rep < flags.repetitions; ++rep) {
        // The order turns each repetition, so no method always follows the same one.
        for (int i = 0; i < kMethods; ++i) {
          const int m = (rep + i) % kMethods;
          if (m == kCopyIn && !flags.copy) continue;
          const Run run = TimedRun(static_cast<Method>(m), bytes, players, flags.seconds);
          c.runs[m].push_back(run);
          std::printf("  %-7s %2d players  rep %d  %-7s %6llu saves %7.2f s %9.1f saves/s\n",
                      SizeName(size).c_str(), players, rep + 1, kMethodNames[m],
                      static_cast<unsigned long long>(run.saves), run.seconds,
                      run.saves_per_second());
          std::fflush(stdout);
        }
      }
      cases.push_back(std::move(c));
    }
  }
  PrintSummary(flags, cases);
  Cleanup();
  return 0;
}
