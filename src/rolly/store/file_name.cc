// FileName: making, parsing and encoding the names a backend may see.

#include "rolly/store/file_name.h"

#include <fmt/format.h>

#include <utility>

#include "rolly/core/checksum.h"
#include "rolly/core/utf8.h"

namespace rolly::store {
namespace {

constexpr std::string_view kExtension = ".rsav";
constexpr std::size_t kMaxStem = 160;
constexpr std::size_t kCutStem = 120;

bool IsPlain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool IsValidPrefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > kMaxPrefixSize) return false;
  for (char c : prefix) {
    if (!IsPlain(c)) return false;
  }
  return true;
}

Status CheckName(std::string_view name, std::string_view what) {
  if (name.empty()) return InvalidInputError(fmt::format("{} is empty", what));
  if (name.size() > kMaxSlotNameSize) {
    return InvalidInputError(fmt::format("{} is {} bytes, above the bound of {}", what,
                                         name.size(), kMaxSlotNameSize));
  }
  if (name.find('\0') != std::string_view::npos) {
    return InvalidInputError(fmt::format("{} holds a NUL character", what));
  }
  if (!IsValidUtf8(name)) return InvalidInputError(fmt::format("{} is not valid UTF-8", what));
  return OkStatus();
}

Status CheckPrefix(std::string_view prefix) {
  if (!IsValidPrefix(prefix)) {
    return InvalidInputError(fmt::format(
        "prefix \"{}\" is not 1 to {} characters of a-z, 0-9, '_' and '-'", prefix,
        kMaxPrefixSize));
  }
  return OkStatus();
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool IsStem(std::string_view stem) {
  if (stem.empty()) return false;
  std::size_t i = 0;
  while (i < stem.size()) {
    const char c = stem[i];
    const std::size_t left = stem.size() - i - 1;  // characters after c
    if (IsPlain(c)) {
      i += 1;
    } else if (c == '^' && left >= 1 && stem[i + 1] >= 'a' && stem[i + 1] <= 'z') {
      i += 2;
    } else if (c == '~' && left >= 1 && stem[i + 1] == '~') {
      // The cut marker: "~~" then 16 hex digits, ending the stem.
      const std::string_view hash = stem.substr(i + 2);
      if (hash.size() != 16) return false;
      for (char h : hash) {
        if (HexValue(h) < 0) return false;
      }
      return true;
    } else if (c == '~' && left >= 2 && HexValue(stem[i + 1]) >= 0 && HexValue(stem[i + 2]) >= 0) {
      i += 3;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string EncodeStem(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 8);
  std::size_t last_whole = 0;  // length of `out` after the last whole character written
  bool cut = false;
  for (char ch : name) {
    const auto b = static_cast<unsigned char>(ch);
    if (IsPlain(ch)) {
      out.push_back(ch);
    } else if (ch >= 'A' && ch <= 'Z') {
      out.push_back('^');
      out.push_back(static_cast<char>(ch - 'A' + 'a'));
    } else {
      out += fmt::format("~{:02x}", b);
    }
    if (out.size() <= kCutStem) last_whole = out.size();
    if (out.size() > kMaxStem) {
      cut = true;
      break;
    }
  }
  if (!cut) return out;
  out.resize(last_whole);
  out += fmt::format("~~{}", Checksum::Of(AsBytes(name)).ToHex());
  return out;
}

namespace {

// A cut stem keeps the whole characters of the encoded name that fit in kCutStem; the next one
// (1 to 3 characters) did not fit, so 118 to 120 are kept, each in its one form.
bool IsCutWhereTheRulesCut(std::string_view stem) {
  const std::string_view kept = stem.substr(0, stem.find("~~"));
  if (kept.size() > kCutStem || kept.size() + 3 <= kCutStem) return false;
  std::string bytes;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (kept[i] == '^') {
      bytes.push_back(static_cast<char>(kept[++i] - 'a' + 'A'));
    } else if (kept[i] == '~') {
      bytes.push_back(static_cast<char>(HexValue(kept[i + 1]) * 16 + HexValue(kept[i + 2])));
      i += 2;
    } else {
      bytes.push_back(kept[i]);
    }
  }
  return EncodeStem(bytes) == kept;
}

}  // namespace

std::optional<std::string> DecodeStem(std::string_view stem) {
  if (!IsStem(stem)) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < stem.size(); ++i) {
    const char c = stem[i];
    if (c == '^') {
      out.push_back(static_cast<char>(stem[++i] - 'a' + 'A'));
    } else if (c == '~') {
      if (stem[i + 1] == '~') return std::nullopt;  // cut: the name is in the file's header
      out.push_back(static_cast<char>(HexValue(stem[i + 1]) * 16 + HexValue(stem[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  // One form only: the stem must be exactly what EncodeStem makes of the decoded name.
  if (CheckName(out, "name").ok() && EncodeStem(out) == stem) return out;
  return std::nullopt;
}

FileName::FileName(std::string text, FileKind kind, Copy copy, std::size_t prefix_size,
                   std::size_t stem_size)
    : text_(std::move(text)),
      kind_(kind),
      copy_(copy),
      prefix_size_(prefix_size),
      stem_size_(stem_size) {}

Result<FileName> FileName::ForSlot(std::string_view prefix, std::string_view slot, Copy copy) {
  ROLLY_RETURN_IF_ERROR(CheckPrefix(prefix));
  ROLLY_RETURN_IF_ERROR(CheckName(slot, "slot name"));
  const std::string stem = EncodeStem(slot);
  return FileName(fmt::format("{}.slot.{}.{}{}", prefix, stem, CopyLetter(copy), kExtension),
                  FileKind::kSlot, copy, prefix.size(), stem.size());
}

Result<FileName> FileName::ForProfile(std::string_view prefix, std::string_view key, Copy copy) {
  ROLLY_RETURN_IF_ERROR(CheckPrefix(prefix));
  ROLLY_RETURN_IF_ERROR(CheckName(key, "profile key"));
  const std::string stem = EncodeStem(key);
  return FileName(fmt::format("{}.profile.{}.{}{}", prefix, stem, CopyLetter(copy), kExtension),
                  FileKind::kProfile, copy, prefix.size(), stem.size());
}

Result<FileName> FileName::ForIndex(std::string_view prefix, Copy copy) {
  ROLLY_RETURN_IF_ERROR(CheckPrefix(prefix));
  return FileName(fmt::format("{}.index.{}{}", prefix, CopyLetter(copy), kExtension),
                  FileKind::kIndex, copy, prefix.size(), 0);
}

std::optional<FileName> FileName::Parse(std::string_view text) {
  if (text.size() < kExtension.size() || text.substr(text.size() - kExtension.size()) != kExtension) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(0, text.size() - kExtension.size());
  // The copy letter.
  if (rest.size() < 2 || rest[rest.size() - 2] != '.') return std::nullopt;
  const char letter = rest.back();
  if (letter != 'a' && letter != 'b') return std::nullopt;
  const Copy copy = letter == 'a' ? Copy::kA : Copy::kB;
  rest.remove_suffix(2);
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view prefix = rest.substr(0, dot);
  const std::string_view after = rest.substr(dot + 1);
  Result<FileName> made = InvalidInputError("not a name");
  if (after == "index") {
    made = ForIndex(prefix, copy);
  } else {
    const std::size_t dot2 = after.find('.');
    if (dot2 == std::string_view::npos) return std::nullopt;
    const std::string_view kind = after.substr(0, dot2);
    const std::string_view stem = after.substr(dot2 + 1);
    if ((kind != "slot" && kind != "profile") || !IsValidPrefix(prefix) || !IsStem(stem)) {
      return std::nullopt;
    }
    // A stem that decodes must be in its one form; a cut stem is taken as it is.
    const std::optional<std::string> name = DecodeStem(stem);
    const bool is_cut = stem.find("~~") != std::string_view::npos;
    if (!name && !is_cut) return std::nullopt;
    if (is_cut && !IsCutWhereTheRulesCut(stem)) return std::nullopt;
    made = FileName(std::string(text), kind == "slot" ? FileKind::kSlot : FileKind::kProfile, copy,
                    prefix.size(), stem.size());
  }
  if (!made.ok() || made->str() != text) return std::nullopt;
  return std::move(made).value();
}

std::string_view FileName::prefix() const {
  return std::string_view(text_).substr(0, prefix_size_);
}

std::string_view FileName::stem() const {
  if (kind_ == FileKind::kIndex) return {};
  const std::size_t kind_size = kind_ == FileKind::kSlot ? 4 : 7;  // "slot" or "profile"
  return std::string_view(text_).substr(prefix_size_ + 1 + kind_size + 1, stem_size_);
}

std::string_view FileName::base() const {
  // Everything before ".<copy>.rsav".
  return std::string_view(text_).substr(0, text_.size() - kExtension.size() - 2);
}

FileName FileName::Other() const {
  std::string text = text_;
  text[text.size() - kExtension.size() - 1] = CopyLetter(OtherCopy(copy_));
  return FileName(std::move(text), kind_, OtherCopy(copy_), prefix_size_, stem_size_);
}

}  // namespace rolly::store
