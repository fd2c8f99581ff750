#include "rolly/world/world.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <exception>
#include <iterator>
#include <limits>
#include <string>
#include <mutex>
#include <span>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "rolly/core/guid_map.h"
#include "rolly/core/side_task.h"
#include "rolly/record/apply.h"
#include "rolly/record/value_tree.h"
#include "rolly/world/sections.h"

namespace rolly::world_internal {
// The captures of one World alive now (World::live_captures_). A save's capture may be destroyed
// off the game thread (the last holder of its callback may be a worker), so the list is locked.
struct LiveCaptures {
  std::mutex mutex;
  std::vector<world::WorldCapture*> captures;
};
}  // namespace rolly::world_internal

namespace rolly::world {
namespace {

// Marks the World applying until the scope ends, however it ends: a host call or hook that throws
// does not leave it applying (Busy) for good. What the apply changed stays changed, as with any
// exception out of the game's own code.
struct Applying {
  explicit Applying(bool& flag) : on(flag) { on = true; }
  ~Applying() { on = false; }
  Applying(const Applying&) = delete;
  Applying& operator=(const Applying&) = delete;
  bool& on;
};

using record::RecordKind;
using record::Section;

const std::vector<record::SectionId> kTableFree = {kActorSection, kComponentSection, kGlobalSection,
                                                   kPlayerSection};
// The world's own sections, in the order LoadedGame::Check checks them.
constexpr record::SectionId kWorldSections[] = {kActorSection, kComponentSection, kGlobalSection,
                                                kPlayerSection};

// Whether objects of `cls` hold saved state: a saved field or a save-extra hook.
bool HasState(const reflect::ClassInfo& cls) {
  const reflect::ClassPlan& plan = cls.Plan();
  return !plan.fields.empty() || plan.extra;
}

// Whether actor `a` saves, as a save lists it: not a local player's own pawn (it saves with its
// player), not Saving::kNever, and Saving::kAlways or holding state itself or in a component.
// `components` gets its components that hold state.
bool ActorSaves(Host& host, const ActorView& a, std::vector<ComponentView>* components) {
  if (a.player_pawn || a.saving == Saving::kNever || !a.object) return false;
  components->clear();
  host.ListComponents(a, components);
  std::erase_if(*components,
                [](const ComponentView& c) { return !c.object || !HasState(*c.object.cls); });
  return a.saving == Saving::kAlways || HasState(*a.object.cls) || !components->empty();
}

// The saved class of records of `layout`: None when the process has no such name (no class of
// the game bears it), so for comparing only; SavedClassText gives its text for messages.
Name SavedClass(const record::ChunkTables& tables, std::uint32_t layout) {
  return tables.names()[tables.layouts()[layout].name];
}
std::string_view SavedClassText(const record::ChunkTables& tables, std::uint32_t layout) {
  return tables.name_text(tables.layouts()[layout].name);
}

// Whether a live object of `live` may take a record saved as class `saved`.
bool SameClass(const reflect::TypeRegistry& registry, Name saved, const reflect::ClassInfo* live) {
  return live != nullptr && (live->name() == saved || registry.FindClass(saved) == live);
}

std::string Describe(std::string_view cls, Guid id) {
  return std::string(cls) + " " + id.ToString();
}

// Whether the placement `saved` holds is the one `now` reports: the transform bit for bit (so -0
// is not 0 and a NaN is itself), the owner, the attachment and its socket.
// (Compared in words inline: a call to memcmp cost more than the comparison.)
bool SamePlacement(const ActorSection& saved, const ActorView& now) {
  constexpr std::size_t kWords = 10;
  static_assert(sizeof(reflect::Transformd) == kWords * sizeof(std::uint64_t),
                "a transform is ten doubles, with no padding to compare");
  const auto* x = reinterpret_cast<const unsigned char*>(&saved.transform);
  const auto* y = reinterpret_cast<const unsigned char*>(&now.transform);
  std::uint64_t differ = 0;
  for (std::size_t k = 0; k < kWords; ++k) {
    std::uint64_t a, b;
    std::memcpy(&a, x + 8 * k, 8);
    std::memcpy(&b, y + 8 * k, 8);
    differ |= a ^ b;
  }
  return differ == 0 && saved.owner == now.owner && saved.attach_parent == now.attach_parent &&
         saved.attach_socket == now.attach_socket.view();
}

// A capture's refusal of a subject, naming it (out of line: the steps' own code stays small).
[[gnu::cold, gnu::noinline]] Status SubjectRefused(Name cls, Guid id, const Status& status) {
  return Status(status.code(), Describe(cls.view(), id) + ": " + std::string(status.message()));
}

// Calls `each(id, bytes)` for each of `sections` (written by the capture itself, so in form).
template <typename Each>
void ForEachSection(const record::EncodedSections& sections, Each&& each) {
  ByteReader r(sections.bytes);
  for (std::uint32_t i = 0; i < sections.count; ++i) {
    ByteView id, bytes;
    if (!r.Raw(4, &id) || !r.LengthPrefixed(sections.bytes.size(), &bytes)) return;
    record::SectionId section;
    std::memcpy(section.data(), id.data(), 4);
    each(section, bytes);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// LoadedGame

Result<std::shared_ptr<const LoadedGame>> LoadedGame::Check(
    std::vector<WorldChunk> chunks, const reflect::TypeRegistry& registry,
    const record::CheckedPayload::Post& post) {
  (void)registry;
  auto game = std::make_shared<LoadedGame>();
  record::FileBudget budget;
  std::set<std::string> world_keys;
  for (WorldChunk& c : chunks) {
    std::string where = std::string(c.id.data(), 4) + " \"" + c.key + "\"";
    if (c.id != kGlobalChunk && c.id != kWorldChunk && c.id != kPlayerChunk) {
      return InvalidInputError("chunk " + where + " is not a world chunk");
    }
    // Kept as its bytes with where each record lies, not decoded record by record: a loaded or
    // held save of 100,000 actors then costs its bytes and 40 bytes a record. The world's own
    // sections are checked in the same walk of the records, before anything applies.
    record::CheckedPayload::SectionCheck sections;
    sections.ids = kWorldSections;
    Status section_failure;  // what `check` returned when it failed
    std::vector<std::uint32_t> destroyed;  // the tombstones met
    // The actors spawned in play met. (The two halves of a split check cover records far apart,
    // so they seldom count at once.) A check given up half way and run again in order counts
    // again: the count is cut to the records below.
    std::atomic<std::size_t> spawned{0};
    std::mutex mutex;  // `check` may run on two threads (a split check)
    sections.check = [&where, &section_failure, &destroyed, &spawned, &mutex](
                         std::size_t i, std::size_t k, ByteView body) {
      Status s;
      switch (k) {
        case 0: {
          // One per thread, read into again and again (each read sets every field): made afresh
          // for each actor, clearing it cost a tenth of the check.
          thread_local ActorSection a;
          s = ReadActor(body, &a);
          if (s.ok() && a.destroyed) {
            std::lock_guard lock(mutex);
            destroyed.push_back(static_cast<std::uint32_t>(i - 1));  // (`i` counts from 1)
          } else if (s.ok() && a.spawned) {
            spawned.fetch_add(1, std::memory_order_relaxed);
          }
          break;
        }
        case 1: {
          ComponentSection comp;
          s = ReadComponent(body, &comp);
          break;
        }
        case 2:
          s = DecodeGlobal(body).status();
          break;
        default:
          s = DecodePlayer(body).status();
          break;
      }
      if (s.ok()) return s;
      Status failure = DamagedError("chunk " + where + " record " + std::to_string(i) + ": " +
                                    std::string(s.message()));
      std::lock_guard lock(mutex);
      section_failure = failure;
      return failure;
    };
    bool fill_failed = false;
    record::CheckedPayload::Fill fill;
    if (c.fill) {
      fill = [&c, &fill_failed](std::span<std::uint8_t> out,
                                const std::function<void(std::size_t)>& arrived) {
        Status s = c.fill(out, arrived);
        fill_failed = !s.ok();
        return s;
      };
    }
    Result<record::CheckedPayload> payload =
        c.fill ? record::CheckedPayload::CheckWhileFilled(c.fill_size, fill, &budget, sections,
                                                          post)
               : record::CheckedPayload::Check(std::move(c.payload), &budget, sections, post);
    if (fill_failed) return payload.status();
    if (!payload.ok()) {
      // A world section's failure names the chunk already.
      if (!section_failure.ok() && payload.status() == section_failure) return section_failure;
      return Status(payload.status().code(),
                    "chunk " + where + ": " + std::string(payload.status().message()));
    }
    if (c.id == kWorldChunk) {
      if (!world_keys.insert(c.key).second) {
        return DamagedError("two WRLD chunks of map \"" + c.key + "\"");
      }
      // The first world chunk is the map the save was made on (WorldCapture::Finish writes it
      // first; chunks of other maps it keeps follow).
      if (game->map_.empty()) game->map_ = c.key;
    }
    // The two halves of a split check met them in two runs (and a record may have been checked
    // twice): in order, each once.
    std::sort(destroyed.begin(), destroyed.end());
    destroyed.erase(std::unique(destroyed.begin(), destroyed.end()), destroyed.end());
    if (c.id != kWorldChunk) destroyed.clear();
    const std::size_t spawned_at_most =
        c.id == kWorldChunk ? std::min(spawned.load(), payload->size()) : 0;
    game->chunks_.push_back({c.id, std::move(c.key), std::move(*payload), std::move(destroyed),
                             spawned_at_most});
  }
  return std::shared_ptr<const LoadedGame>(std::move(game));
}

const LoadedGame::Chunk* LoadedGame::Find(ChunkId id, std::string_view key) const {
  for (const Chunk& c : chunks_) {
    if (c.id == id && c.key == key) return &c;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Capture

// A component record waiting for its component (made by an apply, read by a capture's Gather).
struct World::WaitingComponent {
  std::shared_ptr<const LoadedGame> game;
  std::uint64_t apply = 0;  // the apply that left it waiting (World::applies_)
  const LoadedGame::Chunk* chunk = nullptr;
  std::size_t record = 0;
  Guid actor;
  // The component's name in the chunk's bytes, which `game` keeps: not interned, since a file
  // may hold any number of names the game never makes.
  std::string_view name;
};

// One subject to capture. Its world sections (ACTR, COMP, GLBL, PLYR) are encoded when the
// subject is listed, into the capture's one section buffer, so listing 100,000 actors makes no
// allocation per subject.
struct WorldCapture::Subject {
  // None for a component until its Id() is stored: by its step in a chunk not copied, by Make
  // (WriteCopies) in a copied one. Its two XXH3 hashes are left until then.
  Guid id;
  Object object;
  // A placed actor destroyed in play (the only subject without an object): its class name. A
  // component: its name.
  Name name;
  // A component: its actor's index in the subjects.
  std::uint32_t actor = 0;
  // Its sections, in the record's form (record::EncodedSections): `section_size` bytes of block
  // `section_block` of section_blocks_, at `section_at`.
  std::uint32_t section_block = 0;
  std::uint32_t section_at = 0;
  std::uint32_t section_size = 0;
  // Its record index in its chunk (from 1).
  std::uint32_t record = 0;
  std::uint16_t chunk = 0;
  RecordKind kind = RecordKind::kObject;
  std::uint8_t section_count = 0;

  bool tombstone() const { return !object; }
  // Its sections, in `blocks` (the capture's section blocks).
  record::EncodedSections Sections(const std::vector<ByteSink>& blocks) const {
    return {ByteView(blocks[section_block].data() + section_at, section_size), section_count};
  }
  // Its ID; `all` is the list it is in.
  Guid Id(const std::vector<Subject>& all) const {
    if (kind != RecordKind::kComponent || !id.is_none()) return id;
    return DeriveComponentId(all[actor].id, name);
  }
};

// How many subjects ahead a step asks for the object's saved fields, and how many ahead for the
// first element of each of its saved vectors (whose address sits in those fields).
constexpr std::size_t kPrefetchAhead = 8;
constexpr std::size_t kElementsAhead = 4;

// Capturing waits on the objects' memory, not on work: the saved fields of the object a few
// subjects ahead are asked into cache (at the offsets ClassPlan::reach says reach each line).
// These helpers, whose only effect is a prefetch, are always inlined: GCC 12 takes such a
// function for one with no effect at all, and drops the calls it has not inlined yet.
[[gnu::always_inline]] inline void AskFields(Object ahead) {
  if (!ahead) return;
  for (std::uint32_t at : ahead.cls->Plan().reach) {
    __builtin_prefetch(static_cast<const char*>(ahead.ptr) + at);
  }
}
// A vector's elements sit elsewhere (a chest's inventory): the first of them is asked for once
// the vector itself is in cache, at the address the vector keeps (ClassPlan::elements), read
// straight from it. (Asked through the vector's operations, for its size and first and last
// elements, the calls took longer than the wait they saved on a host whose vectors lie
// together: docs/performance.md.)
[[gnu::always_inline]] inline void AskElements(Object ahead) {
  if (!ahead) return;
  for (std::uint32_t at : ahead.cls->Plan().elements) {
    const void* first = nullptr;
    std::memcpy(&first, static_cast<const char*>(ahead.ptr) + at, sizeof first);
    if (first != nullptr) __builtin_prefetch(first);
  }
}
// How many entries ahead a pass filling or probing a hash table asks for the slot (each entry
// takes a few nanoseconds, a slot from memory about a hundred).
constexpr std::size_t kSlotAhead = 32;
// The capture's world sections are kept in blocks, let go of as the steps pass them (as Make
// passes them when a chunk is copied: it writes those records with them); a subject's
// sections (a few KiB at most: names are at most 1,024 bytes) start a new block when less than
// kSectionRoom is left.
constexpr std::size_t kSectionBlock = std::size_t{1} << 18;
constexpr std::size_t kSectionRoom = 8192;

// A subject whose objects have OnSaved hooks: who it is, to find it again once the write ends.
// Each is checked right before its hooks run: the same object (address and class) must be there
// under the same identity, or its hooks are skipped.
struct WorldCapture::Hooked {
  Object object;
  RecordKind kind = RecordKind::kObject;
  // An actor's ID, or a component's actor's.
  Guid actor;
  // A component's name, a global's role, or a registered object's name.
  Name name;
  bool registered = false;
  PlayerSection player;
  // Known gone: its level was removed, or another map opened, while the save was written.
  bool gone = false;
};

struct WorldCapture::ChunkState {
  ChunkId id{};
  std::string key;
  std::unique_ptr<record::ChunkWriter> writer;
  std::unique_ptr<record::Capturer> capturer;
  std::uint32_t count = 0;
  std::unordered_map<std::string, std::uint32_t> tombstone_layouts;
  // The captures that remembered objects for OnSaved, in the capturer's order.
  std::vector<Hooked> hooked;
  // Its subjects are copied by the steps, their records written by CapturedWorld::Make.
  bool copied = false;
  // Their copies (when copied; a chunk's copies are made in its subjects' order).
  std::unique_ptr<record::ObjectCopies> copies;
};

// The thread that copies the world chunk's subjects while the game thread lists them
// (World::BeginCapture with a helper). The game thread lists them into the subjects, whose room it
// reserved, and publishes how far it got every few subjects; the copier reads each subject's object
// from there, in order, into the chunk's copies. (Read where they were listed, the subjects cost
// the game thread nothing to hand over: a line it writes was never read by the other thread, which
// a ring of items reused would have it wait for.) Whoever starts the work first owns it: the task
// posted (Run), or the game thread once it stops handing subjects over before the task started
// (Join). The game thread does not leave Gather while the task copies, so the objects hold still
// for it. The task reads the objects' saved values (strings' and vectors' contents too) and, for
// each object a reference points to, its dynamic class; nothing else of the game's. It copies with
// links of its own, which name an object by its address and never locate one: locating reads
// every subject, which the game thread is still listing (only a refusal's message would ask, and
// the task's refusals are found again by the steps).
class WorldCapture::Helper {
 public:
  // Copies subjects from `begin` on, of `subjects` (which must not move while it may copy), into
  // `copies`; `links` are the capture's (only their Identify is asked) and `writer` its chunk's.
  Helper(record::ChunkWriter* writer, record::ObjectLinks* links, record::ObjectCopies* copies,
         const Subject* subjects, std::size_t begin)
      : links_(links),
        capturer_(writer, &links_),
        copies_(copies),
        subjects_(subjects),
        next_(begin),
        end_(begin) {}

  // The posted task: copies every subject published, unless the game thread claimed them. A task
  // run on the game thread itself (a post that runs it at once) leaves them to the game thread.
  // A copy that throws (an allocation failing) ends the task; the game thread's Rethrow throws
  // it again there, as the copy would have thrown without a helper.
  void Run() {
    if (std::this_thread::get_id() == game_thread_) return;
    int waiting = kWaiting;
    if (!state_.compare_exchange_strong(waiting, kStarted, std::memory_order_acq_rel)) return;
    try {
      Drain();
    } catch (...) {
      thrown_ = std::current_exception();
    }
    state_.store(kFinished, std::memory_order_release);
  }

  // Game thread: the subjects before `end` are listed and may be copied. Made known to the
  // copier every kPublish subjects, so that its reads of the count do not follow each write.
  void Publish(std::size_t end) {
    if (end % kPublish == 0) end_.store(end, std::memory_order_release);
  }
  // Game thread: whatever was published need not be copied (the chunk turned out not to be
  // copied); the copier stops copying and lets the rest go.
  void Abandon() { stop_.store(true, std::memory_order_relaxed); }
  // Game thread, with every subject before `end` listed and none more to come: waits until the
  // copier is done with them, or copies them itself when the task has not started. Copying here,
  // it is done even when a copy throws: a second Join (the listing unwinding) then returns.
  void Join(std::size_t end) {
    end_.store(end, std::memory_order_release);
    closed_.store(true, std::memory_order_release);
    int waiting = kWaiting;
    if (state_.compare_exchange_strong(waiting, kClaimed, std::memory_order_acq_rel)) {
      struct Done {
        std::atomic<int>& state;
        ~Done() { state.store(kFinished, std::memory_order_release); }
      } done{state_};
      Drain();
      return;
    }
    while (state_.load(std::memory_order_acquire) != kFinished) std::this_thread::yield();
  }
  // After Join, on the listing's normal end: throws what a copy on the task threw, if one did.
  void Rethrow() const {
    if (thrown_) std::rethrow_exception(thrown_);
  }
  // After Join: the first subject that failed to copy (the step that copies it again finds its
  // refusal), or none.
  std::optional<std::size_t> failed() const { return failed_; }

 private:
  enum : int { kWaiting, kStarted, kClaimed, kFinished };
  static constexpr std::size_t kPublish = 32;

  // Names objects as the capture's links do; locates none.
  class NamingLinks : public record::ObjectLinks {
   public:
    explicit NamingLinks(record::ObjectLinks* links) : links_(links) {}
    std::optional<record::LinkTarget> Locate(const reflect::ClassInfo&, const void*) override {
      return std::nullopt;
    }
    const void* Identify(const reflect::ClassInfo& cls, const void* object) override {
      return links_->Identify(cls, object);
    }
    std::optional<record::LinkTarget> LocateIdentified(const void*) override {
      return std::nullopt;
    }
    void* Resolve(Guid, const reflect::ClassInfo&) override { return nullptr; }

   private:
    record::ObjectLinks* const links_;
  };

  // Copies the subjects published until the listing is closed and they are all copied. While it
  // waits for more (the listing is slower than the copying), the task spins a little, then yields
  // its core.
  void Drain() {
    std::size_t t = next_;
    int idle = 0;
    for (;;) {
      const std::size_t h = end_.load(std::memory_order_acquire);
      if (t == h) {
        if (closed_.load(std::memory_order_acquire)) {
          if (t == end_.load(std::memory_order_acquire)) break;
          continue;
        }
        if (++idle > 64) std::this_thread::yield();
        continue;
      }
      idle = 0;
      for (; t < h; ++t) {
        if (stop_.load(std::memory_order_relaxed)) {
          t = h;  // the rest is let go
          break;
        }
        if (t + kPrefetchAhead < h) AskFields(subjects_[t + kPrefetchAhead].object);
        if (t + kElementsAhead < h) AskElements(subjects_[t + kElementsAhead].object);
        const Object object = subjects_[t].object;
        if (!capturer_.Copy(*object.cls, object.ptr, copies_).ok()) {
          failed_ = t;
          stop_.store(true, std::memory_order_relaxed);
        }
      }
    }
  }

  const std::thread::id game_thread_ = std::this_thread::get_id();
  // The copier's (the task's once started, or the game thread's once claimed).
  NamingLinks links_;
  record::Capturer capturer_;
  record::ObjectCopies* const copies_;
  const Subject* const subjects_;
  const std::size_t next_;
  std::optional<std::size_t> failed_;
  std::exception_ptr thrown_;  // what a copy on the task threw
  alignas(64) std::atomic<std::size_t> end_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> state_{kWaiting};
};

namespace {

// Appends the record of a placed actor destroyed in play: no values, its class named by a layout
// of no fields (one per class, in `layouts`).
Status AddTombstone(record::ChunkWriter& writer,
                    std::unordered_map<std::string, std::uint32_t>& layouts, Guid id, Name cls,
                    const record::EncodedSections& sections) {
  record::ChunkTables& tables = writer.tables();
  auto [it, fresh] = layouts.try_emplace(cls.str(), 0);
  if (fresh) {
    Result<std::uint32_t> name = tables.AddName(cls);
    if (!name.ok()) {
      layouts.erase(it);
      return name.status();
    }
    it->second = tables.AppendLayout(record::Layout{*name, {}});
  }
  record::Record r;
  r.kind = static_cast<std::uint8_t>(RecordKind::kActor);
  r.subject = id;
  r.layout = it->second;
  r.sections.push_back({record::kPropSection, {}});
  ForEachSection(sections, [&](record::SectionId section, ByteView bytes) {
    r.sections.push_back({section, Bytes(bytes.begin(), bytes.end())});
  });
  return writer.Add(r);
}

}  // namespace

// Where each subject is saved: references between saved objects become record indexes (same
// chunk) or subject IDs. Objects are found by address in one table (open addressing) whose slots
// hold the subject's index and a few bits of the address's hash, 8 bytes a slot: the table of a
// 150,000-subject capture is 2 MiB, and filling it is a random write per subject.
//
// The table is made the first time a reference is located, from every subject listed. A copied
// chunk's references are only named on the game thread (Identify: the address their object is
// listed by) and located when Make writes their records (LocateIdentified, on the store's worker),
// so a save whose references all sit in copied chunks makes the table off the game thread. Either
// way the capture is done listing by then: the table sees every subject.
class WorldCapture::Links : public record::ObjectLinks {
 public:
  Links(const reflect::TypeRegistry& registry, const std::vector<Subject>* subjects)
      : registry_(registry), subjects_(subjects) {}
  // The subject list moved (to a CapturedWorld, with these links).
  void SetSubjects(const std::vector<Subject>* subjects) { subjects_ = subjects; }
  // The chunk whose record is written next: a target in it is located by its record index.
  void SetChunk(std::size_t chunk) { chunk_ = chunk; }

  std::optional<record::LinkTarget> Locate(const reflect::ClassInfo& cls,
                                           const void* object) override {
    return LocateIdentified(Identify(cls, object));
  }
  // The object's address as its subject was listed: that of its dynamic class's object.
  const void* Identify(const reflect::ClassInfo& cls, const void* object) override {
    reflect::ObjectRef ref = registry_.DynamicClass(cls, object);
    return ref.object ? ref.object : object;
  }
  std::optional<record::LinkTarget> LocateIdentified(const void* key) override {
    if (key == nullptr) return std::nullopt;
    if (slots_.empty()) Fill();
    const std::vector<Subject>& subjects = *subjects_;
    const std::uint64_t h = Hash(key);
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    for (std::size_t i = Home(h);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& slot = slots_[i];
      if (slot.subject == 0) return LocateOutside(key);
      if (slot.tag != tag) continue;
      const Subject& s = subjects[slot.subject - 1];
      if (s.object.ptr == key) {
        return record::LinkTarget{s.Id(subjects), s.chunk == chunk_ ? s.record : 0};
      }
    }
  }
  void* Resolve(Guid, const reflect::ClassInfo&) override { return nullptr; }

  // Objects by address (AddressKey), with their subject IDs.
  using Outside = GuidMap<Guid>;
  static Guid AddressKey(const void* p) { return Guid(0, reinterpret_cast<std::uintptr_t>(p)); }
  // For a level's capture, whose subjects are that level's alone: `list(stage, out)` adds to
  // `out` the objects outside the level a save lists, in stages (WorldCapture::ListOutsideLevel),
  // each listed the first time a reference is found neither among the subjects nor in the stages
  // before. It calls the host, so this capture's records must be written on the game thread.
  void SetOutside(std::function<void(int, Outside*)> list) { list_outside_ = std::move(list); }

 private:
  struct Slot {
    std::uint32_t subject = 0;  // 1 + the subject's index; 0 for an empty slot
    std::uint32_t tag = 0;      // the hash's high half
  };
  static std::uint64_t Hash(const void* object) {
    std::uint64_t h = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(object));
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);  // the address's high bits reach the low bits the table uses
  }
  std::size_t Home(std::uint64_t hash) const {
    return static_cast<std::size_t>(hash) & (slots_.size() - 1);
  }
  // Every subject's address, in one pass: the slots are scattered, so each is asked into cache a
  // few subjects ahead. A later subject of the same address wins. At most 70% of slots are used.
  void Fill() {
    const std::vector<Subject>& subjects = *subjects_;
    std::size_t size = 16;
    while (size * 7 < subjects.size() * 10) size *= 2;
    slots_.assign(size, Slot{});
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      if (i + kSlotAhead < subjects.size() && subjects[i + kSlotAhead].object) {
        __builtin_prefetch(&slots_[Home(Hash(subjects[i + kSlotAhead].object.ptr))], 1);
      }
      if (subjects[i].object) Add(subjects[i].object.ptr, static_cast<std::uint32_t>(i));
    }
  }
  void Add(const void* object, std::uint32_t index) {
    const std::uint64_t h = Hash(object);
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    for (std::size_t i = Home(h);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& slot = slots_[i];
      if (slot.subject == 0) {
        slot = {index + 1, tag};
        return;
      }
      if (slot.tag == tag && (*subjects_)[slot.subject - 1].object.ptr == object) {
        slot.subject = index + 1;
        return;
      }
    }
  }
  std::optional<record::LinkTarget> LocateOutside(const void* key) {
    if (!list_outside_) return std::nullopt;
    for (;;) {
      if (const Guid* id = outside_.Find(AddressKey(key))) return record::LinkTarget{*id, 0};
      if (outside_stages_ == WorldCapture::kOutsideStages) return std::nullopt;
      list_outside_(outside_stages_++, &outside_);
    }
  }

  const reflect::TypeRegistry& registry_;
  const std::vector<Subject>* subjects_;
  std::vector<Slot> slots_;  // empty until a reference is located
  std::size_t chunk_ = 0;
  std::function<void(int, Outside*)> list_outside_;
  int outside_stages_ = 0;  // how many stages were listed
  Outside outside_;
};

WorldCapture::WorldCapture(World& world)
    : world_(world),
      live_(world.live_captures_),
      links_(std::make_unique<Links>(world.registry(), &subjects_)),
      budget_(std::make_unique<record::FileBudget>()) {
  std::lock_guard lock(live_->mutex);
  live_->captures.push_back(this);
}

WorldCapture::~WorldCapture() {
  std::lock_guard lock(live_->mutex);
  std::erase(live_->captures, this);
}

void WorldCapture::Gather(const record::CheckedPayload::Post& post) {
  Host& host = world_.host();
  // A level's capture (only_level_) takes that level's actors alone, and sizes nothing by a save's.
  const bool whole = only_level_.is_none();
  const World::CaptureHint hint = whole ? world_.capture_hint_ : World::CaptureHint{};
  // A level's references out of it save the IDs of what they point to, as a whole save's do.
  if (!whole) {
    assert(!post);  // (the host is called to list them, on the thread writing the records)
    links_->SetOutside([&world = world_, level = only_level_](int stage, Links::Outside* out) {
      ListOutsideLevel(world, level, stage, out);
    });
  }
  // Taken as the subjects are listed: a component made after that (by a pre-save hook, say) is
  // not in this save, so the record it took must be.
  waiting_.reserve(world_.waiting_.size());
  for (const auto& w : world_.waiting_) {
    waiting_.push_back({w->game, w->chunk, w->record, w->actor});
  }
  auto add_chunk = [&](ChunkId id, std::string key) {
    auto c = std::make_unique<ChunkState>();
    c->id = id;
    c->key = std::move(key);
    c->writer = std::make_unique<record::ChunkWriter>(budget_.get());
    c->capturer = std::make_unique<record::Capturer>(c->writer.get(), links_.get());
    c->copied = true;  // until a subject of a class not copied is listed in it
    c->copies = std::make_unique<record::ObjectCopies>();
    chunks_.push_back(std::move(c));
    return chunks_.size() - 1;
  };
  auto fits = [&](Name name) {
    if (!FitsSection(name) && gather_error_.ok()) {
      gather_error_ =
          InvalidDataError("the name \"" + std::string(name.view().substr(0, 64)) +
                           "\" cannot be saved: names are at most 1,024 bytes of UTF-8");
    }
  };
  // The copies' programs, asked for each subject's class as it is listed: a chunk is copied when
  // its subjects are all of plain classes.
  classes_ = std::make_unique<record::ObjectCopies>();
  // The helper copying the world chunk's subjects as they are listed (none: the steps copy them).
  std::shared_ptr<Helper> helper;
  std::size_t wrld = 0;
  bool handing = false;  // whether the world subjects listed now go to the helper
  // A subject (add), then each of its sections (section(id, append): `append(ByteSink*)` writes
  // the section's bytes, which go into the current block in the record's form).
  auto add = [&](std::size_t chunk, RecordKind kind, Guid id, Object object, Name name) {
    if (object && !classes_->CanCopy(*object.cls)) {
      chunks_[chunk]->copied = false;
      if (helper && chunk == wrld) helper->Abandon();  // what it copied goes (below)
    }
    // The helper reads the subjects where they are: they may not move while it copies.
    if (handing && subjects_.size() == subjects_.capacity()) {
      helper->Join(helped_end_);
      handing = false;
    }
    // A subject's sections stay in one block (they are at most a few KiB).
    if (section_blocks_.empty() ||
        section_blocks_.back().capacity() - section_blocks_.back().size() < kSectionRoom) {
      section_blocks_.emplace_back().Reserve(kSectionBlock);
    }
    // Written in place, field by field: a Subject built aside and copied in is read back from
    // the stack in wider loads than it was stored with, and those loads wait for the stores.
    Subject& s = subjects_.emplace_back();
    s.id = id;
    s.object = object;
    s.name = name;
    s.section_block = static_cast<std::uint32_t>(section_blocks_.size() - 1);
    s.section_at = static_cast<std::uint32_t>(section_blocks_.back().size());
    s.record = ++chunks_[chunk]->count;
    s.chunk = static_cast<std::uint16_t>(chunk);
    s.kind = kind;
  };
  auto section = [&](record::SectionId id, auto&& append) {
    ByteSink& block = section_blocks_.back();
    const std::size_t begun = record::BeginSection(&block, id);
    append(&block);
    record::EndSection(&block, begun);
    Subject& s = subjects_.back();
    ++s.section_count;
    s.section_size = static_cast<std::uint32_t>(block.size() - s.section_at);
  };

  // Globals. (Whether one has an OnPreSave or save-extra hook: its step runs the hook after the
  // listing, and a hook may change actors, so a helper copying them meanwhile would copy them too
  // early. Only the hooks of a global's own class count, not those of the objects it owns.)
  bool global_hooks = false;
  auto note_hooks = [&](Object o) {
    global_hooks = global_hooks || o.cls->Plan().pre_save || o.cls->Plan().extra;
  };
  const std::size_t glob = add_chunk(kGlobalChunk, "");
  std::vector<GlobalView> globals;
  if (whole) host.ListGlobals(&globals);
  for (const GlobalView& g : globals) {
    if (!g.object || !HasState(*g.object.cls)) continue;
    fits(g.role);
    add(glob, RecordKind::kObject, DeriveGlobalId(g.role, g.object.cls->name()), g.object, Name());
    note_hooks(g.object);
    section(kGlobalSection, [&](ByteSink* out) { AppendGlobal({false, g.role.str()}, out); });
  }
  // (Named copies, not structured bindings: clang 14 does not let a lambda capture those.)
  for (const auto& entry : world_.registered_) {
    if (!whole) break;
    const Name name = entry.first;
    add(glob, RecordKind::kObject, DeriveRegisteredId(name), entry.second, Name());
    note_hooks(entry.second);
    section(kGlobalSection, [&](ByteSink* out) { AppendGlobal({true, name.str()}, out); });
  }

  // Actors of every level, in the host's order (usually the order they sit in memory, which is
  // fastest to walk), each followed by its components; then tombstones.
  wrld = add_chunk(kWorldChunk, host.CurrentMap());
  // Room for a few more than the last capture's (a helper copies only while the room lasts). The
  // first capture of a World has no count yet: its placed actors that hold state are a floor
  // (their components and the actors spawned in play come on top).
  std::size_t expected = hint.subjects;
  if (expected == 0 && whole) {
    for (const auto& [level, saving] : world_.placed_saving_) expected += saving;
  }
  subjects_.reserve(std::max<std::size_t>(expected + expected / 32, 64));
  // With a helper (and no global hook to run first), each actor and component listed is handed
  // over to be copied, up to the first that cannot be: a class with hooks (they run on this
  // thread), one not copied, or one listed once the subjects' reserved room is full.
  if (post && whole && !hint.world_not_copied && !global_hooks) {
    ChunkState& c = *chunks_[wrld];
    helped_begin_ = helped_end_ = subjects_.size();
    helper = std::make_shared<Helper>(c.writer.get(), links_.get(), c.copies.get(),
                                      subjects_.data(), helped_begin_);
    post([helper] { helper->Run(); });
    handing = true;
  }
  // Should the listing end early (a host call throwing), the helper is let go first: it would
  // otherwise wait for subjects that never come, or read them once they are gone.
  struct LetGo {
    const std::shared_ptr<Helper>& helper;
    const bool& handing;
    const std::size_t& end;
    ~LetGo() {
      if (!handing) return;
      helper->Abandon();
      helper->Join(end);
    }
  } let_go{helper, handing, helped_end_};
  auto hand = [&](Object object) {
    if (!handing) return;
    const reflect::ClassPlan& plan = object.cls->Plan();
    if (!chunks_[wrld]->copied || plan.pre_save || plan.saved || plan.extra) {
      helper->Join(helped_end_);
      handing = false;
      return;
    }
    helped_end_ = subjects_.size();
    helper->Publish(helped_end_);
  };
  std::vector<Name> levels = host.Levels();
  const Name persistent = levels.empty() ? Name() : levels.front();
  if (!whole) levels.assign(1, only_level_);
  // Every actor's ID, to find the placed actors destroyed in play; the players' own pawns, which
  // save with their player (with the transform they have now).
  std::vector<Guid> ids;
  ids.reserve(hint.actors);
  std::vector<PlayerView> players;
  if (whole) host.ListPlayers(&players);
  std::vector<std::pair<const void*, reflect::Transformd>> pawns;
  std::vector<ComponentView> components;
  ActorSection actor;
  auto visit = [&](const ActorView& a) {
    ids.push_back(a.id);
    for (const PlayerView& p : players) {
      if (p.pawn && p.pawn.ptr == a.object.ptr) pawns.emplace_back(a.object.ptr, a.transform);
    }
    if (!ActorSaves(host, a, &components)) return;
    actor.spawned = a.spawned;
    if (a.level != persistent) {
      actor.level = a.level.view();
      fits(a.level);
    } else {
      actor.level = {};
    }
    actor.transform = a.transform;
    actor.owner = a.owner;
    actor.attach_parent = a.attach_parent;
    actor.attach_socket = a.attach_socket.view();
    if (!a.attach_socket.is_none()) fits(a.attach_socket);
    add(wrld, RecordKind::kActor, a.id, a.object, Name());
    const auto actor_index = static_cast<std::uint32_t>(subjects_.size() - 1);
    section(kActorSection, [&](ByteSink* out) { AppendActor(actor, out); });
    hand(a.object);
    if (components.size() > 1) {
      std::sort(components.begin(), components.end(),
                [](const ComponentView& x, const ComponentView& y) { return x.name < y.name; });
    }
    for (const ComponentView& c : components) {
      fits(c.name);
      add(wrld, RecordKind::kComponent, Guid(), c.object, c.name);  // its ID: Subject::Id
      subjects_.back().actor = actor_index;
      section(kComponentSection,
              [&](ByteSink* out) { AppendComponent({a.id, c.name.view()}, out); });
      hand(c.object);
    }
  };
  for (Name level : levels) host.VisitActors(level, visit);
  // The placed actors the map made and the world lacks now; the placed ones not seen go. A host
  // usually visits actors in the order the map made them, so each actor there is first matched
  // against the placed actors in that order: the one at a cursor or a few after it
  // (those skipped were destroyed). The others (spawned, or out of that order) are looked up by
  // ID after the walk, their slots asked into cache a few ahead; a run of them longer than the
  // window looks one up at once to find the cursor again.
  const std::vector<World::PlacedActor>& placed_actors = world_.placed_;
  std::vector<std::uint8_t> seen(placed_actors.size());  // bytes: cheaper to set than bits
  {
    constexpr std::size_t kWindow = 8;
    std::vector<Guid> unmatched;
    std::size_t cursor = 0;
    std::size_t run = 0;  // actors not matched in a row
    for (const Guid id : ids) {
      const std::size_t end = std::min(cursor + kWindow, placed_actors.size());
      std::size_t k = cursor;
      while (k < end && placed_actors[k].id != id) ++k;
      if (k < end) {
        seen[k] = 1;
        cursor = k + 1;
        run = 0;
        continue;
      }
      if (++run < kWindow) {
        unmatched.push_back(id);
        continue;
      }
      run = 0;
      if (const std::uint32_t* at = world_.placed_index_.Find(id)) {
        seen[*at] = 1;
        cursor = *at + 1;
      }
    }
    for (std::size_t i = 0; i < unmatched.size(); ++i) {
      if (i + kSlotAhead < unmatched.size()) {
        world_.placed_index_.Prefetch(unmatched[i + kSlotAhead]);
      }
      if (const std::uint32_t* at = world_.placed_index_.Find(unmatched[i])) seen[*at] = 1;
    }
  }
  // Written in the order the host visited them when their levels were added (levels in Levels()
  // order): the same world writes the same tombstones whatever slots streaming gave them, and a
  // load that opens the map meets them in that order, each a little past the one before.
  struct Gone {
    std::size_t level;  // its place in `levels`
    std::uint32_t order;
    const World::PlacedActor* placed;
  };
  std::vector<Gone> gone;
  for (std::size_t k = 0; k < placed_actors.size(); ++k) {
    const World::PlacedActor& placed = placed_actors[k];
    if (seen[k] || placed.id.is_none()) continue;
    if (!whole && placed.level != only_level_) continue;
    const auto level = static_cast<std::size_t>(
        std::find(levels.begin(), levels.end(), placed.level) - levels.begin());
    gone.push_back({level, placed.order, &placed});
  }
  std::sort(gone.begin(), gone.end(), [](const Gone& x, const Gone& y) {
    return std::tie(x.level, x.order, x.placed->id) < std::tie(y.level, y.order, y.placed->id);
  });
  for (const Gone& g : gone) {
    const World::PlacedActor& placed = *g.placed;
    ActorSection tombstone;
    tombstone.destroyed = true;
    if (placed.level != persistent) tombstone.level = placed.level.view();
    add(wrld, RecordKind::kActor, placed.id, Object{}, placed.cls);
    section(kActorSection, [&](ByteSink* out) { AppendActor(tombstone, out); });
  }
  if (whole) world_.capture_hint_.actors = ids.size();
  ids = std::vector<Guid>();

  // Local players, a chunk each.
  for (const PlayerView& p : players) {
    const auto index = static_cast<std::uint32_t>(p.index);
    const std::size_t plyr = add_chunk(kPlayerChunk, PlayerChunkKey(index));
    const std::pair<PlayerPart, Object> parts[] = {{PlayerPart::kController, p.controller},
                                                   {PlayerPart::kPawn, p.pawn},
                                                   {PlayerPart::kPlayerState, p.player_state}};
    for (const auto& entry : parts) {
      const PlayerPart part = entry.first;
      const Object object = entry.second;
      if (!object || !HasState(*object.cls)) continue;
      add(plyr, RecordKind::kPlayer, DerivePlayerId(index, part), object, Name());
      section(kPlayerSection, [&](ByteSink* out) { AppendPlayer({index, part}, out); });
      if (part == PlayerPart::kPawn) {
        for (const auto& [pawn, transform] : pawns) {
          if (pawn != object.ptr) continue;
          ActorSection placement;
          placement.transform = transform;
          section(kActorSection, [&](ByteSink* out) { AppendActor(placement, out); });
        }
      }
    }
  }
  total_ = subjects_.size();
  copied_ = std::any_of(chunks_.begin(), chunks_.end(), [](const auto& c) { return c->copied; });
  if (helper) {
    if (handing) helper->Join(helped_end_);
    handing = false;
    helper->Rethrow();
    ChunkState& c = *chunks_[wrld];
    if (!c.copied) {
      // Not a copied chunk after all: its subjects are captured whole by the steps (its copies
      // go below).
      helped_begin_ = helped_end_ = 0;
    } else if (helper->failed()) {
      // The step that copies it finds its refusal again.
      helped_end_ = *helper->failed();
    }
  }
  if (whole) world_.capture_hint_.world_not_copied = !chunks_[wrld]->copied;
  for (auto& c : chunks_) {
    if (!c->copied) c->copies.reset();
  }
}

void WorldCapture::ListOutsideLevel(World& world, Name level, int stage, GuidMap<Guid>* out) {
  auto note = [out](const void* object, Guid id) { out->Insert(Links::AddressKey(object), id); };
  if (stage == 0) {
    // (First: a player's pawn keeps its player part's ID.)
    world.VisitNamedSubjects([&](Guid id, Object object) { note(object.ptr, id); });
    return;
  }
  Host& host = world.host();
  std::vector<ComponentView> components;
  for (Name other : host.Levels()) {
    if (other == level) continue;
    host.VisitActors(other, [&](const ActorView& a) {
      if (a.id.is_none() || !ActorSaves(host, a, &components)) return;
      note(a.object.ptr, a.id);
      for (const ComponentView& c : components) note(c.object.ptr, DeriveComponentId(a.id, c.name));
    });
  }
}

Status WorldCapture::Step() {
  if (!gather_error_.ok()) return gather_error_;  // (a copy only when there is one)
  if (done()) return OkStatus();
  return StepOne();
}

Status WorldCapture::StepOne() {
  // The subjects a helper copied while they were listed (copied chunk's, without hooks: nothing
  // is left to do for them here).
  if (next_ == helped_begin_ && helped_begin_ < helped_end_) {
    next_ = helped_end_;
    return OkStatus();
  }
  if (next_ + kPrefetchAhead < subjects_.size()) {
    AskFields(subjects_[next_ + kPrefetchAhead].object);
  }
  if (next_ + kElementsAhead < subjects_.size()) {
    AskElements(subjects_[next_ + kElementsAhead].object);
  }
  Subject& s = subjects_[next_];
  ChunkState& c = *chunks_[s.chunk];
  links_->SetChunk(s.chunk);
  // The blocks of sections before this subject's are done with (unless Make reads them).
  while (!copied_ && sections_freed_ < s.section_block) {
    section_blocks_[sections_freed_++] = ByteSink();
  }
  const record::EncodedSections sections = s.Sections(section_blocks_);
  if (s.tombstone()) {
    // A placed actor destroyed in play (a copied chunk's is written by Make).
    if (!c.copied) {
      ROLLY_RETURN_IF_ERROR(AddTombstone(*c.writer, c.tombstone_layouts, s.id, s.name, sections));
    }
  } else {
    if (c.copied) {
      Status copied = c.capturer->Copy(*s.object.cls, s.object.ptr, c.copies.get());
      if (!copied.ok()) return SubjectRefused(s.object.cls->name(), s.Id(subjects_), copied);
    } else {
      s.id = s.Id(subjects_);
      Result<std::uint32_t> index =
          c.capturer->Capture(*s.object.cls, s.object.ptr, s.id, s.kind, sections);
      if (!index.ok()) return SubjectRefused(s.object.cls->name(), s.id, index.status());
    }
    if (c.capturer->last_remembered()) NoteHooked(c, s, sections);
  }
  ++next_;
  return OkStatus();
}

void WorldCapture::NoteHooked(ChunkState& c, const Subject& s,
                              const record::EncodedSections& sections) {
  // Who it is, from the sections the capture wrote (they were encoded from the host's views).
  Hooked h;
  h.object = s.object;
  h.kind = s.kind;
  if (s.kind == RecordKind::kActor) h.actor = s.id;
  ForEachSection(sections, [&](record::SectionId id, ByteView bytes) {
    if (record::SameSection(id, kComponentSection)) {
      ComponentSection comp = *DecodeComponent(bytes);
      h.actor = comp.actor;
      h.name = Name(comp.name);
    } else if (record::SameSection(id, kGlobalSection)) {
      GlobalSection global = *DecodeGlobal(bytes);
      h.registered = global.registered;
      h.name = Name(global.name);
    } else if (record::SameSection(id, kPlayerSection)) {
      h.player = *DecodePlayer(bytes);
    }
  });
  c.hooked.push_back(h);
}

Status WorldCapture::Run() {
  if (!gather_error_.ok()) return gather_error_;
  while (!done()) ROLLY_RETURN_IF_ERROR(StepOne());
  return OkStatus();
}

struct CapturedWorld::Rep {
  const reflect::TypeRegistry* registry = nullptr;
  struct Out {
    ChunkId id{};
    std::string key;
    std::unique_ptr<record::ChunkWriter> writer;
    // Its records are written from copies (WriteCopies), with these tombstone layouts.
    bool copied = false;
    std::unordered_map<std::string, std::uint32_t> tombstone_layouts;
    std::unique_ptr<record::ObjectCopies> copies;
  };
  std::vector<Out> chunks;
  // The subjects' sections (when a chunk is copied).
  std::vector<ByteSink> section_blocks;
  // Where the copies' references are saved (when a chunk is copied).
  std::unique_ptr<WorldCapture::Links> links;
  // What the writers charge.
  std::unique_ptr<record::FileBudget> budget;
  std::vector<WorldCapture::Subject> subjects;
  // The World's, when the capture was detached: the save it held, its level memory (level and
  // records), and the levels loaded.
  std::shared_ptr<const LoadedGame> held;
  std::vector<std::pair<Name, std::shared_ptr<const LoadedGame>>> memory;
  std::vector<Name> levels;
  // The capture's (WorldCapture::waiting_).
  std::vector<WorldCapture::Waiting> waiting;
  // A level's capture (World::RememberLevel); none: a save.
  Name only_level;

  bool Remembers(Name level) const {
    for (const auto& m : memory) {
      if (m.first == level) return true;
    }
    return false;
  }
  // Writes the copied chunks' records, from their copies.
  Status WriteCopies();
  // Writes level memory's records into the world chunk (a save's only); notes the actors in them.
  Status KeepRemembered(GuidSet& captured, GuidSet* remembered_actors);
  // Writes the records that waited for a component not captured, of an actor captured.
  Status KeepWaiting(GuidSet& captured);
  // Writes record `i` of `from` (a save's kept record) into `into` and notes its subject
  // captured. A record this version cannot move goes: nothing is written.
  static Status KeepRecord(Out& into, const record::CheckedPayload& from, std::size_t i,
                           GuidSet& captured);
  Result<std::vector<WorldChunk>> Make();
};

CapturedWorld::CapturedWorld(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
CapturedWorld::CapturedWorld(CapturedWorld&&) noexcept = default;
CapturedWorld& CapturedWorld::operator=(CapturedWorld&&) noexcept = default;
CapturedWorld::~CapturedWorld() = default;

Result<std::vector<WorldChunk>> CapturedWorld::Make() {
  if (!rep_) return InvalidInputError("the captured world was made already");
  const std::unique_ptr<Rep> rep = std::move(rep_);
  return rep->Make();
}

Result<CapturedWorld> WorldCapture::Detach() {
  if (!done()) return InvalidInputError("the capture has subjects left");
  if (detached_) return InvalidInputError("the capture was detached already");
  detached_ = true;
  auto rep = std::make_unique<CapturedWorld::Rep>();
  rep->registry = &world_.registry();
  rep->only_level = only_level_;
  if (only_level_.is_none()) world_.capture_hint_.subjects = subjects_.size();
  rep->levels = world_.host().Levels();
  rep->held = world_.held();
  for (const World::LevelMemory& m : world_.level_memory_) {
    rep->memory.emplace_back(m.level, m.records);
  }
  rep->waiting = std::move(waiting_);
  // What only the steps needed goes now; the copies and the sections Make writes them with go
  // with the records.
  if (copied_) rep->section_blocks = std::move(section_blocks_);
  section_blocks_ = std::vector<ByteSink>();
  classes_.reset();
  rep->subjects = std::move(subjects_);
  subjects_ = std::vector<Subject>();
  // The links locate the copies' references as Make writes their records (the chunks' capturers
  // keep a pointer to them, and use it no more).
  if (copied_) {
    rep->links = std::move(links_);
    rep->links->SetSubjects(&rep->subjects);
  }
  links_.reset();
  rep->budget = std::move(budget_);
  // Each chunk's Capturer keeps a pointer to the writer moved out here; it writes nothing more (the
  // capture is done, so Step returns at once), and keeps only what RunSavedHooks and Forget use.
  for (auto& c : chunks_) {
    rep->chunks.push_back({c->id, c->key, std::move(c->writer), c->copied,
                           std::move(c->tombstone_layouts), std::move(c->copies)});
  }
  return CapturedWorld(std::move(rep));
}

Status CapturedWorld::Rep::WriteCopies() {
  if (links == nullptr) return OkStatus();  // no chunk is copied
  // Each copied chunk's records, in the order the steps listed them (their indexes were given
  // then, and the copies were made in it), the copies and sections let go of as they are passed.
  std::vector<std::unique_ptr<record::Capturer>> capturers(chunks.size());
  std::size_t sections_freed = 0;
  for (WorldCapture::Subject& s : subjects) {
    Out& c = chunks[s.chunk];
    if (!c.copied) continue;
    while (sections_freed < s.section_block) section_blocks[sections_freed++] = ByteSink();
    const record::EncodedSections sections = s.Sections(section_blocks);
    if (s.tombstone()) {
      ROLLY_RETURN_IF_ERROR(AddTombstone(*c.writer, c.tombstone_layouts, s.id, s.name, sections));
      continue;
    }
    s.id = s.Id(subjects);
    std::unique_ptr<record::Capturer>& capturer = capturers[s.chunk];
    if (!capturer) capturer = std::make_unique<record::Capturer>(c.writer.get(), links.get());
    links->SetChunk(s.chunk);
    Result<std::uint32_t> index =
        capturer->CaptureCopy(c.copies.get(), s.id, s.kind, sections);
    if (!index.ok()) return SubjectRefused(s.object.cls->name(), s.id, index.status());
    assert(*index == s.record);
  }
  for (Out& c : chunks) c.copies.reset();
  section_blocks = std::vector<ByteSink>();
  links.reset();
  return OkStatus();
}

Result<std::vector<WorldChunk>> WorldCapture::Finish() {
  ROLLY_ASSIGN_OR_RETURN(CapturedWorld captured, Detach());
  return captured.Make();
}

Result<std::vector<WorldChunk>> CapturedWorld::Rep::Make() {
  ROLLY_RETURN_IF_ERROR(WriteCopies());
  const bool whole = only_level.is_none();
  std::vector<WorldChunk> out;
  // Records of the held save whose objects are not there now are written back.
  if (held || !memory.empty() || !waiting.empty()) {
    // The subjects captured, and those kept below.
    std::size_t held_records = 0;
    static const std::vector<LoadedGame::Chunk> kNoChunks;
    const std::vector<LoadedGame::Chunk>& held_chunks = held ? held->chunks() : kNoChunks;
    for (const LoadedGame::Chunk& from : held_chunks) held_records += from.payload.size();
    GuidSet captured;
    captured.Reserve(subjects.size() + held_records / 8);
    for (const WorldCapture::Subject& s : subjects) captured.Insert(s.Id(subjects));
    subjects = std::vector<WorldCapture::Subject>();
    // Level memory wins over the held save for its levels (its actors' components too).
    GuidSet remembered_actors;
    ROLLY_RETURN_IF_ERROR(KeepRemembered(captured, &remembered_actors));
    ROLLY_RETURN_IF_ERROR(KeepWaiting(captured));
    for (const LoadedGame::Chunk& from : held_chunks) {
      Out* into = nullptr;
      for (Out& c : chunks) {
        if (c.id == from.id && c.key == from.key) into = &c;
      }
      // A level's capture keeps only the held records of its level (in its map's chunk).
      if (!whole && (into == nullptr || into->id != kWorldChunk)) continue;
      if (into == nullptr) {
        // A chunk this save does not make (another map's world, a player not playing now): kept
        // whole.
        const ByteView bytes = from.payload.bytes();
        out.push_back({from.id, from.key, Bytes(bytes.begin(), bytes.end())});
        continue;
      }
      const record::CheckedPayload& records = from.payload;
      for (std::size_t i = 0; i < records.size(); ++i) {
        const Guid subject = records.subject(i);
        if (!record::IsKnownObjectKind(records.kind(i)) || captured.Contains(subject)) continue;
        Name cls = SavedClass(records.tables(), records.layout(i));
        bool keep = false;
        ByteView section;
        if (from.id == kWorldChunk) {
          if (records.Find(i, kActorSection, &section)) {
            Result<ActorSection> a = DecodeActor(section);
            // Its level's name, looked up, not interned: None for the persistent level and for
            // one the process has no name for, which is neither loaded nor remembered.
            const Name level = a.ok() && !a->level.empty() ? Name::Find(a->level).value_or(Name())
                                                           : Name();
            const bool named = !level.is_none();
            const bool level_listed =
                named && std::find(levels.begin(), levels.end(), level) != levels.end();
            bool level_loaded = a.ok() && (a->level.empty() || level_listed);
            // An actor of a level not loaded now (its tombstone too: nothing else remembers it),
            // or of a class the game does not register. Level memory replaces a level's records.
            // A level's capture keeps its own level's records as a save would.
            keep = a.ok() &&
                   (!level_loaded || (!a->destroyed && registry->FindClass(cls) == nullptr));
            if (!whole) {
              keep = keep && named && level == only_level;
            } else if (keep && named && Remembers(level)) {
              keep = false;
            }
          } else if (records.Find(i, kComponentSection, &section)) {
            // A component not there now (of a class gone, or not created yet since a load: its
            // record waits for it) stays with its actor.
            Result<ComponentSection> c = DecodeComponent(section);
            keep = c.ok() && captured.Contains(c->actor) && !remembered_actors.Contains(c->actor);
          }
        } else {
          keep = true;  // a global or a player's part that is not there now
        }
        if (!keep) continue;
        ROLLY_RETURN_IF_ERROR(KeepRecord(*into, records, i, captured));
      }
    }
  }
  // The subjects go before the chunks are joined, which holds each about twice.
  subjects = std::vector<WorldCapture::Subject>();
  std::vector<WorldChunk> made;
  for (Out& c : chunks) {
    if (c.writer->record_count() == 0 && c.id != kWorldChunk) continue;
    made.push_back({c.id, c.key, c.writer->Finish()});
  }
  made.insert(made.end(), std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
  return made;
}

bool WorldCapture::StillThere(const Hooked& h) {
  if (h.gone) return false;
  Host& host = world_.host_;
  const auto same = [&h](const Object& o) {
    return o.ptr == h.object.ptr && o.cls == h.object.cls;
  };
  ActorView view;
  switch (h.kind) {
    case RecordKind::kActor:
      return host.FindActor(h.actor, &view) && same(view.object);
    case RecordKind::kComponent: {
      if (!host.FindActor(h.actor, &view)) return false;
      std::vector<ComponentView> components;
      host.ListComponents(view, &components);
      return std::any_of(components.begin(), components.end(), [&](const ComponentView& c) {
        return c.name == h.name && same(c.object);
      });
    }
    case RecordKind::kPlayer: {
      std::vector<PlayerView> players;
      host.ListPlayers(&players);
      for (const PlayerView& p : players) {
        if (static_cast<std::uint32_t>(p.index) != h.player.index) continue;
        return same(h.player.part == PlayerPart::kController ? p.controller
                    : h.player.part == PlayerPart::kPawn     ? p.pawn
                                                             : p.player_state);
      }
      return false;
    }
    default:
      break;
  }
  if (h.registered) {
    auto it = world_.registered_.find(h.name);
    return it != world_.registered_.end() && same(it->second);
  }
  std::vector<GlobalView> globals;
  host.ListGlobals(&globals);
  return std::any_of(globals.begin(), globals.end(),
                     [&](const GlobalView& g) { return g.role == h.name && same(g.object); });
}

void WorldCapture::RunSavedHooks() {
  // Each capture's hooks run only if its subject is still there, checked right before (a hook
  // may destroy what a later one would reach).
  for (auto& c : chunks_) {
    const std::vector<Hooked> hooked = std::move(c->hooked);
    c->hooked.clear();
    c->capturer->RunSavedHooks([&](std::size_t k) { return StillThere(hooked[k]); });
  }
}

void WorldCapture::Forget() {
  for (auto& c : chunks_) {
    c->hooked.clear();
    c->capturer->ForgetCaptured();
  }
}

void WorldCapture::NoteGone(const std::function<bool(const Hooked&)>& gone) {
  for (auto& c : chunks_) {
    for (Hooked& h : c->hooked) h.gone = h.gone || gone(h);
  }
}

// ---------------------------------------------------------------------------------------------
// Apply

// The live object saved as a subject ID, found as the world is now, for the references of an
// apply whose own records did not take that subject: an actor by the host's look-up; a global, a
// registered object or a local player's part by the ID a capture derives for it, listed the first
// time an ID is not an actor's. A component's ID is derived from its actor's and its name, and the
// world keeps no table of components: a component is found through a record of it, whose section
// names its actor and its name, then looked for on that actor as it is now. A reference saved by
// record index names that record (FindRecord); one saved by ID alone (a record a save carried
// over, a level's memory) is looked up among the held save's component records. The listed
// objects are kept for the finder's life (one apply), as the apply's own table of objects is: the
// game's code the apply runs must not destroy a global or a player's part meanwhile.
class World::SubjectsNow {
 public:
  // `held`: whether a component is looked for among the held save's records (not in a whole
  // load's apply, which replaces the held save and took every record of its own it could).
  SubjectsNow(World& world, bool held) : world_(world), held_(held) {}

  Object Find(Guid id) {
    ActorView view;
    if (world_.host_.FindActor(id, &view)) return view.object;
    if (!listed_) List();
    if (const Object* found = others_.Find(id)) return *found;
    const ComponentSection* comp = held_ ? world_.HeldComponents().Find(id) : nullptr;
    return comp ? ComponentOf(*comp) : Object();
  }

  // The object of record `index` of `records` (checked), saved as `id`: a component record's by
  // its actor and name; any other's as Find finds `id`.
  Object FindRecord(const record::CheckedPayload& records, std::size_t index, Guid id) {
    ByteView section;
    if (records.FirstChecked(index) != 1 || !records.Find(index, kComponentSection, &section)) {
      return Find(id);
    }
    ComponentSection comp;
    ReadCheckedComponent(section, &comp);
    return ComponentOf(comp);
  }

 private:
  void List() {
    listed_ = true;
    world_.VisitNamedSubjects([this](Guid id, Object object) { others_.Put(id, object); });
  }
  // The component a record's section names, on its actor as it is now.
  Object ComponentOf(ComponentSection comp) {
    ActorView actor;
    if (!world_.host_.FindActor(comp.actor, &actor)) return Object();
    components_.clear();
    world_.host_.ListComponents(actor, &components_);
    for (const ComponentView& c : components_) {
      if (c.name.view() == comp.name) return c.object;
    }
    return Object();
  }

  World& world_;
  const bool held_;
  bool listed_ = false;
  GuidMap<Object> others_;
  std::vector<ComponentView> components_;  // ComponentOf's buffer
};

// The links of a waiting component record's apply (OnComponentCreated), whose records are
// `records`: the load's own table of objects is gone by then, so each reference is found as the
// world is now.
class World::LateLinks final : public record::ObjectLinks {
 public:
  LateLinks(World& world, const record::CheckedPayload& records)
      : subjects_(world, true), records_(records) {}
  std::optional<record::LinkTarget> Locate(const reflect::ClassInfo&, const void*) override {
    return std::nullopt;  // an apply only resolves
  }
  void* Resolve(Guid id, const reflect::ClassInfo& cls) override {
    return Upcast(subjects_.Find(id), cls);
  }
  void* ResolveRecord(std::size_t record, Guid id, const reflect::ClassInfo& cls) override {
    return Upcast(subjects_.FindRecord(records_, record - 1, id), cls);
  }

 private:
  static void* Upcast(Object o, const reflect::ClassInfo& cls) {
    return o ? reflect::TypeRegistry::Upcast(*o.cls, o.ptr, cls) : nullptr;
  }

  SubjectsNow subjects_;
  const record::CheckedPayload& records_;
};

// One apply of a checked save: targets found, spawns, two passes of values, placements, hooks.
class World::Applier {
 public:
  // `only_level`: apply only the world records of that level's actors (a streamed level just
  // added); none: the whole save.
  Applier(World& world, std::shared_ptr<const LoadedGame> game, ApplyReport* report,
          Name only_level = Name())
      : world_(world),
        host_(world.host_),
        registry_(world.registry_),
        game_(std::move(game)),
        report_(report),
        only_level_(only_level),
        apply_(++world.applies_),
        subjects_now_(world, !only_level.is_none()) {}

  // The live object saved as `id`, as `cls` (ObjectLinks::Resolve for every chunk's apply): the
  // object a record of this apply took for it, else the one there now (a streamed level's apply
  // takes no global's or player's record, and a reference may point to an actor of another
  // level).
  void* Resolve(Guid id, const reflect::ClassInfo& cls) {
    const Object* found = Objects().Find(id);
    const Object o = found ? *found : subjects_now_.Find(id);
    return o ? reflect::TypeRegistry::Upcast(*o.cls, o.ptr, cls) : nullptr;
  }
  // The same for a reference saved by record index (`index` of `c`) whose record no target took:
  // a component is found by its record's actor and name (SubjectsNow::FindRecord).
  void* ResolveRecord(const LoadedGame::Chunk& c, std::size_t index, Guid id,
                      const reflect::ClassInfo& cls) {
    const Object* found = Objects().Find(id);
    const Object o = found ? *found : subjects_now_.FindRecord(c.payload, index, id);
    return o ? reflect::TypeRegistry::Upcast(*o.cls, o.ptr, cls) : nullptr;
  }

  Status Run() {
    const std::string map = host_.CurrentMap();
    // The actors the host left out of the map for this apply went as the removal would have
    // taken them: counted, and every other record of them not applied.
    if (only_level_.is_none() && !world_.left_out_.empty()) {
      left_out_ = &world_.left_out_;
      report_->removed += world_.left_out_noted_;
    }
    for (const LoadedGame::Chunk& c : game_->chunks()) chunk_taken_[&c];
    if (only_level_.is_none()) {
      std::size_t records = 0;
      for (const LoadedGame::Chunk& c : game_->chunks()) records += c.payload.size();
      targets_.reserve(records);
      placements_.reserve(records);
      // Actors are spawned again from the current map's world chunk only, and only those it
      // holds spawned in play (the check counted them; those still there are found instead).
      if (const LoadedGame::Chunk* w = game_->Find(kWorldChunk, map)) {
        spawns_.reserve(w->spawned);
        spawn_requests_.reserve(w->spawned);
      }
      // An apply this large will likely offer the helper work once its finds are done. The
      // helper's thread has most likely been idle since the save was checked (a map opening in
      // between), and a thread idle that long can take milliseconds to wake (on a virtual
      // machine, a halted core), longer than the removal it would work beside: so it is woken
      // now, with nothing to do, while the finds run. (Measured: the tables' task started 2.4 to
      // 9.6 ms after it was offered, mostly after the game thread had made them itself.)
      if (world_.apply_helper_ && records >= world_.apply_beside_at_least_) {
        try {
          world_.apply_helper_([] {});
        } catch (...) {
          // Not woken (an allocation failing in its queue): it is offered the work all the same.
        }
      }
    }
    // Find every record's object first; nothing changes yet.
    for (const LoadedGame::Chunk& c : game_->chunks()) {
      if (c.id == kGlobalChunk && only_level_.is_none()) FindGlobals(c);
      if (c.id == kWorldChunk && c.key == map) FindActors(c);
      if (c.id == kPlayerChunk && only_level_.is_none()) FindPlayers(c);
    }
    // Placed actors held destroyed go first, then spawned actors the world lacks come back.
    if (!remove_.empty()) DropRemoved();
    found_targets_ = targets_.size();
    // Whether the second pass is shared, decided once (the game's code run meanwhile may change
    // the world's helper), by the records found and the actors to spawn again.
    if (targets_.size() + spawns_.size() >= world_.apply_beside_at_least_) {
      helper_ = world_.apply_helper_;
    }
    // The tables the shared pass reads are made on the helper's thread beside the host's removal,
    // which reads and changes no target, and the spawns, which add targets after those the
    // helper reads (into room reserved, so that none moves) and note none of them until it is
    // done (Note, below). Every chunk's table is sized first, here: the helper writes entries
    // only, and nothing allocates for a spawned actor's targets between its spawn's beginning
    // and its end.
    std::optional<SideTask> note;
    if (helper_) {
      SizeTables();
      note.emplace(helper_, [this] { NoteTargetsBefore(found_targets_, true); });
    }
    if (!remove_.empty()) host_.DestroyActors(remove_);
    report_->removed += remove_.size();
    // A spawn takes a target for its actor and one for each component matched at it.
    if (note &&
        targets_.capacity() - targets_.size() < spawns_.size() + pending_components_.size()) {
      NotedBeside(*note);
      note.reset();
    }
    // The components of actors that came back exist once they are spawned. Their records follow
    // their actor's (as a save writes them), in the order the spawns are: each is matched against
    // the view its spawn returned, while that actor is at hand; records in another order are
    // found afterwards by their actor's ID. Every actor is spawned in one host call
    // (Host::BeginSpawns), answered for in order: an answer out of that order (a host breaking
    // its contract) is ignored, and an actor not answered for in order is taken as not spawned;
    // one the host made all the same (answered out of order only) is destroyed again.
    std::size_t pending = 0;
    std::size_t answered = 0;
    std::size_t ignored = 0;
    std::vector<std::size_t> made_out_of_order;
    std::vector<bool> matched_at_spawn(pending_components_.size());
    auto not_spawned = [&](const SpawnRequest& r, std::string_view why) {
      Message("actor " + Describe(r.cls->name().view(), r.id) + " was not spawned again (" +
              std::string(why) + "): its record is kept");
      ++report_->kept;
    };
    auto spawn_each = [&](std::size_t k, const Result<ActorView>& view) {
      if (k != answered || answered >= spawns_.size()) {
        ++ignored;
        if (k > answered && k < spawns_.size() && view.ok()) made_out_of_order.push_back(k);
        return;
      }
      const SpawnRequest& r = spawn_requests_[answered];
      Spawn& s = spawns_[answered++];
      if (!view.ok()) {
        not_spawned(r, view.status().message());
        return;
      }
      s.spawned = true;
      Take(*s.chunk, s.record, view->object, true);
      placements_.push_back(
          {r.id, Placement{r.transform, s.owner, s.attach_parent, s.attach_socket}});
      ++report_->spawned;
      // (Only the world chunk of the current map has actors, so records compare within it.)
      while (pending < pending_components_.size() &&
             pending_components_[pending].record < s.record) {
        ++pending;
      }
      for (; pending < pending_components_.size() &&
             pending_components_[pending].comp.actor == r.id;
           ++pending) {
        const Pending& p = pending_components_[pending];
        if (const Object found = MatchComponent(*p.chunk, p.record, p.comp, *view)) {
          Take(*p.chunk, p.record, found, true);
        }
        matched_at_spawn[pending] = true;
      }
    };
    if (!spawns_.empty()) host_.BeginSpawns(spawn_requests_, spawn_each);
    if (answered < spawns_.size() || ignored > 0) {
      Message("the host's BeginSpawns answered " + std::to_string(answered) + " of " +
              std::to_string(spawns_.size()) + " spawns in the order asked (" +
              std::to_string(ignored) + " answers out of order ignored)");
      for (std::size_t k = answered; k < spawns_.size(); ++k) {
        not_spawned(spawn_requests_[k], "the host did not answer for it in order");
      }
      std::sort(made_out_of_order.begin(), made_out_of_order.end());
      made_out_of_order.erase(std::unique(made_out_of_order.begin(), made_out_of_order.end()),
                              made_out_of_order.end());
      std::vector<Guid> unmade;
      for (std::size_t k : made_out_of_order) {
        if (k >= answered) unmade.push_back(spawn_requests_[k].id);
      }
      if (!unmade.empty()) host_.DestroyActors(unmade);
    }
    listed_for_ = Guid();  // (what was listed changes with the next spawn or pass)
    if (note) NotedBeside(*note);
    for (std::size_t k = 0; k < pending_components_.size(); ++k) {
      if (!matched_at_spawn[k]) FindComponent(pending_components_[k]);
    }
    // First pass: the spawned actors' values (their targets, and only theirs, come after the
    // finds'); they finish spawning; then everything else.
    ApplyPass(found_targets_, true);
    // Components the first pass made (the host reports none made while its actor spawns): theirs
    // are set now, before their actors finish spawning (and begin play), as the others' were.
    const std::size_t made_while_spawning = targets_.size();
    MatchMadeWhileSpawning();
    ApplyPass(made_while_spawning, true);
    for (std::size_t k = 0; k < spawns_.size(); ++k) {
      const Guid id = spawn_requests_[k].id;
      if (spawns_[k].spawned || Objects().Contains(id)) host_.FinishSpawn(id);
    }
    if (helper_) {
      ApplySecondPassBeside();
    } else {
      ApplyPass(0, false);
    }
    host_.PlaceAll(placements_);
    for (auto& [chunk, apply] : appliers_) {
      apply.applier->RunLoadedHooks();
      report_->messages_dropped += apply.applier->messages_dropped();
    }
    return OkStatus();
  }

 private:
  // 32 bytes: every pass walks the whole list (a record's index fits 32 bits: kMaxRecords).
  struct Target {
    const LoadedGame::Chunk* chunk;
    std::uint32_t record;
    bool first_pass;
    // A shared second pass leaves it to the game thread: its object is a second-pass target's
    // before it too, or may be (NoteTargets, Note).
    bool after_beside = false;
    Object object;
  };
  static_assert(record::kMaxRecords <= std::numeric_limits<std::uint32_t>::max());
  // What the targets took of one chunk.
  struct Taken {
    // Each record's object (record i at i), none where no target took it (NoteTargets).
    std::vector<Object> by_record;
    bool second_pass = false;  // a second-pass target took one of its records
  };
  // An actor to spawn again; what the host is asked to spawn (class, ID, level, transform) is
  // in spawn_requests_, at the same index, as Host::BeginSpawns takes it.
  struct Spawn {
    const LoadedGame::Chunk* chunk;
    std::size_t record;
    // The rest of its placement.
    Guid owner;
    Guid attach_parent;
    Name attach_socket;
    bool spawned = false;  // BeginSpawns answered for it in order, with a view
  };
  struct Pending {
    const LoadedGame::Chunk* chunk;
    std::size_t record;
    // Its name views the chunk's bytes.
    ComponentSection comp;
  };
  // A component record matched as it was read (it followed its actor's record).
  struct Matched {
    std::size_t record;
    Object object;
  };

  void Message(std::string text) {
    if (report_->messages.size() < record::Applier::kMaxMessages) {
      report_->messages.push_back(std::move(text));
    } else {
      ++report_->messages_dropped;
    }
  }

  // Each record's object by subject (Resolve's look-up by ID), as the finds left it: a record
  // taken or an actor spawned sets its subject's object, in targets_ order, and the records
  // DropRemoved drops take their subjects out. Made from targets_ the first time it is asked
  // for, once every target is known (most applies resolve no reference by ID and never make it;
  // one made in one go waits less on memory than one filled record by record).
  const GuidMap<Object>& Objects() {
    if (objects_made_) return objects_;
    objects_made_ = true;
    objects_.Reserve(targets_.size());
    auto put = [&](std::size_t k) {
      if (k + 8 < targets_.size()) {
        const Target& ahead = targets_[k + 8];
        objects_.Prefetch(ahead.chunk->payload.subject(ahead.record));
      }
      objects_.Put(targets_[k].chunk->payload.subject(targets_[k].record), targets_[k].object);
    };
    for (std::size_t k = 0; k < found_targets_; ++k) put(k);
    for (Guid id : dropped_) objects_.Erase(id);
    for (std::size_t k = found_targets_; k < targets_.size(); ++k) put(k);
    return objects_;
  }

  // A save that holds an actor destroyed and also has records of it or of its components (a file
  // no save writes): those records are not applied, as their objects go before values are set.
  // The objects the removal destroys were noted as their actors' records were taken (Doom).
  void DropRemoved() {
    // Most targets are passed by one bit of a filter small enough to stay in cache (about 16
    // bits per object that goes); only those whose bit is set are looked up in `doomed_`.
    unsigned bits = 12;
    while (bits < 24 && (std::size_t{1} << bits) < doomed_.size() * 16) ++bits;
    std::vector<std::uint64_t> filter((std::size_t{1} << bits) / 64);
    const auto bit = [bits](const void* p) {
      return static_cast<std::size_t>(
          ((reinterpret_cast<std::uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
    };
    for (const void* p : doomed_list_) filter[bit(p) / 64] |= std::uint64_t{1} << (bit(p) % 64);
    auto doomed = [&](const Target& t) {
      const std::size_t b = bit(t.object.ptr);
      return (filter[b / 64] >> (b % 64) & 1) != 0 && doomed_.Contains(DoomedKey(t.object.ptr));
    };
    // The first target that goes, in a plain loop (in a save the library wrote there is none).
    std::size_t first = 0;
    while (first < targets_.size() && !doomed(targets_[first])) ++first;
    if (first == targets_.size()) return;
    const auto from = targets_.begin() + static_cast<std::ptrdiff_t>(first);
    targets_.erase(std::remove_if(from, targets_.end(), [&](const Target& t) {
      if (!doomed(t)) return false;
      NotApplied(*t.chunk, t.record);
      return true;
    }), targets_.end());
    // A placement goes with its actor's record.
    GuidSet ids;
    for (Guid id : remove_) ids.Insert(id);
    std::erase_if(placements_, [&](const auto& p) { return ids.Contains(p.first); });
  }

  // Objects by address, as keys of the small GUID table.
  static Guid DoomedKey(const void* p) { return Guid(0, reinterpret_cast<std::uintptr_t>(p)); }
  // Notes the actor of `view`, which the save holds destroyed, and its components as objects
  // the removal destroys. False when it was noted already (a second tombstone of one actor, in a
  // file no save writes).
  // Record `i` of `c` is not applied: the save holds its actor destroyed (removed, or left out of
  // the map).
  void NotApplied(const LoadedGame::Chunk& c, std::size_t i) {
    const record::CheckedPayload& records = c.payload;
    dropped_.push_back(records.subject(i));
    Message("record of " +
            Describe(SavedClassText(records.tables(), records.layout(i)), records.subject(i)) +
            " was not applied: the save holds its actor destroyed");
  }
  // Whether the host left actor `id` out of the map this apply opened (World::OpenMapForApply).
  bool LeftOut(Guid id) const { return left_out_ != nullptr && left_out_->Contains(id); }

  bool Doom(const ActorView& view) {
    auto note = [this](const void* p) {
      if (!doomed_.Insert(DoomedKey(p))) return false;
      doomed_list_.push_back(p);
      return true;
    };
    if (!note(view.object.ptr)) return false;
    doomed_components_.clear();
    host_.ListComponents(view, &doomed_components_);
    for (const ComponentView& c : doomed_components_) note(c.object.ptr);
    return true;
  }

  static Placement PlacementOf(const ActorSection& a) {
    // Most actors are attached at no socket: no name is looked up for them.
    return Placement{a.transform, a.owner, a.attach_parent,
                     a.attach_socket.empty() ? Name() : Name(a.attach_socket)};
  }
  // The ACTR or COMP section of a checked record, read in place (LoadedGame::Check checked it).
  static ActorSection ActorOf(ByteView section) {
    ActorSection a;
    ReadCheckedActor(section, &a);
    return a;
  }
  static ComponentSection ComponentOf(ByteView section) {
    ComponentSection comp;
    ReadCheckedComponent(section, &comp);
    return comp;
  }

  void Mismatch(std::string_view saved, Guid id, const reflect::ClassInfo* live) {
    Message("ClassMismatch: the record of " + Describe(saved, id) +
            " was not applied: the object is a " + (live ? live->name().str() : std::string("?")));
    ++report_->class_mismatches;
  }

  // Record `i` of `c` applies to `o`, in the first pass or the second.
  void Take(const LoadedGame::Chunk& c, std::size_t i, Object o, bool first_pass) {
    targets_.push_back({&c, static_cast<std::uint32_t>(i), first_pass, false, o});
    if (noted_) Note(targets_.back());
  }

  // The tables the passes read, made in one walk of the targets once the finds are done: each
  // chunk's table by record (ChunkLinks::Taken) and, with `marks`, the marks of second-pass
  // targets whose objects a second-pass target before them has too (a save naming one subject
  // twice, or a host answering two IDs with one object), so that no object is written by two
  // threads. A shared second pass has them made on the helper's thread beside the host's
  // removal of actors and the spawns (Run, NoteTargetsBefore); otherwise the first reference
  // resolved by record has them made here, with no marks. Targets taken after are noted as they
  // come (Note). The marks come from a filter of the objects' addresses, at least 64 bits per
  // target, whose false hits mark a few more (each then applied as on one thread).
  void NoteTargets() {
    SizeTables();
    NoteTargetsBefore(targets_.size(), false);
    noted_ = true;
  }
  // Every chunk's table by record, at its size: made before anything writes entries.
  void SizeTables() {
    for (const LoadedGame::Chunk& c : game_->chunks()) TakenOf(c);
  }
  // The walk of NoteTargets over the first `n` targets, into tables sized already (SizeTables).
  // It reads and writes nothing else of this apply's: it may run beside the game thread adding
  // targets after them (in room reserved) and noting none.
  void NoteTargetsBefore(std::size_t n, bool marks) {
    if (marks) {
      std::size_t second = 0;
      for (std::size_t k = 0; k < n; ++k) second += targets_[k].first_pass ? 0 : 1;
      SizeSeen(second);
    }
    const LoadedGame::Chunk* last = nullptr;  // targets come in runs of one chunk
    Taken* taken = nullptr;
    for (std::size_t k = 0; k < n; ++k) {
      Target& t = targets_[k];
      if (t.chunk != last) taken = &chunk_taken_.at(last = t.chunk);
      taken->by_record[t.record] = t.object;
      if (t.first_pass) continue;
      taken->second_pass = true;
      if (marks && SeenBit(t.object.ptr)) t.after_beside = true;
    }
  }
  // Joins the NoteTargetsBefore(found_targets_) that `note` runs beside (Run), and notes the
  // targets taken meanwhile.
  void NotedBeside(SideTask& note) {
    note.Join();
    for (std::size_t k = found_targets_; k < targets_.size(); ++k) Note(targets_[k]);
    noted_ = true;
  }
  // Notes target `t`, taken after NoteTargets: those are the first pass's (actors spawned again,
  // their components, components made while spawning). A second-pass target taken now would be
  // left to the game thread, as if its object repeated.
  void Note(Target& t) {
    Taken& taken = TakenOf(*t.chunk);
    taken.by_record[t.record] = t.object;
    if (t.first_pass) return;
    taken.second_pass = true;
    t.after_beside = true;
  }
  // What the targets took of `c`, its table by record sized.
  Taken& TakenOf(const LoadedGame::Chunk& c) {
    Taken& taken = chunk_taken_.at(&c);
    if (taken.by_record.size() != c.payload.size()) taken.by_record.resize(c.payload.size());
    return taken;
  }
  // Room for `n` targets: a power of two of words, at least one each.
  void SizeSeen(std::size_t n) {
    std::size_t words = 1;
    while (words < n) words *= 2;
    seen_.assign(words, 0);
  }
  // Sets the filter's bit of `object`; whether it was set.
  bool SeenBit(const void* object) {
    const std::uint64_t bits = seen_.size() * 64;
    const std::uint64_t h = (reinterpret_cast<std::uintptr_t>(object) >> 3) * 0x9E3779B97F4A7C15ull;
    const std::uint64_t bit = (h >> 20) & (bits - 1);
    std::uint64_t& word = seen_[bit / 64];
    const std::uint64_t mask = std::uint64_t{1} << (bit % 64);
    const bool was = (word & mask) != 0;
    word |= mask;
    return was;
  }

  void FindGlobals(const LoadedGame::Chunk& c) {
    std::vector<GlobalView> globals;
    host_.ListGlobals(&globals);
    for (std::size_t i = 0; i < c.payload.size(); ++i) {
      ByteView section;
      if (!c.payload.Find(i, kGlobalSection, &section)) continue;
      GlobalSection g = *DecodeGlobal(section);
      Name saved = SavedClass(c.payload.tables(), c.payload.layout(i));
      Object found;
      // Looked up, not interned: no object is registered, and no global has a role, by a name
      // the process does not have.
      const std::optional<Name> name = Name::Find(g.name);
      if (g.registered && name) {
        auto it = world_.registered_.find(*name);
        if (it != world_.registered_.end()) found = it->second;
      } else if (name) {
        for (const GlobalView& v : globals) {
          if (v.role == *name && SameClass(registry_, saved, v.object.cls)) found = v.object;
        }
      }
      if (!found) {
        Message("global " + g.name + " (" +
                std::string(SavedClassText(c.payload.tables(), c.payload.layout(i))) +
                ") is not there: its record is kept");
        ++report_->kept;
        continue;
      }
      if (!SameClass(registry_, saved, found.cls)) {
        Mismatch(SavedClassText(c.payload.tables(), c.payload.layout(i)), c.payload.subject(i),
                 found.cls);
        continue;
      }
      Take(c, i, found, false);
    }
  }

  // The world chunk's actors and components. A component's record normally follows its actor's
  // (a save writes them so): it is matched against the actor found for that record, without
  // looking the actor up again. Any other component waits until every actor record was seen.
  // The records are sorted first by the world section the check noted for each, reading none of
  // their bytes; then every actor is found in one host call (Host::FindActors), and the records
  // are taken in order as their actors come, each read then.
  void FindActors(const LoadedGame::Chunk& c) {
    const std::vector<Name> levels = host_.Levels();
    const Name persistent = levels.empty() ? Name() : levels.front();
    const record::CheckedPayload& records = c.payload;
    // kOtherLevel: an actor of a level not applied now (only_level_ set); kLeftOut: a tombstone
    // of an actor the host left out of the map (nothing to find: it is not there, and counted
    // removed already). Either ends the run of components following the actor before it, as any
    // actor record does.
    enum class Is : std::uint8_t { kActor, kComponent, kOtherLevel, kLeftOut };
    struct Entry {
      std::size_t record;
      Is is;
    };
    std::vector<Entry> entries;
    entries.reserve(records.size());
    std::vector<Guid> ids;  // the subjects of the kActor entries, in order
    ids.reserve(records.size());
    std::size_t components = 0;
    // A record's ACTR section, or else its COMP one (LoadedGame::Check noted which it holds
    // first, in kWorldSections order).
    static_assert(kWorldSections[0] == kActorSection && kWorldSections[1] == kComponentSection);
    auto section = [&records](const Entry& e) {
      ByteView found;
      records.Find(e.record, e.is == Is::kComponent ? kComponentSection : kActorSection, &found);
      return found;
    };
    auto tombstone = c.destroyed.begin();  // the first at or after record i
    for (std::size_t i = 0; i < records.size(); ++i) {
      const int first = records.FirstChecked(i);
      if (first == 0) {
        if (left_out_ != nullptr) {
          while (tombstone != c.destroyed.end() && *tombstone < i) ++tombstone;
          if (tombstone != c.destroyed.end() && *tombstone == i && LeftOut(records.subject(i))) {
            entries.push_back({i, Is::kLeftOut});
            continue;
          }
        }
        if (!only_level_.is_none()) {
          const ActorSection a = ActorOf(section({i, Is::kActor}));
          if ((a.level.empty() ? persistent.view() : a.level) != only_level_.view()) {
            entries.push_back({i, Is::kOtherLevel});
            continue;
          }
          level_actors_.Insert(records.subject(i));
        }
        entries.push_back({i, Is::kActor});
        ids.push_back(records.subject(i));
      } else if (first == 1) {
        if (!only_level_.is_none() &&
            !level_actors_.Contains(ComponentOf(section({i, Is::kComponent})).actor)) {
          continue;
        }
        entries.push_back({i, Is::kComponent});
        ++components;
      }
    }
    // The actor of the record before, when it is one found in the world (its view lives for the
    // host's call handing it over, which takes the components that follow it too).
    struct Last {
      Guid id;  // none: the record before was not an actor found in the world
      const ActorView* view = nullptr;
    } last;
    std::vector<Matched> matched;
    matched.reserve(components);
    std::size_t at = 0;  // the next entry to take
    // Takes the entries up to the next actor's.
    auto take_components = [&] {
      for (; at < entries.size() && entries[at].is != Is::kActor; ++at) {
        const Entry& e = entries[at];
        if (e.is == Is::kOtherLevel || e.is == Is::kLeftOut) {
          last.id = Guid();
          continue;
        }
        const ComponentSection comp = ComponentOf(section(e));
        // Matched now when it follows its actor's record; taken below, after every actor, as
        // the others are.
        if (!last.id.is_none() && comp.actor == last.id) {
          if (const Object found = MatchComponent(c, e.record, comp, *last.view)) {
            matched.push_back({e.record, found});
          }
        } else {
          pending_components_.push_back({&c, e.record, comp});
        }
      }
    };
    take_components();
    // The host answers for each actor once, in the order asked. An answer out of that order (a
    // host breaking its contract) is ignored, and each actor it did not answer for in order is
    // taken as not there: its record is kept, and nothing reads past the entries.
    std::size_t answered = 0;
    std::size_t ignored = 0;
    auto take_actor = [&](const ActorView* view) {
      const Entry& e = entries[at];
      ++at;
      ++answered;
      last = Last();
      TakeActor(c, e.record, section(e), view, levels, &last.id);
      if (!last.id.is_none()) last.view = view;
      take_components();
    };
    const std::size_t spawns_before = spawns_.size();
    host_.FindActors(ids, [&](std::size_t k, const ActorView* view) {
      if (k != answered || answered >= ids.size()) {
        ++ignored;
        return;
      }
      take_actor(view);
    });
    if (answered < ids.size() || ignored > 0) {
      Message("the host's FindActors answered " + std::to_string(answered) + " of " +
              std::to_string(ids.size()) + " actors in the order asked (" +
              std::to_string(ignored) + " answers out of order ignored): the others are taken as "
              "not there");
    }
    while (answered < ids.size()) take_actor(nullptr);
    // The set of the actors spawned again, made in one go once their number is known.
    spawning_.Reserve(spawning_.size() + spawns_.size() - spawns_before);
    for (std::size_t k = spawns_before; k < spawns_.size(); ++k) {
      spawning_.Insert(spawn_requests_[k].id);
    }
    // The components listed stay valid only while nothing changes.
    listed_for_ = Guid();
    // Components of actors there now, in record order, those matched already and the others
    // merged (those of actors spawned again are found after the spawn).
    std::vector<Pending> later;
    auto next = matched.begin();
    for (Pending& p : pending_components_) {
      for (; next != matched.end() && next->record < p.record; ++next) {
        Take(c, next->record, next->object, false);
      }
      if (spawning_.Contains(p.comp.actor)) {
        later.push_back(std::move(p));
      } else {
        FindComponent(p);
      }
    }
    for (; next != matched.end(); ++next) Take(c, next->record, next->object, false);
    pending_components_ = std::move(later);
  }

  // Actor record `i` of `c` (its ACTR section `section`), found in the world as `view` (null:
  // not there). `*last` gets its ID when components following it may be matched against `view`.
  void TakeActor(const LoadedGame::Chunk& c, std::size_t i, ByteView section, const ActorView* view,
                 const std::vector<Name>& levels, Guid* last) {
    const Guid subject = c.payload.subject(i);
    const Name saved = SavedClass(c.payload.tables(), c.payload.layout(i));
    // Read into one kept for the purpose: ReadCheckedActor sets every field, and a section made
    // afresh for each actor cost as much again in setting its defaults.
    ReadCheckedActor(section, &taken_);
    const ActorSection& a = taken_;
    // The actor's level among those loaded: most are in the persistent level, the first (none
    // when no level is loaded); others are found by their text (no name is made for them).
    const auto level_at =
        a.level.empty() ? levels.begin()
                        : std::find_if(levels.begin(), levels.end(),
                                       [&](Name l) { return l.view() == a.level; });
    const bool level_loaded = level_at != levels.end();
    if (a.destroyed) {
      // Each actor is removed once, however many tombstones the file holds of it.
      if (view != nullptr && !view->spawned && Doom(*view)) remove_.push_back(subject);
      if (!level_loaded) ++report_->kept;  // a level not loaded: written back by the next save
      return;
    }
    if (view != nullptr) {
      *last = subject;
      if (!SameClass(registry_, saved, view->object.cls)) {
        Mismatch(SavedClassText(c.payload.tables(), c.payload.layout(i)), subject,
                 view->object.cls);
        return;
      }
      Take(c, i, view->object, false);
      // Most placed actors never move: one already where the save has it is not placed again,
      // which spares the host a look-up of it (and a socket's name).
      if (!SamePlacement(a, *view)) placements_.emplace_back(subject, PlacementOf(a));
      return;
    }
    if (LeftOut(subject)) {
      NotApplied(c, i);
      return;
    }
    const reflect::ClassInfo* cls = registry_.FindClass(saved);
    if (!a.spawned || cls == nullptr || !level_loaded) {
      Message("actor " +
              Describe(SavedClassText(c.payload.tables(), c.payload.layout(i)), subject) +
              " is not there: its record is kept");
      ++report_->kept;
      return;
    }
    const Placement place = PlacementOf(a);
    spawn_requests_.push_back({*level_at, cls, subject, place.transform});
    spawns_.push_back({&c, i, place.owner, place.attach_parent, place.attach_socket});
  }

  // The host reports no component made while its actor spawns (Host::BeginSpawn), and the first
  // pass runs the game's code (setters) on the actors spawned again, which may make one. The
  // records of this apply that wait for a component of such an actor are matched again after the
  // first pass, and those whose component is there now are taken for it (TakeLate).
  void MatchMadeWhileSpawning() {
    std::vector<std::unique_ptr<WaitingComponent>>& waiting = world_.waiting_;
    // Matched in the list's order, and taken out of it; those not there still wait, in order.
    // (The host's reading calls change nothing, so the list holds still meanwhile.)
    std::vector<std::pair<std::unique_ptr<WaitingComponent>, Object>> matched;
    ActorView actor;
    bool actor_found = false;
    listed_for_ = Guid();
    for (std::unique_ptr<WaitingComponent>& w : waiting) {
      if (w->apply != apply_ || !spawning_.Contains(w->actor)) continue;
      if (listed_for_.is_none() || listed_for_ != w->actor) {
        listed_for_ = w->actor;
        components_.clear();
        actor_found = host_.FindActor(w->actor, &actor);
        if (actor_found) host_.ListComponents(actor, &components_);
      }
      if (!actor_found) continue;
      for (const ComponentView& v : components_) {
        if (v.name.view() != w->name) continue;
        matched.emplace_back(std::move(w), v.object);
        break;
      }
    }
    listed_for_ = Guid();
    if (matched.empty()) return;
    std::erase(waiting, nullptr);
    for (const auto& [w, object] : matched) {
      --report_->waiting;
      const record::CheckedPayload& records = w->chunk->payload;
      if (!SameClass(registry_, SavedClass(records.tables(), records.layout(w->record)),
                     object.cls)) {
        Mismatch(SavedClassText(records.tables(), records.layout(w->record)),
                 records.subject(w->record), object.cls);
        continue;
      }
      TakeLate(*w->chunk, w->record, object);
    }
  }

  // Take for the first pass, once the table of objects by subject may have been made (Objects(),
  // by a reference the first pass resolved): the record's object goes into it too, as Take puts
  // it into its chunk's table by record.
  void TakeLate(const LoadedGame::Chunk& c, std::size_t i, Object o) {
    Take(c, i, o, true);
    if (objects_made_) objects_.Put(c.payload.subject(i), o);
  }

  void FindComponent(const Pending& p) {
    if (LeftOut(p.comp.actor)) {
      NotApplied(*p.chunk, p.record);
      return;
    }
    ActorView actor;
    if (!host_.FindActor(p.comp.actor, &actor)) {
      Message("component " + std::string(p.comp.name) + " of actor " + p.comp.actor.ToString() +
              ": the actor is not there; its record is kept");
      ++report_->kept;
      return;
    }
    const Object found = MatchComponent(*p.chunk, p.record, {p.comp.actor, p.comp.name}, actor);
    if (found) Take(*p.chunk, p.record, found, spawning_.Contains(p.comp.actor));
  }

  // Matches component record `i` of `c` against the components `actor` has now (listed once per
  // actor, while nothing changes) and returns its object. None when its class differs (reported)
  // or it is not there yet: then it waits for the host to report it created.
  Object MatchComponent(const LoadedGame::Chunk& c, std::size_t i,
                        const ComponentSection& comp, const ActorView& actor) {
    const record::CheckedPayload& records = c.payload;
    Name saved = SavedClass(records.tables(), records.layout(i));
    if (listed_for_.is_none() || listed_for_ != comp.actor) {
      components_.clear();
      host_.ListComponents(actor, &components_);
      listed_for_ = comp.actor;
    }
    // Compared by text: no name is made for a component found (a load matches every one).
    for (const ComponentView& v : components_) {
      if (v.name.view() != comp.name) continue;
      if (!SameClass(registry_, saved, v.object.cls)) {
        Mismatch(SavedClassText(records.tables(), records.layout(i)), records.subject(i),
                 v.object.cls);
        return Object();
      }
      return v.object;
    }
    // Not there yet: it waits for the host to report it created.
    auto w = std::make_unique<WaitingComponent>();
    w->game = game_;
    w->apply = apply_;
    w->chunk = &c;
    w->record = i;
    w->actor = comp.actor;
    w->name = comp.name;
    world_.waiting_.push_back(std::move(w));
    ++report_->waiting;
    return Object();
  }

  void FindPlayers(const LoadedGame::Chunk& c) {
    std::vector<PlayerView> players;
    host_.ListPlayers(&players);
    for (std::size_t i = 0; i < c.payload.size(); ++i) {
      ByteView section;
      if (!c.payload.Find(i, kPlayerSection, &section)) continue;
      PlayerSection p = *DecodePlayer(section);
      Name saved = SavedClass(c.payload.tables(), c.payload.layout(i));
      Object found;
      Guid pawn_id;
      for (const PlayerView& v : players) {
        if (static_cast<std::uint32_t>(v.index) != p.index) continue;
        found = p.part == PlayerPart::kController ? v.controller
                : p.part == PlayerPart::kPawn     ? v.pawn
                                                  : v.player_state;
        pawn_id = v.pawn_id;
      }
      if (!found) {
        Message("player " + std::to_string(p.index) + " " +
                std::string(SavedClassText(c.payload.tables(), c.payload.layout(i))) +
                " is not there: its record is kept");
        ++report_->kept;
        continue;
      }
      if (!SameClass(registry_, saved, found.cls)) {
        Mismatch(SavedClassText(c.payload.tables(), c.payload.layout(i)), c.payload.subject(i),
                 found.cls);
        continue;
      }
      Take(c, i, found, false);
      ByteView pawn_place;
      if (p.part == PlayerPart::kPawn && c.payload.Find(i, kActorSection, &pawn_place)) {
        // The pawn takes its saved transform and keeps the owner and attachment it has now.
        auto place = [&](const ActorView& v) {
          if (v.object.ptr != found.ptr) return;
          Placement placed = PlacementOf(ActorOf(pawn_place));
          placed.owner = v.owner;
          placed.attach_parent = v.attach_parent;
          placed.attach_socket = v.attach_socket;
          placements_.push_back({v.id, placed});
        };
        ActorView v;
        if (!pawn_id.is_none()) {
          if (host_.FindActor(pawn_id, &v)) place(v);
        } else {
          // A host that does not name the pawn's ID: found among every level's actors.
          for (Name level : host_.Levels()) host_.VisitActors(level, place);
        }
      }
    }
  }

  // The links of one chunk's apply: references by subject ID go to Resolve; those by record
  // index to the object taken for that record of the chunk, when one was.
  class ChunkLinks : public record::ObjectLinks {
   public:
    ChunkLinks(Applier& owner, const LoadedGame::Chunk& chunk)
        : owner_(owner), chunk_(chunk), taken_(owner.chunk_taken_.at(&chunk)) {}
    std::optional<record::LinkTarget> Locate(const reflect::ClassInfo&, const void*) override {
      return std::nullopt;  // an apply only resolves
    }
    void* Resolve(Guid id, const reflect::ClassInfo& cls) override {
      return owner_.Resolve(id, cls);
    }
    void* ResolveRecord(std::size_t record, Guid id, const reflect::ClassInfo& cls) override {
      if (!owner_.noted_) owner_.NoteTargets();
      const Object o = Taken(record);
      if (!o) return owner_.ResolveRecord(chunk_, record - 1, id, cls);  // a record not taken
      return reflect::TypeRegistry::Upcast(*o.cls, o.ptr, cls);
    }
    // The object taken for record `record` of the chunk (from 1, as references name records);
    // none when no target took it. Once the tables are made (NoteTargets), on any thread: it
    // only reads.
    Object Taken(std::size_t record) const {
      const std::vector<Object>& by_record = taken_.by_record;
      return record - 1 < by_record.size() ? by_record[record - 1] : Object();
    }

   private:
    Applier& owner_;
    const LoadedGame::Chunk& chunk_;
    const Applier::Taken& taken_;
  };

  // Applies each target from `from` on whose first_pass equals `first`, with the lines of the
  // target 8 ahead that its saved fields sit in, and its record's first bytes, asked into cache.
  void ApplyPass(std::size_t from, bool first) {
    for (std::size_t k = from; k < targets_.size(); ++k) {
      if (k + 8 < targets_.size()) PrefetchTarget(targets_[k + 8]);
      const Target& t = targets_[k];
      if (t.first_pass == first) ApplyOne(t);
    }
  }
  // (Always inlined, as AskFields is.)
  [[gnu::always_inline]] static void PrefetchTarget(const Target& ahead) {
    const char* object = static_cast<const char*>(ahead.object.ptr);
    __builtin_prefetch(object);
    for (std::uint32_t at : ahead.object.cls->Plan().reach) __builtin_prefetch(object + at, 1);
    ahead.chunk->payload.Prefetch(ahead.record);
  }

  // Targets come in runs of one chunk: the last one asked for is kept, and asked for inline.
  [[gnu::always_inline]] record::Applier& ApplierFor(const LoadedGame::Chunk* c) {
    return c == last_chunk_ ? *last_applier_ : NewApplierFor(c);
  }
  record::Applier& NewApplierFor(const LoadedGame::Chunk* c) {
    auto& slot = appliers_[c];
    if (!slot.applier) {
      slot.links = std::make_unique<ChunkLinks>(*this, *c);
      slot.applier = std::make_unique<record::Applier>(registry_, c->payload, slot.links.get());
      // One object takes one record per load, whichever chunk it comes from (record::Applier).
      if (first_applier_ == nullptr) {
        first_applier_ = slot.applier.get();
      } else {
        slot.applier->ShareLoad(*first_applier_);
      }
    }
    last_chunk_ = c;
    last_applier_ = slot.applier.get();
    return *slot.applier;
  }

  void ApplyOne(const Target& t) {
    // Read in place from the kept bytes.
    Status s = ApplierFor(t.chunk).Apply(t.record, *t.object.cls, t.object.ptr, &report_->messages);
    if (!s.ok()) {
      NotApplied(t, s);
      return;
    }
    ++report_->applied;
  }
  [[gnu::cold, gnu::noinline]] void NotApplied(const Target& t, const Status& s) {
    Message(NotAppliedText(t, s));
  }
  [[gnu::cold, gnu::noinline]] static std::string NotAppliedText(const Target& t,
                                                                 const Status& s) {
    const record::CheckedPayload& records = t.chunk->payload;
    return "record of " +
           Describe(SavedClassText(records.tables(), records.layout(t.record)),
                    records.subject(t.record)) +
           " was not applied: " + std::string(s.message());
  }

  // --- The second pass beside the game thread (World::SetApplyHelper)
  //
  // The pass's targets are taken in blocks, in turn, by this thread and the helper's, each with
  // appliers of its own that run no game code (record::Applier::RunNoGameCode) and links that
  // resolve only through the tables made before the hand-off. A record that needs the game's
  // code, or a reference those tables cannot resolve, is left; once both are done, this thread
  // applies the records left, in target order, with the pass's usual appliers, writing again
  // whatever the first try wrote. The messages of the records applied are kept with their
  // targets and joined in target order, so the report reads as the pass on one thread would.

  // Links that resolve by the tables made before the hand-off and note what they cannot.
  class BesideLinks : public record::ObjectLinks {
   public:
    BesideLinks(const ChunkLinks& chunk, const GuidMap<Object>* objects)
        : chunk_(chunk), objects_(objects) {}
    std::optional<record::LinkTarget> Locate(const reflect::ClassInfo&, const void*) override {
      return std::nullopt;
    }
    void* Resolve(Guid id, const reflect::ClassInfo& cls) override {
      const Object* o = objects_ != nullptr ? objects_->Find(id) : nullptr;
      if (o == nullptr) return Missed();
      return reflect::TypeRegistry::Upcast(*o->cls, o->ptr, cls);
    }
    void* ResolveRecord(std::size_t record, Guid id, const reflect::ClassInfo& cls) override {
      const Object o = chunk_.Taken(record);
      return o ? reflect::TypeRegistry::Upcast(*o.cls, o.ptr, cls) : Resolve(id, cls);
    }
    // Whether a reference was not resolved since the last call.
    bool TakeMissed() { return std::exchange(missed_, false); }

   private:
    void* Missed() {
      missed_ = true;
      return nullptr;
    }
    const ChunkLinks& chunk_;
    const GuidMap<Object>* const objects_;
    bool missed_ = false;
  };

  // One thread's part of a pass beside: its appliers, the targets it left, and the messages of
  // those it applied, with the target each came from (at most kMaxMessages kept).
  struct BesideShare {
    struct Apply {
      std::unique_ptr<BesideLinks> links;
      std::unique_ptr<record::Applier> applier;
      std::size_t dropped_left = 0;  // messages the applier dropped for records it left
    };
    std::map<const LoadedGame::Chunk*, Apply> appliers;
    const LoadedGame::Chunk* last_chunk = nullptr;  // the chunk of `last`, the last one asked
    Apply* last = nullptr;
    std::vector<std::size_t> left;
    std::vector<std::pair<std::size_t, std::string>> messages;
    std::vector<std::string> scratch;
    std::size_t dropped = 0;
    std::size_t applied = 0;
  };
  // The targets a block holds.
  static constexpr std::size_t kBesideBlock = 128;

  void ApplySecondPassBeside() {
    // What the links read is made here, before the hand-off: the links of each chunk the pass
    // takes records of, and the objects by subject when one of them holds references by ID. (The
    // tables by record, and the marks of targets whose objects repeat, were made by
    // NoteTargets.)
    std::map<const LoadedGame::Chunk*, ChunkLinks*> chunk_links;
    bool by_id = false;
    for (const auto& [chunk, taken] : chunk_taken_) {
      if (!taken.second_pass) continue;
      NewApplierFor(chunk);
      chunk_links[chunk] = appliers_[chunk].links.get();
      by_id = by_id || !chunk->payload.tables().refs().empty();
    }
    const GuidMap<Object>* objects = by_id ? &Objects() : nullptr;
    std::atomic<std::size_t> next_block{0};
    auto run = [&](BesideShare& share) {
      for (;;) {
        const std::size_t from = next_block.fetch_add(kBesideBlock, std::memory_order_relaxed);
        if (from >= targets_.size()) return;
        const std::size_t to = std::min(from + kBesideBlock, targets_.size());
        for (std::size_t k = from; k < to; ++k) {
          if (k + 8 < to) PrefetchTarget(targets_[k + 8]);
          const Target& t = targets_[k];
          if (t.first_pass) continue;
          if (t.after_beside) {
            share.left.push_back(k);
          } else {
            ApplyBeside(share, k, chunk_links, objects);
          }
        }
      }
    };
    BesideShare mine, helper;
    {
      SideTask side(helper_, [&] { run(helper); });
      run(mine);
      side.Join();
    }
    // The records left, in target order, with the pass's usual appliers.
    std::vector<std::size_t> left = std::move(mine.left);
    left.insert(left.end(), helper.left.begin(), helper.left.end());
    std::sort(left.begin(), left.end());
    BesideShare own;
    for (std::size_t k : left) {
      const Target& t = targets_[k];
      own.scratch.clear();
      Status s = ApplierFor(t.chunk).Apply(t.record, *t.object.cls, t.object.ptr, &own.scratch);
      if (!s.ok()) own.scratch.push_back(NotAppliedText(t, s));
      own.applied += s.ok() ? 1 : 0;
      KeepMessages(own, k);
    }
    // The messages in target order (a target's own stay in theirs), as the pass on one thread
    // adds them to the report. Each share keeps its first kMaxMessages, which hold every one of
    // the first kMaxMessages in target order.
    std::vector<std::pair<std::size_t, std::string>> joined = std::move(mine.messages);
    for (BesideShare* share : {&helper, &own}) {
      joined.insert(joined.end(), std::make_move_iterator(share->messages.begin()),
                    std::make_move_iterator(share->messages.end()));
    }
    std::stable_sort(joined.begin(), joined.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [k, text] : joined) Message(std::move(text));
    for (BesideShare* share : {&mine, &helper, &own}) {
      report_->applied += share->applied;
      report_->messages_dropped += share->dropped;
      for (auto& [chunk, apply] : share->appliers) {
        report_->messages_dropped += apply.applier->messages_dropped() - apply.dropped_left;
      }
    }
  }

  void ApplyBeside(BesideShare& share, std::size_t k,
                   const std::map<const LoadedGame::Chunk*, ChunkLinks*>& chunk_links,
                   const GuidMap<Object>* objects) {
    const Target& t = targets_[k];
    if (share.last_chunk != t.chunk) {
      share.last_chunk = t.chunk;
      share.last = &share.appliers[t.chunk];
    }
    BesideShare::Apply& apply = *share.last;
    if (!apply.applier) {
      apply.links = std::make_unique<BesideLinks>(*chunk_links.at(t.chunk), objects);
      apply.applier =
          std::make_unique<record::Applier>(registry_, t.chunk->payload, apply.links.get());
      apply.applier->RunNoGameCode();
    }
    share.scratch.clear();
    const std::size_t dropped = apply.applier->messages_dropped();
    Status s = apply.applier->Apply(t.record, *t.object.cls, t.object.ptr, &share.scratch);
    if (apply.links->TakeMissed() || s.code() == StatusCode::kCancelled) {
      apply.dropped_left += apply.applier->messages_dropped() - dropped;
      share.left.push_back(k);
      return;
    }
    if (!s.ok()) share.scratch.push_back(NotAppliedText(t, s));
    share.applied += s.ok() ? 1 : 0;
    KeepMessages(share, k);
  }

  // Moves the scratch messages of target `k` into the share's, up to kMaxMessages in all.
  static void KeepMessages(BesideShare& share, std::size_t k) {
    for (std::string& text : share.scratch) {
      if (share.messages.size() < record::Applier::kMaxMessages) {
        share.messages.emplace_back(k, std::move(text));
      } else {
        ++share.dropped;
      }
    }
  }

  World& world_;
  Host& host_;
  const reflect::TypeRegistry& registry_;
  std::shared_ptr<const LoadedGame> game_;
  ApplyReport* report_;
  std::vector<Target> targets_;
  // What the targets took of each chunk (one entry per chunk from the start, so a pointer to one
  // stays valid).
  std::map<const LoadedGame::Chunk*, Taken> chunk_taken_;
  // The filter of the second pass's objects (NoteTargets).
  std::vector<std::uint64_t> seen_;
  bool noted_ = false;  // NoteTargets ran: each target taken since is noted as it comes
  // The helper the second pass is shared with, decided once the finds are done; none: this
  // thread alone.
  record::CheckedPayload::Post helper_;
  Name only_level_;
  GuidSet level_actors_;
  std::vector<Spawn> spawns_;
  std::vector<SpawnRequest> spawn_requests_;  // spawns_[k]'s at k
  GuidSet spawning_;
  std::vector<Pending> pending_components_;
  std::vector<Guid> remove_;
  std::vector<std::pair<Guid, Placement>> placements_;
  // The section of the actor record TakeActor reads.
  ActorSection taken_;
  // Objects(): made from targets_, whose first found_targets_ are the finds' (those DropRemoved
  // kept; `dropped_` the subjects of those it dropped) and the rest the spawns' and the
  // components' of spawned actors.
  GuidMap<Object> objects_;
  bool objects_made_ = false;
  std::size_t found_targets_ = 0;
  std::vector<Guid> dropped_;
  // The actors the host left out of the map this apply opened (null: none, or not such an apply).
  const GuidSet* left_out_ = nullptr;
  // The objects the removal of remove_ destroys, by address (DoomedKey), and in a list.
  GuidSet doomed_;
  std::vector<const void*> doomed_list_;
  std::vector<ComponentView> doomed_components_;  // Doom's buffer
  struct ChunkApply {
    std::unique_ptr<ChunkLinks> links;
    std::unique_ptr<record::Applier> applier;
  };
  std::map<const LoadedGame::Chunk*, ChunkApply> appliers_;
  const LoadedGame::Chunk* last_chunk_ = nullptr;
  record::Applier* last_applier_ = nullptr;
  record::Applier* first_applier_ = nullptr;
  // The components of actor `listed_for_` (none: no list held).
  Guid listed_for_;
  std::vector<ComponentView> components_;
  // This apply's number (World::applies_), given to the records it leaves waiting.
  std::uint64_t apply_;
  SubjectsNow subjects_now_;
};

// ---------------------------------------------------------------------------------------------
// World

World::World(Host& host, const reflect::TypeRegistry& registry)
    : host_(host),
      registry_(registry),
      live_captures_(std::make_shared<world_internal::LiveCaptures>()) {
  host_.SetEvents(this);
  if (host_.HasWorld()) {
    for (Name level : host_.Levels()) NotePlacedActors(level);
  }
}

World::~World() { host_.SetEvents(nullptr); }

void World::VisitNamedSubjects(const std::function<void(Guid, Object)>& each) {
  std::vector<GlobalView> globals;
  host_.ListGlobals(&globals);
  for (const GlobalView& g : globals) {
    if (g.object && HasState(*g.object.cls)) {
      each(DeriveGlobalId(g.role, g.object.cls->name()), g.object);
    }
  }
  for (const auto& [name, object] : registered_) each(DeriveRegisteredId(name), object);
  std::vector<PlayerView> players;
  host_.ListPlayers(&players);
  for (const PlayerView& p : players) {
    const auto index = static_cast<std::uint32_t>(p.index);
    const std::pair<PlayerPart, Object> parts[] = {{PlayerPart::kController, p.controller},
                                                   {PlayerPart::kPawn, p.pawn},
                                                   {PlayerPart::kPlayerState, p.player_state}};
    for (const auto& [part, object] : parts) {
      if (object && HasState(*object.cls)) each(DerivePlayerId(index, part), object);
    }
  }
}

Status World::Register(Name name, Object object) {
  if (name.view().empty() || name.view().size() > 1024) {
    return InvalidInputError("a registered name is 1 to 1,024 bytes");
  }
  if (!object || object.cls == nullptr) return InvalidInputError("registering a null object");
  if (!registered_.emplace(name, object).second) {
    return InvalidInputError("an object is registered as " + name.str() + " already");
  }
  // A held record waiting for this name applies now.
  if (held_ && !applying_) {
    if (const LoadedGame::Chunk* c = held_->Find(kGlobalChunk, "")) {
      const Guid id = DeriveRegisteredId(name);
      for (std::size_t i = 0; i < c->payload.size(); ++i) {
        ByteView section;
        if (c->payload.subject(i) != id || !c->payload.Find(i, kGlobalSection, &section)) continue;
        if (!SameClass(registry_, SavedClass(c->payload.tables(), c->payload.layout(i)),
                       object.cls)) {
          break;
        }
        record::Applier applier(registry_, c->payload, nullptr);
        if (applier.Apply(c->payload.Get(i), *object.cls, object.ptr, nullptr).ok()) {
          applier.RunLoadedHooks();
        }
      }
    }
  }
  return OkStatus();
}

void World::Unregister(Name name) { registered_.erase(name); }

std::unique_ptr<WorldCapture> World::BeginCapture(const record::CheckedPayload::Post& helper) {
  std::unique_ptr<WorldCapture> capture(new WorldCapture(*this));
  capture->mark_ = {++captures_begun_, level_memory_clock_};
  capture->Gather(helper);
  return capture;
}

Status World::Apply(std::shared_ptr<const LoadedGame> game, ApplyReport* report) {
  if (applying_) return BusyError("a load is setting values");
  if (game == nullptr) return InvalidInputError("no save to apply");
  // The loaded save's state wins over what levels remembered, and over the records still waiting
  // from an earlier load or a level's memory: its own records of those components wait instead.
  level_memory_.clear();
  waiting_.clear();
  ApplyReport local;
  if (report == nullptr) report = &local;
  const Applying applying{applying_};
  Applier applier(*this, game, report);
  Status s = applier.Run();
  SetHeld(std::move(game));
  return s;
}

void World::ApplyAtActorsInitialized(std::shared_ptr<const LoadedGame> game,
                                     std::function<void()> starting,
                                     std::function<void(Status, ApplyReport)> done) {
  pending_ = std::move(game);
  pending_starting_ = std::move(starting);
  pending_done_ = std::move(done);
}

Status World::OpenMapForApply(std::string_view map) {
  const LoadedGame::Chunk* c = pending_ ? pending_->Find(kWorldChunk, map) : nullptr;
  if (c == nullptr || c->destroyed.empty()) return host_.OpenMap(map);
  GuidSet leave_out;
  leave_out.Reserve(c->destroyed.size());
  for (std::uint32_t i : c->destroyed) leave_out.Insert(c->payload.subject(i));
  left_out_.Reserve(c->destroyed.size());
  struct Forget {
    World& world;
    ~Forget() {
      world.left_out_ = GuidSet();
      world.left_out_noted_ = 0;
    }
  } forget{*this};
  return host_.OpenMapWithout(map, leave_out, &left_out_);
}

void World::CancelPendingApply() {
  pending_.reset();
  pending_starting_ = nullptr;
  pending_done_ = nullptr;
}

std::uint32_t World::NotePlacedActors(Name level) {
  // One entry per ID: of equal IDs the one noted last wins.
  std::size_t saving = 0;
  std::uint32_t order = 0;
  host_.VisitActors(level, [this, &saving, &order](const ActorView& a) {
    if (a.spawned || a.player_pawn || !a.object || a.id.is_none()) return;
    saving += HasState(*a.object.cls) ? 1 : 0;
    const PlacedActor placed{a.id, a.object.cls->name(), a.level, order++};
    if (const std::uint32_t* at = placed_index_.Find(a.id)) {
      placed_[*at] = placed;
      return;
    }
    std::uint32_t slot;
    if (!placed_free_.empty()) {
      slot = placed_free_.back();
      placed_free_.pop_back();
      placed_[slot] = placed;
    } else {
      slot = static_cast<std::uint32_t>(placed_.size());
      placed_.push_back(placed);
    }
    placed_index_.Put(a.id, slot);
  });
  placed_saving_[level] = saving;
  return order;
}

void World::NoteLeftOut(const std::vector<std::pair<Name, std::uint32_t>>& noted) {
  left_out_noted_ = 0;
  const std::string map = host_.CurrentMap();
  const LoadedGame::Chunk* c = pending_ ? pending_->Find(kWorldChunk, map) : nullptr;
  if (left_out_.empty() || c == nullptr || noted.empty()) return;
  std::vector<std::pair<Name, std::uint32_t>> next = noted;  // each level's next place
  const record::CheckedPayload& records = c->payload;
  for (std::uint32_t i : c->destroyed) {
    const Guid id = records.subject(i);
    if (!left_out_.Contains(id) || placed_index_.Find(id) != nullptr) continue;
    ByteView section;
    if (!records.Find(i, kActorSection, &section)) continue;
    ActorSection a;
    ReadCheckedActor(section, &a);
    // The persistent level, the first, when the section names none.
    auto level = next.begin();
    if (!a.level.empty()) {
      level = std::find_if(next.begin(), next.end(),
                           [&](const auto& l) { return l.first.view() == a.level; });
    }
    if (level == next.end()) continue;  // not a level loaded: the host made none of its actors
    const auto slot = static_cast<std::uint32_t>(placed_.size());
    placed_.push_back({id, SavedClass(records.tables(), records.layout(i)), level->first,
                       level->second++});
    placed_index_.Put(id, slot);
    ++left_out_noted_;
  }
}

void World::OnActorsInitialized() {
  // A new map: a save still writing saw the world that went. Only registered objects and the game
  // instance's globals outlive a map; nothing else it captured gets its OnSaved hook.
  {
    std::lock_guard lock(live_captures_->mutex);
    for (WorldCapture* capture : live_captures_->captures) {
      capture->NoteGone([](const WorldCapture::Hooked& h) {
        if (h.kind != RecordKind::kObject) return true;
        return !h.registered && h.name != Name(kRoleGameInstance) && h.name != Name(kRoleSubsystem);
      });
    }
  }
  placed_.clear();
  placed_free_.clear();
  placed_saving_.clear();
  placed_index_ = GuidMap<std::uint32_t>();
  waiting_.clear();
  level_memory_.clear();  // the levels it remembered belong to the world that went
  std::vector<std::pair<Name, std::uint32_t>> noted;
  for (Name level : host_.Levels()) noted.emplace_back(level, NotePlacedActors(level));
  NoteLeftOut(noted);
  if (!pending_) return;
  std::shared_ptr<const LoadedGame> game = std::move(pending_);
  auto starting = std::move(pending_starting_);
  auto done = std::move(pending_done_);
  CancelPendingApply();
  if (starting) starting();
  ApplyReport report;
  Status s = Apply(std::move(game), &report);
  if (done) done(s, std::move(report));
}

void World::OnBeginPlay() {}

void World::OnLevelAdded(Name level) {
  NotePlacedActors(level);
  // What the level remembered since it left, else the held save's records of its actors, apply
  // before the level's begin play: its placed actors held destroyed go, spawned ones come back,
  // the others get their values.
  std::shared_ptr<const LoadedGame> memory = TakeLevelMemory(level);
  const std::shared_ptr<const LoadedGame>& game = memory ? memory : held_;
  if (!game || applying_) return;
  LevelReport report;
  report.event = LevelReport::Event::kApplied;
  report.level = level;
  report.from_memory = memory != nullptr;
  {
    const Applying applying{applying_};
    Applier applier(*this, game, &report.apply, level);
    report.status = applier.Run();
  }
  Notify(report);
}

void World::OnLevelRemoved(Name level) {
  RememberLevel(level);  // first: its tombstones are the placed actors noted below
  placed_saving_.erase(level);
  for (std::size_t k = 0; k < placed_.size(); ++k) {
    PlacedActor& p = placed_[k];
    if (p.id.is_none() || p.level != level) continue;
    placed_index_.Erase(p.id);
    p = PlacedActor{};
    placed_free_.push_back(static_cast<std::uint32_t>(k));
  }
  // A save still writing captured the level's actors: their OnSaved hooks must not run, even on
  // actors made again at the same addresses with the same IDs when the level comes back.
  std::lock_guard lock(live_captures_->mutex);
  if (live_captures_->captures.empty()) return;
  GuidSet gone;
  host_.VisitActors(level, [&](const ActorView& a) { gone.Insert(a.id); });
  for (WorldCapture* capture : live_captures_->captures) {
    capture->NoteGone([&gone](const WorldCapture::Hooked& h) {
      return (h.kind == RecordKind::kActor || h.kind == RecordKind::kComponent) &&
             gone.Contains(h.actor);
    });
  }
}

void World::OnComponentCreated(Guid actor, const ComponentView& component) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if ((*it)->actor != actor || (*it)->name != component.name.view()) continue;
    // Out of the list before anything runs: the apply's hooks may add a component or remove a
    // level, changing the list, and the record (with the save it keeps) lives until the end.
    const std::unique_ptr<WaitingComponent> taken = std::move(*it);
    waiting_.erase(it);
    const WaitingComponent& w = *taken;
    const record::CheckedPayload& records = w.chunk->payload;
    if (component.object &&
        SameClass(registry_, SavedClass(records.tables(), records.layout(w.record)),
                  component.object.cls)) {
      LateLinks links(*this, records);
      record::Applier applier(registry_, records, &links);
      if (applier.Apply(records.Get(w.record), *component.object.cls, component.object.ptr, nullptr)
              .ok()) {
        applier.RunLoadedHooks();
      }
    }
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// Level memory (docs/world.md, "Streamed levels")

// A component record waiting for its component in a level that is loaded is written by
// KeepWaiting; a level's removal takes its waiting records into its memory, written here.
Status CapturedWorld::Rep::KeepRemembered(GuidSet& captured, GuidSet* remembered_actors) {
  Out* into = nullptr;
  for (Out& c : chunks) {
    if (c.id == kWorldChunk) into = &c;
  }
  if (into == nullptr) return OkStatus();
  // A save writes what each level out now remembered (a level's capture finds none: its level is
  // loaded until it is removed, and its memory went when it was added).
  for (const auto& m : memory) {
    if (!only_level.is_none()) break;
    const LoadedGame::Chunk* from = m.second->Find(kWorldChunk, into->key);
    if (from == nullptr) continue;
    const record::CheckedPayload& records = from->payload;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const Guid subject = records.subject(i);
      if (!record::IsKnownObjectKind(records.kind(i)) || captured.Contains(subject)) continue;
      ByteView section;
      if (records.Find(i, kActorSection, &section)) remembered_actors->Insert(subject);
      ROLLY_RETURN_IF_ERROR(KeepRecord(*into, records, i, captured));
    }
  }
  return OkStatus();
}

// A waiting record is the newest of its component: a load drops those of the one before
// (World::Apply), and a level's removal takes its own into its memory, which its next add applies.
// The held save may hold an older record of it (a level's memory applied since), or none (the
// component was made in play since that save): the waiting one is written first, and the held
// save's is then skipped as captured. A record of a component captured (made meanwhile) goes, and
// so does one of an actor not captured (destroyed, or not in a level's capture's level).
Status CapturedWorld::Rep::KeepWaiting(GuidSet& captured) {
  for (const WorldCapture::Waiting& w : waiting) {
    const record::CheckedPayload& records = w.chunk->payload;
    const Guid subject = records.subject(w.record);
    if (captured.Contains(subject) || !captured.Contains(w.actor)) continue;
    Out* into = nullptr;
    for (Out& c : chunks) {
      if (c.id == w.chunk->id && c.key == w.chunk->key) into = &c;
    }
    if (into == nullptr) continue;
    ROLLY_RETURN_IF_ERROR(KeepRecord(*into, records, w.record, captured));
  }
  return OkStatus();
}

Status CapturedWorld::Rep::KeepRecord(Out& into, const record::CheckedPayload& from,
                                      std::size_t i, GuidSet& captured) {
  Result<record::Record> moved =
      record::MoveRecord(from.tables(), from.Get(i), &into.writer->tables(), &from, kTableFree);
  if (!moved.ok()) return OkStatus();
  ROLLY_RETURN_IF_ERROR(into.writer->Add(*moved));
  captured.Insert(from.subject(i));
  return OkStatus();
}

bool World::RemembersLevel(Name level) const {
  for (const LevelMemory& m : level_memory_) {
    if (m.level == level) return true;
  }
  return false;
}

std::shared_ptr<const LoadedGame> World::TakeLevelMemory(Name level) {
  for (auto it = level_memory_.begin(); it != level_memory_.end(); ++it) {
    if (it->level != level) continue;
    std::shared_ptr<const LoadedGame> records = std::move(it->records);
    level_memory_.erase(it);
    return records;
  }
  return nullptr;
}

const GuidMap<ComponentSection>& World::HeldComponents() {
  if (held_components_) return *held_components_;
  auto made = std::make_unique<GuidMap<ComponentSection>>();
  std::span<const LoadedGame::Chunk> chunks;  // none without a held save
  if (held_) chunks = held_->chunks();
  for (const LoadedGame::Chunk& c : chunks) {
    if (c.id != kWorldChunk) continue;
    const record::CheckedPayload& records = c.payload;
    ByteView section;
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records.FirstChecked(i) != 1 || !records.Find(i, kComponentSection, &section)) continue;
      ComponentSection comp;
      ReadCheckedComponent(section, &comp);
      made->Put(records.subject(i), comp);
    }
  }
  held_components_ = std::move(made);
  return *held_components_;
}

void World::SetHeld(std::shared_ptr<const LoadedGame> game) {
  held_components_.reset();
  held_ = std::move(game);
  held_at_ = captures_begun_;
}

bool World::SetHeld(std::shared_ptr<const LoadedGame> game, WorldCapture::Mark mark) {
  if (mark.capture <= held_at_) return false;
  held_components_.reset();
  held_ = std::move(game);
  held_at_ = mark.capture;
  std::erase_if(level_memory_,
                [&](const LevelMemory& m) { return m.generation <= mark.level_memory; });
  return true;
}

void World::RememberLevel(Name level) {
  TakeLevelMemory(level);  // what an earlier removal kept, if the level never came back since
  // The level's component records waiting for their component go with its actors (the capture
  // below keeps them with the rest of the level's records).
  std::unordered_set<Guid> actors;
  if (!waiting_.empty()) {
    host_.VisitActors(level, [&](const ActorView& a) { actors.insert(a.id); });
  }
  if (!host_.IsAuthority()) {
    std::erase_if(waiting_, [&](const auto& w) { return actors.count(w->actor) > 0; });
    return;
  }
  // The level's part of the map, captured as a save captures it; no OnSaved hooks run for it.
  std::unique_ptr<WorldCapture> capture(new WorldCapture(*this));
  capture->only_level_ = level;
  capture->Gather({});  // (the World has no workers of its own to help)
  const Status ran = capture->Run();
  Result<std::vector<WorldChunk>> chunks =
      ran.ok() ? capture->Finish() : Result<std::vector<WorldChunk>>(ran);
  capture->Forget();
  capture.reset();
  std::erase_if(waiting_, [&](const auto& w) { return actors.count(w->actor) > 0; });
  Result<std::shared_ptr<const LoadedGame>> game =
      chunks.ok() ? LoadedGame::Check(std::move(*chunks), registry_)
                  : Result<std::shared_ptr<const LoadedGame>>(chunks.status());
  LevelReport report;
  report.level = level;
  if (!game.ok()) {
    report.event = LevelReport::Event::kNotRemembered;
    report.status = game.status();
    Notify(report);
    return;
  }
  for (const LoadedGame::Chunk& c : (*game)->chunks()) report.records += c.payload.size();
  level_memory_.push_back({level, ++level_memory_clock_, std::move(*game)});
  report.event = LevelReport::Event::kRemembered;
  Notify(report);
}

void World::Notify(const LevelReport& report) {
  if (level_listener_) level_listener_(report);
}

}  // namespace rolly::world
