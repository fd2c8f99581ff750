// No acknowledged write is lost when the PostgreSQL server is killed. The test starts a throwaway
// cluster of its own with tools/pg-test-cluster.sh (it needs control of the server, so it never
// uses the one named by ROLLY_TEST_PG), runs writers that record every acknowledged write, kills
// the server with SIGKILL right after acknowledgements, restarts it (crash recovery), and finally
// checks that every acknowledged write is there.
//
// Runs when ROLLY_TEST_PG is set (the PostgreSQL tests are asked for) and the server's binaries
// are installed; otherwise exits 77 (skipped), or fails under ROLLY_TEST_PG_REQUIRED=1.

#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rolly/core/checksum.h"
#include "rolly/core/status_matchers.h"
#include "rolly/store/backend.h"
#include "rolly/store/file_name.h"
#include "rolly/store/postgres/postgres_backend.h"
#include "rolly/store/postgres/postgres_test_util.h"
#include "rolly/store/store_test_util.h"

#ifndef ROLLY_PG_CLUSTER_SCRIPT
#error "ROLLY_PG_CLUSTER_SCRIPT must name tools/pg-test-cluster.sh"
#endif

namespace rolly::store {
namespace {

constexpr int kKills = 50;
constexpr int kWriters = 4;
constexpr int kFilesPerWriter = 5;

// Runs `command`, giving its stdout (trimmed) and its exit code (-1 when it did not exit).
std::pair<std::string, int> Run(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int status = ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// Skips (or fails under ROLLY_TEST_PG_REQUIRED=1) when PostgreSQL tests are not asked for or a
// cluster cannot be made on this machine.
class ClusterEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!pg_test::ServerConninfoFromEnv()) pg_test::SkipOrFail("ROLLY_TEST_PG is not set");
    const auto [out, code] = Run(Quoted(ROLLY_PG_CLUSTER_SCRIPT) + " check");
    if (code == 3) {
      pg_test::SkipOrFail("no PostgreSQL server binaries to start a throwaway cluster");
    }
    if (code != 0) pg_test::SkipOrFail("tools/pg-test-cluster.sh check failed: " + out);
  }
};

[[maybe_unused]] ::testing::Environment* const kCluster =
    ::testing::AddGlobalTestEnvironment(new ClusterEnvironment);

// A loopback port free at the time of the call.
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

// A cluster in a temporary directory, stopped and removed by the destructor.
class ThrowawayCluster {
 public:
  ThrowawayCluster() : port_(FreePort()) {}
  ~ThrowawayCluster() {
    if (dir_.path().empty()) return;
    // A server that does not stop is killed, so that the directory can go.
    if (Run(Quoted(ROLLY_PG_CLUSTER_SCRIPT) + " stop " + Quoted(dir_.path())).second != 0) Kill();
  }
  ThrowawayCluster(const ThrowawayCluster&) = delete;
  ThrowawayCluster& operator=(const ThrowawayCluster&) = delete;

  // Starts the server (making the cluster the first time; recovering it after a kill).
  bool Start() {
    if (dir_.path().empty() || port_ == 0) return false;
    const auto [out, code] = Run(Quoted(ROLLY_PG_CLUSTER_SCRIPT) + " start " + Quoted(dir_.path()) +
                                 " " + std::to_string(port_));
    if (code != 0) return false;
    conninfo_ = out;
    return true;
  }

  // SIGKILL to the postmaster and, as it leads its own process group (pg_ctl starts it with
  // setsid), to every server process at once, as a crash of the machine would stop them.
  bool Kill() {
    std::ifstream pid_file(dir_.path() + "/data/postmaster.pid");
    long pid = 0;
    if (!(pid_file >> pid) || pid <= 1) return false;
    const pid_t postmaster = static_cast<pid_t>(pid);
    if (::getpgid(postmaster) == postmaster) return ::kill(-postmaster, SIGKILL) == 0;
    return ::kill(postmaster, SIGKILL) == 0;
  }

  const std::string& conninfo() const { return conninfo_; }

 private:
  TempDir dir_;
  const int port_;
  std::string conninfo_;
};

FileName File(int f) { return FileName::ForSlot("kill", "file" + std::to_string(f), Copy::kA).value(); }

// The bytes of write `seq` of file `f`: a header naming both, then a pattern of varying length.
Bytes Content(int f, long long seq) {
  Bytes out = BytesOf("file " + std::to_string(f) + " seq " + std::to_string(seq) + "\n");
  const Bytes pattern = PatternBytes(100 + static_cast<std::size_t>((seq * 7919) % 20000),
                                     static_cast<std::uint8_t>(f + seq));
  out.insert(out.end(), pattern.begin(), pattern.end());
  return out;
}

// The seq a Content() names, or -1.
long long SeqOf(const Bytes& bytes, int f) {
  const std::string text(AsChars(bytes).substr(0, 64));
  const std::string head = "file " + std::to_string(f) + " seq ";
  if (text.rfind(head, 0) != 0) return -1;
  return std::atoll(text.c_str() + head.size());
}

