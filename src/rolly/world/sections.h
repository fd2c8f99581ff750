// The world layer's own record sections and subject IDs (docs/world.md, "Records of a world").
//
// Sections (none refers to the chunk's tables, so records holding them move between chunks):
//   ACTR  an actor's placement: u8 flags (1 spawned, 2 destroyed, 4 owner, 8 attached,
//         16 rotation, 32 scale, 64 level), [string level], translation 3 x f64,
//         [rotation quat 4 x f64], [scale 3 x f64], [owner 16], [attach parent 16, socket string]
//   COMP  a component's place: its actor's ID (16), its name (string)
//   GLBL  a global's identity: u8 0 then its role (string), or u8 1 then its registered name
//   PLYR  a player's part: varint player index, u8 part (0 controller, 1 pawn, 2 player state)
// Subject IDs of what has no ID of its own are derived from its identity with XXH3 (Derive*):
// two XXH3-64 digests (high, low) of "rolly.id.a:" and "rolly.id.b:" followed by
//   global:     "global\n" role "\n" class name
//   registered: "registered\n" name
//   component:  "component\n", the actor's ID as 16 bytes (docs/format.md form), the name
//   player:     "player\n" index (decimal) "\n" part (decimal)
// These are permanent: saves name their subjects by them.
//
// Thread rules: pure functions.

#ifndef ROLLY_WORLD_SECTIONS_H_
#define ROLLY_WORLD_SECTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/value_types.h"

namespace rolly::world {

inline constexpr record::SectionId kActorSection = {'A', 'C', 'T', 'R'};
inline constexpr record::SectionId kComponentSection = {'C', 'O', 'M', 'P'};
inline constexpr record::SectionId kGlobalSection = {'G', 'L', 'B', 'L'};
inline constexpr record::SectionId kPlayerSection = {'P', 'L', 'Y', 'R'};

// Whether a level, socket, component, role or registered name fits a section (at most 1,024 bytes
// of UTF-8 without NUL); a capture refuses one that does not with InvalidData.
bool FitsSection(std::string_view text);
// The same for a Name, without a scan (Name::is_plain_text).
bool FitsSection(Name name);

// An actor's placement. Its texts are views: of the names given when it is written, of the
// section's bytes when it is read (valid while they are), so neither way copies a text (a save
// writes every actor's, a load reads every actor's).
struct ActorSection {
  bool spawned = false;
  bool destroyed = false;
  // Empty for the persistent level.
  std::string_view level;
  reflect::Transformd transform;
  Guid owner;
  Guid attach_parent;
  std::string_view attach_socket;
  friend bool operator==(const ActorSection&, const ActorSection&) = default;
};
Bytes EncodeActor(const ActorSection& actor);
// The same bytes, appended to `out`.
void AppendActor(const ActorSection& actor, ByteSink* out);
// Reads ACTR into `out` (left unspecified on failure): Damaged for bytes not in the one form.
Status ReadActor(ByteView bytes, ActorSection* out);
// Reads ACTR bytes that ReadActor accepted before (a checked save's, read again in place)
// without checking their values again: quicker, and meant only for such bytes (for others
// `out` is unspecified, and nothing is read outside `bytes`). Every field of `out` is set, so a
// caller may read section after section into one ActorSection.
void ReadCheckedActor(ByteView bytes, ActorSection* out);
// The same, as a value.
Result<ActorSection> DecodeActor(ByteView bytes);

// A component's place; its name is a view, as ActorSection's texts are.
struct ComponentSection {
  Guid actor;
  std::string_view name;
};
Bytes EncodeComponent(const ComponentSection& component);
// The same bytes, appended to `out`.
void AppendComponent(const ComponentSection& component, ByteSink* out);
// Reads COMP into `out` (left unspecified on failure): Damaged for bytes not in the one form.
Status ReadComponent(ByteView bytes, ComponentSection* out);
// As ReadCheckedActor, for COMP bytes that ReadComponent accepted before.
void ReadCheckedComponent(ByteView bytes, ComponentSection* out);
// The same, as a value.
Result<ComponentSection> DecodeComponent(ByteView bytes);

struct GlobalSection {
  bool registered = false;
  // The role, or the registered name.
  std::string name;
};
Bytes EncodeGlobal(const GlobalSection& global);
// The same bytes, appended to `out`.
void AppendGlobal(const GlobalSection& global, ByteSink* out);
Result<GlobalSection> DecodeGlobal(ByteView bytes);

enum class PlayerPart : std::uint8_t { kController = 0, kPawn = 1, kPlayerState = 2 };
struct PlayerSection {
  std::uint32_t index = 0;
  PlayerPart part = PlayerPart::kController;
};
Bytes EncodePlayer(const PlayerSection& player);
// The same bytes, appended to `out`.
void AppendPlayer(const PlayerSection& player, ByteSink* out);
Result<PlayerSection> DecodePlayer(ByteView bytes);

Guid DeriveGlobalId(Name role, Name class_name);
Guid DeriveRegisteredId(Name name);
Guid DeriveComponentId(Guid actor, Name component);
Guid DerivePlayerId(std::uint32_t index, PlayerPart part);

// "Local:0".
std::string PlayerChunkKey(std::uint32_t index);

}  // namespace rolly::world

#endif  // ROLLY_WORLD_SECTIONS_H_
