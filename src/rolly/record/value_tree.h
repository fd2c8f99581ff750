// A generic value tree: any record's PROP decoded by its chunk's saved types alone, without the
// game's classes, and encoded back to the same bytes. Moving a record to another chunk goes
// through it (docs/records.md, "Moving a record between chunks"): the values are re-encoded
// against the new chunk's tables and kept exactly (float bits, integers, texts, names and enum
// value names by their text, container order).
//
// Thread rules: pure functions over values; a target ChunkTables is used by one thread at a time.

#ifndef ROLLY_RECORD_VALUE_TREE_H_
#define ROLLY_RECORD_VALUE_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/record_codec.h"

namespace rolly::record {

struct Value {
  SavedKind kind = SavedKind::kBool;
  // Bool and Optional: 0 or 1; signed integers: the int64 value's bits; unsigned: the value.
  // Reference: the saved number (0 null, odd: record (number - 1) / 2 of the same payload, even: the
  // refs table). Owned: 0 null, else 1 + its INLN entry's layout index. InstancedStruct: 0 empty,
  // else 1 + its layout index. PropertyBag: its bag layout index.
  std::uint64_t number = 0;
  // String and SoftPath: the text; Name and Enum: the name's (the enum value's) text, empty for
  // the None name; the fixed-size kinds (Float .. Transformd, Guid, DateTime): their bytes as
  // saved; Reference: the subject's 16 bytes as saved (empty when null or not known).
  std::string text;
  // Struct: the members in layout order; Vector, Array, Set: the elements; Map: key, value,
  // key, value...; Optional: the value when present; Text: source, namespace and key (String
  // values), then the argument texts; Owned, InstancedStruct: the object's fields as one Struct
  // value; PropertyBag: the properties' values in its bag layout's order.
  std::vector<Value> items;
  // Owned: the owned object's save-extra bytes (empty when none).
  std::string extra;
  friend bool operator==(const Value&, const Value&) = default;
};

// The values of a record: PROP, with the objects it owns (INLN) inline.
// `records` (the payload's) gives the subjects of references by record index; without it their
// `text` is empty.
// Checks the record first: Damaged as DecodePayload would be; InvalidInput for a record of a kind
// this version does not know.
Result<Value> DecodeProp(const ChunkTables& tables, const Record& record,
                         RecordSubjects records = {});

struct EncodedValues {
  Bytes prop;
  // INLN, when the values own objects.
  std::optional<Bytes> owned;
};
// The PROP (and INLN) bytes of `root` (a Struct value as DecodeProp gives) under layout `layout`
// of `tables`, adding names and refs the values use when missing. InvalidData when the tree does
// not fit the layout's saved types.
Result<EncodedValues> EncodeProp(ChunkTables* tables, std::uint32_t layout, const Value& root);
// `record` of a payload with tables `from` (and records `records`), re-encoded for a chunk with
// tables `to` (its layouts, saved types and names added to `to`; references by record index become
// references by subject ID). EXTR moves unchanged. NewerVersion for a record kind or a section
// other than PROP, INLN and EXTR this version does not know (their bytes may refer to the old
// tables).
// `table_free`: sections a layer above knows do not refer to the tables (moved unchanged too).
Result<Record> MoveRecord(const ChunkTables& from, const Record& record, ChunkTables* to,
                          RecordSubjects records = {},
                          const std::vector<SectionId>& table_free = {});

}  // namespace rolly::record

#endif  // ROLLY_RECORD_VALUE_TREE_H_
