// Fuzz target for rolly::format::Read: any bytes must be refused with a status or read, and a
// file that reads must write back to exactly the same bytes (docs/format.md, "One form").
// Diagnose runs on the same bytes and must agree with Read.
//
// A fuzzer rarely forges a checksum, so each input is also tried with every checksum recomputed
// (format_test_util's Reseal): that copy reaches the header, directory and zstd parsers.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"

namespace {

void Check(const std::uint8_t* data, std::size_t size) {
  const rolly::ByteView bytes(data, size);
  const rolly::Result<rolly::format::File> file = rolly::format::Read(bytes);
  const rolly::format::Diagnosis diagnosis = rolly::format::Diagnose(bytes);
  if (diagnosis.status.code() != file.status().code()) {
    std::fprintf(stderr, "Diagnose says %s, Read says %s\n", diagnosis.status.ToString().c_str(),
                 file.status().ToString().c_str());
    std::abort();
  }
  if (!file.ok()) {
    if (file.status().code() != rolly::StatusCode::kDamaged &&
        file.status().code() != rolly::StatusCode::kNewerVersion) {
      std::fprintf(stderr, "Read returned %s\n", file.status().ToString().c_str());
      std::abort();
    }
    return;
  }
  const rolly::Result<rolly::Bytes> again = rolly::format::Write(*file);
  if (!again.ok()) {
    std::fprintf(stderr, "Write refused what Read accepted: %s\n", again.status().ToString().c_str());
    std::abort();
  }
  if (again->size() != size || (size != 0 && std::memcmp(again->data(), data, size) != 0)) {
    std::fprintf(stderr, "Read accepted %zu bytes that Write gives back as %zu other bytes\n", size,
                 again->size());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Check(data, size);
  if (size >= rolly::format::kPreludeSize) {
    rolly::Bytes resealed(data, data + size);
    rolly::format_testing::Reseal(&resealed);
    Check(resealed.data(), resealed.size());
  }
  return 0;
}
