// ByteReader's out-of-line reads, ByteWriter's patch and ByteSink's growth.

#include "rolly/core/bytes.h"

#include <cassert>
#include <utility>

namespace rolly {

void ByteWriter::PatchU64(std::size_t offset, std::uint64_t v) {
  // Invariant: the caller wrote these 8 bytes before patching them.
  assert(offset + 8 <= out_->size());
  StoreU64(out_->data() + offset, v);
}

ByteSink::ByteSink(ByteSink&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

ByteSink& ByteSink::operator=(ByteSink&& other) noexcept {
  if (this != &other) {
    delete[] data_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

ByteSink::~ByteSink() { delete[] data_; }

void ByteSink::Grow(std::size_t n) {
  const std::size_t want = std::max({size_ + n, 2 * capacity_, std::size_t{64}});
  // Uninitialized: only the bytes below size_ are ever read.
  auto* grown = new std::uint8_t[want];
  if (size_ != 0) std::memcpy(grown, data_, size_);
  delete[] data_;
  data_ = grown;
  capacity_ = want;
}

bool ByteReader::SlowVarint(std::uint64_t* v) {
  if (!ok_) return false;
  std::uint64_t result = 0;
  for (int shift = 0, i = 0; i < 10; ++i, shift += 7) {
    if (pos_ >= bytes_.size()) return Fail();
    const std::uint8_t byte = bytes_[pos_++];
    // The tenth byte may carry only the top bit of a 64-bit value.
    if (i == 9 && byte > 1) return Fail();
    result |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      // Shortest form only: a last byte of zero after others is an overlong encoding.
      if (byte == 0 && i > 0) return Fail();
      *v = result;
      return true;
    }
  }
  return Fail();
}

bool ByteReader::LengthPrefixed(std::size_t max_size, std::string_view* out) {
  ByteView b;
  if (!LengthPrefixed(max_size, &b)) return false;
  *out = AsChars(b);
  return true;
}

}  // namespace rolly
