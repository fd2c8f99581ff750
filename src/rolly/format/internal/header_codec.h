// The header's bytes (docs/format.md, "Header"): encoding, the writer's checks, and the
// one-form decoder. Internal to the format layer.
//
// Thread rules: pure functions.

#ifndef ROLLY_FORMAT_INTERNAL_HEADER_CODEC_H_
#define ROLLY_FORMAT_INTERNAL_HEADER_CODEC_H_

#include <cstdint>
#include <string_view>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/format/file.h"

namespace rolly::format_internal {

// Ok when `text` is at most `max_size` bytes of UTF-8 without NUL; InvalidInput naming `what`
// otherwise.
Status CheckWritableString(std::string_view text, std::uint64_t max_size, std::string_view what);
// The same check for bytes read from a file: true when they pass.
bool IsReadableString(std::string_view text, std::uint64_t max_size);

// Ok when `header` can be written: every bound, UTF-8, sort order and carried ID. InvalidInput
// naming the field otherwise.
Status CheckHeader(const format::Header& header);

// Appends the header's bytes. `header` passed CheckHeader.
void EncodeHeader(const format::Header& header, Bytes* out);

// Decodes header bytes in their one form; Damaged ("header: ...") otherwise.
Result<format::Header> DecodeHeader(ByteView bytes);

}  // namespace rolly::format_internal

#endif  // ROLLY_FORMAT_INTERNAL_HEADER_CODEC_H_
