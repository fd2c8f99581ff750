// Byte buffers: a writer that appends little-endian numbers, varints and strings (ByteWriter over
// Bytes, or ByteSink, its own buffer written at a cursor), and a bounded reader that takes them
// back without ever reading past its bytes.
//
// Every multi-byte number is little-endian. A varint is LEB128: seven bits a byte, low bits
// first, the high bit set on every byte but the last. The reader accepts only the shortest form
// of a varint (the one the writer makes), so bytes that decode also encode back to themselves.
//
// Thread rules: a writer or reader is used by one thread at a time; neither holds global state.

#ifndef ROLLY_CORE_BYTES_H_
#define ROLLY_CORE_BYTES_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rolly {

// Owned bytes.
using Bytes = std::vector<std::uint8_t>;
// A view of bytes someone else owns.
using ByteView = std::span<const std::uint8_t>;

inline ByteView AsBytes(std::string_view s) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}
inline std::string_view AsChars(ByteView b) {
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}

// The number of bytes the varint encoding of `value` takes (1 to 10).
inline std::size_t VarintSize(std::uint64_t value) {
  std::size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

// Maps signed to unsigned so that small magnitudes stay small (0, -1, 1, -2 -> 0, 1, 2, 3).
inline std::uint64_t ZigZagEncode(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t ZigZagDecode(std::uint64_t v) {
  return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

// Little-endian loads and stores of integers: one move on a little-endian machine (a
// byte loop is not always merged into one by the compiler), the bytes in order elsewhere.
template <typename T>
inline T LoadLE(const std::uint8_t* p) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "integers only");
  T r = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&r, p, sizeof r);
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      r |= static_cast<T>(static_cast<T>(p[i]) << (8 * i));
    }
  }
  return r;
}
template <typename T>
inline void StoreLE(std::uint8_t* p, T v) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "integers only");
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof v);
  } else {
    for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
}

// Appends to a Bytes it does not own. The target must outlive the writer.
class ByteWriter {
 public:
  explicit ByteWriter(Bytes* out) : out_(out) {}

  std::size_t size() const { return out_->size(); }

  void U8(std::uint8_t v) { out_->push_back(v); }
  void U16(std::uint16_t v) { Fixed(v); }
  void U32(std::uint32_t v) { Fixed(v); }
  void U64(std::uint64_t v) { Fixed(v); }
  void I64(std::int64_t v) { Fixed(static_cast<std::uint64_t>(v)); }
  void F32(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    Fixed(bits);
  }
  void F64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    Fixed(bits);
  }
  void Varint(std::uint64_t v) {
    if (v < 0x80) {
      out_->push_back(static_cast<std::uint8_t>(v));
      return;
    }
    std::uint8_t buf[10];
    std::size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<std::uint8_t>(v);
    Append(buf, n);
  }
  void SignedVarint(std::int64_t v) { Varint(ZigZagEncode(v)); }
  void Raw(ByteView bytes) { Append(bytes.data(), bytes.size()); }
  void Raw(std::string_view s) { Raw(AsBytes(s)); }
  // A varint length, then the bytes.
  void LengthPrefixed(ByteView bytes) {
    Varint(bytes.size());
    Raw(bytes);
  }
  void LengthPrefixed(std::string_view s) { LengthPrefixed(AsBytes(s)); }

  // Overwrites 8 bytes at `offset`, which were written before (used to fill in checksums).
  void PatchU64(std::size_t offset, std::uint64_t v);

 private:
  template <typename T>
  void Fixed(T v) {
    std::uint8_t p[sizeof(T)];
    StoreLE(p, v);
    Append(p, sizeof(T));
  }
  // Grows the buffer geometrically, then copies the bytes in at the end. A range insert, not
  // resize + memcpy: resize value-initializes the new bytes first, one by one for small counts,
  // which cost more than the copy itself in every capture's small writes.
  void Append(const std::uint8_t* data, std::size_t n) {
    const std::size_t at = out_->size();
    if (out_->capacity() - at < n) out_->reserve(std::max(at + n, 2 * out_->capacity()));
    out_->insert(out_->end(), data, data + n);
  }

  Bytes* out_;
};

