// PostgresBackend: a queue of operations served by pool_size threads, each owning one connection;
// compare-and-set writes against a per-backend cache of row versions; bounded retries.

#include "rolly/store/postgres/postgres_backend.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "rolly/core/checksum.h"
#include "rolly/store/postgres/internal/pg_connection.h"
#include "rolly/store/internal/thrown_call.h"
#include "rolly/store/postgres/internal/pg_sql.h"

namespace rolly::store {

using store_internal::PgConnection;
using store_internal::PgFailure;
using store_internal::PgParam;
using store_internal::PgResult;
using store_internal::PgStatements;

namespace {

// One try of an operation: its final answer, or a failure that may be tried again.
template <typename T>
struct Outcome {
  std::optional<T> answer;
  Status failure;  // when there is no answer: what to answer when the retries run out
};

template <typename T>
Outcome<T> Done(T answer) {
  return Outcome<T>{std::move(answer), OkStatus()};
}

// The outcome of a failed statement: final unless it is worth trying again.
template <typename T>
Outcome<T> FromFailure(const PgResult& r) {
  switch (r.failure()) {
    case PgFailure::kRetry:
    case PgFailure::kReconnect:
      return Outcome<T>{std::nullopt, StorageFailedError(r.message())};
    case PgFailure::kTimedOut:
      return Done<T>(StorageFailedError("timed out (statement_timeout): " + r.message()));
    case PgFailure::kNoSpace:
      return Done<T>(NoSpaceError(r.message()));
    case PgFailure::kOther:
      break;
  }
  return Done<T>(StorageFailedError(r.message()));
}

std::int64_t HashOf(ByteView bytes) {
  return static_cast<std::int64_t>(Checksum::Of(bytes).bits());
}

}  // namespace

class PostgresBackend::Impl {
 public:
  explicit Impl(PostgresOptions options)
      : options_(std::move(options)), sql_(store_internal::MakeStatements(options_.schema)) {}

