// Applying records: the values of a checked record (DecodePayload or CheckedPayload::Check
// checked its payload whole; a CheckedPayload's records are read in place) set into a
// live object by name, as docs/records.md "Applying a record" says. A field found through the
// field redirects whose saved type equals its live type is read (through its setter when it has
// one); any other saved value is skipped by its saved type with a message naming the field; a
// live field the layout lacks keeps its value.
//
// An Applier binds each saved layout to a live class once (which live field each saved field
// goes to, and whether its type matches), so applying is a walk over bytes and plan offsets.
//
// Owned objects (INLN) are applied into the object a field holds when it is of the saved class,
// otherwise made again through TypeRegistry::CreateOwned (the saved class is checked to be one the
// field may hold first; a class that is gone or does not fit leaves the field as it was, with a
// message). References are resolved through ObjectLinks by subject ID. Property bags are rebuilt
// with the registry's descriptors of their saved types (a type the game no longer registers drops
// that property, with a message); instanced structs are made again by their saved struct's name.
//
// Nothing of a checked record fails part way: the structure check (DecodePayload) accepted every
// value, the INLN entries and the EXTR values' form before anything applies. Save-extra hooks that
// no longer read what was saved (the game changed them) leave the rest as it was, with a message.
//
// Hooks: RunLoadedHooks runs OnLoaded once every record of a load applied: for each record in the
// order applied, its owned objects innermost first, then its target. A record refused
// (InvalidInput) runs none.
//
// One record per object that may hold owned objects: until RunLoadedHooks, an object whose class's
// saved fields may hold objects an apply makes (ClassPlan::owns) takes one record, and a second
// is refused (InvalidInput). Applying again could destroy the objects the first record made
// before their OnLoaded runs. Appliers of one load over several payloads share this with
// ShareLoad. An object of any other class may take several records, each applied over the last.
//
// Thread rules: an Applier is used by one thread at a time; the registry and tables must outlive
// it and not change. An applier that runs no game code (RunNoGameCode) may apply records on a
// thread beside the game thread, into objects no other thread touches meanwhile: it writes saved
// values and reads the registry. It calls no setter or hook and makes no owned object; it does
// make, resize and destroy values through their types' operations (containers' elements,
// optionals, a set's or map's keys), which construct registered structs and allocate.

#ifndef ROLLY_RECORD_APPLY_H_
#define ROLLY_RECORD_APPLY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/links.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace rolly::record {

namespace record_internal {

// The names of a chunk's tables as values for the game (a Name field's value, a property bag's
// property name): a name the process did not have when the tables were read (None in names())
// is interned once, the first time one is read. Used by one applier.
class NameValues {
 public:
  explicit NameValues(const ChunkTables& tables) : tables_(tables) {}
  std::size_t size() const { return tables_.names().size(); }
  Name operator[](std::uint32_t index) {
    const Name name = tables_.names()[index];
    return name.is_none() ? Made(index) : name;
  }

 private:
  Name Made(std::uint32_t index);

  const ChunkTables& tables_;
  std::vector<Name> made_;  // by index, None until first made
};

}  // namespace record_internal

class Applier {
 public:
  // `payload` as DecodePayload or CheckedPayload::Check made it; `links` resolves references
  // (null: every reference is left as it was, with a message). All must outlive the applier.
  Applier(const reflect::TypeRegistry& registry, const Payload& payload,
          ObjectLinks* links = nullptr)
      : registry_(registry),
        tables_(payload.tables),
        name_values_(payload.tables),
        records_(&payload.records),
        links_(links) {}
  Applier(const reflect::TypeRegistry& registry, const CheckedPayload& payload,
          ObjectLinks* links = nullptr)
      : registry_(registry),
        tables_(payload.tables()),
        name_values_(payload.tables()),
        records_(&payload),
        checked_(&payload),
        links_(links) {}

  // Applies `record` (one of the payload's records) to `object`, an object of `cls`. Appends one
  // message per value skipped or left as it was to `messages` (may be null). InvalidInput, applying
  // nothing, when the record's class is not `cls` (after class redirects) or its kind is not an
  // object kind.
  Status Apply(const Record& record, const reflect::ClassInfo& cls, void* object,
               std::vector<std::string>* messages);
  // The same for record `index` of the CheckedPayload this applier was made with, read in place
  // (nothing copied). InvalidInput, applying nothing, for an applier made with a Payload.
  Status Apply(std::size_t index, const reflect::ClassInfo& cls, void* object,
               std::vector<std::string>* messages);
  // Makes this applier one that runs none of the game's code (see Thread rules): from now on an
  // Apply answers Cancelled when the record needs it (a setter, an owned object, an instanced
  // struct, a property bag, save-extra bytes, a class with an OnLoaded hook or one that owns),
  // having written some of its values or none, and keeps no object for RunLoadedHooks. Such a
  // record is then to be applied by an applier that runs game code, which writes every value
  // this one may have written; the messages this one appended for it are to be dropped.
  void RunNoGameCode() { no_game_code_ = true; }

  // Runs OnLoaded on every object applied since the last call (see the header comment) and
  // forgets them, and which objects took a record (for every applier sharing them).
  void RunLoadedHooks();
  // Makes this applier share with `other` which objects took a record in this load (see the
  // header comment): one of them takes no second record from either. `other` may go first.
  void ShareLoad(const Applier& other) { applied_owners_ = other.applied_owners_; }

  // The most lines a `messages` vector is given: an apply adds none past it, and counts them in
  // messages_dropped() instead. A file can make a message of every value of a vector of 2^24,
  // and each a kilobyte long.
  static constexpr std::size_t kMaxMessages = 1000;
  // Messages not added, since this applier was made, because their vector held kMaxMessages.
  std::size_t messages_dropped() const { return dropped_; }

