// LoadFile: reads a file whole, with a bound, for the verbs of the `rolly` command line.

#include <fmt/format.h>

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

LoadedFile TooLarge(std::string_view size) {
  LoadedFile loaded;
  loaded.outcome = LoadedFile::Outcome::kTooLarge;
  loaded.status = DamagedError(
      fmt::format("file: {} bytes, larger than any file this version can read ({} bytes); not read",
                  size, kMaxReadableFileSize));
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
  while (true) {
    const std::size_t old_size = loaded.bytes.size();
    loaded.bytes.resize(old_size + piece);
    const std::size_t n = std::fread(loaded.bytes.data() + old_size, 1, piece, file.get());
    loaded.bytes.resize(old_size + n);
    if (loaded.bytes.size() > kMaxReadableFileSize) {
      return TooLarge(fmt::format("more than {}", kMaxReadableFileSize));
    }
    if (n < piece) break;
    piece = std::size_t{1} << 20;
  }
  if (std::ferror(file.get())) return Unreadable(std::strerror(errno != 0 ? errno : EIO));
  loaded.outcome = LoadedFile::Outcome::kRead;
  return loaded;
}

}  // namespace rolly::cli
