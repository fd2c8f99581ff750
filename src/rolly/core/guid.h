// Guid: a 128-bit identifier, the stable identity of saved objects and the key of custom versions.
//
// Written in files as 16 bytes (the two halves, each little-endian u64, high half first) and shown
// to people as 32 hex digits in the 8-4-4-4-12 form. The all-zero Guid means "none".
//
// Thread rules: plain values; Guid::Random() is safe from any thread.

#ifndef ROLLY_CORE_GUID_H_
#define ROLLY_CORE_GUID_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rolly {

class Guid {
 public:
  // The none Guid (all zero).
  constexpr Guid() = default;
  constexpr Guid(std::uint64_t high, std::uint64_t low) : high_(high), low_(low) {}

  // A new random (version 4) Guid from a per-thread generator seeded from the system's entropy.
  static Guid Random();
  // Parses the 8-4-4-4-12 form (either case); nullopt for anything else.
  static std::optional<Guid> Parse(std::string_view text);

  std::uint64_t high() const { return high_; }
  std::uint64_t low() const { return low_; }
  bool is_none() const { return high_ == 0 && low_ == 0; }
  // Lower-case 8-4-4-4-12 form.
  std::string ToString() const;

  friend constexpr auto operator<=>(const Guid&, const Guid&) = default;

 private:
  std::uint64_t high_ = 0;
  std::uint64_t low_ = 0;
};

}  // namespace rolly

template <>
struct std::hash<rolly::Guid> {
  std::size_t operator()(const rolly::Guid& g) const noexcept {
    return static_cast<std::size_t>(g.high() * 0x9E3779B97F4A7C15ull ^ g.low());
  }
};

#endif  // ROLLY_CORE_GUID_H_