  ~Impl() {
    {
      std::lock_guard lock(queue_mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  const PostgresOptions& options() const { return options_; }

  // Connects every connection, makes the schema current, then starts the threads.
  Status Start() {
    for (std::size_t i = 0; i < options_.pool_size; ++i) {
      conns_.push_back(std::make_unique<PgConnection>(options_));
      ROLLY_RETURN_IF_ERROR(conns_.back()->EnsureConnected());
      if (i == 0) ROLLY_RETURN_IF_ERROR(EnsureSchema(*conns_.back()));
    }
    for (std::size_t i = 0; i < options_.pool_size; ++i) {
      threads_.emplace_back([this, conn = conns_[i].get()] { Serve(*conn); });
    }
    return OkStatus();
  }

  void Post(std::function<void(PgConnection&)> task) {
    {
      std::lock_guard lock(queue_mutex_);
      tasks_.push_back(std::move(task));
    }
    work_ready_.notify_one();
  }

  Status Write(PgConnection& conn, const FileName& name, const Bytes& bytes);
  Result<Bytes> Read(PgConnection& conn, const FileName& name, std::size_t max_bytes);
  Result<bool> Exists(PgConnection& conn, const FileName& name);
  Status Delete(PgConnection& conn, const FileName& name);
  Result<std::vector<FileName>> List(PgConnection& conn);

 private:
  // What the backend knows of a row: its version, or that it is absent; nothing when unknown.
  using Known = std::optional<std::optional<std::int64_t>>;

  void Serve(PgConnection& conn) {
    for (;;) {
      std::function<void(PgConnection&)> task;
      {
        std::unique_lock lock(queue_mutex_);
        work_ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, and nothing left to run
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task(conn);
    }
  }

  Status EnsureSchema(PgConnection& conn);
  Outcome<Status> UpgradeSchema(PgConnection& conn);

  // Runs `attempt` (returning Outcome<T>) until it answers, reconnecting first when the
  // connection dropped, within max_retries and retry_budget.
  template <typename T, typename Attempt>
  T Run(PgConnection& conn, Attempt attempt);

  Known Lookup(const std::string& name) {
    std::lock_guard lock(cache_mutex_);
    auto it = versions_.find(name);
    if (it == versions_.end()) return std::nullopt;
    return it->second;
  }
  void Remember(const std::string& name, std::optional<std::int64_t> version) {
    std::lock_guard lock(cache_mutex_);
    versions_[name] = version;
  }
  void Forget(const std::string& name) {
    std::lock_guard lock(cache_mutex_);
    versions_.erase(name);
  }

  const PostgresOptions options_;
  const PgStatements sql_;

  std::mutex cache_mutex_;
  std::map<std::string, std::optional<std::int64_t>> versions_;

  std::mutex queue_mutex_;
  std::condition_variable work_ready_;
  std::deque<std::function<void(PgConnection&)>> tasks_;
  bool stopping_ = false;

  std::vector<std::unique_ptr<PgConnection>> conns_;
  // Last: joined (in the destructor) before the connections they use are closed.
  std::vector<std::thread> threads_;
};

template <typename T, typename Attempt>
T PostgresBackend::Impl::Run(PgConnection& conn, Attempt attempt) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + options_.retry_budget;
  thread_local std::minstd_rand jitter(std::random_device{}());
  Status last;
  for (int tries = 0;; ++tries) {
    if (tries > 0) {
      // Back off 25 ms, 50 ms, ... up to 1 s, with jitter, so retrying clients spread out.
      const auto base = std::chrono::milliseconds(25) * (1 << std::min(tries - 1, 5));
      const auto wait = std::min<std::chrono::milliseconds>(
          std::chrono::milliseconds(1000),
          base / 2 + std::chrono::milliseconds(jitter() % (base.count() / 2 + 1)));
      if (tries > options_.max_retries || Clock::now() + wait > deadline) {
        return StorageFailedError(
            fmt::format("{} (gave up after {} tries)", last.message(), tries));
      }
      std::this_thread::sleep_for(wait);
    }
    if (Status connected = conn.EnsureConnected(); !connected.ok()) {
      last = std::move(connected);
      continue;
    }
    Outcome<T> outcome = attempt();
    if (outcome.answer) return *std::move(outcome.answer);
    last = std::move(outcome.failure);
  }
}

Status PostgresBackend::Impl::EnsureSchema(PgConnection& conn) {
  // The common case needs no lock and no privilege beyond reading the version table.
  PgResult r = conn.Exec(sql_.read_version);
  if (r.ok()) {
    const std::int64_t version = r.integer(0, 0).value_or(0);
    if (version == kSchemaVersion) return OkStatus();
    if (version > kSchemaVersion) {
      return NewerVersionError(
          fmt::format("postgres: schema \"{}\" is at version {}; this library knows up to {}",
                      options_.schema, version, kSchemaVersion));
    }
  }
  return Run<Status>(conn, [&] { return UpgradeSchema(conn); });
}

Outcome<Status> PostgresBackend::Impl::UpgradeSchema(PgConnection& conn) {
  auto fail = [&conn](const PgResult& failed) {
    if (conn.connected()) conn.Exec("ROLLBACK");  // best effort; a dropped one rolled back
    return FromFailure<Status>(failed);
  };
  // One transaction, under an advisory lock, so backends opening at once upgrade one at a time
  // and each sees the others' work.
  if (PgResult r = conn.Exec("BEGIN"); !r.ok()) return fail(r);
  if (PgResult r =
          conn.Exec(sql_.lock, {PgParam::Int8(store_internal::SchemaLockKey(options_.schema))});
      !r.ok()) {
    return fail(r);
  }
  for (const std::string* sql : {&sql_.create_schema, &sql_.create_version_table}) {
    if (PgResult r = conn.Exec(*sql); !r.ok()) return fail(r);
  }
  PgResult current = conn.Exec(sql_.read_version);
  if (!current.ok()) return fail(current);
  const std::int64_t from = current.integer(0, 0).value_or(0);
  if (from > kSchemaVersion) {
    conn.Exec("ROLLBACK");
    return Done<Status>(NewerVersionError(
        fmt::format("postgres: schema \"{}\" is at version {}; this library knows up to {}",
                    options_.schema, from, kSchemaVersion)));
  }
  for (std::int64_t v = std::max<std::int64_t>(from, 0); v < kSchemaVersion; ++v) {
    for (const std::string& sql : sql_.upgrades[static_cast<std::size_t>(v)]) {
      if (PgResult r = conn.Exec(sql); !r.ok()) return fail(r);
    }
  }
  if (from != kSchemaVersion) {
    if (PgResult r = conn.Exec(sql_.clear_version); !r.ok()) return fail(r);
    if (PgResult r = conn.Exec(sql_.set_version, {PgParam::Int4(kSchemaVersion)}); !r.ok()) {
      return fail(r);
    }
  }
  if (PgResult r = conn.Exec("COMMIT"); !r.ok()) return fail(r);
  return Done<Status>(OkStatus());
}

Status PostgresBackend::Impl::Write(PgConnection& conn, const FileName& name, const Bytes& bytes) {
  if (bytes.size() > options_.max_object_size) {
    return NoSpaceError(fmt::format("postgres: {} bytes is above max_object_size ({})",
                                    bytes.size(), options_.max_object_size));
  }
  const std::int64_t hash = HashOf(bytes);
  const Known known = Lookup(name.str());
  // Update the version we know, or create the row when we know of none.
  const std::optional<std::int64_t> expected = known ? *known : std::nullopt;
  const std::int64_t after = expected ? *expected + 1 : 1;
  const auto key = PgParam::Text(options_.user_key);
  const auto file = PgParam::Text(name.str());
  bool maybe_committed = false;
  Status result = Run<Status>(conn, [&]() -> Outcome<Status> {
    if (maybe_committed) {
      // The connection dropped after the statement was sent: it may have committed. If the row
      // holds this write's version and hash, it did.
      PgResult check = conn.Exec(sql_.read_version_hash, {key, file});
      if (!check.ok()) return FromFailure<Status>(check);
      if (check.rows() == 1 && check.integer(0, 0) == after && check.integer(0, 1) == hash) {
        Remember(name.str(), after);
        return Done(OkStatus());
      }
      maybe_committed = false;
    }
    PgResult r =
        expected ? conn.Exec(sql_.update, {key, file, PgParam::Int8(*expected), PgParam::Int8(hash),
                                           PgParam::Int8(static_cast<std::int64_t>(bytes.size())),
                                           PgParam::Bytea(bytes)})
                 : conn.Exec(sql_.insert, {key, file, PgParam::Int8(hash),
                                           PgParam::Int8(static_cast<std::int64_t>(bytes.size())),
                                           PgParam::Bytea(bytes)});
    if (!r.ok()) {
      if (r.failure() == PgFailure::kReconnect) maybe_committed = true;
      return FromFailure<Status>(r);
    }
    if (r.rows() == 0) {
      Forget(name.str());
      return Done(ChangedError(
          expected ? fmt::format("postgres: {} is no longer at version {}", name.str(), *expected)
                   : fmt::format("postgres: {} exists already", name.str())));
    }
    Remember(name.str(), r.integer(0, 0).value_or(after));
    return Done(OkStatus());
  });
  // A write that failed after the connection dropped at its commit may have taken effect; the
  // version kept is then one behind, and the next write answers Changed until a read learns the
  // row again. The store reads both copies again after any failed write.
  return result;
}

Result<Bytes> PostgresBackend::Impl::Read(PgConnection& conn, const FileName& name,
                                          std::size_t max_bytes) {
  // Never more than the largest file a write may send (nor than substring's int can say).
  const std::size_t limit = static_cast<std::size_t>(std::min<std::uint64_t>(
      {max_bytes, options_.max_object_size,
       static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())}));
  const auto key = PgParam::Text(options_.user_key);
  const auto file = PgParam::Text(name.str());
  return Run<Result<Bytes>>(conn, [&]() -> Outcome<Result<Bytes>> {
    PgResult r = conn.Exec(sql_.read, {key, file, PgParam::Int4(static_cast<std::int32_t>(limit))});
    if (!r.ok()) return FromFailure<Result<Bytes>>(r);
    if (r.rows() == 0) {
      Remember(name.str(), std::nullopt);
      return Done<Result<Bytes>>(NotFoundError(name.str()));
    }
    const std::optional<std::int64_t> version = r.integer(0, 0);
    const std::optional<std::int64_t> hash = r.integer(0, 1);
    const std::optional<std::int64_t> size = r.integer(0, 2);
    const std::optional<std::int64_t> stored = r.integer(0, 3);
    const std::string_view got = r.value(0, 4);
    if (!version || !hash || !size || !stored) {
      return Done<Result<Bytes>>(
          DamagedError(fmt::format("postgres: {}: a null column", name.str())));
    }
    Remember(name.str(), *version);
    const auto stored_size = static_cast<std::uint64_t>(*stored);
    if (stored_size > limit && max_bytes > limit) {
      return Done<Result<Bytes>>(
          DamagedError(fmt::format("postgres: {} holds {} bytes, above max_object_size ({})",
                                   name.str(), stored_size, options_.max_object_size)));
    }
    Bytes bytes(got.begin(), got.end());
    // A prefix shorter than the file cannot be checked against the whole file's hash; the whole
    // file always is.
    if (stored_size <= limit) {
      if (*size != *stored || HashOf(bytes) != *hash || bytes.size() != stored_size) {
        return Done<Result<Bytes>>(DamagedError(fmt::format(
            "postgres: {} does not match its hash or size (version {})", name.str(), *version)));
      }
    }
    return Done<Result<Bytes>>(std::move(bytes));
  });
}

Result<bool> PostgresBackend::Impl::Exists(PgConnection& conn, const FileName& name) {
  return Run<Result<bool>>(conn, [&]() -> Outcome<Result<bool>> {
    PgResult r =
        conn.Exec(sql_.exists, {PgParam::Text(options_.user_key), PgParam::Text(name.str())});
    if (!r.ok()) return FromFailure<Result<bool>>(r);
    if (r.rows() == 0) {
      Remember(name.str(), std::nullopt);
      return Done<Result<bool>>(false);
    }
    if (std::optional<std::int64_t> v = r.integer(0, 0)) Remember(name.str(), *v);
    return Done<Result<bool>>(true);
  });
}

Status PostgresBackend::Impl::Delete(PgConnection& conn, const FileName& name) {
  Status s = Run<Status>(conn, [&]() -> Outcome<Status> {
    PgResult r =
        conn.Exec(sql_.remove, {PgParam::Text(options_.user_key), PgParam::Text(name.str())});
    if (!r.ok()) return FromFailure<Status>(r);
    return Done(OkStatus());
  });
  // After a failure the row may or may not be gone: learn its version again before writing.
  if (s.ok()) {
    Remember(name.str(), std::nullopt);
  } else {
    Forget(name.str());
  }
  return s;
}

Result<std::vector<FileName>> PostgresBackend::Impl::List(PgConnection& conn) {
  using Names = Result<std::vector<FileName>>;
  return Run<Names>(conn, [&]() -> Outcome<Names> {
    PgResult r = conn.Exec(sql_.list, {PgParam::Text(options_.user_key)});
    if (!r.ok()) return FromFailure<Names>(r);
    std::vector<FileName> names;
    names.reserve(static_cast<std::size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
      if (auto parsed = FileName::Parse(r.value(i, 0))) names.push_back(*std::move(parsed));
    }
    // In byte order, whatever the database's collation.
    std::sort(names.begin(), names.end());
    return Done<Names>(std::move(names));
  });
}

Result<std::unique_ptr<PostgresBackend>> PostgresBackend::Open(PostgresOptions options) {
  ROLLY_RETURN_IF_ERROR(store_internal::CheckPostgresOptions(options));
  {
    char* error = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(options.conninfo.c_str(), &error);
    if (parsed == nullptr) {
      std::string why = error ? error : "cannot be parsed";
      while (!why.empty() && why.back() == '\n') why.pop_back();
      Status s = InvalidInputError("conninfo: " + why);
      PQfreemem(error);
      return s;
    }
    PQconninfoFree(parsed);
  }
  auto impl = std::make_unique<Impl>(std::move(options));
  ROLLY_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<PostgresBackend>(new PostgresBackend(std::move(impl)));
}

PostgresBackend::PostgresBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PostgresBackend::~PostgresBackend() {
  WaitUntilIdle();
  impl_.reset();
}

const PostgresOptions& PostgresBackend::options() const { return impl_->options(); }

namespace {

// The answer a connection thread's work for one call makes (StorageFailed when it throws: an
// allocation failing on that thread). The connection, in a state no one knows then, is dropped,
// and the next operation on it connects again.
template <typename T, typename Work>
T Answer(PgConnection& conn, Work&& work) {
  return store_internal::AnswerOf<T>("the postgres backend's work", std::forward<Work>(work),
                                     [&conn] { conn.Close(); });
}

}  // namespace

void PostgresBackend::StartWrite(const FileName& name, Bytes bytes, StatusCallback done) {
  impl_->Post([this, name, bytes = std::move(bytes), done = std::move(done)](PgConnection& conn) {
    done(Answer<Status>(conn, [&] { return impl_->Write(conn, name, bytes); }));
  });
}

void PostgresBackend::StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) {
  impl_->Post([this, name, max_bytes, done = std::move(done)](PgConnection& conn) {
    done(Answer<Result<Bytes>>(conn, [&] { return impl_->Read(conn, name, max_bytes); }));
  });
}

void PostgresBackend::StartExists(const FileName& name, ExistsCallback done) {
  impl_->Post([this, name, done = std::move(done)](PgConnection& conn) {
    done(Answer<Result<bool>>(conn, [&] { return impl_->Exists(conn, name); }));
  });
}

void PostgresBackend::StartDelete(const FileName& name, StatusCallback done) {
  impl_->Post([this, name, done = std::move(done)](PgConnection& conn) {
    done(Answer<Status>(conn, [&] { return impl_->Delete(conn, name); }));
  });
}

void PostgresBackend::StartList(ListCallback done) {
  impl_->Post([this, done = std::move(done)](PgConnection& conn) {
    done(Answer<Result<std::vector<FileName>>>(conn, [&] { return impl_->List(conn); }));
  });
}

}  // namespace rolly::store
