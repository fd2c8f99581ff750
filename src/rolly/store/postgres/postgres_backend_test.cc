// PostgresBackend against a real server (ROLLY_TEST_PG; skipped with exit 77 without one, failed
// under ROLLY_TEST_PG_REQUIRED=1): every status of every operation, options and their bounds,
// isolation between users (through the backend and through row-level security in raw SQL), no
// lost update under sixteen writers, and uploads cut off mid-statement. The conformance suite runs
// in the same binary (postgres_backend_conformance_test.cc); kills of the server itself are in
// postgres_kill_test.cc.

#include "rolly/store/postgres/postgres_backend.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rolly/core/checksum.h"
#include "rolly/core/failing_allocation.h"
#include "rolly/core/status_matchers.h"
#include "rolly/store/backend.h"
#include "rolly/store/file_name.h"
#include "rolly/store/postgres/postgres_test_util.h"
#include "rolly/store/store_test_util.h"

namespace rolly::store {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

[[maybe_unused]] ::testing::Environment* const kServer =
    ::testing::AddGlobalTestEnvironment(new pg_test::ServerEnvironment);

const std::string kFiles = std::string(pg_test::kSchema) + ".files";

FileName Slot(std::string_view slot, Copy copy = Copy::kA) {
  return FileName::ForSlot("pg", slot, copy).value();
}

std::int64_t HashOf(const Bytes& bytes) {
  return static_cast<std::int64_t>(Checksum::Of(bytes).bits());
}

// A loopback port nothing listens on (bound, then closed).
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return 1;  // port 1: nothing listens there either
  }
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// A row as the database holds it.
struct Row {
  std::int64_t version = 0;
  std::int64_t hash = 0;
  std::int64_t size = 0;
  Bytes bytes;
};

class PostgresBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = std::make_unique<pg_test::TestConnection>(pg_test::Conninfo());
    ASSERT_TRUE(admin_->ok()) << admin_->error();
  }

  void TearDown() override {
    for (const std::string& key : keys_) {
      if (!AsUser(key)) continue;
      pg_test::TestResult r = admin_->Exec("DELETE FROM " + kFiles + " WHERE user_key = $1", {key});
      // No schema nor table yet when no backend of this run has opened.
      EXPECT_TRUE(r.ok() || r.sqlstate() == "3F000" || r.sqlstate() == "42P01") << r.error();
    }
  }

  PostgresOptions Options(const std::string& user_key) {
    PostgresOptions options;
    options.conninfo = pg_test::Conninfo();
    options.user_key = user_key;
    options.schema = pg_test::kSchema;
    options.pool_size = 2;
    return options;
  }

  // A fresh user key whose rows are deleted after the test.
  std::string NewUser(std::string_view prefix = "test-") {
    keys_.push_back(pg_test::FreshUserKey(prefix));
    return keys_.back();
  }

  std::unique_ptr<PostgresBackend> Open(PostgresOptions options) {
    Result<std::unique_ptr<PostgresBackend>> backend = PostgresBackend::Open(std::move(options));
    EXPECT_OK(backend);
    return backend.ok() ? *std::move(backend) : nullptr;
  }
  std::unique_ptr<PostgresBackend> Open(const std::string& user_key) {
    return Open(Options(user_key));
  }

  // Makes the admin connection's row-level security key `key` (a superuser bypasses the policy
  // anyway; a plain role needs it).
  bool AsUser(const std::string& key) {
    pg_test::TestResult r = admin_->Exec("SELECT set_config('rolly.user_key', $1, false)", {key});
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok();
  }

  // The row of `key` and `name`, read behind the backend; nullopt when there is none.
  std::optional<Row> RowOf(const std::string& key, const FileName& name) {
    if (!AsUser(key)) return std::nullopt;
    pg_test::TestResult r = admin_->Exec(
        "SELECT version::text, hash::text, size::text, bytes FROM " + kFiles +
            " WHERE user_key = $1 AND name = $2",
        {key, name.str()});
    EXPECT_TRUE(r.ok()) << r.error();
    if (!r.ok() || r.rows() == 0) return std::nullopt;
    return Row{r.Int(0, 0), r.Int(0, 1), r.Int(0, 2), r.Bytes(0, 3)};
  }

  // Runs `sql` on the admin connection as `key`, expecting success.
  void Tamper(const std::string& key, const FileName& name, const std::string& set) {
    ASSERT_TRUE(AsUser(key));
    pg_test::TestResult r = admin_->Exec(
        "UPDATE " + kFiles + " SET " + set + " WHERE user_key = $1 AND name = $2", {key, name.str()});
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(r.affected(), 1);
  }

  std::unique_ptr<pg_test::TestConnection> admin_;
  std::vector<std::string> keys_;
};

// ---------------------------------------------------------------------------------------------
// Open: options, unreachable servers, schema versions.

TEST_F(PostgresBackendTest, OptionsOutsideTheirRulesAreInvalidInput) {
  const std::string key = NewUser();
  const std::vector<std::pair<std::string, std::function<void(PostgresOptions&)>>> cases = {
      {"empty user key", [](PostgresOptions& o) { o.user_key.clear(); }},
      {"257-byte user key", [](PostgresOptions& o) { o.user_key = std::string(257, 'k'); }},
      {"NUL in user key", [](PostgresOptions& o) { o.user_key = std::string("a\0b", 3); }},
      {"user key not UTF-8", [](PostgresOptions& o) { o.user_key = "\xff\xfe"; }},
      {"empty schema", [](PostgresOptions& o) { o.schema.clear(); }},
      {"upper-case schema", [](PostgresOptions& o) { o.schema = "Rolly"; }},
      {"schema starting with a digit", [](PostgresOptions& o) { o.schema = "1rolly"; }},
      {"schema with '-'", [](PostgresOptions& o) { o.schema = "rolly-tests"; }},
      {"schema with SQL", [](PostgresOptions& o) { o.schema = "x; DROP TABLE y"; }},
      {"schema with a quote", [](PostgresOptions& o) { o.schema = "x\"y"; }},
      {"64-byte schema", [](PostgresOptions& o) { o.schema = std::string(64, 's'); }},
      {"pool_size 0", [](PostgresOptions& o) { o.pool_size = 0; }},
      {"max_object_size 0", [](PostgresOptions& o) { o.max_object_size = 0; }},
      {"connect_timeout 0", [](PostgresOptions& o) { o.connect_timeout = std::chrono::milliseconds(0); }},
      {"statement_timeout 0",
       [](PostgresOptions& o) { o.statement_timeout = std::chrono::milliseconds(0); }},
      {"negative max_retries", [](PostgresOptions& o) { o.max_retries = -1; }},
      {"negative retry_budget",
       [](PostgresOptions& o) { o.retry_budget = std::chrono::milliseconds(-1); }},
      {"conninfo that does not parse", [](PostgresOptions& o) { o.conninfo = "host='unterminated"; }},
  };
  for (const auto& [what, change] : cases) {
    PostgresOptions options = Options(key);
    change(options);
    EXPECT_THAT(PostgresBackend::Open(options), StatusIs(StatusCode::kInvalidInput)) << what;
  }
}

