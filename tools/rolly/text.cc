// Text helpers for the `rolly` command line.

#include "text.h"

#include <fmt/format.h>

#include "rolly/core/utf8.h"
#include "rolly/format/format_constants.h"

namespace rolly::cli {

std::size_t Utf8SequenceAt(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t n = 0;
  if (lead < 0x80) {
    n = 1;
  } else if ((lead >> 5) == 0x6) {
    n = 2;
  } else if ((lead >> 4) == 0xE) {
    n = 3;
  } else if ((lead >> 3) == 0x1E) {
    n = 4;
  }
  if (n == 0 || n > text.size() - i) return 0;
  return IsValidUtf8(text.substr(i, n)) ? n : 0;
}

namespace {

// The code point of the well-formed sequence of `n` (2 to 4) bytes at `s`.
char32_t CodePoint(const char* s, std::size_t n) {
  const auto b = [s](std::size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(s[k]));
  };
  if (n == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  if (n == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

// Characters a terminal acts on or that reorder or hide what is shown, beyond ASCII: the C1
// controls (U+0080..U+009F: U+009B is an 8-bit CSI), and the invisible format characters
// (the bidirectional marks, embeddings, overrides and isolates, zero-width characters, the line
// and paragraph separators, the byte order mark, interlinear annotation marks).
bool IsHiddenControl(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x061C || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) || c == 0xFEFF ||
         (c >= 0xFFF9 && c <= 0xFFFB);
}

void AppendPrintable(std::string_view text, bool escape_quote, std::string* out) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = Utf8SequenceAt(text, i);
    if (n > 1) {
      const char32_t point = CodePoint(text.data() + i, n);
      if (IsHiddenControl(point)) {
        *out += fmt::format("\\u{{{:04x}}}", static_cast<std::uint32_t>(point));
      } else {
        out->append(text.substr(i, n));
      }
      i += n;
      continue;
    }
    ++i;
    if (n == 0 || c < 0x20 || c == 0x7F) {
      switch (c) {
        case '\n': *out += "\\n"; break;
        case '\t': *out += "\\t"; break;
        case '\r': *out += "\\r"; break;
        default: *out += fmt::format("\\x{:02x}", c); break;
      }
    } else if (c == '\\') {
      *out += "\\\\";
    } else if (c == '"' && escape_quote) {
      *out += "\\\"";
    } else {
      *out += static_cast<char>(c);
    }
  }
}

}  // namespace

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendPrintable(text, /*escape_quote=*/false, &out);
  return out;
}

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  AppendPrintable(text, /*escape_quote=*/true, &out);
  out += '"';
  return out;
}

std::string FormatSaveTime(std::int64_t us) {
  // Floor division, so times before 1970 land on the right day and second.
  std::int64_t seconds = us / 1000000;
  std::int64_t micros = us % 1000000;
  if (micros < 0) {
    micros += 1000000;
    --seconds;
  }
  std::int64_t days = seconds / 86400;
  std::int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    --days;
  }
  // Howard Hinnant's civil_from_days: days since 1970-01-01 to year, month, day.
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const std::string year_text =
      (year >= 0 && year <= 9999) ? fmt::format("{:04}", year) : fmt::format("{:+05}", year);
  return fmt::format("{}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", year_text, month, day,
                     second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60, micros);
}

std::optional<std::string_view> KindName(std::uint32_t kind) {
  switch (static_cast<format::SaveKind>(kind)) {
    case format::SaveKind::kManual: return "Manual";
    case format::SaveKind::kAutosave: return "Autosave";
    case format::SaveKind::kQuicksave: return "Quicksave";
    case format::SaveKind::kCheckpoint: return "Checkpoint";
    case format::SaveKind::kProfile: return "Profile";
    case format::SaveKind::kIndex: return "Index";
  }
  return std::nullopt;
}

std::optional<std::string_view> CodecName(std::uint8_t codec) {
  switch (static_cast<format::Codec>(codec)) {
    case format::Codec::kStored: return "stored";
    case format::Codec::kZstd: return "zstd";
  }
  return std::nullopt;
}

std::string LibraryVersionString(std::uint32_t version) {
  return fmt::format("{}.{}.{}", version >> 16, (version >> 8) & 0xFF, version & 0xFF);
}

}  // namespace rolly::cli
