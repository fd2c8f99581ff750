// `rolly verify FILE...`: one line per file saying whether format::Read accepts it.

#include <fmt/format.h>

#include "rolly/format/file.h"
#include "text.h"
#include "verbs.h"

namespace rolly::cli {

int RunVerify(const VerifyOptions& options, std::FILE* out, std::FILE* err) {
  bool any_invalid = false;
  bool any_unreadable = false;
  format::ReadOptions read_options;
  read_options.extra_known_chunks = options.known_chunks;
  // Nothing is written back, so the as-read encodings need not be kept.
  read_options.keep_stored = false;
  for (const std::string& path : options.paths) {
    const LoadedFile loaded = LoadFile(path);
    Status status;
    switch (loaded.outcome) {
      case LoadedFile::Outcome::kUnreadable:
        fmt::print(err, "rolly verify: cannot read {}: {}\n", Printable(path), loaded.error);
        any_unreadable = true;
        continue;
      case LoadedFile::Outcome::kTooLarge:
        status = loaded.status;
        break;
      case LoadedFile::Outcome::kRead:
        status = format::Read(loaded.bytes, read_options).status();
        break;
    }
    if (status.ok()) {
      fmt::print(out, "{}: ok\n", Printable(path));
    } else {
      fmt::print(out, "{}: {}\n", Printable(path), Printable(status.ToString()));
      any_invalid = true;
    }
    // Keep the lines in order with the error stream's when both go to one terminal.
    std::fflush(out);
  }
  if (any_unreadable) return kExitUsage;
  return any_invalid ? kExitInvalid : kExitValid;
}

}  // namespace rolly::cli