// A growable buffer written at a cursor, for the paths that append many small values (a capture
// writes tens of millions). It writes the same bytes as ByteWriter; an append is a bounds check
// and a copy, where ByteWriter goes through std::vector's insert. The buffer grows geometrically
// and its spare room is left uninitialized (nothing reads it). Move-only.
class ByteSink {
 public:
  ByteSink() = default;
  ByteSink(ByteSink&&) noexcept;
  ByteSink& operator=(ByteSink&&) noexcept;
  ~ByteSink();

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The bytes the buffer holds room for before it grows again.
  std::size_t capacity() const { return capacity_; }
  std::uint8_t* data() { return data_; }
  const std::uint8_t* data() const { return data_; }
  ByteView view() const { return ByteView(data_, size_); }
  // Forgets the bytes, keeping the room.
  void clear() { size_ = 0; }
  // Drops the bytes after the first `size` (at most size()).
  void Truncate(std::size_t size) { size_ = std::min(size, size_); }
  // Makes room for `n` more bytes: no later append of at most `n` bytes grows the buffer (a
  // Varint of more than one byte, or with no room left, asks for 10, however few it writes).
  void Reserve(std::size_t n) {
    if (capacity_ - size_ < n) Grow(n);
  }
  // `n` more bytes at the end, for the caller to fill: a pointer to the first.
  std::uint8_t* Extend(std::size_t n) {
    Reserve(n);
    std::uint8_t* p = data_ + size_;
    size_ += n;
    return p;
  }

  void U8(std::uint8_t v) { *Extend(1) = v; }
  void U16(std::uint16_t v) { StoreLE(Extend(2), v); }
  void U32(std::uint32_t v) { StoreLE(Extend(4), v); }
  void U64(std::uint64_t v) { StoreLE(Extend(8), v); }
  void I64(std::int64_t v) { U64(static_cast<std::uint64_t>(v)); }
  void F32(float v) { U32(std::bit_cast<std::uint32_t>(v)); }
  void F64(double v) { U64(std::bit_cast<std::uint64_t>(v)); }
  void Varint(std::uint64_t v) {
    // Most varints written are one byte (counts, table indexes): that case inline, the rest in
    // VarintLong.
    if (v < 0x80 && size_ < capacity_) {
      data_[size_++] = static_cast<std::uint8_t>(v);
      return;
    }
    VarintLong(v);
  }
  void SignedVarint(std::int64_t v) { Varint(ZigZagEncode(v)); }
  void Raw(ByteView bytes) {
    if (bytes.empty()) return;  // a null data() is never handed to memcpy
    std::memcpy(Extend(bytes.size()), bytes.data(), bytes.size());
  }
  void Raw(std::string_view s) { Raw(AsBytes(s)); }
  void LengthPrefixed(ByteView bytes) {
    Varint(bytes.size());
    Raw(bytes);
  }
  void LengthPrefixed(std::string_view s) { LengthPrefixed(AsBytes(s)); }

  // A copy of the bytes, as Bytes.
  Bytes ToBytes() const { return Bytes(data_, data_ + size_); }

