// The bounds a writer checks once a file's header and directory are encoded (docs/format.md,
// "Limits"): the directory's size and the whole file's. Kept apart from the writer, which calls
// it, so that each bound can be tested at its limit from the sizes alone: a file past the
// file-size bound takes over 1 GiB of chunks to make. Internal to the format layer.
//
// Thread rules: pure functions.

#ifndef ROLLY_FORMAT_INTERNAL_FRONT_BOUNDS_H_
#define ROLLY_FORMAT_INTERNAL_FRONT_BOUNDS_H_

#include <cstdint>

#include "rolly/core/status.h"

namespace rolly::format_internal {

// Checks a file whose header, directory and chunks take these many bytes, and returns its size:
// the prelude and them. The writer records that size in the prelude, so the size it records is
// the one checked. InvalidInput, the directory checked first, when the directory is above its
// bound ("directory is N bytes, above its bound of M") or the file is ("the file would be N
// bytes, above its bound of M"). `header_size` is within its own bound (the writer checks it
// before encoding the directory); the sizes are of bytes held in memory, so they do not overflow.
Result<std::uint64_t> CheckFrontSizes(std::uint64_t header_size, std::uint64_t directory_size,
                                      std::uint64_t chunks_size);

}  // namespace rolly::format_internal

#endif  // ROLLY_FORMAT_INTERNAL_FRONT_BOUNDS_H_
