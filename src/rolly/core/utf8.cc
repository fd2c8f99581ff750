// UTF-8 validation after the well-formed byte sequences table of the Unicode standard (3.9).

#include "rolly/core/utf8.h"

#include <cstdint>
#include <cstring>

namespace rolly {

std::optional<std::size_t> CountCodePoints(std::string_view text) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t n = text.size();
  std::size_t count = 0;
  std::size_t i = 0;
  while (i < n) {
    // Eight ASCII bytes at a time: the common case of names and labels.
    if (n - i >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        count += 8;
        continue;
      }
    }
    const std::uint8_t b = p[i];
    if (b < 0x80) {
      ++i;
      ++count;
      continue;
    }
    std::size_t len;
    std::uint8_t lo = 0x80, hi = 0xBF;  // range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;  // no overlong forms
      if (b == 0xED) hi = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;  // no overlong forms
      if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return std::nullopt;
    }
    if (n - i < len) return std::nullopt;
    if (p[i + 1] < lo || p[i + 1] > hi) return std::nullopt;
    for (std::size_t k = 2; k < len; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return std::nullopt;
    }
    i += len;
    ++count;
  }
  return count;
}

bool IsValidUtf8(std::string_view text) { return CountCodePoints(text).has_value(); }

}  // namespace rolly
