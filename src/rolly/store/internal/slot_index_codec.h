// The bytes of a slot index's SIDX chunk (docs/storage.md, "The slot index"), encoded and decoded
// in one form with every count and length bounded. Internal to the store layer.
//
// Thread rules: pure functions.

#ifndef ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_
#define ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_

#include <cstddef>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/store/store.h"

namespace rolly::store_internal {

// The most slots one index lists.
inline constexpr std::size_t kMaxIndexedSlots = 65536;

// Appends the entries, which are sorted by slot name with names unique.
void EncodeSlotIndex(const std::vector<store::SlotInfo>& slots, Bytes* out);

// Decodes SIDX bytes; Damaged ("slot index: ...") when they are not in the one form.
Result<std::vector<store::SlotInfo>> DecodeSlotIndex(ByteView bytes);

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_
