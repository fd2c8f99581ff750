// The directory and file-size bounds of the writer, from the sizes alone.

#include "rolly/format/internal/front_bounds.h"

#include <fmt/format.h>

#include <cassert>

#include "rolly/format/format_constants.h"

namespace rolly::format_internal {

Result<std::uint64_t> CheckFrontSizes(std::uint64_t header_size, std::uint64_t directory_size,
                                      std::uint64_t chunks_size) {
  // Invariant: the header was checked against its bound before the directory was encoded.
  assert(header_size <= format::kMaxHeaderSize);
  if (directory_size > format::kMaxDirectorySize) {
    return InvalidInputError(fmt::format("directory is {} bytes, above its bound of {}",
                                         directory_size, format::kMaxDirectorySize));
  }
  // Only chunks carried in a codec a later version added may be stored larger than they decode.
  const std::uint64_t file_size = format::kPreludeSize + header_size + directory_size + chunks_size;
  if (file_size > format::kMaxFileSize) {
    return InvalidInputError(fmt::format("the file would be {} bytes, above its bound of {}",
                                         file_size, format::kMaxFileSize));
  }
  return file_size;
}

}  // namespace rolly::format_internal
