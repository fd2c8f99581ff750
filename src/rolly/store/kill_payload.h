// The file store_kill_child saves and store_kill_test checks: its content follows from a seed kept
// in the title, so a load can tell a whole save from a mix of two. Test support only.

#ifndef ROLLY_STORE_KILL_PAYLOAD_H_
#define ROLLY_STORE_KILL_PAYLOAD_H_

#include <cstdint>
#include <random>
#include <string>

#include "rolly/format/file.h"

namespace rolly::store::testing {

// Bytes of `seed`: between 1 KiB and 192 KiB, compressible like save data.
inline Bytes KillPayloadBytes(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(1024 + rng() % (191 * 1024));
  for (std::size_t i = 0; i < out.size(); i += 8) {
    const std::uint64_t v = rng() % 4 == 0 ? rng() : seed;
    for (std::size_t k = 0; k < 8 && i + k < out.size(); ++k) {
      out[i + k] = static_cast<std::uint8_t>(v >> (8 * k));
    }
  }
  return out;
}

inline format::File KillPayloadFile(std::uint64_t seed) {
  format::File file;
  file.header.title = std::to_string(seed);
  file.chunks.emplace_back(format::kTestChunk, "payload", KillPayloadBytes(seed));
  return file;
}

}  // namespace rolly::store::testing

#endif  // ROLLY_STORE_KILL_PAYLOAD_H_
