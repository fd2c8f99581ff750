// Starts a real saving process (store_kill_child) and kills it with SIGKILL at seeded random
// moments; after each kill, the slot must load the last save the process reported written, or the
// one after it, whole, and at most one temporary file may be left in the folder.
//
// Half the kills are timed from the child's start (so some land in its first save, which reads
// both copies), half from its first reported save (so they land among saves however slow the
// machine is; a child that reports nothing within a generous bound is killed anyway).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "rolly/core/mailbox.h"
#include "rolly/core/status_matchers.h"
#include "rolly/core/worker_pool.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/kill_payload.h"
#include "rolly/store/store.h"

extern char** environ;

namespace rolly::store {
namespace {

constexpr int kKills = 200;
constexpr char kSlot[] = "Kill Me";

struct Reported {
  std::uint64_t sequence = 0;
  std::uint64_t seed = 0;
};

// Runs the child for about `run_for` (from its start, or from its first reported save when
// `after_first_save`), kills it, and returns the last save it reported. `seed` seeds the child's
// payloads.
Reported RunAndKill(const std::string& folder, std::chrono::milliseconds run_for,
                    bool after_first_save, std::uint64_t seed) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string child = ROLLY_KILL_CHILD;
  std::string slot = kSlot;
  std::string seed_arg = std::to_string(seed);
  char* argv[] = {child.data(), const_cast<char*>(folder.c_str()), slot.data(), seed_arg.data(),
                  nullptr};
  pid_t pid;
  const int spawned = posix_spawn(&pid, child.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  EXPECT_EQ(spawned, 0);

  std::string out;
  auto deadline = std::chrono::steady_clock::now() +
                  (after_first_save ? std::chrono::milliseconds(20000) : run_for);
  bool waiting_for_first = after_first_save;
  char buf[4096];
  for (;;) {
    if (waiting_for_first && out.find('\n') != std::string::npos) {
      waiting_for_first = false;
      deadline = std::chrono::steady_clock::now() + run_for;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // Lines written before the kill are still in the pipe.
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);

  Reported last;
  std::istringstream lines(out);
  for (Reported r; lines >> r.sequence >> r.seed;) last = r;
  return last;
}

TEST(StoreKillTest, EveryKillLeavesTheLastReportedSaveOrTheNext) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() /
      ("rolly_kill_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(folder);
  std::mt19937 rng(20261130);
  Reported previous;
  int saves_seen = 0;
  for (int i = 0; i < kKills; ++i) {
    const std::chrono::milliseconds run_for(rng() % 60);
    const Reported reported =
        RunAndKill(folder.string(), std::chrono::milliseconds(5) + run_for, i % 2 == 1, rng());
    // Saves reported before this run count too: the child may have been killed before its first.
    const Reported last = reported.sequence != 0 ? reported : previous;

    FolderBackend backend(folder.string());
    WorkerPool workers(1);
    Mailbox mailbox;
    Store store(backend, workers, mailbox);
    std::optional<Result<LoadResult>> loaded;
    store.Load(kSlot, [&loaded](Result<LoadResult> r) { loaded.emplace(std::move(r)); });
    ASSERT_OK(store.FlushFor(std::chrono::seconds(30)));
    ASSERT_TRUE(loaded.has_value());
    if (last.sequence == 0) {
      // Nothing reported yet: no save, or the first one.
      if (!loaded->ok()) {
        EXPECT_THAT(*loaded, StatusIs(StatusCode::kNotFound)) << "kill " << i;
        continue;
      }
    }
    ASSERT_OK(loaded->status()) << "kill " << i << " after sequence " << last.sequence;
    const format::File& file = (*loaded)->file;
    ASSERT_GE(file.header.sequence, last.sequence) << "kill " << i;
    ASSERT_LE(file.header.sequence, last.sequence + 1) << "kill " << i;
    const std::uint64_t seed = std::stoull(file.header.title);
    if (file.header.sequence == last.sequence) {
      EXPECT_EQ(seed, last.seed) << "kill " << i;
    }
    const format::Chunk* payload = file.Find(format::kTestChunk, "payload");
    ASSERT_NE(payload, nullptr);
    EXPECT_EQ(payload->data(), testing::KillPayloadBytes(seed)) << "kill " << i;
    previous = Reported{file.header.sequence, seed};
    if (reported.sequence != 0) ++saves_seen;

    int temp_files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      if (entry.path().extension() == ".tmp") ++temp_files;
    }
    EXPECT_LE(temp_files, 1) << "kill " << i;
  }
  // The kills must have landed among saves, not all before the first one.
  EXPECT_GT(saves_seen, kKills / 4);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace rolly::store
