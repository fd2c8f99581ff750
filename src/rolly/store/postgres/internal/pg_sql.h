// The PostgreSQL backend's SQL, its option rules and its reading of SQLSTATE codes: pure functions
// that need no server, so they are tested on their own. Internal to rolly::postgres.
//
// Every statement takes the user key, the file name and the bytes as parameters ($1, $2, ...);
// the only text ever spliced into SQL is the schema name, which must pass its rule and is then
// quoted as an identifier besides.
//
// Thread rules: plain values and pure functions.

#ifndef ROLLY_STORE_POSTGRES_INTERNAL_PG_SQL_H_
#define ROLLY_STORE_POSTGRES_INTERNAL_PG_SQL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/status.h"
#include "rolly/store/postgres/postgres_backend.h"

namespace rolly::store_internal {

// Bounds of the options beyond those in the header's comments.
inline constexpr std::size_t kMaxPoolSize = 64;
inline constexpr std::size_t kMaxUserKeySize = 256;
// bytea holds at most 1 GiB; the rest is left for the row and the protocol.
inline constexpr std::uint64_t kMaxObjectSizeLimit = (std::uint64_t{1} << 30) - (1u << 20);

// InvalidInput naming the first option outside its rule; Ok otherwise.
Status CheckPostgresOptions(const store::PostgresOptions& options);

// True for a schema name of [a-z_][a-z0-9_]{0,62}.
bool IsValidSchemaName(std::string_view schema);

// `"name"`, with any '"' doubled (PostgreSQL's quote_ident, always quoting).
std::string QuoteIdentifier(std::string_view name);

// The key of the advisory lock that guards creating or upgrading `schema`.
std::int64_t SchemaLockKey(std::string_view schema);

// The statements of one schema. Parameters are listed with each.
struct PgStatements {
  // () -> version int (null when the table is empty). Fails with 42P01 or 3F000 when there is no
  // version table yet.
  std::string read_version;
  // ($1 bigint lock key). Run first in the upgrade transaction.
  std::string lock;
  // () Create the schema, then the version table, when missing (inside the upgrade transaction).
  std::string create_schema;
  std::string create_version_table;
  // upgrades[v] takes the schema from version v to v + 1 (v from 0), statements run in order.
  std::vector<std::vector<std::string>> upgrades;
  // () then ($1 int): records the version reached.
  std::string clear_version;
  std::string set_version;

  // ($1 user_key text, $2 name text, $3 expected version bigint, $4 hash bigint, $5 size bigint,
  //  $6 bytes bytea) -> version bigint; no row when the version is not $3.
  std::string update;
  // ($1 user_key, $2 name, $3 hash bigint, $4 size bigint, $5 bytes bytea) -> version bigint;
  // no row when the row exists.
  std::string insert;
  // ($1 user_key, $2 name, $3 max bytes int) -> version bigint, hash bigint, size bigint,
  // stored length bigint, the first $3 bytes bytea.
  std::string read;
  // ($1 user_key, $2 name) -> version bigint, hash bigint. For checking a write after a dropped
  // connection.
  std::string read_version_hash;
  // ($1 user_key, $2 name) -> version bigint.
  std::string exists;
  // ($1 user_key, $2 name).
  std::string remove;
  // ($1 user_key) -> name text.
  std::string list;
};

// The statements for `schema` (which must be valid).
PgStatements MakeStatements(std::string_view schema);

// The statement run once on each new connection: ($1 user key text, $2 statement timeout text in
// milliseconds). Sets rolly.user_key, which the row-level security policy compares with.
inline constexpr std::string_view kSetupConnection =
    "SELECT set_config('rolly.user_key', $1, false), set_config('statement_timeout', $2, false)";

// What a failed statement means for the operation that ran it.
enum class PgFailure {
  kRetry,      // serialization failure or deadlock: run the operation again
  kReconnect,  // the connection is gone or going: reconnect, then run it again
  kTimedOut,   // statement_timeout cancelled it: StorageFailed, no retry
  kNoSpace,    // the server's disk is full: NoSpace
  kOther,      // StorageFailed with the server's message
};

// Reads a five-character SQLSTATE ("" when the failure has none, e.g. a lost connection: then the
// connection's own state decides).
PgFailure ClassifySqlState(std::string_view sqlstate);

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_POSTGRES_INTERNAL_PG_SQL_H_
