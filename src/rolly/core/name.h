// Name: an interned string that keeps its case. Two Names are equal exactly when their texts are
// equal byte for byte, so "Door" and "door" are different names; EqualsIgnoreCase compares the
// way people read them. Comparing and hashing a Name costs a pointer compare.
//
// Interned texts live until the process ends; do not intern data read from files before it is
// accepted (the record layer reads a file's names without interning them, and interns one only
// as a value it hands to the game). The empty text is the None name.
//
// Thread rules: Names may be made, copied and compared from any thread.

#ifndef ROLLY_CORE_NAME_H_
#define ROLLY_CORE_NAME_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rolly {

class Name {
 public:
  // The None name (empty text).
  Name() = default;
  // Interns `text`.
  explicit Name(std::string_view text);

  // The Name of `text` when it was already interned; nullopt otherwise (interns nothing).
  static std::optional<Name> Find(std::string_view text);

  std::string_view view() const;
  std::string str() const { return std::string(view()); }
  bool is_none() const { return entry_ == nullptr; }
  // A number unique to this name within the process (0 for None); not stable across runs.
  std::uint32_t id() const;
  // Whether the text is valid UTF-8 without NUL (what a save's strings must be); known from when
  // it was interned, so asking costs no scan. True for None.
  bool is_plain_text() const;

  // True when the texts are equal ignoring ASCII case.
  bool EqualsIgnoreCase(Name other) const;

  friend bool operator==(Name a, Name b) { return a.entry_ == b.entry_; }
  // Orders by text, so sorted output does not depend on interning order.
  friend std::strong_ordering operator<=>(Name a, Name b) { return a.view() <=> b.view(); }

  // An interned text, made once and never changed or freed (name.cc's table owns them). Here so
  // that reading a Name's text, number or plainness is inline: saves and loads ask for them per
  // value.
  struct Entry {
    std::string text;
    std::uint32_t id;
    // Valid UTF-8 without NUL, found once when interned.
    bool plain_text;
  };

 private:
  explicit Name(const Entry* entry) : entry_(entry) {}
  const Entry* entry_ = nullptr;
};

inline std::string_view Name::view() const {
  // None's text is "", whose data() is not null (memcpy callers rely on that).
  return entry_ ? std::string_view(entry_->text) : std::string_view("", 0);
}
inline std::uint32_t Name::id() const { return entry_ ? entry_->id : 0; }
inline bool Name::is_plain_text() const { return entry_ == nullptr || entry_->plain_text; }

}  // namespace rolly

template <>
struct std::hash<rolly::Name> {
  std::size_t operator()(rolly::Name n) const noexcept { return n.id() * 0x9E3779B97F4A7C15ull; }
};

#endif  // ROLLY_CORE_NAME_H_
