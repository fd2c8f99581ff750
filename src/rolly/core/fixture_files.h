// Reading and writing the golden fixture files under tests/fixtures/, for the library's tests: the
// fixtures' folder, whole files as bytes or text, and the MANIFEST.txt form ("== name" lines, each
// followed by the file's description; "#" lines are comments).
//
// Header-only; include it only from test code. ctest runs the tests from the source folder;
// ROLLY_SOURCE_DIR names it when a test runs from elsewhere.

#ifndef ROLLY_CORE_FIXTURE_FILES_H_
#define ROLLY_CORE_FIXTURE_FILES_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include "rolly/core/bytes.h"

namespace rolly::fixture_files {

// tests/fixtures/ of the source folder.
inline std::filesystem::path FixturesRoot() {
  const char* root = std::getenv("ROLLY_SOURCE_DIR");
  return std::filesystem::path(root != nullptr ? root : ".") / "tests" / "fixtures";
}

inline Bytes ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFileBytes(const std::filesystem::path& path, ByteView bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// A manifest's sections by name, each the lines that follow its "== name" line.
inline std::map<std::string, std::string> ParseManifest(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  std::string* current = nullptr;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("== ", 0) == 0) {
      current = &out[line.substr(3)];
    } else if (current != nullptr) {
      *current += line + "\n";
    }
  }
  return out;
}

}  // namespace rolly::fixture_files

#endif  // ROLLY_CORE_FIXTURE_FILES_H_