TEST_F(PostgresBackendTest, OptionsAtTheirLimitsOpen) {
  // A 256-byte user key (ASCII, and four-byte UTF-8) and a 63-byte schema.
  PostgresOptions ascii = Options(NewUser(std::string(240, 'k')));
  ASSERT_EQ(ascii.user_key.size(), 256u);
  auto backend = Open(ascii);
  ASSERT_NE(backend, nullptr);
  ASSERT_OK(WriteNow(*backend, Slot("limit"), BytesOf("ascii")));

  std::string emoji;
  for (int i = 0; i < 64; ++i) emoji += "\xF0\x9F\x8E\xAE";  // U+1F3AE, four bytes
  keys_.push_back(emoji);
  ASSERT_OK_AND_ASSIGN(auto wide, PostgresBackend::Open(Options(emoji)));
  ASSERT_OK(WriteNow(*wide, Slot("limit"), BytesOf("emoji")));
  ASSERT_OK_AND_ASSIGN(Bytes back, ReadNow(*backend, Slot("limit")));
  EXPECT_EQ(back, BytesOf("ascii"));

  const std::string schema = "rolly_t_" + pg_test::FreshUserKey("") + std::string(39, 'x');
  ASSERT_EQ(schema.size(), 63u);
  PostgresOptions long_schema = Options(NewUser());
  long_schema.schema = schema;
  {
    auto in_schema = Open(long_schema);
    ASSERT_NE(in_schema, nullptr);
    EXPECT_OK(WriteNow(*in_schema, Slot("limit"), BytesOf("schema")));
  }
  pg_test::TestResult dropped = admin_->Exec("DROP SCHEMA \"" + schema + "\" CASCADE");
  EXPECT_TRUE(dropped.ok()) << dropped.error();
}

TEST_F(PostgresBackendTest, UnreachableServerIsStorageFailed) {
  PostgresOptions options = Options(NewUser());
  options.conninfo =
      "host=127.0.0.1 port=" + std::to_string(ClosedPort()) + " dbname=rolly_test user=nobody";
  options.connect_timeout = std::chrono::milliseconds(2000);
  EXPECT_THAT(PostgresBackend::Open(options),
              StatusIs(StatusCode::kStorageFailed, HasSubstr("connect")));
}

TEST_F(PostgresBackendTest, SchemaOfANewerVersionIsNewerVersion) {
  const std::string schema = "rolly_t_" + pg_test::FreshUserKey("");
  PostgresOptions options = Options(NewUser());
  options.schema = schema;
  {
    auto backend = Open(options);  // creates the schema at kSchemaVersion
    ASSERT_NE(backend, nullptr);
    ASSERT_OK(WriteNow(*backend, Slot("kept"), BytesOf("kept")));
  }
  pg_test::TestResult bumped = admin_->Exec(
      "UPDATE \"" + schema + "\".schema_version SET version = $1",
      {std::to_string(PostgresBackend::kSchemaVersion + 1)});
  ASSERT_TRUE(bumped.ok()) << bumped.error();
  ASSERT_EQ(bumped.affected(), 1);
  EXPECT_THAT(PostgresBackend::Open(options), StatusIs(StatusCode::kNewerVersion));

  // Back at this version it opens, and nothing was touched.
  ASSERT_TRUE(admin_->Exec("UPDATE \"" + schema + "\".schema_version SET version = $1",
                           {std::to_string(PostgresBackend::kSchemaVersion)})
                  .ok());
  {
    auto backend = Open(options);
    ASSERT_NE(backend, nullptr);
    ASSERT_OK_AND_ASSIGN(Bytes kept, ReadNow(*backend, Slot("kept")));
    EXPECT_EQ(kept, BytesOf("kept"));
  }
  pg_test::TestResult dropped = admin_->Exec("DROP SCHEMA \"" + schema + "\" CASCADE");
  EXPECT_TRUE(dropped.ok()) << dropped.error();
}

// ---------------------------------------------------------------------------------------------
// Write: Ok, NoSpace, Changed, StorageFailed.

TEST_F(PostgresBackendTest, WriteAtMaxObjectSizeIsOkAndOnePastIsNoSpaceSendingNothing) {
  const std::string key = NewUser();
  PostgresOptions options = Options(key);
  options.max_object_size = 4096;
  auto backend = Open(options);
  ASSERT_NE(backend, nullptr);

  const FileName name = Slot("bound");
  ASSERT_OK(WriteNow(*backend, name, PatternBytes(4096, 1)));
  std::optional<Row> before = RowOf(key, name);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->size, 4096);
  EXPECT_EQ(before->bytes, PatternBytes(4096, 1));

  EXPECT_THAT(WriteNow(*backend, name, PatternBytes(4097, 2)),
              StatusIs(StatusCode::kNoSpace, HasSubstr("max_object_size")));
  std::optional<Row> after = RowOf(key, name);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->version, before->version);
  EXPECT_EQ(after->bytes, before->bytes);

  // Nor is a row made for a new name.
  EXPECT_THAT(WriteNow(*backend, Slot("never"), PatternBytes(4097, 3)),
              StatusIs(StatusCode::kNoSpace));
  EXPECT_FALSE(RowOf(key, Slot("never")).has_value());
  // The backend still knows the row's version: the next write within the bound is Ok.
  ASSERT_OK(WriteNow(*backend, name, PatternBytes(4000, 4)));
  EXPECT_EQ(RowOf(key, name)->version, before->version + 1);
}

