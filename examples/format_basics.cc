// format_basics: write a save file with the format layer alone, read it back, and check it.
//
//   format_basics [PATH]      (PATH defaults to saves/sample.rsav; its folder is created)
//
// A game normally saves through the game layer, which fills the header and the chunks for it.
// This example uses the container directly (docs/format.md): a header a slot list can show
// without reading the rest, and chunks, each an ID, a key and bytes. Run `rolly info PATH` on the
// file it writes to see what is inside.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/format/file.h"

namespace {

namespace format = rolly::format;

// Microseconds since 1970-01-01T00:00:00Z, as Header::save_time_us holds them.
std::int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Bytes that look like saved records: the same small layout over and over with a few values
// changing, the way a world's actors do. Such bytes compress well, so Write stores them as zstd.
rolly::Bytes RecordLikeBytes(int count) {
  rolly::Bytes out;
  rolly::ByteWriter w(&out);
  for (int i = 0; i < count; ++i) {
    w.LengthPrefixed("Door");                                 // class
    w.LengthPrefixed("Maps/Town/Door_" + std::to_string(i));  // name
    w.U8(i % 3 == 0 ? 1 : 0);                                 // Open
    w.F32(static_cast<float>(i) * 2.5f);                      // X
    w.F32(0.0f);                                              // Y
    w.Varint(100);                                            // Health
  }
  return out;
}

// The header a slot list shows: which slot, what the player sees, when, and which versions of
// the game's data wrote it.
format::Header MakeHeader() {
  format::Header h;
  h.slot_name = "slot-1";
  h.title = "Chapter 2: The Mill";
  h.sequence = 7;  // raised by one per save of the slot
  h.save_time_us = NowMicros();
  h.kind = static_cast<std::uint32_t>(format::SaveKind::kManual);
  h.game_data_version = 3;                       // the game's own version of what it saves
  h.library_version = (0 << 16) | (1 << 8) | 0;  // 0.1.0, major << 16 | minor << 8 | patch
  h.game_build = "demo-1.0";
  // The game's own slot metadata (what a slot list shows beyond the title): any bytes.
  const std::string metadata = R"({"level":"Mill","playtime_s":5421})";
  h.metadata.assign(metadata.begin(), metadata.end());
  // Versions of parts of the game's data a migration may need to know; sorted by key.
  h.custom_versions = {{"MyGame.Inventory", 2}, {"MyGame.Quests", 5}};
  return h;
}

bool WriteWholeFile(const std::filesystem::path& path, const rolly::Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out.flush());
}

bool ReadWholeFile(const std::filesystem::path& path, rolly::Bytes* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path path = argc > 1 ? argv[1] : "saves/sample.rsav";

  // 1. Build the file: a header and a few chunks. No two chunks may share an ID and key. Real
  //    saves use GLOB, WRLD, PLYR...; TEST is the chunk ID for tests and demos of the format.
  format::File file;
  file.header = MakeHeader();
  file.chunks.emplace_back(format::kTestChunk, "world", RecordLikeBytes(200));
  const std::string note = "small chunk";
  file.chunks.emplace_back(format::kTestChunk, "note", rolly::Bytes(note.begin(), note.end()));

  // 2. Encode it. Each chunk is compressed with zstd when that makes it smaller, stored
  //    otherwise. Write refuses a file that breaks a rule of docs/format.md (InvalidInput).
  format::WriteOptions options;
  options.zstd_level = 3;
  rolly::Result<rolly::Bytes> bytes = format::Write(file, options);
  if (!bytes.ok()) {
    std::fprintf(stderr, "write: %s\n", bytes.status().ToString().c_str());
    return 1;
  }

  // 3. Save the bytes. (The store layer does this crash-safely, with two copies; a plain file
  //    is enough here.)
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec || !WriteWholeFile(path, *bytes)) {
    std::fprintf(stderr, "cannot write %s\n", path.string().c_str());
    return 1;
  }

  // 4. Read it back. Read checks every checksum and bound before decoding anything, and either
  //    returns the whole File or a status (Damaged, NewerVersion) naming the part that failed.
  rolly::Bytes read_bytes;
  if (!ReadWholeFile(path, &read_bytes)) {
    std::fprintf(stderr, "cannot read %s\n", path.string().c_str());
    return 1;
  }
  rolly::Result<format::File> read = format::Read(read_bytes);
  if (!read.ok()) {
    std::fprintf(stderr, "read: %s\n", read.status().ToString().c_str());
    return 1;
  }

  // 5. The round trip keeps everything: the header, each chunk's ID, key, flags and bytes.
  const format::Chunk* world = read->Find(format::kTestChunk, "world");
  if (!(read->header == file.header) || world == nullptr ||
      world->data() != file.chunks[0].data() || read->chunks.size() != file.chunks.size()) {
    std::fprintf(stderr, "round trip changed the file\n");
    return 1;
  }
  std::printf("wrote %s: %zu bytes, %zu chunks, world chunk %zu -> %zu bytes; read back ok\n",
              path.string().c_str(), bytes->size(), read->chunks.size(),
              static_cast<std::size_t>(world->decoded_size()), world->stored().size());
  return 0;
}
