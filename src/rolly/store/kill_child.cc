// The saving process of store_kill_test: saves into one slot of a folder again and again, each save
// asked once the one before called back, and prints "<sequence> <seed>" for every save reported
// written. The test kills it with SIGKILL at random moments and checks what a load finds.
//
// Usage: store_kill_child FOLDER SLOT [SEED]   (SEED seeds the payloads; the test gives one)

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "rolly/core/mailbox.h"
#include "rolly/core/worker_pool.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/kill_payload.h"
#include "rolly/store/store.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: store_kill_child FOLDER SLOT [SEED]\n");
    return 2;
  }
  rolly::store::FolderBackend backend(argv[1]);
  rolly::WorkerPool workers(2);
  rolly::Mailbox mailbox;
  rolly::store::Store store(backend, workers, mailbox);
  std::mt19937_64 rng(argc == 4 ? std::strtoull(argv[3], nullptr, 10)
                                : static_cast<std::uint64_t>(getpid()) * 7919u +
                                      static_cast<std::uint64_t>(
                                          std::chrono::steady_clock::now().time_since_epoch().count()));
  for (;;) {
    const std::uint64_t seed = rng();
    bool done = false;
    store.Save(argv[2], rolly::store::testing::KillPayloadFile(seed),
               [&done, seed](rolly::Result<rolly::store::SaveInfo> r) {
                 done = true;
                 if (!r.ok()) {
                   std::fprintf(stderr, "save failed: %s\n", r.status().ToString().c_str());
                   return;
                 }
                 std::printf("%llu %llu\n", static_cast<unsigned long long>(r->sequence),
                             static_cast<unsigned long long>(seed));
                 std::fflush(stdout);
               });
    mailbox.DrainUntil([&done] { return done; },
                       rolly::Mailbox::Clock::now() + std::chrono::seconds(30));
  }
}
