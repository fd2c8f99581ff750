// Saving and loading slots through the store: two copies per slot, a per-slot queue, and results
// handed back on the game thread through a mailbox the game drains once a frame.
//
// Usage: store_basics [FOLDER]   (default: saves/)
// Saves three slots into FOLDER, saves one of them again, loads it back, and lists the slots.

#include <chrono>
#include <cstdio>
#include <string>

#include "rolly/core/mailbox.h"
#include "rolly/core/worker_pool.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/store.h"

namespace {

// What a game would capture: here, a title and some bytes in one chunk.
rolly::format::File MakeSave(const std::string& title, int progress) {
  rolly::format::File file;
  file.header.title = title;
  file.header.save_time_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  std::string state = "progress=" + std::to_string(progress) + ";";
  while (state.size() < 4000) state += "inventory=sword,shield,potion;";
  file.chunks.emplace_back(rolly::format::kTestChunk, "state",
                           rolly::Bytes(state.begin(), state.end()));
  return file;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string folder = argc > 1 ? argv[1] : "saves";

  // One backend, worker pool and mailbox for the whole game; the store works on top of them.
  rolly::store::FolderBackend backend(folder);
  rolly::WorkerPool workers(2);
  rolly::Mailbox mailbox;
  rolly::store::Store store(backend, workers, mailbox);

  int failures = 0;
  auto on_saved = [&failures](rolly::Result<rolly::store::SaveInfo> r) {
    if (!r.ok()) {
      std::fprintf(stderr, "save failed: %s\n", r.status().ToString().c_str());
      ++failures;
      return;
    }
    std::printf("saved %s: copy %c, sequence %llu, %llu bytes\n", r->slot.c_str(),
                rolly::store::CopyLetter(r->copy), static_cast<unsigned long long>(r->sequence),
                static_cast<unsigned long long>(r->size));
  };

  // Asking is cheap: compression starts on a worker, the write waits for the slot's turn.
  store.Save("Slot 1", MakeSave("The Mill", 10), on_saved);
  store.Save("Slot 2", MakeSave("The Keep", 20), on_saved);
  store.Save("Autosave", MakeSave("On the road", 25), on_saved);
  store.Save("Slot 1", MakeSave("The Mill, later", 30), on_saved);  // goes to the other copy

  // Different slots run side by side, so a list asked now could come before these saves finish;
  // wait for them (a game would list on a later frame, or when the saves' callbacks ran).
  if (!store.FlushFor(rolly::store::Store::kQuitFlush).ok()) return 1;

  store.Load("Slot 1", [&failures](rolly::Result<rolly::store::LoadResult> r) {
    if (!r.ok()) {
      std::fprintf(stderr, "load failed: %s\n", r.status().ToString().c_str());
      ++failures;
      return;
    }
    std::printf("loaded Slot 1 from copy %c: \"%s\", sequence %llu%s\n",
                rolly::store::CopyLetter(r->copy), r->file.header.title.c_str(),
                static_cast<unsigned long long>(r->file.header.sequence),
                r->recovered ? " (recovered from the older copy)" : "");
  });

  // The list owns the index bytes its entries view: read them inside the callback, or keep the
  // SlotList (or a SlotInfo copy of an entry) for later.
  store.ListSlots([&failures](rolly::Result<rolly::store::SlotList> r) {
    if (!r.ok()) {
      ++failures;
      return;
    }
    for (const rolly::store::SlotView& s : *r) {
      std::printf("slot %.*s: \"%.*s\", sequence %llu\n", static_cast<int>(s.slot.size()),
                  s.slot.data(), static_cast<int>(s.title.size()), s.title.data(),
                  static_cast<unsigned long long>(s.sequence));
    }
  });

  // A game drains the mailbox once a frame with mailbox.Drain(); at quit it flushes, which drains
  // while it waits, within a bound.
  const rolly::Status flushed = store.FlushFor(rolly::store::Store::kQuitFlush);
  if (!flushed.ok()) {
    std::fprintf(stderr, "flush: %s\n", flushed.ToString().c_str());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
