// SIDX: a varint count, then per slot its name, title, time, sequence, kind, game data version,
// metadata, size, copy and copy states. One scanner checks every entry in place (views into the
// bytes); listing, checking and merging all go through it.

#include "rolly/store/internal/slot_index_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "rolly/core/utf8.h"
#include "rolly/format/format_constants.h"

namespace rolly::store_internal {
namespace {

using store::CopyState;
using store::SlotInfo;
using store::SlotView;

constexpr std::uint8_t kRecoveredFlag = 1;
// The slot's metadata is larger than a listing carries, and the entry holds none of it.
constexpr std::uint8_t kMetadataNotListedFlag = 2;
constexpr std::uint8_t kKnownFlags = kRecoveredFlag | kMetadataNotListedFlag;
// The smallest entry: a one-byte name (two bytes with its length), then a byte for each other
// field.
constexpr std::size_t kMinEntrySize = 13;


// The hot paths below are forced inline: a listing scans every field of every slot, and a call
// per field keeps the cursor in memory instead of in registers (it made the scan twice as slow).
#define ROLLY_SCAN_INLINE [[gnu::always_inline]] inline

// True when `s` is all ASCII without NUL, eight bytes at a time: the common case, which needs no
// code point walk.
ROLLY_SCAN_INLINE bool IsPlainAscii(std::string_view s) {
  constexpr std::uint64_t kHigh = 0x8080808080808080ull, kLow = 0x0101010101010101ull;
  // A high bit set, or a zero byte.
  auto bad = [](std::uint64_t w) { return (w & kHigh) != 0 || ((w - kLow) & ~w & kHigh) != 0; };
  const char* p = s.data();
  const std::size_t n = s.size();
  if (n >= 8) {
    std::uint64_t w;
    for (std::size_t i = 0; i + 8 <= n; i += 8) {
      std::memcpy(&w, p + i, 8);
      if (bad(w)) return false;
    }
    // The last bytes as one more word, overlapping the ones checked: no byte loop.
    std::memcpy(&w, p + n - 8, 8);
    return !bad(w);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned char>(p[i]);
    if (b == 0 || b >= 0x80) return false;
  }
  return true;
}

std::uint64_t Le64(std::uint64_t w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return __builtin_bswap64(w);
#else
  return w;
#endif
}
std::uint64_t Be64(std::uint64_t w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return w;
#else
  return __builtin_bswap64(w);
#endif
}

// a < b in byte order, as std::string_view compares, eight bytes at a time: every entry is
// checked against the one before it, and a library memcmp call per slot took a quarter of a scan.
ROLLY_SCAN_INLINE bool NameLess(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return Be64(x) < Be64(y);
  }
  for (; i < n; ++i) {
    const auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y;
  }
  return a.size() < b.size();
}

// A varint of three bytes or more at `p` (ByteReader's rules: shortest form, at most ten bytes),
// out of line. Returns the position after it, or null.
[[gnu::noinline]] const std::uint8_t* LongVarint(const std::uint8_t* p, const std::uint8_t* end,
                                                 std::uint64_t* v) {
  if (end - p >= 8) {
    // Up to eight bytes at once: the stop byte is the first without its top bit.
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    w = Le64(w);
    const std::uint64_t stops = ~w & 0x8080808080808080ull;
    if (stops != 0) {
      const int len = (__builtin_ctzll(stops) >> 3) + 1;  // 3 to 8 from Cursor::Varint
      // Shortest form only: a last byte of zero after others is an overlong encoding.
      if (len > 1 && ((w >> (8 * (len - 1))) & 0xFF) == 0) return nullptr;
      std::uint64_t x = len == 8 ? w : w & ((std::uint64_t{1} << (8 * len)) - 1);
      x &= 0x7F7F7F7F7F7F7F7Full;
      x = ((x & 0x7F007F007F007F00ull) >> 1) | (x & 0x007F007F007F007Full);
      x = ((x & 0x3FFF00003FFF0000ull) >> 2) | (x & 0x00003FFF00003FFFull);
      x = ((x & 0x0FFFFFFF00000000ull) >> 4) | (x & 0x000000000FFFFFFFull);
      *v = x;
      return p + len;
    }
  }
  std::uint64_t result = 0;
  for (int shift = 0, i = 0; i < 10; ++i, shift += 7) {
    if (p >= end) return nullptr;
    const std::uint8_t byte = *p++;
    // The tenth byte may carry only the top bit of a 64-bit value.
    if (i == 9 && byte > 1) return nullptr;
    result |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      if (byte == 0 && i > 0) return nullptr;
      *v = result;
      return p;
    }
  }
  return nullptr;
}

