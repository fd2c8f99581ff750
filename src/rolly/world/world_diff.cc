#include "rolly/world/world_diff.h"

#include <cstdio>
#include <map>
#include <utility>

#include "rolly/record/value_tree.h"
#include "rolly/world/sections.h"

namespace rolly::world {
namespace {

using record::SavedKind;
using record::Value;

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "\"";
}

std::string GuidText(std::string_view bytes) {
  if (bytes.size() != 16) return "?";
  ByteReader r(AsBytes(bytes));
  std::uint64_t high = 0, low = 0;
  r.U64(&high);
  r.U64(&low);
  return Guid(high, low).ToString();
}

// Lines "path = value" of one record's values, walked with the saved types of `tables`.
class Flattener {
 public:
  Flattener(const record::ChunkTables& tables, std::string prefix,
            std::map<std::string, std::string>* out)
      : tables_(tables), prefix_(std::move(prefix)), out_(out) {}

  void Fields(const std::vector<record::LayoutField>& fields, const Value& v,
              const std::string& path) {
    for (std::size_t i = 0; i < fields.size() && i < v.items.size(); ++i) {
      std::string name(tables_.name_text(fields[i].name));
      One(fields[i].type, v.items[i], path.empty() ? name : path + "." + name);
    }
  }

  void One(std::uint32_t type, const Value& v, const std::string& path) {
    const record::SavedType& t = tables_.types()[type];
    switch (t.kind) {
      case SavedKind::kBool:
        return Put(path, v.number ? "true" : "false");
      case SavedKind::kInt8:
      case SavedKind::kInt16:
      case SavedKind::kInt32:
      case SavedKind::kInt64:
        return Put(path, std::to_string(static_cast<std::int64_t>(v.number)));
      case SavedKind::kUInt8:
      case SavedKind::kUInt16:
      case SavedKind::kUInt32:
      case SavedKind::kUInt64:
        return Put(path, std::to_string(v.number));
      case SavedKind::kString:
      case SavedKind::kSoftPath:
        return Put(path, Quote(v.text));
      case SavedKind::kName:
      case SavedKind::kEnum:
        return Put(path, v.text.empty() ? "None" : v.text);
      case SavedKind::kText:
        Put(path, "text");
        for (std::size_t i = 0; i < v.items.size(); ++i) {
          Put(path + "#" + std::to_string(i), Quote(i < 3 ? v.items[i].text : ""));
          if (i >= 3) Text(v.items[i], path + "#" + std::to_string(i));
        }
        return;
      case SavedKind::kStruct:
        return Fields(tables_.layouts()[t.a].fields, v, path);
      case SavedKind::kOptional:
        if (v.items.empty()) return Put(path, "unset");
        return One(t.a, v.items[0], path);
      case SavedKind::kVector:
      case SavedKind::kArray:
      case SavedKind::kSet:
        Put(path + ".count", std::to_string(v.items.size()));
        for (std::size_t i = 0; i < v.items.size(); ++i) {
          One(t.a, v.items[i], path + "[" + std::to_string(i) + "]");
        }
        return;
      case SavedKind::kMap:
        Put(path + ".count", std::to_string(v.items.size() / 2));
        for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
          std::string at = path + "[" + std::to_string(i / 2) + "]";
          One(t.a, v.items[i], at + ".key");
          One(t.b, v.items[i + 1], at + ".value");
        }
        return;
      case SavedKind::kOwned:
      case SavedKind::kInstancedStruct: {
        if (v.number == 0 || v.items.empty()) return Put(path, "null");
        const record::Layout& layout = tables_.layouts()[v.number - 1];
        Put(path, std::string(tables_.name_text(layout.name)));
        if (!v.extra.empty()) Put(path + ".extra", Hex(v.extra));
        return Fields(layout.fields, v.items[0], path);
      }
      case SavedKind::kReference:
        return Put(path, v.number == 0 ? "null" : GuidText(v.text));
      case SavedKind::kPropertyBag: {
        const auto& fields = tables_.bag_layouts()[v.number].fields;
        Put(path + ".count", std::to_string(fields.size()));
        return Fields(fields, v, path);
      }
      default:
        // Fixed-size kinds: their bytes as saved, so floats compare by their bits.
        return Put(path, Hex(v.text));
    }
  }