TEST_F(PostgresBackendTest, RowsHoldVersionHashAndSize) {
  const std::string key = NewUser();
  auto backend = Open(key);
  ASSERT_NE(backend, nullptr);
  const FileName name = Slot("row");
  for (int i = 1; i <= 3; ++i) {
    const Bytes bytes = PatternBytes(1000u * static_cast<std::size_t>(i), static_cast<std::uint8_t>(i));
    ASSERT_OK(WriteNow(*backend, name, bytes));
    std::optional<Row> row = RowOf(key, name);
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->version, i);
    EXPECT_EQ(row->hash, HashOf(bytes));
    EXPECT_EQ(row->size, static_cast<std::int64_t>(bytes.size()));
    EXPECT_EQ(row->bytes, bytes);
  }
}

TEST_F(PostgresBackendTest, WriteAfterAnotherWriterIsChangedAndChangesNothing) {
  const std::string key = NewUser();
  auto first = Open(key);
  auto second = Open(key);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const FileName name = Slot("contended");

  // Both create the file having seen it absent: the second is Changed.
  ASSERT_OK_AND_ASSIGN(bool exists1, ExistsNow(*first, name));
  ASSERT_OK_AND_ASSIGN(bool exists2, ExistsNow(*second, name));
  ASSERT_FALSE(exists1 || exists2);
  ASSERT_OK(WriteNow(*first, name, BytesOf("first")));
  EXPECT_THAT(WriteNow(*second, name, BytesOf("second")),
              StatusIs(StatusCode::kChanged, HasSubstr("exists")));
  EXPECT_EQ(RowOf(key, name)->bytes, BytesOf("first"));

  // After reading, the second may write; then the first's version is stale.
  ASSERT_OK_AND_ASSIGN(Bytes seen, ReadNow(*second, name));
  EXPECT_EQ(seen, BytesOf("first"));
  ASSERT_OK(WriteNow(*second, name, BytesOf("second")));
  EXPECT_THAT(WriteNow(*first, name, BytesOf("first again")), StatusIs(StatusCode::kChanged));
  std::optional<Row> row = RowOf(key, name);
  EXPECT_EQ(row->bytes, BytesOf("second"));
  EXPECT_EQ(row->version, 2);

  // A backend that never saw the file does not overwrite it.
  auto third = Open(key);
  ASSERT_NE(third, nullptr);
  EXPECT_THAT(WriteNow(*third, name, BytesOf("third")), StatusIs(StatusCode::kChanged));
  EXPECT_EQ(RowOf(key, name)->bytes, BytesOf("second"));

  // A file deleted by another backend: the write of a known version is Changed, and after
  // learning the file is absent the write creates it again.
  ASSERT_OK_AND_ASSIGN(Bytes again, ReadNow(*first, name));
  EXPECT_EQ(again, BytesOf("second"));
  ASSERT_OK(DeleteNow(*second, name));
  EXPECT_THAT(WriteNow(*first, name, BytesOf("late")), StatusIs(StatusCode::kChanged));
  EXPECT_FALSE(RowOf(key, name).has_value());
  EXPECT_THAT(ReadNow(*first, name), StatusIs(StatusCode::kNotFound));
  ASSERT_OK(WriteNow(*first, name, BytesOf("reborn")));
  EXPECT_EQ(RowOf(key, name)->bytes, BytesOf("reborn"));
  EXPECT_EQ(RowOf(key, name)->version, 1);
}

TEST_F(PostgresBackendTest, WriteBlockedPastStatementTimeoutIsStorageFailedNamingTheTimeout) {
  const std::string key = NewUser();
  PostgresOptions options = Options(key);
  options.statement_timeout = std::chrono::milliseconds(300);
  auto backend = Open(options);
  ASSERT_NE(backend, nullptr);
  const FileName name = Slot("locked");
  ASSERT_OK(WriteNow(*backend, name, BytesOf("before")));

  // Another session holds the row: the write waits for it past statement_timeout.
  pg_test::TestConnection locker(pg_test::Conninfo());
  ASSERT_TRUE(locker.ok()) << locker.error();
  ASSERT_TRUE(locker.Exec("SELECT set_config('rolly.user_key', $1, false)", {key}).ok());
  ASSERT_TRUE(locker.Exec("BEGIN").ok());
  pg_test::TestResult locked = locker.Exec(
      "SELECT 1 FROM " + kFiles + " WHERE user_key = $1 AND name = $2 FOR UPDATE", {key, name.str()});
  ASSERT_TRUE(locked.ok()) << locked.error();
  ASSERT_EQ(locked.rows(), 1);

  EXPECT_THAT(WriteNow(*backend, name, PatternBytes(1 << 20, 5)),
              StatusIs(StatusCode::kStorageFailed, HasSubstr("statement_timeout")));
  ASSERT_TRUE(locker.Exec("ROLLBACK").ok());
  std::optional<Row> row = RowOf(key, name);
  EXPECT_EQ(row->bytes, BytesOf("before"));
  EXPECT_EQ(row->version, 1);

  // Once the lock is gone the same backend writes (it still knows version 1).
  ASSERT_OK(WriteNow(*backend, name, BytesOf("after")));
  EXPECT_EQ(RowOf(key, name)->version, 2);
}

