// Helpers for the store's tests: a fresh temporary directory, removed with everything in it.
// Test code only.

#ifndef ROLLY_STORE_STORE_TEST_UTIL_H_
#define ROLLY_STORE_STORE_TEST_UTIL_H_

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "rolly/core/bytes.h"

namespace rolly::store {

// A directory made with mkdtemp under $TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/rolly-store-test-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Empty when mkdtemp failed.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes a file directly, behind any backend.
inline void WriteFileForTest(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file's bytes, read directly; empty when it cannot be read.
inline std::string ReadFileForTest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The bytes of a string.
inline Bytes BytesOf(std::string_view s) { return Bytes(s.begin(), s.end()); }

// `size` bytes of a pattern that differs with `seed`.
inline Bytes PatternBytes(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) {
    out[i] = static_cast<std::uint8_t>((i * 131 + seed * 17 + (i >> 8)) & 0xff);
  }
  return out;
}

}  // namespace rolly::store

#endif  // ROLLY_STORE_STORE_TEST_UTIL_H_
