// The verbs of the `rolly` command line and what they share. main.cc only parses the command
// line; each verb is one function over the public library API (format::Read, format::ReadHeader,
// format::Diagnose) that writes its report and returns the process's exit code. docs/cli.md is
// the reference for what each prints.
//
// Thread rules: a verb runs on the calling thread and shares nothing with another call.

#ifndef ROLLY_TOOLS_ROLLY_VERBS_H_
#define ROLLY_TOOLS_ROLLY_VERBS_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/format/format_constants.h"

namespace rolly::cli {

// Exit codes, the same for every verb.
inline constexpr int kExitValid = 0;    // every file read is valid
inline constexpr int kExitInvalid = 1;  // a file is damaged or needs a newer version
inline constexpr int kExitUsage = 2;    // a usage error, or a path that cannot be read

// The largest file a reader reads (docs/format.md, "Limits"): a bigger one is refused before a
// byte of it is read.
inline constexpr std::uint64_t kMaxReadableFileSize = format::kMaxFileSize;

// A file read whole into memory, or why it was not.
struct LoadedFile {
  enum class Outcome {
    kRead,        // `bytes` holds the file
    kTooLarge,    // larger than kMaxReadableFileSize; `status` says so (Damaged)
    kUnreadable,  // the path cannot be opened or read; `error` is the OS's reason
  };
  Outcome outcome = Outcome::kUnreadable;
  Bytes bytes;
  Status status;
  std::string error;
};

// Reads `path` whole, never more than kMaxReadableFileSize + 1 bytes of it.
LoadedFile LoadFile(const std::string& path);

// What `rolly info` is asked.
struct InfoOptions {
  std::string path;
  bool json = false;
  // Chunk IDs the game knows beyond the library's (four characters each, checked by main).
  std::vector<format::ChunkId> known_chunks;
};

// `rolly info`: prints the prelude, header and chunks of one file as text or JSON, as much of a
// damaged file as can be read, then its status. Returns kExitValid, kExitInvalid or kExitUsage
// (path unreadable: a line on `err`).
int RunInfo(const InfoOptions& options, std::FILE* out, std::FILE* err);

// What `rolly verify` is asked.
struct VerifyOptions {
  std::vector<std::string> paths;
  std::vector<format::ChunkId> known_chunks;
};

// `rolly verify`: one line per readable file on `out` ("PATH: ok" or "PATH: Status: message"),
// one line per unreadable path on `err`. Returns kExitUsage when a path could not be read,
// else kExitInvalid when a file is not valid, else kExitValid.
int RunVerify(const VerifyOptions& options, std::FILE* out, std::FILE* err);

// What `rolly slots` is asked.
struct SlotsOptions {
  std::string folder;
  std::string prefix = "rolly";
  bool json = false;
  // Check both copies of every slot whole, as a load would, instead of trusting the index's
  // states (which date from each slot's last save).
  bool verify = false;
  // Chunk IDs the game knows beyond the library's (StoreOptions::known_chunks), for --verify.
  std::vector<format::ChunkId> known_chunks;
};

// `rolly slots`: the slots of a save folder from its slot index (rebuilt in memory from the saves'
// headers when missing or damaged; nothing is written). Returns kExitValid, kExitInvalid when a
// slot has a damaged copy or loads from its older copy or the storage failed while listing,
// kExitUsage for a folder that cannot be read, a prefix outside the name rules, or a listing that
// did not end within a minute.
int RunSlots(const SlotsOptions& options, std::FILE* out, std::FILE* err);

// `rolly demo`: the main job (docs/cli.md). Exit 1 on a difference or a failed step, 2 on a usage
// error; else RunSlots' code for the slot list it prints (0 when every slot there is sound).
struct DemoOptions {
  std::string dir = "saves";
  int actors = 10'000;
  int saves = 1;
  std::uint64_t seed = 1;
};
int RunDemo(const DemoOptions& options, std::FILE* out, std::FILE* err);

}  // namespace rolly::cli

#endif  // ROLLY_TOOLS_ROLLY_VERBS_H_
