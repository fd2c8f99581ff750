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
  std::uint64_t number = 0;
  // String and SoftPath: the text; Name and Enum: the name's (the enum value's) text, empty for
  // the None name; the
  // fixed-size kinds (Float .. Transformd, Guid, DateTime): their bytes as saved.
  std::string text;
  // Struct: the members in layout order; Vector, Array, Set: the elements; Map: key, value,
  // key, value...; Optional: the value when present.
  std::vector<Value> items;
  friend bool operator==(const Value&, const Value&) = default;
};

// The PROP of `record` as a Struct value whose items are the layout's fields. Checks the record
// first: Damaged as DecodePayload would be; InvalidInput for a record of a kind this version
// does not know.
Result<Value> DecodeProp(const ChunkTables& tables, const Record& record);
// The PROP bytes of `root` (a Struct value as DecodeProp gives) under layout `layout` of
// `tables`, adding names the values use when missing. InvalidData when the tree does not fit the
// layout's saved types.
Result<Bytes> EncodeProp(ChunkTables* tables, std::uint32_t layout, const Value& root);
// `record` of a payload with tables `from`, re-encoded for a chunk with tables `to` (its layout,
// saved types and names added to `to`). Sections other than PROP move unchanged. NewerVersion for
// a record kind or a section other than PROP and EXTR this version does not know (their bytes
// may refer to the old tables).
Result<Record> MoveRecord(const ChunkTables& from, const Record& record, ChunkTables* to);

}  // namespace rolly::record

#endif  // ROLLY_RECORD_VALUE_TREE_H_
