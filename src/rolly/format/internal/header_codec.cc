// Header fields in ID order, each a varint ID, a varint length and a payload; defaults omitted.

#include "rolly/format/internal/header_codec.h"

#include <fmt/format.h>

#include <string>

#include "rolly/core/utf8.h"

namespace rolly::format_internal {
namespace {

using format::CarriedField;
using format::CustomVersion;
using format::Header;
using format::HeaderField;

void EmitBytes(HeaderField id, ByteView payload, ByteWriter& w) {
  if (payload.empty()) return;
  w.Varint(static_cast<std::uint32_t>(id));
  w.LengthPrefixed(payload);
}

void EmitVarint(HeaderField id, std::uint64_t value, ByteWriter& w) {
  if (value == 0) return;
  w.Varint(static_cast<std::uint32_t>(id));
  w.Varint(VarintSize(value));
  w.Varint(value);
}

// Reads a payload that must be exactly one varint of at most `max`, not zero (zero is omitted).
bool ReadVarintPayload(ByteView payload, std::uint64_t max, std::uint64_t* value) {
  ByteReader r(payload);
  return r.VarintAtMost(max, value) && r.empty() && *value != 0;
}

Status Bad(std::string_view what) { return DamagedError(fmt::format("header: {}", what)); }

}  // namespace

Status CheckWritableString(std::string_view text, std::uint64_t max_size, std::string_view what) {
  if (text.size() > max_size) {
    return InvalidInputError(
        fmt::format("{} is {} bytes, above its bound of {}", what, text.size(), max_size));
  }
  if (text.find('\0') != std::string_view::npos) {
    return InvalidInputError(fmt::format("{} holds a NUL character", what));
  }
  if (!IsValidUtf8(text)) return InvalidInputError(fmt::format("{} is not valid UTF-8", what));
  return OkStatus();
}

bool IsReadableString(std::string_view text, std::uint64_t max_size) {
  return text.size() <= max_size && text.find('\0') == std::string_view::npos &&
         IsValidUtf8(text);
}

Status CheckHeader(const Header& h) {
  ROLLY_RETURN_IF_ERROR(CheckWritableString(h.slot_name, format::kMaxSlotNameSize, "slot name"));
  ROLLY_RETURN_IF_ERROR(CheckWritableString(h.game_build, format::kMaxGameBuildSize, "game build"));
  ROLLY_RETURN_IF_ERROR(CheckWritableString(h.title, format::kMaxTitleSize, "title"));
  if (h.metadata.size() > format::kMaxMetadataSize) {
    return InvalidInputError(fmt::format("metadata is {} bytes, above its bound of {}",
                                         h.metadata.size(), format::kMaxMetadataSize));
  }
  if (h.thumbnail.size() > format::kMaxThumbnailSize) {
    return InvalidInputError(fmt::format("thumbnail is {} bytes, above its bound of {}",
                                         h.thumbnail.size(), format::kMaxThumbnailSize));
  }
  if (h.custom_versions.size() > format::kMaxCustomVersions) {
    return InvalidInputError(fmt::format("{} custom versions, above the bound of {}",
                                         h.custom_versions.size(), format::kMaxCustomVersions));
  }
  for (std::size_t i = 0; i < h.custom_versions.size(); ++i) {
    const CustomVersion& v = h.custom_versions[i];
    if (v.key.empty()) return InvalidInputError("a custom version has an empty key");
    ROLLY_RETURN_IF_ERROR(
        CheckWritableString(v.key, format::kMaxCustomVersionKeySize, "custom version key"));
    if (i > 0 && !(h.custom_versions[i - 1].key < v.key)) {
      return InvalidInputError("custom versions are not sorted by key, or a key repeats");
    }
  }
  if (h.carried_fields.size() > format::kMaxCarriedFields) {
    return InvalidInputError(fmt::format("{} carried header fields, above the bound of {}",
                                         h.carried_fields.size(), format::kMaxCarriedFields));
  }
  for (std::size_t i = 0; i < h.carried_fields.size(); ++i) {
    const CarriedField& f = h.carried_fields[i];
    if (f.id <= format::kLastKnownHeaderField) {
      return InvalidInputError(
          fmt::format("carried header field {} has the ID of a field this version knows", f.id));
    }
    if (i > 0 && h.carried_fields[i - 1].id >= f.id) {
      return InvalidInputError("carried header fields are not sorted by ID, or an ID repeats");
    }
  }
  return OkStatus();
}

void EncodeHeader(const Header& h, Bytes* out) {
  ByteWriter w(out);
  EmitBytes(HeaderField::kSlotName, AsBytes(h.slot_name), w);
  EmitVarint(HeaderField::kSequence, h.sequence, w);
  EmitVarint(HeaderField::kGameDataVersion, h.game_data_version, w);
  EmitVarint(HeaderField::kLibraryVersion, h.library_version, w);
  EmitVarint(HeaderField::kRecordVersion, h.record_version, w);
  EmitBytes(HeaderField::kGameBuild, AsBytes(h.game_build), w);
  EmitVarint(HeaderField::kSaveTime, ZigZagEncode(h.save_time_us), w);
  EmitVarint(HeaderField::kKind, h.kind, w);
  EmitBytes(HeaderField::kTitle, AsBytes(h.title), w);
  EmitBytes(HeaderField::kMetadata, h.metadata, w);
  EmitBytes(HeaderField::kThumbnail, h.thumbnail, w);
  if (!h.custom_versions.empty()) {
    Bytes payload;
    ByteWriter p(&payload);
    p.Varint(h.custom_versions.size());
    for (const CustomVersion& v : h.custom_versions) {
      p.LengthPrefixed(v.key);
      p.Varint(v.version);
    }
    EmitBytes(HeaderField::kCustomVersions, payload, w);
  }
  // Carried IDs are all above the known ones, so ID order puts them last.
  for (const CarriedField& f : h.carried_fields) {
    w.Varint(f.id);
    w.LengthPrefixed(f.payload);
  }
}

Result<Header> DecodeHeader(ByteView bytes) {
  Header h;
  ByteReader r(bytes);
  std::uint64_t last_id = 0;
  while (!r.empty()) {
    std::uint64_t id;
    ByteView payload;
    if (!r.VarintAtMost(UINT32_MAX, &id)) return Bad("a field ID is not readable");
    if (id <= last_id) return Bad(fmt::format("field {} is out of order or repeated", id));
    last_id = id;
    if (!r.LengthPrefixed(bytes.size(), &payload)) {
      return Bad(fmt::format("field {} runs past the header's end", id));
    }
    const std::string_view text = AsChars(payload);
    std::uint64_t v = 0;
    switch (static_cast<HeaderField>(id)) {
      case HeaderField::kSlotName:
        if (payload.empty() || !IsReadableString(text, format::kMaxSlotNameSize)) {
          return Bad("slot name is not valid");
        }
        h.slot_name = text;
        break;
      case HeaderField::kSequence:
        if (!ReadVarintPayload(payload, UINT64_MAX, &v)) return Bad("sequence is not valid");
        h.sequence = v;
        break;
      case HeaderField::kGameDataVersion:
        if (!ReadVarintPayload(payload, UINT32_MAX, &v)) return Bad("game data version is not valid");
        h.game_data_version = static_cast<std::uint32_t>(v);
        break;
      case HeaderField::kLibraryVersion:
        if (!ReadVarintPayload(payload, UINT32_MAX, &v)) return Bad("library version is not valid");
        h.library_version = static_cast<std::uint32_t>(v);
        break;
      case HeaderField::kRecordVersion:
        if (!ReadVarintPayload(payload, UINT32_MAX, &v)) return Bad("record version is not valid");
        h.record_version = static_cast<std::uint32_t>(v);
        break;
      case HeaderField::kGameBuild:
        if (payload.empty() || !IsReadableString(text, format::kMaxGameBuildSize)) {
          return Bad("game build is not valid");
        }
        h.game_build = text;
        break;
      case HeaderField::kSaveTime:
        if (!ReadVarintPayload(payload, UINT64_MAX, &v)) return Bad("save time is not valid");
        h.save_time_us = ZigZagDecode(v);
        break;
      case HeaderField::kKind:
        if (!ReadVarintPayload(payload, UINT32_MAX, &v)) return Bad("kind is not valid");
        h.kind = static_cast<std::uint32_t>(v);
        break;
      case HeaderField::kTitle:
        if (payload.empty() || !IsReadableString(text, format::kMaxTitleSize)) {
          return Bad("title is not valid");
        }
        h.title = text;
        break;
      case HeaderField::kMetadata:
        if (payload.empty() || payload.size() > format::kMaxMetadataSize) {
          return Bad("metadata is not valid");
        }
        h.metadata.assign(payload.begin(), payload.end());
        break;
      case HeaderField::kThumbnail:
        if (payload.empty() || payload.size() > format::kMaxThumbnailSize) {
          return Bad("thumbnail is not valid");
        }
        h.thumbnail.assign(payload.begin(), payload.end());
        break;
      case HeaderField::kCustomVersions: {
        ByteReader p(payload);
        std::uint64_t count;
        if (!p.VarintAtMost(format::kMaxCustomVersions, &count) || count == 0) {
          return Bad("custom versions are not valid");
        }
        // Each entry takes at least 3 bytes, so a forged count cannot reserve much.
        if (count > p.remaining() / 3) return Bad("custom versions run past their field");
        h.custom_versions.reserve(count);
        for (std::uint64_t i = 0; i < count; ++i) {
          std::string_view key;
          std::uint64_t version;
          if (!p.LengthPrefixed(format::kMaxCustomVersionKeySize, &key) || key.empty() ||
              !IsReadableString(key, format::kMaxCustomVersionKeySize) ||
              !p.VarintAtMost(UINT32_MAX, &version)) {
            return Bad("a custom version is not valid");
          }
          if (i > 0 && !(h.custom_versions.back().key < key)) {
            return Bad("custom versions are out of order or repeated");
          }
          h.custom_versions.push_back(
              CustomVersion{std::string(key), static_cast<std::uint32_t>(version)});
        }
        if (!p.empty()) return Bad("custom versions field has trailing bytes");
        break;
      }
      default:
        if (id <= format::kLastKnownHeaderField) return Bad(fmt::format("field ID {} is not valid", id));
        if (h.carried_fields.size() >= format::kMaxCarriedFields) {
          return Bad("more carried fields than the bound");
        }
        h.carried_fields.push_back(
            CarriedField{static_cast<std::uint32_t>(id), Bytes(payload.begin(), payload.end())});
        break;
    }
  }
  return h;
}

}  // namespace rolly::format_internal
