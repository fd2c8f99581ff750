// Applying records: the values of a checked record (DecodePayload checked it whole) set into a
// live object by name, as docs/records.md "Applying a record" says. A field found through the
// field redirects whose saved type equals its live type is read (through its setter when it has
// one); any other saved value is skipped by its saved type with a message naming the field; a
// live field the layout lacks keeps its value.
//
// An Applier binds each saved layout to a live class once (which live field each saved field
// goes to, and whether its type matches), so applying is a walk over bytes and plan offsets.
//
// Thread rules: an Applier is used by one thread at a time; the registry and tables must outlive
// it and not change.

#ifndef ROLLY_RECORD_APPLY_H_
#define ROLLY_RECORD_APPLY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {

class Applier {
 public:
  Applier(const reflect::TypeRegistry& registry, const ChunkTables& tables)
      : registry_(registry), tables_(tables) {}

  // Applies `record` (from a payload DecodePayload returned with these tables) to `object`, an
  // object of `cls`. Appends one message per value skipped or left as it was to `messages`.
  // InvalidInput when the record's class is not `cls` (after class redirects) or its kind is not
  // an object kind; Damaged when the EXTR section does not read as the hooks expect (PROP applied
  // already). The game's loaded hooks are the caller's to run.
  Status Apply(const Record& record, const reflect::ClassInfo& cls, void* object,
               std::vector<std::string>* messages);

 private:
  struct FieldBinding {
    std::uint32_t saved_type = 0;
    const reflect::PlanField* field = nullptr;  // null when the class lacks it
    bool matches = false;
    std::string skip_message;  // when !matches
  };
  struct Binding {
    const reflect::ClassInfo* cls = nullptr;
    std::vector<FieldBinding> fields;
  };

  // The chain of field names down to a value, for messages (no allocation unless one is made).
  struct Path {
    const Path* parent;
    Name name;
  };
  static std::string PathText(const Path* path);

  const Binding& Bind(std::uint32_t layout, const reflect::ClassInfo& cls);
  bool Matches(std::uint32_t saved, const reflect::Type& live);
  Status ReadFields(ByteReader& in, std::uint32_t layout, const reflect::ClassInfo& cls,
                    void* object, int depth, const Path* path);
  Status Read(ByteReader& in, std::uint32_t saved, const reflect::Type& live, void* value,
              int depth, const Path* path);

  const reflect::TypeRegistry& registry_;
  const ChunkTables& tables_;
  std::map<std::pair<std::uint32_t, const reflect::ClassInfo*>, std::unique_ptr<Binding>> bindings_;
  std::map<std::pair<std::uint32_t, const reflect::Type*>, bool> matches_;
  std::vector<std::string>* messages_ = nullptr;
  std::uint64_t elements_ = 0;
};

}  // namespace rolly::record

#endif  // ROLLY_RECORD_APPLY_H_
