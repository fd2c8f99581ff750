// The PostgreSQL backend's SQL text, option rules and SQLSTATE reading.

#include "rolly/store/postgres/internal/pg_sql.h"

#include <fmt/format.h>

#include <limits>

#include "rolly/core/checksum.h"
#include "rolly/core/utf8.h"

namespace rolly::store_internal {

bool IsValidSchemaName(std::string_view schema) {
  if (schema.empty() || schema.size() > 63) return false;
  for (std::size_t i = 0; i < schema.size(); ++i) {
    const char c = schema[i];
    const bool letter = (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) return false;
  }
  return true;
}

Status CheckPostgresOptions(const store::PostgresOptions& options) {
  if (options.conninfo.find('\0') != std::string::npos) {
    return InvalidInputError("conninfo holds a NUL byte");
  }
  const std::string& key = options.user_key;
  if (key.empty() || key.size() > kMaxUserKeySize) {
    return InvalidInputError(
        fmt::format("user_key must be 1 to {} bytes; it is {}", kMaxUserKeySize, key.size()));
  }
  if (key.find('\0') != std::string::npos || !IsValidUtf8(key)) {
    return InvalidInputError("user_key must be UTF-8 without NUL");
  }
  if (!IsValidSchemaName(options.schema)) {
    return InvalidInputError("schema must match [a-z_][a-z0-9_]{0,62}");
  }
  if (options.pool_size < 1 || options.pool_size > kMaxPoolSize) {
    return InvalidInputError(fmt::format("pool_size must be 1 to {}", kMaxPoolSize));
  }
  if (options.max_object_size < 1 || options.max_object_size > kMaxObjectSizeLimit) {
    return InvalidInputError(fmt::format("max_object_size must be 1 to {}", kMaxObjectSizeLimit));
  }
  constexpr auto kMaxTimeout = std::chrono::milliseconds(std::numeric_limits<std::int32_t>::max());
  if (options.connect_timeout.count() < 1 || options.connect_timeout > kMaxTimeout) {
    return InvalidInputError("connect_timeout must be 1 ms to 2^31 - 1 ms");
  }
  if (options.statement_timeout.count() < 1 || options.statement_timeout > kMaxTimeout) {
    return InvalidInputError("statement_timeout must be 1 ms to 2^31 - 1 ms");
  }
  if (options.max_retries < 0) return InvalidInputError("max_retries must not be negative");
  if (options.retry_budget.count() < 0)
    return InvalidInputError("retry_budget must not be negative");
  return OkStatus();
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::int64_t SchemaLockKey(std::string_view schema) {
  const std::string text = fmt::format("rolly.schema.{}", schema);
  return static_cast<std::int64_t>(Checksum::Of(AsBytes(text)).bits());
}

PgStatements MakeStatements(std::string_view schema) {
  const std::string s = QuoteIdentifier(schema);
  const std::string files = s + ".files";
  const std::string versions = s + ".schema_version";
  PgStatements st;
  st.read_version = fmt::format("SELECT max(version) FROM {}", versions);
  st.lock = "SELECT pg_advisory_xact_lock($1)";
  st.create_schema = fmt::format("CREATE SCHEMA IF NOT EXISTS {}", s);
  st.create_version_table =
      fmt::format("CREATE TABLE IF NOT EXISTS {} (version int NOT NULL)", versions);
  // Version 0 -> 1: the files table and its row-level security.
  const std::string own_row = "user_key = current_setting('rolly.user_key', true)";
  st.upgrades.push_back({
      fmt::format("CREATE TABLE {} ("
                  "user_key text NOT NULL, "
                  "name text NOT NULL, "
                  "version bigint NOT NULL, "
                  "hash bigint NOT NULL, "
                  "size bigint NOT NULL, "
                  "bytes bytea NOT NULL, "
                  "updated_at timestamptz NOT NULL DEFAULT now(), "
                  "PRIMARY KEY (user_key, name))",
                  files),
      fmt::format("ALTER TABLE {} ENABLE ROW LEVEL SECURITY", files),
      fmt::format("ALTER TABLE {} FORCE ROW LEVEL SECURITY", files),
      fmt::format("CREATE POLICY rolly_user_rows ON {} USING ({}) WITH CHECK ({})", files, own_row,
                  own_row),
  });
  st.clear_version = fmt::format("DELETE FROM {}", versions);
  st.set_version = fmt::format("INSERT INTO {} (version) VALUES ($1)", versions);

  st.update = fmt::format(
      "UPDATE {} SET version = version + 1, hash = $4, size = $5, bytes = $6, updated_at = now() "
      "WHERE user_key = $1 AND name = $2 AND version = $3 RETURNING version",
      files);
  st.insert = fmt::format(
      "INSERT INTO {} (user_key, name, version, hash, size, bytes) VALUES ($1, $2, 1, $3, $4, $5) "
      "ON CONFLICT (user_key, name) DO NOTHING RETURNING version",
      files);
  st.read = fmt::format(
      "SELECT version, hash, size, octet_length(bytes)::bigint, substring(bytes from 1 for $3) "
      "FROM {} WHERE user_key = $1 AND name = $2",
      files);
  st.read_version_hash =
      fmt::format("SELECT version, hash FROM {} WHERE user_key = $1 AND name = $2", files);
  st.exists = fmt::format("SELECT version FROM {} WHERE user_key = $1 AND name = $2", files);
  st.remove = fmt::format("DELETE FROM {} WHERE user_key = $1 AND name = $2", files);
  st.list = fmt::format("SELECT name FROM {} WHERE user_key = $1", files);
  return st;
}

PgFailure ClassifySqlState(std::string_view sqlstate) {
  if (sqlstate == "40001" || sqlstate == "40P01") return PgFailure::kRetry;
  if (sqlstate.substr(0, 2) == "08") return PgFailure::kReconnect;
  if (sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03") {
    return PgFailure::kReconnect;
  }
  if (sqlstate == "57014") return PgFailure::kTimedOut;
  if (sqlstate == "53100") return PgFailure::kNoSpace;
  return PgFailure::kOther;
}

}  // namespace rolly::store_internal
