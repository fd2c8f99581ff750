// Writes a file with the installed library and reads it back; exits 0 when they agree.
#include <cstdio>

#include "rolly/format/file.h"

int main() {
  rolly::format::File file;
  file.header.slot_name = "consumer";
  file.chunks.emplace_back(rolly::format::kTestChunk, "", rolly::Bytes(1000, 7));
  auto bytes = rolly::format::Write(file);
  if (!bytes.ok()) return 1;
  auto read = rolly::format::Read(*bytes);
  if (!read.ok() || !(*read == file)) return 1;
  std::printf("consumer: wrote and read %zu bytes through the installed package\n", bytes->size());
  return 0;
}
