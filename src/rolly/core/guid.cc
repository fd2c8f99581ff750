// Guid: random generation, parsing and printing.

#include "rolly/core/guid.h"

#include <fmt/format.h>

#include <random>

namespace rolly {

Guid Guid::Random() {
  thread_local std::mt19937_64 engine = [] {
    std::random_device device;
    std::seed_seq seq{device(), device(), device(), device(), device(), device(), device(),
                      device()};
    return std::mt19937_64(seq);
  }();
  std::uint64_t high = engine();
  std::uint64_t low = engine();
  // RFC 4122 version 4, variant 1.
  high = (high & ~0xF000ull) | 0x4000ull;
  low = (low & ~(0xC0ull << 56)) | (0x80ull << 56);
  if (high == 0 && low == 0) low = 1;
  return Guid(high, low);
}

std::optional<Guid> Guid::Parse(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  std::uint64_t halves[2] = {0, 0};
  int digit = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return std::nullopt;
      continue;
    }
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    std::uint64_t& half = halves[digit / 16];
    half = (half << 4) | static_cast<std::uint64_t>(v);
    ++digit;
  }
  return Guid(halves[0], halves[1]);
}

std::string Guid::ToString() const {
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high_ >> 32, (high_ >> 16) & 0xFFFF,
                     high_ & 0xFFFF, low_ >> 48, low_ & 0xFFFFFFFFFFFFull);
}

}  // namespace rolly