TEST(PostgresKillTest, NoAcknowledgedWriteIsLostWhenTheServerIsKilled) {
  ThrowawayCluster cluster;
  ASSERT_TRUE(cluster.Start()) << "tools/pg-test-cluster.sh start failed";
  const std::string user = pg_test::FreshUserKey("kill-");
  auto options = [&] {
    PostgresOptions o;
    o.conninfo = cluster.conninfo();
    o.user_key = user;
    o.pool_size = 1;
    o.connect_timeout = std::chrono::milliseconds(2000);
    o.statement_timeout = std::chrono::milliseconds(10000);
    o.max_retries = 3;
    o.retry_budget = std::chrono::milliseconds(1000);
    return o;
  };

  // What was acknowledged: per file the highest seq and the hash of its bytes.
  struct Acked {
    long long seq = 0;
    std::uint64_t hash = 0;
  };
  std::mutex mutex;
  std::condition_variable acked_cv;
  std::map<int, Acked> acked;
  long long ack_count = 0;
  std::atomic<bool> stop{false};
  std::atomic<long long> failed_writes{0};
  std::atomic<long long> changed_writes{0};

  std::vector<std::unique_ptr<PostgresBackend>> backends;
  for (int w = 0; w < kWriters; ++w) {
    Result<std::unique_ptr<PostgresBackend>> b = PostgresBackend::Open(options());
    ASSERT_OK(b);
    backends.push_back(*std::move(b));
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      Backend& backend = *backends[static_cast<std::size_t>(w)];
      std::vector<long long> next_seq(kFilesPerWriter, 0);
      for (int i = 0; !stop.load(); ++i) {
        const int slot = i % kFilesPerWriter;
        const int f = w * kFilesPerWriter + slot;
        const long long seq = ++next_seq[static_cast<std::size_t>(slot)];
        const Bytes bytes = Content(f, seq);
        const Status s = WriteNow(backend, File(f), bytes);
        if (s.ok()) {
          {
            std::lock_guard lock(mutex);
            acked[f] = Acked{seq, Checksum::Of(bytes).bits()};
            ++ack_count;
          }
          acked_cv.notify_all();
        } else if (s.code() == StatusCode::kChanged) {
          // A write answered StorageFailed had committed after all: learn the version again.
          ++changed_writes;
          (void)ReadNow(backend, File(f));
        } else {
          ++failed_writes;  // the server is down: try on
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
    });
  }

  std::mt19937 random(20261130);
  const auto started = std::chrono::steady_clock::now();
  int kills = 0;
  for (; kills < kKills; ++kills) {
    std::unique_lock lock(mutex);
    const long long target = ack_count + 1 + static_cast<long long>(random() % 40);
    if (!acked_cv.wait_for(lock, std::chrono::seconds(60), [&] { return ack_count >= target; })) {
      ADD_FAILURE() << "no acknowledged write for 60 s after restart " << kills;
      break;
    }
    // Right after the acknowledgement, before anything else runs.
    const bool killed = cluster.Kill();
    lock.unlock();
    ASSERT_TRUE(killed) << "could not kill the server";
    if (!cluster.Start()) {
      ADD_FAILURE() << "the server did not restart after kill " << kills + 1;
      break;
    }
  }
  {
    // Some writes after the last restart, then stop.
    std::unique_lock lock(mutex);
    const long long target = ack_count + 20;
    acked_cv.wait_for(lock, std::chrono::seconds(60), [&] { return ack_count >= target; });
  }
  stop = true;
  for (std::thread& t : writers) t.join();
  backends.clear();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[   INFO   ] " << kills << " kills in " << seconds << " s; " << ack_count
            << " writes acknowledged, " << failed_writes.load() << " failed while the server was "
            << "down, " << changed_writes.load() << " Changed\n";
  EXPECT_EQ(kills, kKills);

  ASSERT_OK_AND_ASSIGN(auto checker, PostgresBackend::Open(options()));
  for (const auto& [f, ack] : acked) {
    SCOPED_TRACE("file " + std::to_string(f) + ", acknowledged seq " + std::to_string(ack.seq));
    // Read checks the row's bytes against the row's hash (Damaged otherwise).
    ASSERT_OK_AND_ASSIGN(Bytes bytes, ReadNow(*checker, File(f)));
    const long long seq = SeqOf(bytes, f);
    EXPECT_GE(seq, ack.seq) << "an acknowledged write is missing";
    // A later write may have committed without its acknowledgement arriving; whichever it is, it
    // is whole.
    EXPECT_EQ(bytes, Content(f, seq));
    if (seq == ack.seq) {
      EXPECT_EQ(Checksum::Of(bytes).bits(), ack.hash);
    }
  }
  EXPECT_EQ(acked.size(), static_cast<std::size_t>(kWriters * kFilesPerWriter));
  checker.reset();
}

}  // namespace
}  // namespace rolly::store
