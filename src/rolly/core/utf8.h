// UTF-8 checks for text read from files: every string in a save is UTF-8 in its one valid form
// (no overlong encodings, no surrogates, nothing above U+10FFFF).
//
// Thread rules: pure functions.

#ifndef ROLLY_CORE_UTF8_H_
#define ROLLY_CORE_UTF8_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace rolly {

// True when `text` is valid UTF-8.
bool IsValidUtf8(std::string_view text);

// The number of code points in `text`, or nullopt when it is not valid UTF-8.
std::optional<std::size_t> CountCodePoints(std::string_view text);

}  // namespace rolly

#endif  // ROLLY_CORE_UTF8_H_
