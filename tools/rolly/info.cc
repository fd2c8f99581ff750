// `rolly info FILE [--json]`: what a file holds and whether each of its checksums matches.
//
// Read gives the status and, for a valid file, every field; ReadHeader gives the header of a file
// damaged after it; Diagnose gives each part's checksum state and, when the directory reads, the
// chunks of a file whose chunks do not.

#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "json_writer.h"
#include "rolly/format/file.h"
#include "text.h"
#include "verbs.h"

namespace rolly::cli {
namespace {

// One chunk as far as it is known: from the File when the file read, else from Diagnose alone.
struct ChunkView {
  std::size_t index = 0;
  std::string id;
  std::string key;
  std::uint64_t stored_size = 0;
  const format::PartReport* part = nullptr;  // its checksum, when Diagnose located it
  const format::Chunk* chunk = nullptr;      // flags, codec, decoded size; null when not read
};

// Everything info gathers about one file.
struct Report {
  std::string path;
  std::uint64_t bytes_read = 0;
  Status status;  // Read's
  format::Diagnosis diagnosis;
  std::optional<format::File> file;
  std::optional<format::Header> header;
  Status header_status;  // why `header` is missing
  std::vector<ChunkView> chunks;
};

const format::PartReport* FindPart(const format::Diagnosis& d, std::string_view name) {
  for (const format::PartReport& p : d.parts) {
    if (p.part == name) return &p;
  }
  return nullptr;
}

Report Gather(const InfoOptions& options, ByteView bytes) {
  Report r;
  r.path = options.path;
  r.bytes_read = bytes.size();
  format::ReadOptions read_options;
  read_options.extra_known_chunks = options.known_chunks;
  Result<format::File> file = format::Read(bytes, read_options);
  r.status = file.status();
  r.diagnosis = format::Diagnose(bytes, file.status());
  if (file.ok()) {
    r.file = std::move(file).value();
    r.header = r.file->header;
    // The parts by name, found once (a file may hold 65,536 chunks).
    std::unordered_map<std::string_view, const format::PartReport*> parts;
    for (const format::PartReport& p : r.diagnosis.parts) parts.emplace(p.part, &p);
    for (std::size_t i = 0; i < r.file->chunks.size(); ++i) {
      const format::Chunk& c = r.file->chunks[i];
      ChunkView v;
      v.index = i;
      v.id = std::string(c.id().view());
      v.key = c.key();
      const auto part = parts.find(fmt::format("chunk {}", i));
      v.part = part != parts.end() ? part->second : nullptr;
      v.stored_size = v.part != nullptr ? v.part->size : c.stored().size();
      v.chunk = &c;
      r.chunks.push_back(std::move(v));
    }
    return r;
  }
  Result<format::Header> header = format::ReadHeader(bytes);
  if (header.ok()) {
    r.header = std::move(header).value();
  } else {
    r.header_status = header.status();
  }
  std::size_t index = 0;
  for (const format::PartReport& p : r.diagnosis.parts) {
    if (p.chunk_id.empty()) continue;
    ChunkView v;
    v.index = index++;
    v.id = p.chunk_id;
    v.key = p.chunk_key;
    v.stored_size = p.size;
    v.part = &p;
    r.chunks.push_back(std::move(v));
  }
  return r;
}

std::string_view CheckState(const format::PartReport* p) {
  if (p == nullptr || !p->checked) return "not checked";
  return p->ok ? "ok" : "damaged";
}

// "0123456789abcdef ok", "... damaged (actual ...)", "... not checked".
std::string ChecksumText(const format::PartReport* p) {
  if (p == nullptr) return "not checked";
  std::string out = fmt::format("{} {}", p->recorded.ToHex(), CheckState(p));
  if (p->checked && !p->ok) out += fmt::format(" (actual {})", p->actual.ToHex());
  return out;
}

std::string FlagsText(std::uint64_t flags) {
  if (flags == 0) return "0";
  std::string out = fmt::format("{:#x}", flags);
  if ((flags & format::kChunkMustUnderstand) != 0) out += " (MustUnderstand)";
  return out;
}

std::string StatusLine(const Status& status) {
  return status.ok() ? "ok" : Printable(status.ToString());
}

// ---- Text ----

void AppendHeaderText(const Report& r, std::string* out) {
  auto o = std::back_inserter(*out);
  if (!r.header) {
    fmt::format_to(o, "header: not readable ({})\n", StatusLine(r.header_status));
    return;
  }
  const format::Header& h = *r.header;
  const std::optional<std::string_view> kind = KindName(h.kind);
  fmt::format_to(o, "header:\n");
  fmt::format_to(o, "  slot name: {}\n", Quoted(h.slot_name));
  fmt::format_to(o, "  sequence: {}\n", h.sequence);
  fmt::format_to(o, "  game data version: {}\n", h.game_data_version);
  fmt::format_to(o, "  library version: {}\n", LibraryVersionString(h.library_version));
  fmt::format_to(o, "  record version: {}\n", h.record_version);
  fmt::format_to(o, "  game build: {}\n", Quoted(h.game_build));
  fmt::format_to(o, "  save time: {}\n", FormatSaveTime(h.save_time_us));
  fmt::format_to(o, "  kind: {}\n", kind ? std::string(*kind) : fmt::format("{}", h.kind));
  fmt::format_to(o, "  title: {}\n", Quoted(h.title));
  fmt::format_to(o, "  metadata size: {}\n", h.metadata.size());
  fmt::format_to(o, "  thumbnail size: {}\n", h.thumbnail.size());
  fmt::format_to(o, "  custom versions: {}\n", h.custom_versions.size());
  for (const format::CustomVersion& v : h.custom_versions) {
    fmt::format_to(o, "    {}: {}\n", Quoted(v.key), v.version);
  }
  fmt::format_to(o, "  carried fields: {}\n", h.carried_fields.size());
  for (const format::CarriedField& f : h.carried_fields) {
    fmt::format_to(o, "    field {}: {} bytes\n", f.id, f.payload.size());
  }
}

void AppendChunksText(const Report& r, std::string* out) {
  auto o = std::back_inserter(*out);
  if (!r.file) {
    fmt::format_to(o,
                   "chunks: {} located (flags, codecs and decoded sizes are read only from a "
                   "valid file)\n",
                   r.chunks.size());
  } else {
    fmt::format_to(o, "chunks: {}\n", r.chunks.size());
  }
  for (const ChunkView& v : r.chunks) {
    const std::string label =
        v.key.empty() ? fmt::format("chunk {} ({})", v.index, Printable(v.id))
                      : fmt::format("chunk {} ({} {})", v.index, Printable(v.id), Quoted(v.key));
    fmt::format_to(o, "  {}:", label);
    if (v.chunk != nullptr) {
      const std::optional<std::string_view> codec = CodecName(v.chunk->stored_codec());
      fmt::format_to(o, " flags {}, codec {},", FlagsText(v.chunk->flags()),
                     codec ? std::string(*codec) : fmt::format("{}", v.chunk->stored_codec()));
    }
    fmt::format_to(o, " stored {}", v.stored_size);
    if (v.chunk != nullptr) fmt::format_to(o, ", decoded {}", v.chunk->decoded_size());
    fmt::format_to(o, ", checksum {}", CheckState(v.part));
    if (v.part != nullptr && v.part->checked && !v.part->ok) {
      fmt::format_to(o, " (recorded {}, actual {})", v.part->recorded.ToHex(),
                     v.part->actual.ToHex());
    }
    fmt::format_to(o, "\n");
  }
}

std::string Text(const Report& r) {
  std::string out;
  auto o = std::back_inserter(out);
  const format::Diagnosis& d = r.diagnosis;
  fmt::format_to(o, "file: {} ({} bytes)\n", Printable(r.path), r.bytes_read);
  if (d.parts.empty()) {
    fmt::format_to(o, "prelude: not readable\n");
  } else {
    const format::Prelude& p = d.prelude;
    fmt::format_to(o, "prelude:\n");
    fmt::format_to(o, "  format version: {}\n", p.format_version);
    fmt::format_to(o, "  min reader version: {}\n", p.min_reader_version);
    fmt::format_to(o, "  header size: {}\n", p.header_size);
    fmt::format_to(o, "  directory size: {}\n", p.directory_size);
    fmt::format_to(o, "  file size: {}\n", p.file_size);
    for (const std::string_view part : {"prelude", "header", "directory", "file"}) {
      fmt::format_to(o, "  {} checksum: {}\n", part, ChecksumText(FindPart(d, part)));
    }
  }
  AppendHeaderText(r, &out);
  AppendChunksText(r, &out);
  fmt::format_to(std::back_inserter(out), "status: {}\n", StatusLine(r.status));
  return out;
}

// ---- JSON ----

void ChecksumJson(const format::PartReport* p, JsonWriter& w) {
  w.BeginObject();
  if (p != nullptr) {
    w.Field("recorded", p->recorded.ToHex());
    w.Key("actual");
    if (p->checked) {
      w.String(p->actual.ToHex());
    } else {
      w.Null();
    }
  }
  w.Field("state", CheckState(p));
  w.EndObject();
}

void HeaderJson(const format::Header& h, JsonWriter& w) {
  w.BeginObject();
  w.Field("slot_name", h.slot_name);
  w.Field("sequence", h.sequence);
  w.Field("game_data_version", h.game_data_version);
  w.Field("library_version", LibraryVersionString(h.library_version));
  w.Field("library_version_number", h.library_version);
  w.Field("record_version", h.record_version);
  w.Field("game_build", h.game_build);
  w.Field("save_time", FormatSaveTime(h.save_time_us));
  w.Field("save_time_us", h.save_time_us);
  w.Field("kind", h.kind);
  w.Key("kind_name");
  if (const auto kind = KindName(h.kind)) {
    w.String(*kind);
  } else {
    w.Null();
  }
  w.Field("title", h.title);
  w.Field("metadata_size", std::uint64_t{h.metadata.size()});
  w.Field("thumbnail_size", std::uint64_t{h.thumbnail.size()});
  w.Key("custom_versions");
  w.BeginArray();
  for (const format::CustomVersion& v : h.custom_versions) {
    w.BeginObject();
    w.Field("key", v.key);
    w.Field("version", v.version);
    w.EndObject();
  }
  w.EndArray();
  w.Key("carried_fields");
  w.BeginArray();
  for (const format::CarriedField& f : h.carried_fields) {
    w.BeginObject();
    w.Field("id", f.id);
    w.Field("size", std::uint64_t{f.payload.size()});
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void ChunkJson(const ChunkView& v, JsonWriter& w) {
  w.BeginObject();
  w.Field("index", std::uint64_t{v.index});
  w.Field("id", v.id);
  w.Field("key", v.key);
  if (v.chunk != nullptr) {
    const format::Chunk& c = *v.chunk;
    w.Field("flags", c.flags());
    w.Field("must_understand", c.must_understand());
    w.Field("codec", std::uint32_t{c.stored_codec()});
    w.Key("codec_name");
    if (const auto codec = CodecName(c.stored_codec())) {
      w.String(*codec);
    } else {
      w.Null();
    }
  } else {
    for (const std::string_view unknown : {"flags", "must_understand", "codec", "codec_name"}) {
      w.Key(unknown);
      w.Null();
    }
  }
  w.Field("stored_size", v.stored_size);
  w.Key("decoded_size");
  if (v.chunk != nullptr) {
    w.Uint(v.chunk->decoded_size());
  } else {
    w.Null();
  }
  w.Key("offset");
  if (v.part != nullptr) {
    w.Uint(v.part->offset);
  } else {
    w.Null();
  }
  w.Key("checksum");
  ChecksumJson(v.part, w);
  w.EndObject();
}

std::string Json(const Report& r) {
  std::string out;
  JsonWriter w(&out);
  const format::Diagnosis& d = r.diagnosis;
  w.BeginObject();
  w.Field("path", r.path);
  w.Field("bytes_read", r.bytes_read);
  w.Key("prelude");
  if (d.parts.empty()) {
    w.Null();
  } else {
    w.BeginObject();
    w.Field("format_version", d.prelude.format_version);
    w.Field("min_reader_version", d.prelude.min_reader_version);
    w.Field("header_size", d.prelude.header_size);
    w.Field("directory_size", d.prelude.directory_size);
    w.Field("file_size", d.prelude.file_size);
    w.Key("checksums");
    w.BeginObject();
    for (const std::string_view part : {"prelude", "header", "directory", "file"}) {
      w.Key(part);
      ChecksumJson(FindPart(d, part), w);
    }
    w.EndObject();
    w.EndObject();
  }
  w.Key("header");
  if (r.header) {
    HeaderJson(*r.header, w);
  } else {
    w.Null();
  }
  w.Field("chunks_complete", r.file.has_value());
  w.Key("chunks");
  w.BeginArray();
  for (const ChunkView& v : r.chunks) ChunkJson(v, w);
  w.EndArray();
  w.Field("valid", r.status.ok());
  w.Field("status", StatusCodeName(r.status.code()));
  w.Field("message", r.status.message());
  w.EndObject();
  return out;
}

// The report of a file refused before reading (too large): its path and status alone.
std::string RefusedText(const std::string& path, const Status& status) {
  return fmt::format("file: {}\nstatus: {}\n", Printable(path), StatusLine(status));
}

std::string RefusedJson(const std::string& path, const Status& status) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("path", path);
  w.Key("prelude");
  w.Null();
  w.Key("header");
  w.Null();
  w.Field("chunks_complete", false);
  w.Key("chunks");
  w.BeginArray();
  w.EndArray();
  w.Field("valid", false);
  w.Field("status", StatusCodeName(status.code()));
  w.Field("message", status.message());
  w.EndObject();
  return out;
}

}  // namespace

int RunInfo(const InfoOptions& options, std::FILE* out, std::FILE* err) {
  const LoadedFile loaded = LoadFile(options.path);
  switch (loaded.outcome) {
    case LoadedFile::Outcome::kUnreadable:
      fmt::print(err, "rolly info: cannot read {}: {}\n", Printable(options.path), loaded.error);
      return kExitUsage;
    case LoadedFile::Outcome::kTooLarge:
      fmt::print(out, "{}",
                 options.json ? RefusedJson(options.path, loaded.status)
                              : RefusedText(options.path, loaded.status));
      return kExitInvalid;
    case LoadedFile::Outcome::kRead:
      break;
  }
  const Report report = Gather(options, loaded.bytes);
  fmt::print(out, "{}", options.json ? Json(report) : Text(report));
  return report.status.ok() ? kExitValid : kExitInvalid;
}

}  // namespace rolly::cli
