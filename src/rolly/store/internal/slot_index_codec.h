// The bytes of a slot index's SIDX chunk (docs/storage.md, "The slot index"), encoded and decoded
// in one form with every count and length bounded. Internal to the store layer.
//
// The store keeps an index as its SIDX bytes (one buffer, no allocation per slot): it checks them
// once when read, merges each batch of changes into new bytes (MergeSlotIndex), and hands a
// listing views into them (MakeSlotList).
//
// Thread rules: pure functions.

#ifndef ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_
#define ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/format/format_constants.h"
#include "rolly/store/store.h"

namespace rolly::store_internal {

// The most slots one index lists.
inline constexpr std::size_t kMaxIndexedSlots = 65536;

// The largest entry: the name, title and metadata at their bounds with two-byte lengths, the
// 64-bit varints at ten bytes and the 32-bit ones at five, and the four bytes at the end.
inline constexpr std::uint64_t kMaxSlotIndexEntrySize =
    (2 + store::kMaxSlotNameSize) + (2 + format::kMaxTitleSize) + 10 + 10 + 5 + 5 +
    (2 + store::kMaxListedMetadataSize) + 10 + 4;
// An index of every slot a prefix may hold, each at its largest (and the count's three bytes),
// is a valid chunk: an index write never fails for its size.
static_assert(3 + kMaxIndexedSlots * kMaxSlotIndexEntrySize <= format::kMaxDecodedTotal);

// Appends the entries, which are sorted by slot name with names unique.
void EncodeSlotIndex(const std::vector<store::SlotInfo>& slots, Bytes* out);

// Checks SIDX bytes and lists their entries as views into `bytes` in `out` (replacing what it
// held): Ok, or Damaged ("slot index: ...") when they are not in the one form.
Status ScanSlotIndex(ByteView bytes, std::vector<store::SlotView>* out);

// Checks SIDX bytes as ScanSlotIndex does, allocating nothing: Ok or the same Damaged.
Status CheckSlotIndex(ByteView bytes);

// A SlotList over `sidx` (not null), which it shares: checked as ScanSlotIndex checks.
Result<store::SlotList> MakeSlotList(std::shared_ptr<const Bytes> sidx);

// StorageFailed for an index that would list `count` slots, past kMaxIndexedSlots.
Status TooManySlots(std::size_t count);

// Writes to `out` (replacing its content) the SIDX bytes of `bytes` with `changes` applied: a slot
// mapped to an entry gets it (added or replaced), a slot mapped to nullopt is removed (nothing
// when absent). Entries not changed are copied as they are. Damaged as ScanSlotIndex when
// `bytes` are not in the one form; TooManySlots (`out` untouched) when the result would list
// more than kMaxIndexedSlots.
Status MergeSlotIndex(ByteView bytes,
                      const std::map<std::string, std::optional<store::SlotInfo>>& changes,
                      Bytes* out);

// The one way into a SlotList's members, for MakeSlotList.
struct SlotListAccess {
  static store::SlotList Make(std::shared_ptr<const Bytes> bytes,
                              std::vector<store::SlotView> slots) {
    store::SlotList list;
    list.bytes_ = std::move(bytes);
    list.slots_ = std::move(slots);
    return list;
  }
};

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_