// Every operation answers StorageFailed while the table is locked past statement_timeout, and
// works again once it is released.
TEST_F(PostgresBackendTest, EveryOperationIsStorageFailedWhileTheTableIsLocked) {
  const std::string key = NewUser();
  PostgresOptions options = Options(key);
  options.statement_timeout = std::chrono::milliseconds(250);
  auto backend = Open(options);
  ASSERT_NE(backend, nullptr);
  const FileName name = Slot("table-locked");
  ASSERT_OK(WriteNow(*backend, name, BytesOf("held")));

  pg_test::TestConnection locker(pg_test::Conninfo());
  ASSERT_TRUE(locker.ok()) << locker.error();
  ASSERT_TRUE(locker.Exec("BEGIN").ok());
  pg_test::TestResult lock = locker.Exec("LOCK TABLE " + kFiles + " IN ACCESS EXCLUSIVE MODE");
  ASSERT_TRUE(lock.ok()) << lock.error();

  const auto failed = StatusIs(StatusCode::kStorageFailed, HasSubstr("statement_timeout"));
  EXPECT_THAT(WriteNow(*backend, name, BytesOf("new")), failed);
  EXPECT_THAT(WriteNow(*backend, Slot("fresh"), BytesOf("new")), failed);
  EXPECT_THAT(ReadNow(*backend, name), failed);
  EXPECT_THAT(ReadPrefixNow(*backend, name, 2), failed);
  EXPECT_THAT(ExistsNow(*backend, name), failed);
  EXPECT_THAT(DeleteNow(*backend, name), failed);
  EXPECT_THAT(ListNow(*backend), failed);
  ASSERT_TRUE(locker.Exec("ROLLBACK").ok());

  // After a failed delete the backend re-learns the version before writing: read, then write.
  ASSERT_OK_AND_ASSIGN(Bytes held, ReadNow(*backend, name));
  EXPECT_EQ(held, BytesOf("held"));
  EXPECT_OK(WriteNow(*backend, name, BytesOf("new")));
  EXPECT_OK(ExistsNow(*backend, name));
  ASSERT_OK_AND_ASSIGN(std::vector<FileName> listed, ListNow(*backend));
  EXPECT_EQ(listed, std::vector<FileName>{name});
  EXPECT_OK(DeleteNow(*backend, name));
}

