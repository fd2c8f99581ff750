// Checksum: a 64-bit XXH3 digest as a strong type. Two checksums compare equal or not; there is
// no ordering and no arithmetic, so a checksum is never mistaken for a size or an offset.
//
// XXH3-64 (seed 0) detects accidental damage: torn writes, flipped bits, truncation. It is not a
// signature: anyone can recompute it, which is why every reader also checks sizes and bounds.
//
// Thread rules: plain values and pure functions; a ChecksumBuilder is used by one thread at a time.

#ifndef ROLLY_CORE_CHECKSUM_H_
#define ROLLY_CORE_CHECKSUM_H_

#include <cstdint>
#include <memory>
#include <string>

#include "rolly/core/bytes.h"

namespace rolly {

class Checksum {
 public:
  // The checksum of no bytes at all.
  Checksum();

  // XXH3-64 of `bytes`.
  static Checksum Of(ByteView bytes);
  // A checksum as stored in a file (little-endian u64 there).
  static Checksum FromBits(std::uint64_t bits) { return Checksum(bits); }

  // The bits to store in a file.
  std::uint64_t bits() const { return bits_; }
  // Sixteen lower-case hex digits, for people and tools.
  std::string ToHex() const;

  friend bool operator==(Checksum a, Checksum b) { return a.bits_ == b.bits_; }

 private:
  explicit Checksum(std::uint64_t bits) : bits_(bits) {}
  std::uint64_t bits_;
};

// The checksum of bytes given in pieces; equal to Checksum::Of their concatenation.
class ChecksumBuilder {
 public:
  ChecksumBuilder();
  ~ChecksumBuilder();
  ChecksumBuilder(const ChecksumBuilder&) = delete;
  ChecksumBuilder& operator=(const ChecksumBuilder&) = delete;

  ChecksumBuilder& Add(ByteView bytes);
  Checksum Finish() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rolly

#endif  // ROLLY_CORE_CHECKSUM_H_
