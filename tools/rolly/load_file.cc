// LoadFile: reads a file whole, with a bound, for the verbs of the `rolly` command line.

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "verbs.h"

namespace rolly::cli {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

LoadedFile Unreadable(std::string error) {
  LoadedFile loaded;
  loaded.outcome = LoadedFile::Outcome::kUnreadable;
  loaded.error = std::move(error);
  return loaded;
}

// `read`: whether its bytes were read up to the bound (a pipe or device, whose size is known
// only so), rather than refused by the size the file system gave.
LoadedFile TooLarge(std::string_view size, bool read = false) {
  LoadedFile loaded;
  loaded.outcome = LoadedFile::Outcome::kTooLarge;
  loaded.status = DamagedError(
      fmt::format("file: {} bytes, larger than any file this version can read ({} bytes){}", size,
                  kMaxReadableFileSize, read ? "" : "; not read"));
  return loaded;
}

}  // namespace

LoadedFile LoadFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec) return Unreadable(ec.message());
  if (std::filesystem::is_directory(st)) return Unreadable(std::strerror(EISDIR));
  std::uintmax_t expected = 0;
  if (std::filesystem::is_regular_file(st)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) return Unreadable(ec.message());
    if (size > kMaxReadableFileSize) return TooLarge(fmt::format("{}", size));
    expected = size;
  }

  errno = 0;
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return Unreadable(std::strerror(errno != 0 ? errno : EIO));
  // Read in pieces rather than trusting the size seen above: the file may be growing, or a pipe.
  LoadedFile loaded;
  // The first read asks for one byte more than the size seen, to notice a file that grew.
  std::size_t piece = static_cast<std::size_t>(expected) + 1;
  constexpr std::size_t kMost = kMaxReadableFileSize + 1;
  // A pipe or device gives no size: room for the most it may hold is set aside once (memory is
  // taken only as it fills), so growing never holds an old and a new buffer at once.
  if (!std::filesystem::is_regular_file(st)) loaded.bytes.reserve(kMost);
  while (true) {
    const std::size_t old_size = loaded.bytes.size();
    // Never more than the bound and one byte, read or held (a pipe or device has no size to
    // trust, and a vector left to grow would double past the bound).
    piece = std::min(piece, kMost - old_size);
    if (loaded.bytes.capacity() < old_size + piece) {
      loaded.bytes.reserve(std::min(kMost, std::max(old_size + piece, 2 * old_size)));
    }
    loaded.bytes.resize(old_size + piece);
    const std::size_t n = std::fread(loaded.bytes.data() + old_size, 1, piece, file.get());
    loaded.bytes.resize(old_size + n);
    if (loaded.bytes.size() > kMaxReadableFileSize) {
      return TooLarge(fmt::format("more than {}", kMaxReadableFileSize), /*read=*/true);
    }
    if (n < piece) break;
    piece = std::size_t{1} << 20;
  }
  if (std::ferror(file.get())) return Unreadable(std::strerror(errno != 0 ? errno : EIO));
  loaded.outcome = LoadedFile::Outcome::kRead;
  return loaded;
}

}  // namespace rolly::cli
