// Fuzz target for rolly::format::ReadPrelude and ReadHeader: any bytes must be refused with a
// status or read, and a header that reads must encode back to exactly the header bytes read
// (the header is in its one form), whatever follows it. Each input is also tried with its
// checksums recomputed, so the header parser sees forged fields.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"

namespace {

[[noreturn]] void Fail(const char* what, const rolly::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  std::abort();
}

bool Expected(const rolly::Status& status) {
  return status.code() == rolly::StatusCode::kDamaged ||
         status.code() == rolly::StatusCode::kNewerVersion;
}

void Check(const std::uint8_t* data, std::size_t size) {
  const rolly::ByteView bytes(data, size);
  const rolly::Result<rolly::format::Prelude> prelude = rolly::format::ReadPrelude(bytes);
  const rolly::Result<rolly::format::Header> header = rolly::format::ReadHeader(bytes);
  if (!prelude.ok()) {
    if (!Expected(prelude.status())) Fail("ReadPrelude", prelude.status());
    if (header.ok() || header.status().code() != prelude.status().code()) {
      Fail("ReadHeader disagrees with ReadPrelude", header.status());
    }
    return;
  }
  if (!header.ok()) {
    if (!Expected(header.status())) Fail("ReadHeader", header.status());
    return;
  }
  // Write the header alone and compare its bytes with those read.
  rolly::format::File file;
  file.header = *header;
  const rolly::Result<rolly::Bytes> written = rolly::format::Write(file);
  if (!written.ok()) Fail("Write refused a header ReadHeader accepted", written.status());
  const rolly::Result<rolly::format::Prelude> written_prelude =
      rolly::format::ReadPrelude(*written);
  if (!written_prelude.ok()) Fail("ReadPrelude of Write's bytes", written_prelude.status());
  const std::size_t header_size = prelude->header_size;
  if (written_prelude->header_size != header_size ||
      (header_size != 0 && std::memcmp(written->data() + rolly::format::kPreludeSize,
                                       data + rolly::format::kPreludeSize, header_size) != 0) ||
      !(written_prelude->header_checksum == prelude->header_checksum)) {
    std::fprintf(stderr, "ReadHeader accepted a header Write gives back differently\n");
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