 private:
  void Text(const Value& v, const std::string& path) {
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      Put(path + "#" + std::to_string(i), Quote(i < 3 ? v.items[i].text : ""));
      if (i >= 3) Text(v.items[i], path + "#" + std::to_string(i));
    }
  }
  void Put(const std::string& path, std::string value) {
    (*out_)[prefix_ + path] = std::move(value);
  }

  const record::ChunkTables& tables_;
  std::string prefix_;
  std::map<std::string, std::string>* out_;
};

std::string ActorText(const ActorSection& a) {
  const auto& t = a.transform;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s%slevel=%s at=(%.17g %.17g %.17g) rot=(%.17g %.17g %.17g %.17g) "
                "scale=(%.17g %.17g %.17g) owner=%s parent=%s socket=%s",
                a.spawned ? "spawned " : "", a.destroyed ? "destroyed " : "",
                a.level.empty() ? "-" : std::string(a.level).c_str(), t.translation.x,
                t.translation.y,
                t.translation.z, t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w,
                t.scale.x, t.scale.y, t.scale.z,
                a.owner.is_none() ? "-" : a.owner.ToString().c_str(),
                a.attach_parent.is_none() ? "-" : a.attach_parent.ToString().c_str(),
                a.attach_socket.empty() ? "-" : std::string(a.attach_socket).c_str());
  return buf;
}

Result<std::map<std::string, std::string>> Flatten(const std::vector<WorldChunk>& chunks) {
  std::map<std::string, std::string> out;
  for (const WorldChunk& c : chunks) {
    std::string chunk = std::string(c.id.data(), 4) + " " + Quote(c.key) + " ";
    ROLLY_ASSIGN_OR_RETURN(record::Payload payload, record::DecodePayload(c.payload));
    for (const record::Record& r : payload.records) {
      if (!record::IsKnownObjectKind(r.kind)) {
        out[chunk + "record of kind " + std::to_string(r.kind) + " " + Hex(AsChars(r.unknown))] =
            "kept";
        continue;
      }
      const std::string prefix = chunk + r.subject.ToString() + " ";
      const record::Layout& layout = payload.tables.layouts()[r.layout];
      out[prefix + "class"] = std::string(payload.tables.name_text(layout.name));
      for (const record::Section& s : r.sections) {
        if (s.id == record::kPropSection || s.id == record::kOwnedSection) continue;
        std::string id(s.id.data(), 4);
        if (s.id == kActorSection) {
          ROLLY_ASSIGN_OR_RETURN(ActorSection a, DecodeActor(s.bytes));
          out[prefix + id] = ActorText(a);
        } else {
          out[prefix + id] = Hex(AsChars(s.bytes));
        }
      }
      ROLLY_ASSIGN_OR_RETURN(Value root, record::DecodeProp(payload.tables, r, &payload.records));
      Flattener(payload.tables, prefix, &out).Fields(layout.fields, root, "");
    }
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> DiffWorlds(const std::vector<WorldChunk>& a,
                                            const std::vector<WorldChunk>& b,
                                            std::size_t max_lines) {
  ROLLY_ASSIGN_OR_RETURN(auto left, Flatten(a));
  ROLLY_ASSIGN_OR_RETURN(auto right, Flatten(b));
  std::vector<std::string> lines;
  std::size_t total = 0;
  auto note = [&](std::string line) {
    if (++total <= max_lines) lines.push_back(std::move(line));
  };
  auto l = left.begin();
  auto r = right.begin();
  while (l != left.end() || r != right.end()) {
    if (r == right.end() || (l != left.end() && l->first < r->first)) {
      note(l->first + ": " + l->second + " != (missing)");
      ++l;
    } else if (l == left.end() || r->first < l->first) {
      note(r->first + ": (missing) != " + r->second);
      ++r;
    } else {
      if (l->second != r->second) note(l->first + ": " + l->second + " != " + r->second);
      ++l;
      ++r;
    }
  }
  if (total > max_lines) lines.push_back(std::to_string(total - max_lines) + " more differences");
  return lines;
}

Result<std::string> DumpWorld(const std::vector<WorldChunk>& chunks) {
  ROLLY_ASSIGN_OR_RETURN(auto lines, Flatten(chunks));
  std::string out;
  for (const auto& [key, value] : lines) out += key + " = " + value + "\n";
  return out;
}

Result<std::vector<WorldChunk>> CaptureForCompare(World& world) {
  std::unique_ptr<WorldCapture> capture = world.BeginCapture();
  Status s = capture->Run();
  if (!s.ok()) {
    capture->Forget();
    return s;
  }
  Result<std::vector<WorldChunk>> chunks = capture->Finish();
  capture->Forget();
  return chunks;
}

}  // namespace rolly::world
