// PgConnection and PgResult over libpq.

#include "rolly/store/postgres/internal/pg_connection.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <utility>
#include <vector>

namespace rolly::store_internal {
namespace {

// Type OIDs from PostgreSQL's pg_type.dat (permanent).
constexpr unsigned kInt8Oid = 20;
constexpr unsigned kInt4Oid = 23;
constexpr unsigned kTextOid = 25;
constexpr unsigned kByteaOid = 17;

// PostgreSQL 9.5 brought ON CONFLICT and row-level security.
constexpr int kMinServerVersion = 90500;

std::string Trimmed(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "unknown libpq error" : s;
}

// Server notices ("schema already exists, skipping") are not errors; libpq would print them.
void IgnoreNotice(void*, const char*) {}

}  // namespace

PgParam PgParam::Text(std::string_view text) {
  PgParam p;
  p.type_oid_ = kTextOid;
  p.view_ = text;
  return p;
}

PgParam PgParam::Int8(std::int64_t value) {
  PgParam p;
  p.type_oid_ = kInt8Oid;
  p.number_ = std::to_string(value);
  p.owned_ = true;
  return p;
}

PgParam PgParam::Int4(std::int32_t value) {
  PgParam p = Int8(value);
  p.type_oid_ = kInt4Oid;
  return p;
}

PgParam PgParam::Bytea(ByteView bytes) {
  PgParam p;
  p.type_oid_ = kByteaOid;
  p.view_ = AsChars(bytes);
  p.binary_ = true;
  return p;
}

void PgResult::Clear::operator()(pg_result* r) const { PQclear(r); }

PgResult PgResult::Rows(pg_result* result) {
  PgResult r;
  r.result_.reset(result);
  r.ok_ = true;
  return r;
}

PgResult PgResult::Failed(PgFailure failure, std::string message) {
  PgResult r;
  r.failure_ = failure;
  r.message_ = std::move(message);
  return r;
}

PgResult::~PgResult() = default;

int PgResult::rows() const { return result_ ? PQntuples(result_.get()) : 0; }
int PgResult::columns() const { return result_ ? PQnfields(result_.get()) : 0; }

bool PgResult::is_null(int row, int column) const {
  return !result_ || row >= rows() || column >= columns() ||
         PQgetisnull(result_.get(), row, column) != 0;
}

std::string_view PgResult::value(int row, int column) const {
  if (is_null(row, column)) return {};
  return std::string_view(PQgetvalue(result_.get(), row, column),
                          static_cast<std::size_t>(PQgetlength(result_.get(), row, column)));
}

std::optional<std::int64_t> PgResult::integer(int row, int column) const {
  if (is_null(row, column)) return std::nullopt;
  const std::string_view v = value(row, column);
  if (v.size() != 2 && v.size() != 4 && v.size() != 8) return std::nullopt;
  // Binary integers are big-endian two's complement.
  std::uint64_t bits = static_cast<unsigned char>(v[0]) & 0x80 ? ~std::uint64_t{0} : 0;
  for (char c : v) bits = (bits << 8) | static_cast<unsigned char>(c);
  return static_cast<std::int64_t>(bits);
}

PgConnection::PgConnection(const store::PostgresOptions& options)
    : conninfo_(options.conninfo),
      user_key_(options.user_key),
      // libpq takes whole seconds (and treats 1 as 2); round up so the wait is never shorter.
      connect_timeout_s_(std::to_string((options.connect_timeout.count() + 999) / 1000)),
      statement_timeout_ms_(std::to_string(options.statement_timeout.count())) {}

PgConnection::~PgConnection() { Close(); }

void PgConnection::Close() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  prepared_.clear();
}

int PgConnection::server_pid() const { return conn_ ? PQbackendPID(conn_) : 0; }

Status PgConnection::EnsureConnected() {
  if (conn_ != nullptr) return OkStatus();
  // Keywords are read in order and a later one wins: the defaults before the caller's string (which
  // may change them), the timeout and encoding after it (which the backend relies on).
  const std::pair<const char*, const char*> params[] = {
      {"application_name", "rolly_save"},
      {"keepalives", "1"},
      {"keepalives_idle", "30"},
      {"keepalives_interval", "10"},
      {"keepalives_count", "3"},
      {"dbname", conninfo_.c_str()},
      {"connect_timeout", connect_timeout_s_.c_str()},
      {"client_encoding", "UTF8"},
  };
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  for (const auto& [keyword, value] : params) {
    keywords.push_back(keyword);
    values.push_back(value);
  }
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  pg_conn* conn = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1);
  if (conn == nullptr) return StorageFailedError("postgres: out of memory for a connection");
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  if (PQstatus(conn) != CONNECTION_OK) {
    Status s = StorageFailedError(
        fmt::format("postgres: cannot connect: {}", Trimmed(PQerrorMessage(conn))));
    PQfinish(conn);
    return s;
  }
  if (PQserverVersion(conn) < kMinServerVersion) {
    PQfinish(conn);
    return StorageFailedError("postgres: the server is older than PostgreSQL 9.5");
  }
  conn_ = conn;
  PgResult r = Exec(std::string(kSetupConnection),
                    {PgParam::Text(user_key_), PgParam::Text(statement_timeout_ms_)});
  if (!r.ok()) {
    Close();
    return StorageFailedError(fmt::format("postgres: cannot set the session up: {}", r.message()));
  }
  return OkStatus();
}

PgResult PgConnection::Exec(const std::string& sql, std::initializer_list<PgParam> params) {
  if (conn_ == nullptr) return PgResult::Failed(PgFailure::kReconnect, "postgres: not connected");
  std::vector<unsigned> types;
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  for (const PgParam& p : params) {
    types.push_back(p.type_oid());
    values.push_back(p.data());
    lengths.push_back(p.length());
    formats.push_back(p.format());
  }
  const int n = static_cast<int>(params.size());
  pg_result* result = nullptr;
  if (n == 0) {
    result = PQexecParams(conn_, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr,
                          /*resultFormat=*/1);
  } else {
    auto it = prepared_.find(sql);
    if (it == prepared_.end()) {
      std::string name = fmt::format("rolly_{}", prepared_.size());
      result = PQprepare(conn_, name.c_str(), sql.c_str(), n, types.data());
      if (result != nullptr && PQresultStatus(result) == PGRES_COMMAND_OK) {
        PQclear(result);
        result = nullptr;
        it = prepared_.emplace(sql, std::move(name)).first;
      }
    }
    if (it != prepared_.end()) {
      result = PQexecPrepared(conn_, it->second.c_str(), n, values.data(), lengths.data(),
                              formats.data(), /*resultFormat=*/1);
    }
  }
  const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return PgResult::Rows(result);

  std::string message = Trimmed(result ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  PgFailure failure = ClassifySqlState(state ? state : "");
  PQclear(result);
  if (PQstatus(conn_) == CONNECTION_BAD) failure = PgFailure::kReconnect;
  if (failure == PgFailure::kReconnect) Close();
  return PgResult::Failed(failure, "postgres: " + message);
}

}  // namespace rolly::store_internal
