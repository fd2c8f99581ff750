// PgConnection: one libpq connection of the PostgreSQL backend, made on first use and made again
// after it drops; and PgResult, one statement's answer. Internal to rolly::postgres.
//
// A connection is set up once when made: the connect timeout goes into the connection parameters
// (after the caller's connection string, so it wins), then one statement sets rolly.user_key (the
// row-level security policy's key) and statement_timeout for the whole session. Statements are
// parameterized (PQexecParams) and ask for binary results.
//
// Thread rules: one thread at a time per connection (each pool thread owns one).

#ifndef ROLLY_STORE_POSTGRES_INTERNAL_PG_CONNECTION_H_
#define ROLLY_STORE_POSTGRES_INTERNAL_PG_CONNECTION_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/store/postgres/internal/pg_sql.h"
#include "rolly/store/postgres/postgres_backend.h"

// libpq's types, declared here so that its header stays in the .cc file.
struct pg_conn;
struct pg_result;

namespace rolly::store_internal {

// One statement parameter: text, a number (sent as text) or bytes (sent as binary bytea).
class PgParam {
 public:
  static PgParam Text(std::string_view text);
  static PgParam Int8(std::int64_t value);
  static PgParam Int4(std::int32_t value);
  static PgParam Bytea(ByteView bytes);

  unsigned type_oid() const { return type_oid_; }
  // Never null: libpq reads a null value as SQL NULL, and an empty vector's data() may be null.
  const char* data() const { return owned_ ? number_.data() : view_.data() ? view_.data() : ""; }
  int length() const { return static_cast<int>(owned_ ? number_.size() : view_.size()); }
  int format() const { return binary_ ? 1 : 0; }

 private:
  unsigned type_oid_ = 0;
  std::string_view view_;
  std::string number_;
  bool owned_ = false;
  bool binary_ = false;
};

// A statement's answer: rows (binary values), or a failure read from its SQLSTATE and the
// connection's state.
class PgResult {
 public:
  // A successful answer owning `result` (which may be null only for a failure).
  static PgResult Rows(pg_result* result);
  static PgResult Failed(PgFailure failure, std::string message);

  PgResult(PgResult&&) noexcept = default;
  PgResult& operator=(PgResult&&) noexcept = default;
  ~PgResult();

  bool ok() const { return ok_; }
  PgFailure failure() const { return failure_; }
  const std::string& message() const { return message_; }

  int rows() const;
  int columns() const;
  bool is_null(int row, int column) const;
  // The raw binary value (bytea bytes, text bytes).
  std::string_view value(int row, int column) const;
  // An int2, int4 or int8 column's value; nullopt for null or a value of another size.
  std::optional<std::int64_t> integer(int row, int column) const;

 private:
  PgResult() = default;
  struct Clear {
    void operator()(pg_result* r) const;
  };
  std::unique_ptr<pg_result, Clear> result_;
  bool ok_ = false;
  PgFailure failure_ = PgFailure::kOther;
  std::string message_;
};

class PgConnection {
 public:
  // Keeps a copy of what it needs from `options`; does not connect yet.
  explicit PgConnection(const store::PostgresOptions& options);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Connects and sets the session up when not connected. StorageFailed with libpq's or the
  // server's message when it cannot.
  Status EnsureConnected();
  bool connected() const { return conn_ != nullptr; }
  // Drops the connection (the next EnsureConnected makes a new one).
  void Close();

  // Runs one statement (the connection must be connected). A statement with parameters is
  // prepared on this connection the first time it runs and executed by name from then on, so the
  // server parses and plans each statement once per connection, not once per save. A failure that
  // means the connection is gone closes it and answers kReconnect.
  PgResult Exec(const std::string& sql, std::initializer_list<PgParam> params = {});

  // The server's process id for this connection (pg_backend_pid), 0 when not connected; tests use
  // it to terminate the connection from another session.
  int server_pid() const;

 private:
  const std::string conninfo_;
  const std::string user_key_;
  const std::string connect_timeout_s_;
  const std::string statement_timeout_ms_;
  pg_conn* conn_ = nullptr;
  // The statements prepared on this connection: SQL text -> statement name. Cleared with it.
  std::map<std::string, std::string> prepared_;
};

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_POSTGRES_INTERNAL_PG_CONNECTION_H_