 private:
  struct FieldBinding {
    std::uint32_t saved_type = 0;
    const reflect::PlanField* field = nullptr;  // null when the class lacks it
    bool matches = false;
    // The field's live kind and offset; plain: it matches, has no setter and is of a kind
    // ReadPlain reads.
    reflect::Kind kind = reflect::Kind::kBool;
    std::uint32_t offset = 0;
    bool plain = false;
    std::string skip_message;  // when !matches
  };
  struct Binding {
    const reflect::ClassInfo* cls = nullptr;
    std::vector<FieldBinding> fields;
  };
  // One INLN entry of the record being applied.
  struct Entry {
    std::uint32_t layout = 0;
    ByteView prop;
    ByteView extra;
  };

  // The parts of a record an apply reads: its sections as CheckedPayload::PartsToApply gives
  // them (`has`: 1 the record has PROP, 2 INLN, 4 XTRA), made in place from its answer (a copy
  // through the stack costs a read that waits for the stores of the answer).
  struct Parts {
    std::uint8_t kind = 0;
    std::uint32_t layout = 0;
    CheckedPayload::AppliedParts sections;
  };
  Status ApplyParts(const Parts& record, const reflect::ClassInfo& cls, void* object,
                    std::vector<std::string>* messages);
  // Why ApplyParts refuses `record` (it refuses before applying anything).
  [[gnu::cold]] Status Refusal(const Parts& record, const reflect::ClassInfo& cls) const;
  // The answer of an applier that runs no game code to a record that needs it.
  [[gnu::cold]] static Status NeedsGameCode();
  // Why ApplyParts refuses a second record for an object of a class that owns.
  [[gnu::cold]] Status AppliedAlready(const reflect::ClassInfo& cls) const;
  // The INLN entries of the record being applied, into entries_; then each applied to the object
  // its owned value made or found (targets_).
  Status ReadEntries(ByteView owned);
  Status ApplyEntries();

  // The chain of field names down to a value, for messages (no allocation unless one is made).
  struct Path {
    const Path* parent;
    Name name;
  };
  static std::string PathText(const Path* path);
  void Message(std::string text);
  // Whether a message now would be kept; counts it as dropped when not (the caller then makes
  // no text for it).
  bool Keeps() {
    if (messages_ == nullptr) return false;
    if (messages_->size() < kMaxMessages) return true;
    ++dropped_;
    return false;
  }

  // Inline (defined in apply.cc, its only user): every record and struct value asks.
  inline const Binding& Bind(std::uint32_t layout, const reflect::ClassInfo& cls, bool whole);
  // Bind past its table of last bindings: found in the map, or made.
  const Binding& BindSlow(std::uint32_t layout, const reflect::ClassInfo& cls, bool whole);
  bool Matches(std::uint32_t saved, const reflect::Type& live);
  // The registry's descriptor a property bag holds a value of saved type `saved` in, or null.
  const reflect::Type* LiveTypeFor(std::uint32_t saved);
  Status ReadFields(ByteReader& in, std::uint32_t layout, const reflect::ClassInfo& cls,
                    void* object, int depth, const Path* path, bool whole);
  Status Read(ByteReader& in, std::uint32_t saved, const reflect::Type& live, void* value,
              int depth, const Path* path, bool whole);
  Status Skip(ByteReader& in, std::uint32_t saved);
  Status SkipFields(ByteReader& in, const std::vector<LayoutField>& fields);
  Status ReadOwned(ByteReader& in, const reflect::Type& live, void* field, const Path* path);
  Status ReadReference(ByteReader& in, const reflect::Type& live, void* field, const Path* path);
  Status ReadInstanced(ByteReader& in, const reflect::Type& live, void* value, int depth,
                       const Path* path);
  Status ReadBag(ByteReader& in, const reflect::Type& live, void* value, int depth,
                 const Path* path);
  Status ReadText(ByteReader& in, reflect::Text* text);
  void ReadExtra(const reflect::ClassInfo& cls, void* object, ByteView bytes);

  const reflect::TypeRegistry& registry_;
  const ChunkTables& tables_;
  record_internal::NameValues name_values_;
  RecordSubjects records_;
  const CheckedPayload* checked_ = nullptr;
  ObjectLinks* links_;
  std::map<std::tuple<std::uint32_t, const reflect::ClassInfo*, bool>, std::unique_ptr<Binding>>
      bindings_;
  std::map<std::pair<std::uint32_t, const reflect::Type*>, bool> matches_;
  // The binding used last for each layout: at 2 * layout + whole (null: none yet).
  std::vector<const Binding*> quick_;
  std::map<std::uint32_t, const reflect::Type*> bag_types_;
  std::vector<std::string>* messages_ = nullptr;
  std::size_t dropped_ = 0;
  bool no_game_code_ = false;
  // The record being applied: its INLN entries, and for each owned value met so far (in INLN
  // order) the object its entry applies to ({null, null}: skipped).
  std::vector<Entry> entries_;
  std::vector<reflect::ObjectRef> targets_;
  // Objects whose OnLoaded runs at RunLoadedHooks, in that order.
  std::vector<reflect::ObjectRef> loaded_;
  // The objects of a class that owns (ClassPlan::owns) that took a record since RunLoadedHooks,
  // shared by the appliers of one load (ShareLoad).
  std::shared_ptr<std::unordered_set<const void*>> applied_owners_ =
      std::make_shared<std::unordered_set<const void*>>();
};

}  // namespace rolly::record

#endif  // ROLLY_RECORD_APPLY_H_
