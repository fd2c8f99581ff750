// SIDX: a varint count, then per slot its name, title, time, sequence, kind, game data version,
// metadata, size, copy and copy states.

#include "rolly/store/internal/slot_index_codec.h"

#include <fmt/format.h>

#include "rolly/core/utf8.h"
#include "rolly/format/format_constants.h"

namespace rolly::store_internal {
namespace {

using store::CopyState;
using store::SlotInfo;

constexpr std::uint8_t kRecoveredFlag = 1;
constexpr std::size_t kMinEntrySize = 12;

bool ReadString(ByteReader& r, std::size_t max, bool allow_empty, std::string* out) {
  std::string_view s;
  if (!r.LengthPrefixed(max, &s) || (!allow_empty && s.empty()) ||
      s.find('\0') != std::string_view::npos || !IsValidUtf8(s)) {
    return r.Fail();
  }
  out->assign(s);
  return true;
}

bool ReadState(ByteReader& r, CopyState* out) {
  std::uint8_t v;
  if (!r.U8(&v) || v > static_cast<std::uint8_t>(CopyState::kFailed)) return r.Fail();
  *out = static_cast<CopyState>(v);
  return true;
}

}  // namespace

void EncodeSlotIndex(const std::vector<SlotInfo>& slots, Bytes* out) {
  ByteWriter w(out);
  w.Varint(slots.size());
  for (const SlotInfo& s : slots) {
    w.LengthPrefixed(s.slot);
    w.LengthPrefixed(s.title);
    w.SignedVarint(s.save_time_us);
    w.Varint(s.sequence);
    w.Varint(s.kind);
    w.Varint(s.game_data_version);
    w.LengthPrefixed(s.metadata);
    w.Varint(s.size);
    w.U8(static_cast<std::uint8_t>(s.copy));
    w.U8(static_cast<std::uint8_t>(s.state_a));
    w.U8(static_cast<std::uint8_t>(s.state_b));
    w.U8(s.recovered ? kRecoveredFlag : 0);
  }
}

Result<std::vector<SlotInfo>> DecodeSlotIndex(ByteView bytes) {
  ByteReader r(bytes);
  std::uint64_t count;
  if (!r.VarintAtMost(kMaxIndexedSlots, &count) || count > r.remaining() / kMinEntrySize) {
    return DamagedError("slot index: the slot count is not valid");
  }
  std::vector<SlotInfo> slots;
  slots.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    SlotInfo s;
    std::uint64_t kind, gdv;
    ByteView metadata;
    std::uint8_t copy, flags;
    const bool ok =
        ReadString(r, store::kMaxSlotNameSize, false, &s.slot) &&
        ReadString(r, format::kMaxTitleSize, true, &s.title) && r.SignedVarint(&s.save_time_us) &&
        r.Varint(&s.sequence) && r.VarintAtMost(UINT32_MAX, &kind) &&
        r.VarintAtMost(UINT32_MAX, &gdv) && r.LengthPrefixed(format::kMaxMetadataSize, &metadata) &&
        r.Varint(&s.size) && r.U8(&copy) && copy <= 1 && ReadState(r, &s.state_a) &&
        ReadState(r, &s.state_b) && r.U8(&flags) && (flags & ~kRecoveredFlag) == 0;
    if (!ok) return DamagedError(fmt::format("slot index: entry {} is not valid", i));
    if (!slots.empty() && !(slots.back().slot < s.slot)) {
      return DamagedError(fmt::format("slot index: entry {} is out of order or repeated", i));
    }
    s.kind = static_cast<std::uint32_t>(kind);
    s.game_data_version = static_cast<std::uint32_t>(gdv);
    s.metadata.assign(metadata.begin(), metadata.end());
    s.copy = static_cast<store::Copy>(copy);
    s.recovered = (flags & kRecoveredFlag) != 0;
    slots.push_back(std::move(s));
  }
  if (!r.empty()) return DamagedError("slot index: trailing bytes");
  return slots;
}

}  // namespace rolly::store_internal
