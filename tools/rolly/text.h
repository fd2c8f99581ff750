// Text helpers shared by the verbs of the `rolly` command line: strings made safe to print,
// save times in ISO-8601, and the names of kinds, codecs and versions.
//
// Thread rules: pure functions.

#ifndef ROLLY_TOOLS_ROLLY_TEXT_H_
#define ROLLY_TOOLS_ROLLY_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rolly::cli {

// The length (1 to 4) of the well-formed UTF-8 sequence starting at text[i], or 0 when the bytes
// there are not one.
std::size_t Utf8SequenceAt(std::string_view text, std::size_t i);

// `text` with what a terminal would act on made visible: control characters and bytes that are
// not UTF-8 become \n, \t, \r or \xNN; the C1 controls and the invisible characters that reorder
// or hide text (bidirectional overrides, zero-width characters...) become \u{XXXX}; and a
// backslash becomes two. Keys, titles and paths come from files and command lines a user may not
// trust.
std::string Printable(std::string_view text);

// Printable(text) in double quotes, with a double quote inside escaped.
std::string Quoted(std::string_view text);

// Microseconds since 1970-01-01T00:00:00Z as "2024-05-01T12:34:56.123456Z" (proleptic Gregorian
// calendar, UTC; a year outside 0000..9999 is written with its sign).
std::string FormatSaveTime(std::int64_t us);

// "Manual", "Autosave"... for a format::SaveKind; nullopt for a number a newer version defined.
std::optional<std::string_view> KindName(std::uint32_t kind);

// "stored" or "zstd"; nullopt for a codec this version lacks.
std::optional<std::string_view> CodecName(std::uint8_t codec);

// A library version as the header holds it (major << 16 | minor << 8 | patch) as
// "major.minor.patch".
std::string LibraryVersionString(std::uint32_t version);

}  // namespace rolly::cli

#endif  // ROLLY_TOOLS_ROLLY_TEXT_H_
