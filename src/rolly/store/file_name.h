// FileName: the only names a backend ever sees. Each is made by the library's own rules, for a
// slot, a profile or a prefix's slot index, and for one of the two copies every file keeps, so a
// backend never touches a file of another name (the game's own files, other programs' files).
//
//   <prefix>.slot.<stem>.<a|b>.rsav       a slot's two copies
//   <prefix>.profile.<stem>.<a|b>.rsav    a player profile's two copies
//   <prefix>.index.<a|b>.rsav             the prefix's slot index, also in two copies
//
// The prefix is 1 to 32 characters of [a-z0-9_-]. The stem encodes the slot name or profile key
// so that names differing only in case stay apart on file systems that ignore case: characters of
// [a-z0-9_-] stand as they are, an upper-case ASCII letter is written as '^' and its lower case,
// and every other byte as '~' and two lower-case hex digits. A stem longer than 160 characters is
// cut at 120 and followed by "~~" and the 16 hex digits of the name's XXH3, so names of any length
// fit every file system; such a stem cannot be turned back into the name (the file's header holds
// it).
//
// Thread rules: plain values and pure functions.

#ifndef ROLLY_STORE_FILE_NAME_H_
#define ROLLY_STORE_FILE_NAME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rolly/core/status.h"

namespace rolly::store {

enum class FileKind : std::uint8_t { kSlot, kProfile, kIndex };

// Which of a file's two copies.
enum class Copy : std::uint8_t { kA = 0, kB = 1 };

inline Copy OtherCopy(Copy c) { return c == Copy::kA ? Copy::kB : Copy::kA; }
inline char CopyLetter(Copy c) { return c == Copy::kA ? 'a' : 'b'; }

// The longest slot name or profile key, in bytes of UTF-8.
inline constexpr std::size_t kMaxSlotNameSize = 4096;
inline constexpr std::size_t kMaxPrefixSize = 32;

class FileName {
 public:
  // A slot's copy. InvalidInput for a prefix outside the rules, or a slot name that is empty,
  // above kMaxSlotNameSize bytes, not UTF-8, or holding NUL.
  static Result<FileName> ForSlot(std::string_view prefix, std::string_view slot, Copy copy);
  // A profile's copy; the key follows the slot name's rules.
  static Result<FileName> ForProfile(std::string_view prefix, std::string_view key, Copy copy);
  // The prefix's slot index copy.
  static Result<FileName> ForIndex(std::string_view prefix, Copy copy);
  // The FileName whose text is `text`, when `text` was made by these rules; nullopt otherwise.
  static std::optional<FileName> Parse(std::string_view text);

  // The text a backend uses (a file name, a row key).
  const std::string& str() const { return text_; }
  FileKind kind() const { return kind_; }
  Copy copy() const { return copy_; }
  std::string_view prefix() const;
  // The encoded slot name or profile key; empty for an index.
  std::string_view stem() const;
  // The same file's other copy.
  FileName Other() const;
  // The name of the file regardless of copy ("<prefix>.slot.<stem>"), for per-file queues.
  std::string_view base() const;

  friend bool operator==(const FileName& a, const FileName& b) { return a.text_ == b.text_; }
  friend bool operator<(const FileName& a, const FileName& b) { return a.text_ < b.text_; }

 private:
  FileName(std::string text, FileKind kind, Copy copy, std::size_t prefix_size,
           std::size_t stem_size);

  std::string text_;
  FileKind kind_ = FileKind::kSlot;
  Copy copy_ = Copy::kA;
  std::size_t prefix_size_ = 0;
  std::size_t stem_size_ = 0;
};

// The stem of a slot name or profile key (see above). The name must be valid (as ForSlot checks).
std::string EncodeStem(std::string_view name);

// The slot name a stem encodes; nullopt for a cut stem or text that is not a stem.
std::optional<std::string> DecodeStem(std::string_view stem);

}  // namespace rolly::store

#endif  // ROLLY_STORE_FILE_NAME_H_
