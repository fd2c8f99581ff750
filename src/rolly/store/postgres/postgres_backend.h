// PostgresBackend: saves kept in a PostgreSQL database (or a database that speaks its protocol),
// for cloud saves, dedicated servers and cross-device play. The optional target rolly::postgres is
// the only code that links libpq.
//
// Rows. One row per user and file name: the bytes, a version number, the XXH3-64 hash the client
// computed, the size and the update time (the schema is in docs/storage.md, "PostgreSQL"). The
// backend creates the schema when it is missing and upgrades an older one, each upgrade one
// transaction, recorded in a version table.
//
// One user. A backend is bound to one user key when it is opened and can never read, list, write
// or delete another user's rows: every statement names the key as a parameter, and row-level
// security (forced, keyed on a setting each connection makes once) refuses any other row as a
// second line of defence. PostgreSQL skips row-level security for superusers and roles with
// BYPASSRLS: connect as an ordinary role for the second line to hold.
//
// Compare-and-set. The backend remembers the version of each file it last read or wrote. A write
// of a file it knows updates the row only where the version is still that one; a write of a file it
// knows to be absent, or has not seen, creates the row only where none exists. When another
// writer got there first the write answers Changed and changes nothing (the backend then forgets
// the version, so the next read learns the current one). The store's two-copy rule holds on top.
//
// Integrity. A read that gets the whole file recomputes the hash of its bytes and answers Damaged
// when it (or the size) does not match the row's. A ReadPrefix that gets fewer bytes than the row
// holds cannot be checked against the whole file's hash and is not; the store checks the header's
// own checksum. A row larger than max_object_size (written by another configuration) answers
// Damaged to a Read, never allocating its size; a ReadPrefix within the bound still works.
//
// Bounds. A write larger than max_object_size is refused with NoSpace before anything is sent; a
// server whose disk is full answers NoSpace too. Connections time out after connect_timeout,
// statements after statement_timeout (StorageFailed, "timed out"); TCP keepalives notice a server
// that went silent.
// Serialization failures and dropped connections are retried, at most max_retries times and
// within retry_budget; nothing else is. A write whose commit may have happened before the
// connection dropped is checked on retry (the row holding this write's version and hash means it
// did), so a retry never answers Changed for its own write.
//
// Statuses (see backend.h): Write Ok, NoSpace, StorageFailed, Changed; Read and ReadPrefix Ok,
// NotFound, Damaged, StorageFailed; Exists, Delete and List Ok, StorageFailed. List gives only
// names made by FileName's rules, sorted by bytes whatever the database's collation.
//
// Sessions. Each connection names itself application_name "rolly_save" (unless the connection
// string sets another) and sets rolly.user_key and statement_timeout once, when made.
//
// Thread rules: any thread may call. Operations run on the backend's own pool of connections,
// pool_size threads each holding one connection, never on the caller's thread; callbacks run on
// those threads. Destroying the backend waits for its operations and closes the connections. An
// allocation failing in an operation's work on a connection's thread answers it StorageFailed,
// naming the exception, and drops that connection (the next operation on it connects again).

#ifndef ROLLY_STORE_POSTGRES_POSTGRES_BACKEND_H_
#define ROLLY_STORE_POSTGRES_POSTGRES_BACKEND_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "rolly/core/status.h"
#include "rolly/store/backend.h"

namespace rolly::store {

struct PostgresOptions {
  // A libpq connection string ("host=... port=... dbname=... user=..." or a postgresql:// URI);
  // what it leaves out comes from libpq's environment variables (PGHOST, PGPORT, PGUSER, ...).
  // connect_timeout below replaces any connect_timeout in it.
  std::string conninfo;
  // The user whose rows this backend reads and writes: 1 to 256 bytes of UTF-8 without NUL.
  std::string user_key;
  // The database schema that holds the tables; created when missing. [a-z_][a-z0-9_]{0,62}.
  std::string schema = "rolly";
  // Connections, and so operations that run at once (1 to 64).
  std::size_t pool_size = 4;
  // The largest file a write may send, and a read may take (1 byte to 1 GiB - 1 MiB).
  std::uint64_t max_object_size = 256u << 20;
  // Each at least 1 ms and below 2^31 ms. libpq counts connect_timeout in whole seconds (rounded
  // up here) and waits at least 2 s.
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds statement_timeout{30000};
  // Retries of serialization failures and dropped connections (and of reconnecting), in count and
  // in time; neither negative. Retries back off from 25 ms to 1 s, with jitter.
  int max_retries = 5;
  std::chrono::milliseconds retry_budget{10000};
};

class PostgresBackend : public Backend {
 public:
  // Connects `pool_size` connections, checks the options, and creates or upgrades the schema.
  // InvalidInput for options outside their rules (a connection string libpq cannot parse
  // included); StorageFailed when the server cannot be reached or refuses (the message says why;
  // Open does not retry); NewerVersion when the schema was made by a newer version.
  // Blocks: call it off the game thread.
  static Result<std::unique_ptr<PostgresBackend>> Open(PostgresOptions options);

  ~PostgresBackend() override;

  const PostgresOptions& options() const;

  // The schema version this library writes.
  static constexpr int kSchemaVersion = 1;

  class Impl;

 protected:
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override;
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override;
  void StartExists(const FileName& name, ExistsCallback done) override;
  void StartDelete(const FileName& name, StatusCallback done) override;
  void StartList(ListCallback done) override;

 private:
  explicit PostgresBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_POSTGRES_POSTGRES_BACKEND_H_
