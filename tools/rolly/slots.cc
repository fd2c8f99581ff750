// `rolly slots DIR`: the slots of a save folder as its slot index lists them, through the public
// store API (FolderBackend, Store::ListSlots). Writes nothing: a missing or damaged index is
// rebuilt in memory from the saves' headers, not written back.

#include <sys/stat.h>

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "json_writer.h"
#include "rolly/core/mailbox.h"
#include "rolly/core/worker_pool.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/store.h"
#include "text.h"
#include "verbs.h"

namespace rolly::cli {
namespace {

std::string_view StateName(store::CopyState s) {
  switch (s) {
    case store::CopyState::kMissing: return "missing";
    case store::CopyState::kValid: return "valid";
    case store::CopyState::kDamaged: return "damaged";
    case store::CopyState::kNewer: return "newer";
    case store::CopyState::kFailed: return "unreadable";
  }
  return "unknown";
}

std::string KindText(std::uint32_t kind) {
  if (auto name = KindName(kind)) return std::string(*name);
  return fmt::format("kind {}", kind);
}

bool IsDamaged(const store::SlotInfo& s) {
  return s.recovered || s.state_a == store::CopyState::kDamaged ||
         s.state_b == store::CopyState::kDamaged;
}

void PrintText(const SlotsOptions& options, const std::vector<store::SlotInfo>& slots,
               std::FILE* out) {
  fmt::print(out, "folder: {} (prefix {})\n", Printable(options.folder), options.prefix);
  fmt::print(out, "slots: {}\n", slots.size());
  for (const store::SlotInfo& s : slots) {
    fmt::print(out, "  {}: title {}, {}, saved {}, sequence {}, {} bytes\n", Quoted(s.slot),
               Quoted(s.title), KindText(s.kind), FormatSaveTime(s.save_time_us), s.sequence,
               s.size);
    fmt::print(out, "    loads copy {} (copy a {}, copy b {}){}\n", store::CopyLetter(s.copy),
               StateName(s.state_a), StateName(s.state_b),
               s.recovered ? "; recovered: the newest save is damaged, the older copy loads" : "");
  }
}

void PrintJson(const SlotsOptions& options, const std::vector<store::SlotInfo>& slots,
               std::FILE* out) {
  std::string text;
  JsonWriter w(&text);
  w.BeginObject();
  w.Field("folder", options.folder);
  w.Field("prefix", options.prefix);
  w.Key("slots");
  w.BeginArray();
  for (const store::SlotInfo& s : slots) {
    w.BeginObject();
    w.Field("name", s.slot);
    w.Field("title", s.title);
    w.Field("kind", s.kind);
    w.Field("save_time", FormatSaveTime(s.save_time_us));
    w.Field("save_time_us", s.save_time_us);
    w.Field("sequence", s.sequence);
    w.Field("game_data_version", s.game_data_version);
    w.Field("size", s.size);
    // Unknown (null) when the listing leaves the metadata out: it is larger than a listing
    // carries.
    w.Key("metadata_size");
    if (s.metadata_listed) {
      w.Uint(s.metadata.size());
    } else {
      w.Null();
    }
    w.Field("copy", std::string(1, store::CopyLetter(s.copy)));
    w.Field("copy_a", StateName(s.state_a));
    w.Field("copy_b", StateName(s.state_b));
    w.Field("recovered", s.recovered);
    w.Field("damaged", IsDamaged(s));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  fmt::print(out, "{}\n", text);
}

// Checks both copies of a slot whole, as a load would, and sets the copy states, the copy a load
// takes, and whether it recovers from the older one.
void Verify(store::Store& store, Mailbox& mailbox, store::SlotInfo* slot) {
  store::CopyState states[2];
  std::uint64_t sequences[2] = {0, 0}, sizes[2] = {0, 0};
  format::Header headers[2];
  for (const store::Copy copy : {store::Copy::kA, store::Copy::kB}) {
    // Shared with the callback: one that comes after the wait gave up finds its own result, not
    // a variable of this loop gone or reused for the other copy.
    auto answer = std::make_shared<std::optional<Result<store::LoadResult>>>();
    store.LoadCopy(slot->slot, copy,
                   [answer](Result<store::LoadResult> r) { answer->emplace(std::move(r)); });
    mailbox.DrainUntil([&answer] { return answer->has_value(); },
                       Mailbox::Clock::now() + std::chrono::seconds(60));
    const std::optional<Result<store::LoadResult>>& loaded = *answer;
    store::CopyState& state = states[static_cast<int>(copy)];
    if (!loaded) {
      state = store::CopyState::kFailed;
    } else if (loaded->ok()) {
      state = store::CopyState::kValid;
      sequences[static_cast<int>(copy)] = (*loaded)->file.header.sequence;
      sizes[static_cast<int>(copy)] = (*loaded)->size;
      headers[static_cast<int>(copy)] = (*loaded)->file.header;
    } else {
      switch (loaded->status().code()) {
        case StatusCode::kNotFound: state = store::CopyState::kMissing; break;
        case StatusCode::kDamaged: state = store::CopyState::kDamaged; break;
        case StatusCode::kNewerVersion: state = store::CopyState::kNewer; break;
        default: state = store::CopyState::kFailed; break;
      }
    }
  }
  slot->state_a = states[0];
  slot->state_b = states[1];
  const bool a = states[0] == store::CopyState::kValid, b = states[1] == store::CopyState::kValid;
  if (a || b) {
    slot->copy = (a && (!b || sequences[0] >= sequences[1])) ? store::Copy::kA : store::Copy::kB;
    const store::CopyState other = states[1 - static_cast<int>(slot->copy)];
    slot->recovered = other != store::CopyState::kValid && other != store::CopyState::kMissing;
    const format::Header& h = headers[static_cast<int>(slot->copy)];
    slot->title = h.title;
    slot->sequence = h.sequence;
    slot->save_time_us = h.save_time_us;
    slot->kind = h.kind;
    slot->game_data_version = h.game_data_version;
    slot->metadata = h.metadata;
    slot->metadata_listed = true;  // read from the copy, whatever its size
    slot->size = sizes[static_cast<int>(slot->copy)];
  }
}

}  // namespace

int RunSlots(const SlotsOptions& options, std::FILE* out, std::FILE* err) {
  struct stat st;
  if (stat(options.folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fmt::print(err, "rolly slots: {} is not a folder\n", Printable(options.folder));
    return kExitUsage;
  }
  // Only reads: a game may be saving into the folder (its temporary files stay).
  store::FolderBackendOptions backend_options;
  backend_options.read_only = true;
  store::FolderBackend backend(options.folder, backend_options);
  WorkerPool workers(2);
  Mailbox mailbox;
  store::StoreOptions store_options;
  store_options.prefix = options.prefix;
  store_options.known_chunks = options.known_chunks;
  store::Store store(backend, workers, mailbox, store_options);
  std::optional<Result<store::SlotList>> listed;
  store.ListSlots([&listed](Result<store::SlotList> r) { listed.emplace(std::move(r)); });
  const Status flushed = store.FlushFor(std::chrono::seconds(60));
  if (!flushed.ok() || !listed) {
    fmt::print(err, "rolly slots: {}\n", Printable(flushed.ToString()));
    return kExitUsage;
  }
  if (!listed->ok()) {
    fmt::print(err, "rolly slots: {}\n", Printable(listed->status().ToString()));
    return listed->status().code() == StatusCode::kInvalidInput ? kExitUsage : kExitInvalid;
  }
  // Owned copies: --verify replaces what the index says with what the copies say.
  std::vector<store::SlotInfo> slots((*listed)->begin(), (*listed)->end());
  if (options.verify) {
    for (store::SlotInfo& s : slots) Verify(store, mailbox, &s);
  }
  if (options.json) {
    PrintJson(options, slots, out);
  } else {
    PrintText(options, slots, out);
  }
  for (const store::SlotInfo& s : slots) {
    if (IsDamaged(s)) return kExitInvalid;
  }
  return kExitValid;
}

}  // namespace rolly::cli
