// Helpers for the PostgreSQL backend's tests: finding the test server (ROLLY_TEST_PG), skipping
// when there is none, a plain libpq connection for looking at and tampering with rows behind the
// backend's back, and fresh user keys. Test code only.
//
// The server. ROLLY_TEST_PG holds a libpq connection string (tools/pg-test-cluster.sh prints one).
// Unset, or set and unreachable, the test binary prints why and exits 77, which ctest counts as
// skipped (SKIP_RETURN_CODE 77); with ROLLY_TEST_PG_REQUIRED=1 (as .ci/run sets) it fails instead.
//
// Thread rules: a TestConnection is used by one thread at a time.

#ifndef ROLLY_STORE_POSTGRES_POSTGRES_TEST_UTIL_H_
#define ROLLY_STORE_POSTGRES_POSTGRES_TEST_UTIL_H_

#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "rolly/core/bytes.h"

namespace rolly::store::pg_test {

// The schema the tests' backends use, apart from a real game's "rolly".
inline constexpr char kSchema[] = "rolly_tests";

// True when ROLLY_TEST_PG_REQUIRED=1: a missing server is then a failure, not a skip.
inline bool ServerRequired() {
  const char* required = std::getenv("ROLLY_TEST_PG_REQUIRED");
  return required != nullptr && std::string_view(required) == "1";
}

// Ends the test binary: exit 77 (skipped) with `why`, or 1 when the server is required.
[[noreturn]] inline void SkipOrFail(const std::string& why) {
  if (ServerRequired()) {
    std::fprintf(stderr, "%s, and ROLLY_TEST_PG_REQUIRED=1: failing\n", why.c_str());
    std::fflush(stderr);
    std::exit(1);
  }
  std::printf("%s: PostgreSQL tests skipped\n", why.c_str());
  std::fflush(stdout);
  std::exit(77);
}

// ROLLY_TEST_PG, or nullopt when unset or empty.
inline std::optional<std::string> ServerConninfoFromEnv() {
  const char* conninfo = std::getenv("ROLLY_TEST_PG");
  if (conninfo == nullptr || *conninfo == '\0') return std::nullopt;
  return std::string(conninfo);
}

// One statement's answer. Results come in binary format: the tests' queries cast every column
// but bytea to text, so Text() gives text and Bytes() gives raw bytes.
class TestResult {
 public:
  explicit TestResult(PGresult* result) : result_(result) {}
  TestResult(TestResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
  TestResult& operator=(TestResult&&) = delete;
  ~TestResult() { PQclear(result_); }

  bool ok() const {
    const ExecStatusType s = result_ ? PQresultStatus(result_) : PGRES_FATAL_ERROR;
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
  }
  std::string error() const {
    return result_ ? PQresultErrorMessage(result_) : std::string("no result");
  }
  std::string sqlstate() const {
    const char* s = result_ ? PQresultErrorField(result_, PG_DIAG_SQLSTATE) : nullptr;
    return s ? s : "";
  }
  int rows() const { return result_ ? PQntuples(result_) : 0; }
  // Rows an INSERT, UPDATE or DELETE touched.
  long affected() const {
    const char* n = result_ ? PQcmdTuples(result_) : nullptr;
    return n && *n ? std::atol(n) : 0;
  }
  bool is_null(int row, int col) const { return PQgetisnull(result_, row, col) != 0; }
  std::string Text(int row, int col) const {
    return std::string(PQgetvalue(result_, row, col),
                       static_cast<std::size_t>(PQgetlength(result_, row, col)));
  }
  long long Int(int row, int col) const { return std::stoll(Text(row, col)); }
  rolly::Bytes Bytes(int row, int col) const {
    const auto* p = reinterpret_cast<const std::uint8_t*>(PQgetvalue(result_, row, col));
    return rolly::Bytes(p, p + PQgetlength(result_, row, col));
  }

 private:
  PGresult* result_;
};

// A plain libpq connection (a superuser's, under tools/pg-test-cluster.sh): row-level security
// does not stop it unless it is made with a plain role.
class TestConnection {
 public:
  // Connects with `conninfo`, then `extra` keyword/value pairs, which win (user, password,
  // application_name...). Check ok() after.
  explicit TestConnection(const std::string& conninfo,
                          std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<const char*> keys = {"dbname"};
    std::vector<const char*> values = {conninfo.c_str()};
    for (const auto& [k, v] : extra) {
      keys.push_back(k.c_str());
      values.push_back(v.c_str());
    }
    keys.push_back("connect_timeout");
    values.push_back("10");
    keys.push_back(nullptr);
    values.push_back(nullptr);
    conn_ = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
    if (ok()) PQclear(PQexec(conn_, "SET client_min_messages = warning"));  // no NOTICEs
  }
  ~TestConnection() { PQfinish(conn_); }
  TestConnection(const TestConnection&) = delete;
  TestConnection& operator=(const TestConnection&) = delete;

  bool ok() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }
  std::string error() const { return conn_ ? PQerrorMessage(conn_) : "out of memory"; }
  int server_pid() const { return PQbackendPID(conn_); }

  // Runs `sql` with text parameters $1, $2, ... (nullopt for NULL).
  TestResult Exec(const std::string& sql,
                  std::initializer_list<std::optional<std::string>> params = {}) {
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats;
    for (const std::optional<std::string>& p : params) {
      values.push_back(p ? p->data() : nullptr);
      lengths.push_back(p ? static_cast<int>(p->size()) : 0);
      formats.push_back(0);
    }
    return TestResult(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                   values.data(), lengths.data(), formats.data(),
                                   /*resultFormat=*/1));
  }

 private:
  PGconn* conn_ = nullptr;
};

// Checks that ROLLY_TEST_PG names a server that answers, before any test runs; otherwise skips
// (exit 77) or fails under ROLLY_TEST_PG_REQUIRED=1. Register it with
// ::testing::AddGlobalTestEnvironment.
class ServerEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::optional<std::string> conninfo = ServerConninfoFromEnv();
    if (!conninfo) SkipOrFail("ROLLY_TEST_PG is not set");
    TestConnection probe(*conninfo);
    if (!probe.ok()) {
      SkipOrFail("ROLLY_TEST_PG is set but its server cannot be reached (" + probe.error() + ")");
    }
  }
};

// `conninfo` with application_name set, in either form libpq takes (key=value, or a URI).
inline std::string WithApplicationName(const std::string& conninfo, const std::string& app) {
  const bool uri = conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0;
  if (!uri) return conninfo + " application_name=" + app;
  return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + "application_name=" + app;
}

// The test server's connection string (after ServerEnvironment has checked it).
inline std::string Conninfo() { return ServerConninfoFromEnv().value_or(""); }

// A user key no other test or run uses: `prefix` and 16 random hex digits.
inline std::string FreshUserKey(std::string_view prefix) {
  static thread_local std::mt19937_64 random(std::random_device{}());
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(random()));
  return std::string(prefix) + digits;
}

}  // namespace rolly::store::pg_test

#endif  // ROLLY_STORE_POSTGRES_POSTGRES_TEST_UTIL_H_
