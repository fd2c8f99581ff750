// Replays inputs through a fuzz target without a fuzz engine, so plain ctest runs the checked-in
// corpus (zstd's regression_driver.c does the same). Arguments are files or directories
// (searched recursively); each file is one input. Exits non-zero when no input was found; a
// failing input aborts inside the target, naming itself on stderr first.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void Run(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  const std::vector<std::uint8_t> bytes(chars.begin(), chars.end());
  std::fprintf(stderr, "%s\n", path.string().c_str());
  // A copy the exact size of the input, so a sanitizer sees any read past its end.
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& file : files) {
        Run(file);
        ++inputs;
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      Run(arg);
      ++inputs;
    } else {
      std::fprintf(stderr, "%s: not a file or directory\n", argv[i]);
      return 2;
    }
  }
  std::printf("replayed %zu inputs\n", inputs);
  return inputs == 0 ? 1 : 0;
}