// A bounded cursor with ByteReader's rules (varints in shortest form, at most ten bytes), inline
// and over a local copy of the position, so a listing's dozen fields per slot stay in registers.
class Cursor {
 public:
  explicit Cursor(ByteView bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }
  const std::uint8_t* position() const { return p_; }

  ROLLY_SCAN_INLINE bool Varint(std::uint64_t* v) {
    const std::uint8_t* p = p_;
    if (p < end_ && *p < 0x80) {  // one byte: lengths, counts, kinds, states
      *v = *p;
      p_ = p + 1;
      return true;
    }
    if (end_ - p >= 2 && p[1] < 0x80) {  // two bytes: sizes up to 16 KiB
      if (p[1] == 0) return false;       // overlong
      *v = (p[0] & 0x7fu) | (std::uint64_t{p[1]} << 7);
      p_ = p + 2;
      return true;
    }
    p = LongVarint(p, end_, v);
    if (p == nullptr) return false;
    p_ = p;
    return true;
  }
  ROLLY_SCAN_INLINE bool VarintAtMost(std::uint64_t max, std::uint64_t* v) {
    return Varint(v) && *v <= max;
  }
  ROLLY_SCAN_INLINE bool SignedVarint(std::int64_t* v) {
    std::uint64_t u;
    if (!Varint(&u)) return false;
    *v = ZigZagDecode(u);
    return true;
  }
  ROLLY_SCAN_INLINE bool U8(std::uint8_t* v) {
    if (p_ >= end_) return false;
    *v = *p_++;
    return true;
  }
  ROLLY_SCAN_INLINE bool LengthPrefixed(std::size_t max, ByteView* out) {
    std::uint64_t n;
    if (!VarintAtMost(max, &n) || n > remaining()) return false;
    *out = ByteView(p_, static_cast<std::size_t>(n));
    p_ += n;
    return true;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

ROLLY_SCAN_INLINE bool ReadString(Cursor& r, std::size_t max, bool allow_empty,
                                  std::string_view* out) {
  ByteView b;
  if (!r.LengthPrefixed(max, &b) || (!allow_empty && b.empty())) return false;
  const std::string_view s = AsChars(b);
  if (!IsPlainAscii(s) && (s.find('\0') != std::string_view::npos || !IsValidUtf8(s))) {
    return false;
  }
  *out = s;
  return true;
}

ROLLY_SCAN_INLINE bool ReadState(Cursor& r, CopyState* out) {
  std::uint8_t v;
  if (!r.U8(&v) || v > static_cast<std::uint8_t>(CopyState::kFailed)) return false;
  *out = static_cast<CopyState>(v);
  return true;
}

// Walks the entries in order, checking each and their order; status() says why it stopped early.
class Scanner {
 public:
  explicit Scanner(ByteView bytes) : r_(bytes) {
    if (!r_.VarintAtMost(kMaxIndexedSlots, &count_) || count_ > r_.remaining() / kMinEntrySize) {
      status_ = DamagedError("slot index: the slot count is not valid");
    }
  }

  std::uint64_t count() const { return count_; }
  const Status& status() const { return status_; }

  // The next entry, and its bytes in `encoded` when given; false at the end (status() Ok when
  // every byte was an entry) or on damage.
  ROLLY_SCAN_INLINE bool Next(SlotView* e, ByteView* encoded = nullptr) {
    if (!status_.ok()) return false;
    if (next_ == count_) {
      if (r_.remaining() != 0) status_ = DamagedError("slot index: trailing bytes");
      return false;
    }
    Cursor r = r_;  // a local copy, kept in registers
    const std::uint8_t* start = r.position();
    std::uint64_t kind, gdv;
    std::uint8_t copy, flags;
    const bool ok = ReadString(r, store::kMaxSlotNameSize, false, &e->slot) &&
                    ReadString(r, format::kMaxTitleSize, true, &e->title) &&
                    r.SignedVarint(&e->save_time_us) && r.Varint(&e->sequence) &&
                    r.VarintAtMost(UINT32_MAX, &kind) && r.VarintAtMost(UINT32_MAX, &gdv) &&
                    r.LengthPrefixed(store::kMaxListedMetadataSize, &e->metadata) &&
                    r.Varint(&e->size) && r.U8(&copy) && copy <= 1 && ReadState(r, &e->state_a) &&
                    ReadState(r, &e->state_b) && r.U8(&flags) && (flags & ~kKnownFlags) == 0 &&
                    ((flags & kMetadataNotListedFlag) == 0 || e->metadata.empty());
    r_ = r;
    if (!ok) {
      status_ = DamagedError(fmt::format("slot index: entry {} is not valid", next_));
      return false;
    }
    if (next_ > 0 && !NameLess(previous_, e->slot)) {
      status_ =
          DamagedError(fmt::format("slot index: entry {} is out of order or repeated", next_));
      return false;
    }
    e->kind = static_cast<std::uint32_t>(kind);
    e->game_data_version = static_cast<std::uint32_t>(gdv);
    e->copy = static_cast<store::Copy>(copy);
    e->recovered = (flags & kRecoveredFlag) != 0;
    e->metadata_listed = (flags & kMetadataNotListedFlag) == 0;
    if (encoded != nullptr) {
      *encoded = ByteView(start, static_cast<std::size_t>(r.position() - start));
    }
    previous_ = e->slot;
    ++next_;
    return true;
  }

 private:
  Cursor r_;
  std::uint64_t count_ = 0;
  std::uint64_t next_ = 0;
  std::string_view previous_;
  Status status_;
};

void EncodeEntry(const SlotInfo& s, ByteWriter& w) {
  const bool listed = s.metadata_listed && s.metadata.size() <= store::kMaxListedMetadataSize;
  w.LengthPrefixed(s.slot);
  w.LengthPrefixed(s.title);
  w.SignedVarint(s.save_time_us);
  w.Varint(s.sequence);
  w.Varint(s.kind);
  w.Varint(s.game_data_version);
  w.LengthPrefixed(listed ? ByteView(s.metadata) : ByteView());
  w.Varint(s.size);
  w.U8(static_cast<std::uint8_t>(s.copy));
  w.U8(static_cast<std::uint8_t>(s.state_a));
  w.U8(static_cast<std::uint8_t>(s.state_b));
  w.U8(static_cast<std::uint8_t>((s.recovered ? kRecoveredFlag : 0) |
                                 (listed ? 0 : kMetadataNotListedFlag)));
}

}  // namespace

void EncodeSlotIndex(const std::vector<SlotInfo>& slots, Bytes* out) {
  ByteWriter w(out);
  w.Varint(slots.size());
  for (const SlotInfo& s : slots) EncodeEntry(s, w);
}

Status ScanSlotIndex(ByteView bytes, std::vector<SlotView>* out) {
  Scanner scan(bytes);
  ROLLY_RETURN_IF_ERROR(scan.status());
  out->clear();
  // The count is bounded by the bytes (every entry takes kMinEntrySize or more): no reserve past
  // what the bytes could hold.
  out->reserve(scan.count());
  SlotView e;
  while (scan.Next(&e)) out->push_back(e);
  return scan.status();
}

Status CheckSlotIndex(ByteView bytes) {
  Scanner scan(bytes);
  SlotView e;
  while (scan.Next(&e)) {
  }
  return scan.status();
}

Result<store::SlotList> MakeSlotList(std::shared_ptr<const Bytes> sidx) {
  std::vector<SlotView> slots;
  ROLLY_RETURN_IF_ERROR(ScanSlotIndex(*sidx, &slots));
  return SlotListAccess::Make(std::move(sidx), std::move(slots));
}

Status TooManySlots(std::size_t count) {
  return StorageFailedError(fmt::format("{} slots, more than the {} a slot index lists", count,
                                        kMaxIndexedSlots));
}

Status MergeSlotIndex(ByteView bytes, const std::map<std::string, std::optional<SlotInfo>>& changes,
                      Bytes* out) {
  Scanner scan(bytes);
  ROLLY_RETURN_IF_ERROR(scan.status());
  Bytes body;
  body.reserve(bytes.size() + 256 * changes.size());
  ByteWriter w(&body);
  std::uint64_t count = 0;
  auto change = changes.begin();
  // The changes before `slot` (all that are left when null) go in, in order.
  auto put_changes_before = [&](const std::string_view* slot) {
    for (; change != changes.end() && (slot == nullptr || change->first < *slot); ++change) {
      if (change->second) {
        EncodeEntry(*change->second, w);
        ++count;
      }
    }
  };
  SlotView e;
  ByteView encoded;
  while (scan.Next(&e, &encoded)) {
    put_changes_before(&e.slot);
    if (change != changes.end() && change->first == e.slot) {
      if (change->second) {
        EncodeEntry(*change->second, w);
        ++count;
      }
      ++change;
      continue;
    }
    body.insert(body.end(), encoded.begin(), encoded.end());
    ++count;
  }
  ROLLY_RETURN_IF_ERROR(scan.status());
  put_changes_before(nullptr);
  if (count > kMaxIndexedSlots) return TooManySlots(count);
  out->clear();
  out->reserve(body.size() + 10);
  ByteWriter(out).Varint(count);
  out->insert(out->end(), body.begin(), body.end());
  return OkStatus();
}

}  // namespace rolly::store_internal
