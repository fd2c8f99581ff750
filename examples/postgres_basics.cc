// Cloud saves: the store over a PostgreSQL backend. The backend is bound to one user key and
// writes with compare-and-set, so two devices of the same player never silently overwrite each
// other; the store keeps its two copies per slot on top, as on a disk.
//
// Usage: postgres_basics [CONNINFO]   (default: the ROLLY_TEST_PG environment variable)
// CONNINFO is a libpq connection string, e.g. "host=127.0.0.1 port=5432 dbname=rolly user=game".
// Exits 77 (skipped) when neither is given.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "rolly/core/mailbox.h"
#include "rolly/core/worker_pool.h"
#include "rolly/store/postgres/postgres_backend.h"
#include "rolly/store/store.h"

int main(int argc, char** argv) {
  const char* env = std::getenv("ROLLY_TEST_PG");
  const std::string conninfo = argc > 1 ? argv[1] : (env != nullptr ? env : "");
  if (conninfo.empty()) {
    std::printf("no server: set ROLLY_TEST_PG to a libpq connection string (or pass one)\n");
    return 77;
  }

  // Opening connects, and creates the schema when missing: it blocks, so a game does it off the
  // game thread (at sign-in, on a loading screen).
  rolly::store::PostgresOptions options;
  options.conninfo = conninfo;
  options.user_key = "player-1";
  options.pool_size = 2;
  rolly::Result<std::unique_ptr<rolly::store::PostgresBackend>> backend =
      rolly::store::PostgresBackend::Open(options);
  if (!backend.ok()) {
    std::fprintf(stderr, "cannot open the backend: %s\n", backend.status().ToString().c_str());
    return 1;
  }

  rolly::WorkerPool workers(2);
  rolly::Mailbox mailbox;
  int failures = 0;
  {
    rolly::store::Store store(**backend, workers, mailbox);

    rolly::format::File file;
    file.header.title = "The Harbour";
    file.header.save_time_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
    const std::string state = "gold=120;quest=lighthouse;";
    file.chunks.emplace_back(rolly::format::kTestChunk, "state",
                             rolly::Bytes(state.begin(), state.end()));

    store.Save("Cloud 1", std::move(file), [&failures](rolly::Result<rolly::store::SaveInfo> r) {
      if (!r.ok()) {
        std::fprintf(stderr, "save failed: %s\n", r.status().ToString().c_str());
        ++failures;
        return;
      }
      std::printf("saved %s: copy %c, sequence %llu, %llu bytes\n", r->slot.c_str(),
                  rolly::store::CopyLetter(r->copy), static_cast<unsigned long long>(r->sequence),
                  static_cast<unsigned long long>(r->size));
    });
    store.Load("Cloud 1", [&failures](rolly::Result<rolly::store::LoadResult> r) {
      if (!r.ok()) {
        std::fprintf(stderr, "load failed: %s\n", r.status().ToString().c_str());
        ++failures;
        return;
      }
      const rolly::Bytes& loaded = r->file.chunks.at(0).data();
      std::printf("loaded Cloud 1 from copy %c: \"%s\", sequence %llu, state \"%.*s\"\n",
                  rolly::store::CopyLetter(r->copy), r->file.header.title.c_str(),
                  static_cast<unsigned long long>(r->file.header.sequence),
                  static_cast<int>(loaded.size()), reinterpret_cast<const char*>(loaded.data()));
    });

    const rolly::Status flushed = store.FlushFor(rolly::store::Store::kQuitFlush);
    if (!flushed.ok()) {
      std::fprintf(stderr, "flush: %s\n", flushed.ToString().c_str());
      return 1;
    }
  }
  return failures == 0 ? 0 : 1;
}