TEST_F(PostgresBackendTest, DroppedConnectionIsRetriedOrStorageFailedWithoutRetries) {
  const std::string key = NewUser();
  for (const int retries : {5, 0}) {
    const std::string app = "rolly_drop_" + pg_test::FreshUserKey("");
    PostgresOptions options = Options(key);
    options.conninfo = pg_test::WithApplicationName(options.conninfo, app);
    options.pool_size = 1;
    options.max_retries = retries;
    auto backend = Open(options);
    ASSERT_NE(backend, nullptr);
    const FileName name = Slot("drop");
    ASSERT_OK(ExistsNow(*backend, name));
    pg_test::TestResult killed = admin_->Exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", {app});
    ASSERT_TRUE(killed.ok()) << killed.error();
    ASSERT_EQ(killed.rows(), 1);
    // pg_terminate_backend only signals: wait until the session is gone.
    for (int i = 0; i < 500; ++i) {
      if (admin_->Exec("SELECT 1 FROM pg_stat_activity WHERE application_name = $1", {app}).rows() ==
          0) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (retries > 0) {
      EXPECT_OK(ListNow(*backend)) << "retries " << retries;
    } else {
      EXPECT_THAT(ListNow(*backend), StatusIs(StatusCode::kStorageFailed)) << "retries 0";
      EXPECT_OK(ListNow(*backend)) << "the next operation reconnects";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Read: Ok, NotFound, Damaged.

TEST_F(PostgresBackendTest, ReadOfARowThatDoesNotMatchItsHashOrSizeIsDamaged) {
  const std::string key = NewUser();
  auto backend = Open(key);
  ASSERT_NE(backend, nullptr);
  const Bytes bytes = PatternBytes(5000, 6);
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"a flipped byte", "bytes = set_byte(bytes, 4000, get_byte(bytes, 4000) # 1)"},
      {"bytes cut short", "bytes = substring(bytes from 1 for 4999)"},
      {"bytes made longer", "bytes = bytes || '\\x00'::bytea"},
      {"another hash", "hash = hash # 1"},
      {"another size", "size = size + 1"},
      {"other bytes, same length", "bytes = decode(repeat('00', 5000), 'hex')"},
  };
  for (std::size_t i = 0; i < damages.size(); ++i) {
    const FileName name = Slot("damaged" + std::to_string(i));
    ASSERT_OK(WriteNow(*backend, name, bytes));
    ASSERT_OK_AND_ASSIGN(Bytes good, ReadNow(*backend, name));
    ASSERT_EQ(good, bytes);
    Tamper(key, name, damages[i].second);
    EXPECT_THAT(ReadNow(*backend, name), StatusIs(StatusCode::kDamaged)) << damages[i].first;
    // A prefix reaching the end of the file is checked too.
    EXPECT_THAT(ReadPrefixNow(*backend, name, 1 << 20), StatusIs(StatusCode::kDamaged))
        << damages[i].first;
  }
}

TEST_F(PostgresBackendTest, ReadOfAMissingRowIsNotFoundAndExistsIsFalse) {
  const std::string key = NewUser();
  auto backend = Open(key);
  ASSERT_NE(backend, nullptr);
  EXPECT_THAT(ReadNow(*backend, Slot("none")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(ReadPrefixNow(*backend, Slot("none"), 8), StatusIs(StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(bool exists, ExistsNow(*backend, Slot("none")));
  EXPECT_FALSE(exists);
  EXPECT_OK(DeleteNow(*backend, Slot("none")));
  ASSERT_OK_AND_ASSIGN(std::vector<FileName> listed, ListNow(*backend));
  EXPECT_TRUE(listed.empty());
}

// A connection thread's work whose allocation fails answers StorageFailed, once, and the backend
// goes on (the connection, in a state no one knows, is dropped and made again). One connection, so
// that every call runs on the one thread the callback of a call before arms (and one after
// disarms); each call is swept over n = 0, 1, 2... until its work makes fewer allocations.
TEST_F(PostgresBackendTest, AConnectionThreadsAllocationThatFailsAnswersOnce) {
  const std::string key = NewUser();
  PostgresOptions options = Options(key);
  options.pool_size = 1;
  auto backend = Open(options);
  ASSERT_NE(backend, nullptr);
  const FileName kept = Slot("kept");
  const FileName other = Slot("other");
  ASSERT_OK(WriteNow(*backend, kept, Bytes(100, 7)));
  using Call = std::function<void(Backend&, std::function<void(Status)>)>;
  const std::pair<const char*, Call> calls[] = {
      {"Write", [&](Backend& b, auto done) { b.Write(other, Bytes(300, 1), std::move(done)); }},
      {"Read", [&](Backend& b, auto done) {
         b.Read(kept, [done](Result<Bytes> r) { done(r.status()); });
       }},
      {"Exists", [&](Backend& b, auto done) {
         b.Exists(kept, [done](Result<bool> r) { done(r.status()); });
       }},
      {"Delete", [&](Backend& b, auto done) { b.Delete(other, std::move(done)); }},
      {"List", [&](Backend& b, auto done) {
         b.List([done](Result<std::vector<FileName>> r) { done(r.status()); });
       }},
  };
  for (const auto& [name, call] : calls) {
    bool went_through = false;
    long failures = 0;
    for (long n = 0; n < 10'000 && !went_through; ++n) {
      SCOPED_TRACE(std::string(name) + ", connection thread allocation " + std::to_string(n) +
                   " failing");
      std::promise<void> armed;
      backend->Exists(kept, [n, &armed](Result<bool>) {
        test_support::FailAllocationAfter(n);
        armed.set_value();
      });
      armed.get_future().wait();
      std::promise<Status> answered;
      std::atomic<int> answers{0};
      call(*backend, [&](Status s) {
        if (answers.fetch_add(1) == 0) answered.set_value(std::move(s));
      });
      const Status answer = answered.get_future().get();
      // Met when the call's work took the failure: not when the disarming call's work did, nor
      // when the thread is still armed once that call answers (probed with n + 1 allocations).
      std::promise<bool> disarmed;
      backend->Exists(kept, [n, &disarmed](Result<bool> r) {
        bool met = r.ok();
        try {
          for (long i = 0; i <= n; ++i) ::operator delete(::operator new(1));
        } catch (const std::bad_alloc&) {
          met = false;
        }
        test_support::FailAllocationAfter(-1);
        disarmed.set_value(met);
      });
      const bool met = disarmed.get_future().get();
      went_through = !met;
      failures += met ? 1 : 0;
      EXPECT_EQ(answers.load(), 1);
      // (A write after one that threw may find the row its version cache did not note: Changed,
      // which sends the store to read the copies again, as after another writer.)
      EXPECT_TRUE(answer.ok() || answer.code() == StatusCode::kStorageFailed ||
                  answer.code() == StatusCode::kChanged)
          << answer.ToString();
      ASSERT_OK_AND_ASSIGN(Bytes read, ReadNow(*backend, kept));
      EXPECT_EQ(read, Bytes(100, 7));
    }
    EXPECT_TRUE(went_through) << name;
    EXPECT_GT(failures, 1) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// Isolation between users.

// User keys made to break a careless query: quotes, backslashes, LIKE patterns, SQL, case, spaces,
// unicode, 256 bytes, and keys that are prefixes of each other.
std::vector<std::string> CraftedUserKeys() {
  std::string emoji;
  for (int i = 0; i < 64; ++i) emoji += "\xF0\x9F\x8E\xAE";
  return {
      "alice",
      "alice%",
      "alic_",
      "ALICE",
      "alice ",
      " alice",
      "alice\\",
      "%",
      "_",
      "*",
      "'",
      "\"",
      "\\",
      "x' OR '1'='1",
      "x\" OR \"1\"=\"1",
      "'; DELETE FROM rolly_tests.files; --",
      "') OR true; --",
      "$1",
      "NULL",
      "\\x00",
      "alice\t",
      "プレイヤー🎮ключ",
      "Åsa",
      "A\xCC\x8A" "sa",  // the same name decomposed: another key
      std::string(256, 'z'),
      std::string(255, 'z') + "y",
      emoji,
  };
}

TEST_F(PostgresBackendTest, UsersNeverSeeOrTouchEachOthersRows) {
  const std::vector<std::string> keys = CraftedUserKeys();
  std::vector<std::unique_ptr<PostgresBackend>> backends;
  for (const std::string& key : keys) {
    keys_.push_back(key);
    PostgresOptions options = Options(key);
    options.pool_size = 1;
    backends.push_back(Open(options));
    ASSERT_NE(backends.back(), nullptr) << key;
    // These keys are the same in every run: start from nothing.
    ASSERT_OK_AND_ASSIGN(std::vector<FileName> old, ListNow(*backends.back()));
    for (const FileName& name : old) ASSERT_OK(DeleteNow(*backends.back(), name));
  }
  const FileName shared = Slot("shared");
  auto own = [](std::size_t i) { return Slot("own" + std::to_string(i)); };
  auto content = [&](std::size_t i, std::string_view what) {
    return BytesOf(std::string(what) + ":" + keys[i]);
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_OK(WriteNow(*backends[i], shared, content(i, "shared"))) << keys[i];
    ASSERT_OK(WriteNow(*backends[i], own(i), content(i, "own"))) << keys[i];
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    SCOPED_TRACE("user " + keys[i]);
    Backend& b = *backends[i];
    ASSERT_OK_AND_ASSIGN(std::vector<FileName> listed, ListNow(b));
    std::vector<FileName> expected = {shared, own(i)};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(listed, expected);
    ASSERT_OK_AND_ASSIGN(Bytes mine, ReadNow(b, shared));
    EXPECT_EQ(mine, content(i, "shared"));
    // Another user's file: absent for this one, and deleting it deletes nothing.
    const std::size_t other = (i + 1) % keys.size();
    EXPECT_THAT(ReadNow(b, own(other)), StatusIs(StatusCode::kNotFound));
    ASSERT_OK_AND_ASSIGN(bool exists, ExistsNow(b, own(other)));
    EXPECT_FALSE(exists);
    EXPECT_OK(DeleteNow(b, own(other)));
    ASSERT_OK_AND_ASSIGN(Bytes still, ReadNow(*backends[other], own(other)));
    EXPECT_EQ(still, content(other, "own"));
    // Writing that name makes this user's own row, leaving the other's.
    ASSERT_OK(WriteNow(b, own(other), content(i, "taken")));
    ASSERT_OK_AND_ASSIGN(Bytes other_still, ReadNow(*backends[other], own(other)));
    EXPECT_EQ(other_still, content(other, "own"));
    ASSERT_OK(DeleteNow(b, own(other)));
  }
  // Overwriting and deleting the shared name, user by user, leaves everyone else's.
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_OK(WriteNow(*backends[i], shared, content(i, "rewritten")));
    ASSERT_OK(DeleteNow(*backends[i], own(i)));
    for (std::size_t j = i + 1; j < keys.size(); ++j) {
      ASSERT_OK_AND_ASSIGN(Bytes theirs, ReadNow(*backends[j], shared));
      ASSERT_EQ(theirs, content(j, "shared")) << keys[i] << " touched " << keys[j];
      ASSERT_OK_AND_ASSIGN(bool exists, ExistsNow(*backends[j], own(j)));
      ASSERT_TRUE(exists) << keys[i] << " deleted a row of " << keys[j];
    }
  }
  // Each row is stored under its exact key.
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::optional<Row> row = RowOf(keys[i], shared);
    ASSERT_TRUE(row.has_value()) << keys[i];
    EXPECT_EQ(row->bytes, content(i, "rewritten"));
  }
}

// Row-level security as a second line of defence: a session of a plain role whose rolly.user_key
// is another user's (or unset) sees and changes none of a user's rows, even with raw SQL naming
// them.
TEST_F(PostgresBackendTest, RowLevelSecurityHidesOtherUsersRowsFromRawSql) {
  const std::string alice = NewUser("alice-");
  const std::string bob = NewUser("bob-");
  {
    auto a = Open(alice);
    auto b = Open(bob);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    ASSERT_OK(WriteNow(*a, Slot("secret"), BytesOf("alice's")));
    ASSERT_OK(WriteNow(*a, Slot("secret", Copy::kB), BytesOf("alice's b")));
    ASSERT_OK(WriteNow(*b, Slot("mine"), BytesOf("bob's")));
  }

  // Superusers and BYPASSRLS roles pass row-level security: check with a plain role.
  pg_test::TestResult bypass = admin_->Exec(
      "SELECT (rolsuper OR rolbypassrls)::text FROM pg_roles WHERE rolname = current_user");
  ASSERT_TRUE(bypass.ok()) << bypass.error();
  std::vector<std::pair<std::string, std::string>> as_plain_role;
  // The role is made for this test, with a password of this run, and dropped after it.
  const std::string role_name = "rolly_rls_" + pg_test::FreshUserKey("");
  struct DropRole {
    pg_test::TestConnection* admin = nullptr;
    std::string role;
    ~DropRole() {
      if (admin == nullptr) return;
      admin->Exec("REVOKE ALL ON " + kFiles + " FROM " + role);
      admin->Exec("REVOKE ALL ON SCHEMA " + std::string(pg_test::kSchema) + " FROM " + role);
      pg_test::TestResult r = admin->Exec("DROP ROLE " + role);
      EXPECT_TRUE(r.ok()) << r.error();
    }
  } drop_role;
  if (bypass.Text(0, 0) == "true") {
    const std::string password = pg_test::FreshUserKey("pw");
    pg_test::TestResult role = admin_->Exec("CREATE ROLE " + role_name + " LOGIN PASSWORD '" +
                                            password + "' NOSUPERUSER NOBYPASSRLS");
    ASSERT_TRUE(role.ok()) << role.error();
    drop_role.admin = admin_.get();
    drop_role.role = role_name;
    for (const std::string& grant :
         {"GRANT USAGE ON SCHEMA " + std::string(pg_test::kSchema) + " TO " + role_name,
          "GRANT SELECT, INSERT, UPDATE, DELETE ON " + kFiles + " TO " + role_name}) {
      pg_test::TestResult r = admin_->Exec(grant);
      ASSERT_TRUE(r.ok()) << r.error();
    }
    as_plain_role = {{"user", role_name}, {"password", password}};
  }
  pg_test::TestConnection probe(pg_test::Conninfo(), as_plain_role);
  ASSERT_TRUE(probe.ok()) << probe.error();
  pg_test::TestResult plain = probe.Exec(
      "SELECT (rolsuper OR rolbypassrls)::text FROM pg_roles WHERE rolname = current_user");
  ASSERT_TRUE(plain.ok()) << plain.error();
  ASSERT_EQ(plain.Text(0, 0), "false");

  auto count = [&](const std::string& where, std::optional<std::string> param) {
    pg_test::TestResult r =
        param ? probe.Exec("SELECT count(*)::text FROM " + kFiles + " WHERE " + where, {*param})
              : probe.Exec("SELECT count(*)::text FROM " + kFiles + " WHERE " + where);
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok() ? r.Int(0, 0) : -1;
  };

  // No key set: nothing at all.
  EXPECT_EQ(count("true", std::nullopt), 0);
  EXPECT_EQ(count("user_key = $1", alice), 0);

  for (const std::string& key : {bob, std::string("x' OR '1'='1"), std::string("%"),
                                 alice.substr(0, alice.size() - 1), alice + " "}) {
    SCOPED_TRACE("rolly.user_key = " + key);
    ASSERT_TRUE(probe.Exec("SELECT set_config('rolly.user_key', $1, false)", {key}).ok());
    EXPECT_EQ(count("user_key = $1", alice), 0);
    EXPECT_EQ(count("user_key LIKE 'alice-%'", std::nullopt), 0);
    EXPECT_EQ(count("user_key <> $1", key), 0);
    pg_test::TestResult updated = probe.Exec(
        "UPDATE " + kFiles + " SET bytes = '\\x00'::bytea WHERE user_key = $1", {alice});
    ASSERT_TRUE(updated.ok()) << updated.error();
    EXPECT_EQ(updated.affected(), 0);
    pg_test::TestResult deleted = probe.Exec("DELETE FROM " + kFiles + " WHERE user_key = $1", {alice});
    ASSERT_TRUE(deleted.ok()) << deleted.error();
    EXPECT_EQ(deleted.affected(), 0);
    // A row made for alice, or moved to her, is refused by the policy's check.
    pg_test::TestResult inserted = probe.Exec(
        "INSERT INTO " + kFiles +
            " (user_key, name, version, hash, size, bytes) VALUES ($1, 'pg.slot.x.a.rsav', 1, 0, 0, "
            "'\\x'::bytea)",
        {alice});
    EXPECT_FALSE(inserted.ok());
    EXPECT_EQ(inserted.sqlstate(), "42501") << inserted.error();
  }
  // Bob's session cannot hand his row to alice either.
  ASSERT_TRUE(probe.Exec("SELECT set_config('rolly.user_key', $1, false)", {bob}).ok());
  EXPECT_EQ(count("true", std::nullopt), 1);
  pg_test::TestResult moved =
      probe.Exec("UPDATE " + kFiles + " SET user_key = $1 WHERE user_key = $2", {alice, bob});
  EXPECT_FALSE(moved.ok());
  EXPECT_EQ(moved.sqlstate(), "42501") << moved.error();

  // With alice's key the same role sees exactly her two rows: the policy, not the grants, hid them.
  ASSERT_TRUE(probe.Exec("SELECT set_config('rolly.user_key', $1, false)", {alice}).ok());
  EXPECT_EQ(count("true", std::nullopt), 2);
  auto a = Open(alice);
  ASSERT_NE(a, nullptr);
  ASSERT_OK_AND_ASSIGN(Bytes secret, ReadNow(*a, Slot("secret")));
  EXPECT_EQ(secret, BytesOf("alice's"));
}

// ---------------------------------------------------------------------------------------------
// No lost update: sixteen writers, each with its own backend for the same user, do 10,000
// read-modify-write increments over 100 counters. Every counter ends equal to the writes
// acknowledged for it.

TEST_F(PostgresBackendTest, NoLostUpdateWithSixteenWritersOverAHundredFiles) {
  constexpr int kWriters = 16;
  constexpr int kUpdates = 10000;
  constexpr int kFileCount = 100;
  const std::string key = NewUser("counters-");
  auto counter_file = [](int f) { return Slot("counter" + std::to_string(f)); };

  std::vector<std::unique_ptr<PostgresBackend>> backends;
  for (int w = 0; w < kWriters; ++w) {
    PostgresOptions options = Options(key);
    options.pool_size = 1;
    backends.push_back(Open(options));
    ASSERT_NE(backends.back(), nullptr);
  }

  std::vector<std::atomic<int>> acknowledged(kFileCount);
  std::atomic<int> next{0};
  std::atomic<int> changed{0};
  std::atomic<int> failures{0};
  std::mutex failure_mutex;
  std::string first_failure;
  auto fail = [&](const std::string& what) {
    if (failures++ == 0) {
      std::lock_guard lock(failure_mutex);
      first_failure = what;
    }
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937 random(static_cast<std::uint32_t>(1000 + w));
      Backend& backend = *backends[static_cast<std::size_t>(w)];
      while (next.fetch_add(1) < kUpdates && failures.load() == 0) {
        const int f = static_cast<int>(random() % kFileCount);
        const FileName name = counter_file(f);
        for (;;) {
          Result<Bytes> read = ReadNow(backend, name);
          long long counter = 0;
          if (read.ok()) {
            counter = std::stoll(std::string(AsChars(*read)));
          } else if (read.status().code() != StatusCode::kNotFound) {
            fail("read: " + read.status().ToString());
            return;
          }
          const Status written = WriteNow(backend, name, BytesOf(std::to_string(counter + 1)));
          if (written.ok()) {
            ++acknowledged[static_cast<std::size_t>(f)];
            break;
          }
          if (written.code() != StatusCode::kChanged) {
            fail("write: " + written.ToString());
            return;
          }
          ++changed;  // another writer got there first: read again
        }
      }
    });
  }
  for (std::thread& t : writers) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(failures.load(), 0) << first_failure;
  std::cout << "[   INFO   ] " << kUpdates << " updates by " << kWriters << " writers in " << seconds
            << " s, " << changed.load() << " Changed and retried\n";

  auto checker = Open(key);
  ASSERT_NE(checker, nullptr);
  int total = 0;
  for (int f = 0; f < kFileCount; ++f) {
    const int acks = acknowledged[static_cast<std::size_t>(f)].load();
    total += acks;
    Result<Bytes> read = ReadNow(*checker, counter_file(f));
    if (acks == 0) {
      EXPECT_THAT(read, StatusIs(StatusCode::kNotFound)) << "counter " << f;
      continue;
    }
    ASSERT_OK(read);
    EXPECT_EQ(std::stoll(std::string(AsChars(*read))), acks) << "counter " << f;
    EXPECT_EQ(RowOf(key, counter_file(f))->version, acks) << "counter " << f;
  }
  EXPECT_EQ(total, kUpdates);
}

// ---------------------------------------------------------------------------------------------
// Interrupted uploads: a 32 MiB write whose server session is terminated while it runs leaves the
// row with either its old bytes and version or the complete new ones, never anything else.

class InterruptedUploadTest : public PostgresBackendTest {
 protected:
  // Checks the row is `old` (at `old_version`) or `fresh` (at old_version + 1), matching its hash
  // and size; returns true when it is `fresh`.
  bool ExpectOldOrNew(const std::string& key, const FileName& name, const Bytes& old,
                      std::int64_t old_version, const Bytes& fresh) {
    std::optional<Row> row = RowOf(key, name);
    EXPECT_TRUE(row.has_value());
    if (!row) return false;
    EXPECT_EQ(row->hash, HashOf(row->bytes));
    EXPECT_EQ(row->size, static_cast<std::int64_t>(row->bytes.size()));
    const bool is_old = row->bytes == old;
    const bool is_new = row->bytes == fresh;
    EXPECT_TRUE(is_old || is_new) << "the row holds " << row->bytes.size()
                                  << " bytes that are neither the old nor the new ones";
    EXPECT_EQ(row->version, is_new ? old_version + 1 : old_version);
    return is_new;
  }

  // Waits until the session named `app` is in the state `where` says (SQL on pg_stat_activity),
  // and returns its pid; 0 when it never gets there.
  int WaitForSession(const std::string& app, const std::string& where) {
    for (int i = 0; i < 3000; ++i) {
      pg_test::TestResult r = admin_->Exec(
          "SELECT pid::text FROM pg_stat_activity WHERE application_name = $1 AND " + where, {app});
      if (r.ok() && r.rows() == 1) return static_cast<int>(r.Int(0, 0));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return 0;
  }

  void Terminate(int pid) {
    pg_test::TestResult r = admin_->Exec("SELECT pg_terminate_backend($1)", {std::to_string(pid)});
    EXPECT_TRUE(r.ok()) << r.error();
  }
};

// Cut at moments during the upload and the statement (fixed delays after the write starts), with
// and without retries.
TEST_F(InterruptedUploadTest, TerminatedMidUploadLeavesTheOldOrTheWholeNewVersion) {
  const std::string key = NewUser("upload-");
  const FileName name = Slot("big");
  {
    auto first = Open(key);
    ASSERT_NE(first, nullptr);
    ASSERT_OK(WriteNow(*first, name, PatternBytes(1024, 0)));
  }
  Bytes current = PatternBytes(1024, 0);
  std::int64_t version = 1;
  const std::vector<int> delays_ms = {0, 5, 25, 100, 250};
  int interrupted = 0;
  for (std::size_t round = 0; round < delays_ms.size() * 2; ++round) {
    const int delay = delays_ms[round / 2];
    const int retries = round % 2 == 0 ? 0 : 5;
    SCOPED_TRACE("delay " + std::to_string(delay) + " ms, max_retries " + std::to_string(retries));
    const std::string app = "rolly_upload_" + pg_test::FreshUserKey("");
    PostgresOptions options = Options(key);
    options.conninfo = pg_test::WithApplicationName(options.conninfo, app);
    options.pool_size = 1;
    options.max_retries = retries;
    auto backend = Open(options);
    ASSERT_NE(backend, nullptr);
    ASSERT_OK(ExistsNow(*backend, name));  // learns the version
    const int pid = WaitForSession(app, "true");
    ASSERT_NE(pid, 0);

    const Bytes fresh = PatternBytes(32u << 20, static_cast<std::uint8_t>(round + 1));
    std::promise<Status> done;
    backend->Write(name, fresh, [&done](Status s) { done.set_value(std::move(s)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    Terminate(pid);
    const Status status = done.get_future().get();
    backend->WaitUntilIdle();
    EXPECT_TRUE(status.ok() || status.code() == StatusCode::kStorageFailed) << status.ToString();
    if (!status.ok()) ++interrupted;
    const bool is_new = ExpectOldOrNew(key, name, current, version, fresh);
    if (status.ok()) {
      EXPECT_TRUE(is_new) << "an acknowledged write is missing";
    }
    if (is_new) {
      current = fresh;
      ++version;
    }
  }
  std::cout << "[   INFO   ] " << interrupted << " of " << delays_ms.size() * 2
            << " uploads ended StorageFailed\n";
}

// Cut deterministically mid-statement: the row is locked by another session, so the UPDATE (its
// 32 MiB already received) waits; its session is terminated while it waits.
TEST_F(InterruptedUploadTest, TerminatedWhileTheStatementRunsLeavesTheOldVersion) {
  const std::string key = NewUser("upload-");
  const FileName name = Slot("big");
  {
    auto first = Open(key);
    ASSERT_NE(first, nullptr);
    ASSERT_OK(WriteNow(*first, name, PatternBytes(1024, 0)));
  }
  for (const int retries : {0, 5}) {
    SCOPED_TRACE("max_retries " + std::to_string(retries));
    const std::string app = "rolly_upload_" + pg_test::FreshUserKey("");
    PostgresOptions options = Options(key);
    options.conninfo = pg_test::WithApplicationName(options.conninfo, app);
    options.pool_size = 1;
    options.max_retries = retries;
    auto backend = Open(options);
    ASSERT_NE(backend, nullptr);
    ASSERT_OK(ExistsNow(*backend, name));
    std::optional<Row> before = RowOf(key, name);
    ASSERT_TRUE(before.has_value());

    pg_test::TestConnection locker(pg_test::Conninfo());
    ASSERT_TRUE(locker.ok()) << locker.error();
    ASSERT_TRUE(locker.Exec("SELECT set_config('rolly.user_key', $1, false)", {key}).ok());
    ASSERT_TRUE(locker.Exec("BEGIN").ok());
    ASSERT_EQ(locker
                  .Exec("SELECT 1 FROM " + kFiles + " WHERE user_key = $1 AND name = $2 FOR UPDATE",
                        {key, name.str()})
                  .rows(),
              1);

    const Bytes fresh = PatternBytes(32u << 20, static_cast<std::uint8_t>(100 + retries));
    std::promise<Status> done;
    backend->Write(name, fresh, [&done](Status s) { done.set_value(std::move(s)); });
    const int pid = WaitForSession(app, "wait_event_type = 'Lock'");
    ASSERT_NE(pid, 0) << "the write never waited for the row lock";
    Terminate(pid);
    if (retries == 0) {
      const Status status = done.get_future().get();
      EXPECT_THAT(status, StatusIs(StatusCode::kStorageFailed));
      ExpectOldOrNew(key, name, before->bytes, before->version, fresh);
      EXPECT_EQ(RowOf(key, name)->bytes, before->bytes);
      ASSERT_TRUE(locker.Exec("ROLLBACK").ok());
    } else {
      // The retry waits for the lock again; once it is released the write completes, once.
      WaitForSession(app, "wait_event_type = 'Lock'");
      EXPECT_EQ(RowOf(key, name)->bytes, before->bytes);
      ASSERT_TRUE(locker.Exec("ROLLBACK").ok());
      EXPECT_OK(done.get_future().get());
      EXPECT_TRUE(ExpectOldOrNew(key, name, before->bytes, before->version, fresh));
    }
    backend->WaitUntilIdle();
  }
}

}  // namespace
}  // namespace rolly::store
