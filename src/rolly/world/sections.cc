#include "rolly/world/sections.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "rolly/core/checksum.h"
#include "rolly/core/utf8.h"

namespace rolly::world {
namespace {

enum : std::uint8_t {
  kSpawned = 1,
  kDestroyed = 2,
  kOwner = 4,
  kAttached = 8,
  kRotation = 16,
  kScale = 32,
  kLevel = 64,
};

constexpr std::size_t kMaxText = 1024;

bool ReadGuid(ByteReader& r, Guid* g) {
  std::uint64_t high = 0, low = 0;
  if (!r.U64(&high) || !r.U64(&low)) return false;
  *g = Guid(high, low);
  return true;
}
bool ReadText(ByteReader& r, std::string_view* out) {
  return r.LengthPrefixed(kMaxText, out) && IsValidUtf8(*out) &&
         out->find('\0') == std::string_view::npos;
}
bool ReadText(ByteReader& r, std::string* out) {
  std::string_view text;
  if (!ReadText(r, &text)) return false;
  out->assign(text);
  return true;
}

// Each half of the ID is the checksum of a prefix ("rolly.id.a:" or "rolly.id.b:") and the text.
// DeriveFrom hashes `size` bytes at `buffer` whose text starts after room for the prefix (kPrefix
// bytes), writing each prefix there in turn. Derive copies a text in once, onto the stack when
// it fits (most globals and registered objects), so deriving an ID allocates nothing then;
// DeriveComponentId writes its text in place.
constexpr std::size_t kPrefix = 11;
static_assert(sizeof("rolly.id.a:") - 1 == kPrefix && sizeof("rolly.id.b:") - 1 == kPrefix);
Guid DeriveFrom(std::uint8_t* buffer, std::size_t size) {
  std::memcpy(buffer, "rolly.id.a:", kPrefix);
  const std::uint64_t high = Checksum::Of(ByteView(buffer, size)).bits();
  std::memcpy(buffer, "rolly.id.b:", kPrefix);
  return Guid(high, Checksum::Of(ByteView(buffer, size)).bits());
}
Guid Derive(std::string_view text) {
  std::uint8_t stack[kPrefix + 1100];
  std::string heap;
  std::uint8_t* buffer = stack;
  const std::size_t size = kPrefix + text.size();
  if (size > sizeof(stack)) {
    heap.resize(size);
    buffer = reinterpret_cast<std::uint8_t*>(heap.data());
  }
  std::memcpy(buffer + kPrefix, text.data(), text.size());
  return DeriveFrom(buffer, size);
}

}  // namespace

bool FitsSection(std::string_view text) {
  return text.size() <= kMaxText && IsValidUtf8(text) && text.find('\0') == std::string_view::npos;
}

bool FitsSection(Name name) {
  return name.view().size() <= kMaxText && name.is_plain_text();
}

Bytes EncodeActor(const ActorSection& a) {
  ByteSink out;
  AppendActor(a, &out);
  return out.ToBytes();
}

void AppendActor(const ActorSection& a, ByteSink* out) {
  const auto& t = a.transform;
  // Compared by their bits, as == compares them (every save passes here): a double is 0 when its
  // bits but the sign are clear (-0 too), 1 only as the one pattern; a NaN is neither.
  auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  constexpr std::uint64_t kOne = 0x3FF0000000000000ull;
  const bool rotation =
      ((bits(t.rotation.x) | bits(t.rotation.y) | bits(t.rotation.z)) << 1) != 0 ||
      bits(t.rotation.w) != kOne;
  const bool scale = ((bits(t.scale.x) ^ kOne) | (bits(t.scale.y) ^ kOne) |
                      (bits(t.scale.z) ^ kOne)) != 0;
  std::uint8_t flags = (a.spawned ? kSpawned : 0) | (a.destroyed ? kDestroyed : 0) |
                       (a.owner.is_none() ? 0 : kOwner) |
                       (a.attach_parent.is_none() ? 0 : kAttached) | (rotation ? kRotation : 0) |
                       (scale ? kScale : 0) | (a.level.empty() ? 0 : kLevel);
  if (flags & kLevel) {  // an actor of another level than the persistent one
    out->U8(flags);
    out->LengthPrefixed(a.level);
  }
  // The flags (unless written above) and the fixed-size fields, written straight into room made
  // for the most there can be.
  out->Reserve(1 + 10 * 8 + 2 * 16);
  std::uint8_t* const fixed = out->data() + out->size();
  std::uint8_t* p = fixed;
  if (!(flags & kLevel)) *p++ = flags;
  auto f64 = [&p](double v) {
    StoreU64(p, std::bit_cast<std::uint64_t>(v));
    p += 8;
  };
  auto guid = [&p](Guid g) {  // high, then low, as ReadGuid reads them
    StoreU64(p, g.high());
    StoreU64(p + 8, g.low());
    p += 16;
  };
  f64(t.translation.x);
  f64(t.translation.y);
  f64(t.translation.z);
  if (rotation) {
    f64(t.rotation.x);
    f64(t.rotation.y);
    f64(t.rotation.z);
    f64(t.rotation.w);
  }
  if (scale) {
    f64(t.scale.x);
    f64(t.scale.y);
    f64(t.scale.z);
  }
  if (flags & kOwner) guid(a.owner);
  if (flags & kAttached) guid(a.attach_parent);
  out->Extend(static_cast<std::size_t>(p - fixed));  // the bytes just stored
  if (flags & kAttached) out->LengthPrefixed(a.attach_socket);
}

namespace {

// A text of a section: checked (at most 1,024 bytes of UTF-8 without NUL), or, kChecked, taken
// as it is from bytes that passed that check before.
template <bool kChecked>
bool ReadTextOf(ByteReader& r, std::string_view* out) {
  if constexpr (kChecked) {
    return r.LengthPrefixed(kMaxText, out);
  } else {
    return ReadText(r, out);
  }
}

// ReadActor, and (kChecked) ReadCheckedActor, which checks the bounds and what its walk needs
// (no UTF-8, NUL or one-form checks; the result is not read on failure). After the flags and
// the level, the fixed part (the numbers and IDs the flags call for) is bounded once and read by
// plain loads: a load reads every actor's section twice, once in its check and once to apply it.
template <bool kChecked>
bool ReadActorAs(ByteView bytes, ActorSection* a) {
  ByteReader r(bytes);
  std::uint8_t flags = 0;
  a->level = {};
  a->attach_socket = {};
  if (!r.U8(&flags) || (!kChecked && flags >= 128)) return false;
  if ((flags & kLevel) && (!ReadTextOf<kChecked>(r, &a->level) || a->level.empty())) return false;
  const bool rotated = flags & kRotation;
  const bool scaled = flags & kScale;
  const bool owned = flags & kOwner;
  const bool attached = flags & kAttached;
  ByteView fixed;
  if (!r.Raw(8 * (3 + (rotated ? 4 : 0) + (scaled ? 3 : 0)) + (owned ? 16 : 0) +
                 (attached ? 16 : 0),
             &fixed)) {
    return false;
  }
  const std::uint8_t* p = fixed.data();
  auto f64 = [&p] {
    const double d = std::bit_cast<double>(LoadU64(p));
    p += 8;
    return d;
  };
  auto guid = [&p] {
    const Guid g(LoadU64(p), LoadU64(p + 8));
    p += 16;
    return g;
  };
  reflect::Transformd& t = a->transform;
  // (Braced lists are evaluated in order.)
  t.translation = {f64(), f64(), f64()};
  t.rotation = rotated ? reflect::Quatd{f64(), f64(), f64(), f64()} : reflect::Quatd{};
  t.scale = scaled ? reflect::Vector3d{f64(), f64(), f64()} : reflect::Vector3d{1, 1, 1};
  a->owner = owned ? guid() : Guid();
  a->attach_parent = attached ? guid() : Guid();
  if (attached && !ReadTextOf<kChecked>(r, &a->attach_socket)) return false;
  a->spawned = flags & kSpawned;
  a->destroyed = flags & kDestroyed;
  if constexpr (!kChecked) {
    // The one form: what equals its default is left out.
    const auto& q = t.rotation;
    const auto& k = t.scale;
    if ((rotated && q.x == 0 && q.y == 0 && q.z == 0 && q.w == 1) ||
        (scaled && k.x == 1 && k.y == 1 && k.z == 1) || (owned && a->owner.is_none()) ||
        (attached && a->attach_parent.is_none())) {
      return false;
    }
  }
  return r.empty();
}

template <bool kChecked>
bool ReadComponentAs(ByteView bytes, ComponentSection* c) {
  ByteReader r(bytes);
  return ReadGuid(r, &c->actor) && ReadTextOf<kChecked>(r, &c->name) && !c->name.empty() &&
         r.empty();
}

}  // namespace

Status ReadActor(ByteView bytes, ActorSection* a) {
  if (!ReadActorAs<false>(bytes, a)) return DamagedError("ACTR: not in the one form");
  return OkStatus();
}

void ReadCheckedActor(ByteView bytes, ActorSection* a) { ReadActorAs<true>(bytes, a); }

Result<ActorSection> DecodeActor(ByteView bytes) {
  ActorSection a;
  ROLLY_RETURN_IF_ERROR(ReadActor(bytes, &a));
  return a;
}

Bytes EncodeComponent(const ComponentSection& c) {
  ByteSink out;
  AppendComponent(c, &out);
  return out.ToBytes();
}

void AppendComponent(const ComponentSection& c, ByteSink* out) {
  out->Reserve(16);
  out->U64(c.actor.high());
  out->U64(c.actor.low());
  out->LengthPrefixed(c.name);
}

Status ReadComponent(ByteView bytes, ComponentSection* c) {
  if (!ReadComponentAs<false>(bytes, c)) return DamagedError("COMP: not in the one form");
  return OkStatus();
}

void ReadCheckedComponent(ByteView bytes, ComponentSection* c) { ReadComponentAs<true>(bytes, c); }

Result<ComponentSection> DecodeComponent(ByteView bytes) {
  ComponentSection c;
  ROLLY_RETURN_IF_ERROR(ReadComponent(bytes, &c));
  return c;
}

Bytes EncodeGlobal(const GlobalSection& g) {
  ByteSink out;
  AppendGlobal(g, &out);
  return out.ToBytes();
}

void AppendGlobal(const GlobalSection& g, ByteSink* out) {
  out->U8(g.registered ? 1 : 0);
  out->LengthPrefixed(g.name);
}

Result<GlobalSection> DecodeGlobal(ByteView bytes) {
  ByteReader r(bytes);
  GlobalSection g;
  std::uint8_t kind = 0;
  if (!r.U8(&kind) || kind > 1 || !ReadText(r, &g.name) || g.name.empty() || !r.empty()) {
    return DamagedError("GLBL: not in the one form");
  }
  g.registered = kind == 1;
  return g;
}

Bytes EncodePlayer(const PlayerSection& p) {
  ByteSink out;
  AppendPlayer(p, &out);
  return out.ToBytes();
}

void AppendPlayer(const PlayerSection& p, ByteSink* out) {
  out->Varint(p.index);
  out->U8(static_cast<std::uint8_t>(p.part));
}

Result<PlayerSection> DecodePlayer(ByteView bytes) {
  ByteReader r(bytes);
  PlayerSection p;
  std::uint64_t index = 0;
  std::uint8_t part = 0;
  if (!r.VarintAtMost(0xFFFF, &index) || !r.U8(&part) || part > 2 || !r.empty()) {
    return DamagedError("PLYR: not in the one form");
  }
  p.index = static_cast<std::uint32_t>(index);
  p.part = static_cast<PlayerPart>(part);
  return p;
}

Guid DeriveGlobalId(Name role, Name class_name) {
  return Derive("global\n" + role.str() + "\n" + class_name.str());
}
Guid DeriveRegisteredId(Name name) { return Derive("registered\n" + name.str()); }
Guid DeriveComponentId(Guid actor, Name component) {
  // "component\n", the actor's 16 bytes as saved, then the name, written once after the prefix's
  // room: no text formatting and one copy of the name on a save's hot path.
  std::uint8_t buffer[kPrefix + 10 + 16 + kMaxText];
  std::uint8_t* p = buffer + kPrefix;
  std::memcpy(p, "component\n", 10);
  StoreU64(p + 10, actor.high());
  StoreU64(p + 18, actor.low());
  const std::size_t n = std::min(component.view().size(), kMaxText);
  std::memcpy(p + 26, component.view().data(), n);
  return DeriveFrom(buffer, kPrefix + 26 + n);
}
Guid DerivePlayerId(std::uint32_t index, PlayerPart part) {
  return Derive("player\n" + std::to_string(index) + "\n" +
                std::to_string(static_cast<int>(part)));
}

std::string PlayerChunkKey(std::uint32_t index) { return "Local:" + std::to_string(index); }

}  // namespace rolly::world
