// Capturing an object: its saved fields (through its class's plan) and its save-extra bytes as a
// record of a chunk, adding the class's layout, the saved types and the names the values use to
// the chunk's tables (docs/records.md).
//
// Capture reads the object only; the game's pre-save and saved hooks are the caller's to run.
// Values are written straight from the fields' addresses by their descriptors: no look-up or
// allocation per property beyond the names table's look-up of a name or enum value's name.
//
// Thread rules: one thread per ChunkTables; the object must not change during the call.

#ifndef ROLLY_RECORD_CAPTURE_H_
#define ROLLY_RECORD_CAPTURE_H_

#include "rolly/core/guid.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {

// The record of `object` (an object of `cls`, as `cls`): PROP with every saved field in plan
// order, then EXTR when the class or a base has a save-extra hook. InvalidData, naming the class
// and field, for a value a reader would refuse (a string past 1,048,576 bytes or not UTF-8, an
// enum number without a registered name, a value nested past 64 levels, a kind this version does
// not save). After a failure `tables` may hold a partly added layout: discard them.
Result<Record> CaptureObject(const reflect::ClassInfo& cls, const void* object, Guid subject,
                             RecordKind kind, ChunkTables* tables);

}  // namespace rolly::record

#endif  // ROLLY_RECORD_CAPTURE_H_
