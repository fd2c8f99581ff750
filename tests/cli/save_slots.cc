// save_slots: saves slots whose headers hold metadata of chosen sizes into a folder, through the
// public store API, for the CLI tests of `rolly slots` (the examples write no metadata of a chosen
// size). Test code only.
//
//   save_slots FOLDER NAME=SIZE...
//
// Saves each slot NAME once, its header's metadata SIZE bytes, then waits for the saves and the
// slot index's write. Exits 0 when every one succeeded, 1 otherwise, 2 on a usage error.
//
// Thread rules: one thread asks, the store's workers do the rest.

#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

#include "rolly/core/bytes.h"
#include "rolly/core/mailbox.h"
#include "rolly/core/status.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/store.h"

namespace {

rolly::format::File MakeSave(std::string_view slot, std::size_t metadata_size) {
  rolly::format::File file;
  file.header.title = std::string(slot);
  file.header.metadata = rolly::Bytes(metadata_size, 'm');
  const std::string_view state = "a save with chosen metadata";
  file.chunks.emplace_back(rolly::format::kTestChunk, "state",
                           rolly::Bytes(state.begin(), state.end()));
  return file;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: save_slots FOLDER NAME=SIZE...\n");
    return 2;
  }
  rolly::store::FolderBackend backend(argv[1]);
  rolly::WorkerPool workers(2);
  rolly::Mailbox mailbox;
  rolly::store::Store store(backend, workers, mailbox);
  int failures = 0;
  for (int i = 2; i < argc; ++i) {
    // The last '=' splits: a slot name may hold one.
    const std::string_view arg = argv[i];
    const std::size_t eq = arg.rfind('=');
    std::size_t size = 0;
    const char* end = arg.data() + arg.size();
    const std::from_chars_result parsed =
        std::from_chars(arg.data() + (eq == std::string_view::npos ? 0 : eq + 1), end, size);
    if (eq == std::string_view::npos || parsed.ec != std::errc() || parsed.ptr != end) {
      std::fprintf(stderr, "save_slots: %s is not NAME=SIZE\n", argv[i]);
      return 2;
    }
    const std::string_view slot = arg.substr(0, eq);
    store.Save(slot, MakeSave(slot, size), [&failures](rolly::Result<rolly::store::SaveInfo> r) {
      if (r.ok()) return;
      std::fprintf(stderr, "save_slots: %s\n", r.status().ToString().c_str());
      ++failures;
    });
  }
  // Also waits for the index write each save queued.
  const rolly::Status flushed = store.FlushFor(std::chrono::seconds(60));
  if (!flushed.ok()) {
    std::fprintf(stderr, "save_slots: %s\n", flushed.ToString().c_str());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