 private:
  // Varint's bytes past the inline case: any value, room made first.
  void VarintLong(std::uint64_t v) {
    Reserve(10);
    std::uint8_t* p = data_ + size_;
    std::uint8_t* const first = p;
    while (v >= 0x80) {
      *p++ = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<std::uint8_t>(v);
    size_ += static_cast<std::size_t>(p - first);
  }
  // Grows to room for at least `n` more bytes: twice the capacity, or more when `n` asks.
  void Grow(std::size_t n);

  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// Reads from bytes it does not own, never past their end. Each read returns false and leaves the
// reader failed (every later read fails too) when the bytes run out or are not in the one form
// the writer makes; the value read is then unspecified. Check ok() or each return.
class ByteReader {
 public:
  explicit ByteReader(ByteView bytes) : bytes_(bytes) {}

  bool ok() const { return ok_; }
  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return ok_ ? bytes_.size() - pos_ : 0; }
  bool empty() const { return remaining() == 0; }

  bool U8(std::uint8_t* v) {
    if (!ok_ || pos_ >= bytes_.size()) return Fail();
    *v = bytes_[pos_++];
    return true;
  }
  bool U16(std::uint16_t* v) { return Fixed(v); }
  bool U32(std::uint32_t* v) { return Fixed(v); }
  bool U64(std::uint64_t* v) { return Fixed(v); }
  bool I64(std::int64_t* v) {
    std::uint64_t u;
    if (!U64(&u)) return false;
    *v = static_cast<std::int64_t>(u);
    return true;
  }
  // (F32, F64 and Fixed are forced inline: readers of math types call them many times over,
  // where the compiler would otherwise stop inlining.)
  [[gnu::always_inline]] bool F32(float* v) {
    std::uint32_t bits;
    if (!U32(&bits)) return false;
    std::memcpy(v, &bits, sizeof bits);
    return true;
  }
  [[gnu::always_inline]] bool F64(double* v) {
    std::uint64_t bits;
    if (!U64(&bits)) return false;
    std::memcpy(v, &bits, sizeof bits);
    return true;
  }
  // A varint in its shortest form, up to 64 bits.
  bool Varint(std::uint64_t* v) {
    if (ok_ && pos_ < bytes_.size() && bytes_[pos_] < 0x80) {
      *v = bytes_[pos_++];
      return true;
    }
    return SlowVarint(v);
  }
  // A varint that must be at most `max`.
  bool VarintAtMost(std::uint64_t max, std::uint64_t* v) {
    if (!Varint(v)) return false;
    if (*v > max) return Fail();
    return true;
  }
  bool SignedVarint(std::int64_t* v) {
    std::uint64_t u;
    if (!Varint(&u)) return false;
    *v = ZigZagDecode(u);
    return true;
  }
  // The next `n` bytes, as a view into the reader's bytes.
  bool Raw(std::size_t n, ByteView* out) {
    if (!ok_ || n > bytes_.size() - pos_) return Fail();
    *out = bytes_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  // A varint length of at most `max_size`, then that many bytes, viewed.
  bool LengthPrefixed(std::size_t max_size, ByteView* out) {
    std::uint64_t n;
    if (!VarintAtMost(max_size, &n)) return false;
    return Raw(static_cast<std::size_t>(n), out);
  }
  bool LengthPrefixed(std::size_t max_size, std::string_view* out);
  bool Skip(std::size_t n) {
    ByteView ignored;
    return Raw(n, &ignored);
  }
  // Marks the reader failed (for a caller that found the bytes in a form it refuses).
  bool Fail() {
    ok_ = false;
    return false;
  }

 private:
  bool SlowVarint(std::uint64_t* v);
  template <typename T>
  [[gnu::always_inline]] bool Fixed(T* v) {
    if (!ok_ || sizeof(T) > bytes_.size() - pos_) return Fail();
    const std::uint8_t* b = bytes_.data() + pos_;
    pos_ += sizeof(T);
    *v = LoadLE<T>(b);
    return true;
  }

  ByteView bytes_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Little-endian loads and stores on raw memory, for fixed layouts such as the file prelude.
inline std::uint64_t LoadU64(const std::uint8_t* p) { return LoadLE<std::uint64_t>(p); }
inline std::uint32_t LoadU32(const std::uint8_t* p) { return LoadLE<std::uint32_t>(p); }
inline std::uint16_t LoadU16(const std::uint8_t* p) { return LoadLE<std::uint16_t>(p); }
inline void StoreU64(std::uint8_t* p, std::uint64_t v) { StoreLE(p, v); }
inline void StoreU32(std::uint8_t* p, std::uint32_t v) { StoreLE(p, v); }
inline void StoreU16(std::uint8_t* p, std::uint16_t v) { StoreLE(p, v); }

}  // namespace rolly

#endif  // ROLLY_CORE_BYTES_H_
