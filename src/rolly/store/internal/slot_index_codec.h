// The bytes of a slot index's SIDX chunk (docs/storage.md, "The slot index"), encoded and decoded
// in one form with every count and length bounded. Internal to the store layer.
//
// The store keeps an index as its SIDX bytes (one buffer, no allocation per slot): it checks them
// once when read, merges each batch of changes into new bytes (MergeSlotIndex), and decodes them
// into SlotInfos only for a listing (DecodeSlotIndex).
//
// Thread rules: pure functions.

#ifndef ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_
#define ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/store/store.h"

namespace rolly::store_internal {

// The most slots one index lists.
inline constexpr std::size_t kMaxIndexedSlots = 65536;

// One entry as it lies in SIDX bytes: views into them, nothing allocated.
struct SlotIndexEntry {
  std::string_view slot;
  std::string_view title;
  std::int64_t save_time_us = 0;
  std::uint64_t sequence = 0;
  std::uint32_t kind = 0;
  std::uint32_t game_data_version = 0;
  ByteView metadata;
  std::uint64_t size = 0;
  store::Copy copy = store::Copy::kA;
  store::CopyState state_a = store::CopyState::kMissing;
  store::CopyState state_b = store::CopyState::kMissing;
  bool recovered = false;
  ByteView encoded;  // the whole entry
};

// Appends the entries, which are sorted by slot name with names unique.
void EncodeSlotIndex(const std::vector<store::SlotInfo>& slots, Bytes* out);

// Decodes SIDX bytes; Damaged ("slot index: ...") when they are not in the one form.
Result<std::vector<store::SlotInfo>> DecodeSlotIndex(ByteView bytes);

// Checks SIDX bytes as DecodeSlotIndex does and lists their entries (views into `bytes`) in
// `entries`: Ok or the same Damaged. With ToSlotInfo, a decode split across threads.
Status ScanSlotIndex(ByteView bytes, std::vector<SlotIndexEntry>* entries);

// The SlotInfo of an entry (its own copies of the strings and metadata).
store::SlotInfo ToSlotInfo(const SlotIndexEntry& entry);

// Checks SIDX bytes as DecodeSlotIndex does, allocating nothing: Ok or the same Damaged.
Status CheckSlotIndex(ByteView bytes);

// Writes to `out` (replacing its content) the SIDX bytes of `bytes` with `changes` applied: a slot
// mapped to an entry gets it (added or replaced), a slot mapped to nullopt is removed (nothing
// when absent). Entries not changed are copied as they are. Damaged as DecodeSlotIndex when
// `bytes` are not in the one form.
Status MergeSlotIndex(ByteView bytes,
                      const std::map<std::string, std::optional<store::SlotInfo>>& changes,
                      Bytes* out);

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_INTERNAL_SLOT_INDEX_CODEC_H_
