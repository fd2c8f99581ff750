#include "rolly/scene/scene.h"

#include <algorithm>
#include <cassert>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "rolly/core/guid_map.h"
#include "rolly/scene/internal/json_values.h"

namespace rolly::scene {

using nlohmann::json;
using reflect::ClassInfo;
using reflect::TypeRegistry;
using scene_internal::PendingReference;

namespace {

// An object the map names: its class and the values to set on it (null when none).
struct ObjectSpec {
  const ClassInfo* cls = nullptr;
  json values;
};

struct ComponentSpec {
  Name name;
  const ClassInfo* cls = nullptr;  // null: a default component the actor makes itself
  json values;
};

struct ActorSpec {
  const ClassInfo* cls = nullptr;
  Guid id;
  Name level;
  reflect::Transformd transform;
  std::vector<Name> tags;
  world::Saving saving = world::Saving::kWithSavedState;
  json values;
  std::vector<ComponentSpec> components;
  Guid owner;
  Guid attach_parent;
  Name attach_socket;
};

struct LevelSpec {
  Name name;
  bool loaded = true;
};

struct PlayerSpec {
  ObjectSpec controller;
  std::optional<ObjectSpec> pawn;
  ObjectSpec player_state;
  reflect::Transformd transform;
};

std::string ActorWhere(const std::string& map, Guid id, const ClassInfo* cls) {
  return "map " + map + ": actor " + id.ToString() + (cls ? " (" + cls->name().str() + ")" : "");
}

// An actor being destroyed, or one of its components, as a key of the GuidSet of those (its
// address as Actor or as Component; a set of GUIDs is the small table at hand, as in the world
// layer's DropRemoved).
Guid GoneKey(const void* object) { return Guid(0, reinterpret_cast<std::uintptr_t>(object)); }

}  // namespace

struct Scene::MapData {
  std::string path;
  std::string name;
  std::vector<LevelSpec> levels;
  std::optional<ObjectSpec> game_instance;
  std::vector<ObjectSpec> subsystems;
  std::optional<ObjectSpec> game_mode, game_state, level_script;
  std::vector<ObjectSpec> world_subsystems;
  std::vector<PlayerSpec> players;
  std::vector<ActorSpec> actors;
};

struct Scene::World {
  std::shared_ptr<const MapData> map;
  std::vector<Name> levels;  // loaded, the persistent level first
  std::unique_ptr<GameMode> game_mode;
  std::unique_ptr<GameState> game_state;
  std::unique_ptr<LevelScript> level_script;
  std::vector<std::unique_ptr<WorldSubsystem>> world_subsystems;
  std::vector<std::unique_ptr<PlayerController>> controllers;
  std::vector<std::unique_ptr<PlayerState>> player_states;
  std::vector<LocalPlayer> players;
  // Actors by creation number, in creation order: one array walked in order, as an engine's
  // actor list is (a save visits every actor).
  std::vector<std::pair<std::uint64_t, std::unique_ptr<Actor>>> actors;
  // Each actor's creation number (its key in `actors`) and address, in one open-addressing table
  // (a load looks up every saved actor by ID).
  GuidMap<std::pair<std::uint64_t, Actor*>> by_id;
  std::uint64_t next_seq = 0;
  bool begun_play = false;
  // Where in `actors` FinishSpawn looks first: after the actor it finished last. A load begins
  // the spawns of its actors in turn, then finishes them in the same order, so the actor asked
  // for is normally there (found without the ID table, and asked into cache a few ahead).
  std::size_t finish_at = 0;

  Actor* Find(Guid id) const {
    const auto* found = by_id.Find(id);
    return found == nullptr ? nullptr : found->second;
  }
  bool IsLoaded(Name level) const {
    return std::find(levels.begin(), levels.end(), level) != levels.end();
  }
  std::vector<Guid> Ids() const {
    std::vector<Guid> ids;
    ids.reserve(actors.size());
    for (const auto& [seq, a] : actors) ids.push_back(a->id);
    return ids;
  }
};

namespace {

// Parses a map's text; checks every class, ID and key, leaving values to the build.
class MapParser {
 public:
  MapParser(const TypeRegistry& registry, std::string path) : registry_(registry) {
    data_.path = std::move(path);
  }

  Result<std::unique_ptr<Scene::MapData>> Parse(std::string_view text) {
    json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded()) return Err("is not valid JSON");
    if (!root.is_object()) return Err("is not a JSON object");
    static const std::set<std::string> kKeys = {"name",         "levels",     "game_instance",
                                                "game_mode",    "game_state", "world_subsystems",
                                                "level_script", "players",    "actors"};
    for (auto it = root.begin(); it != root.end(); ++it)
      if (!kKeys.count(it.key())) return Err("has an unknown key \"" + it.key() + "\"");
    if (root.contains("name")) {
      if (!root["name"].is_string()) return Err("\"name\" is not a string");
      data_.name = root["name"].get<std::string>();
    }
    ROLLY_RETURN_IF_ERROR(ParseLevels(root));
    if (root.contains("game_instance")) {
      const json& gi = root["game_instance"];
      ObjectSpec spec;
      ROLLY_RETURN_IF_ERROR(ParseObject(gi, "GameInstance", "game_instance", &spec));
      data_.game_instance = std::move(spec);
      if (gi.is_object() && gi.contains("subsystems"))
        ROLLY_RETURN_IF_ERROR(ParseList(gi["subsystems"], "Subsystem", "game_instance.subsystems",
                                        &data_.subsystems));
    }
    ROLLY_RETURN_IF_ERROR(ParseOptional(root, "game_mode", "GameMode", &data_.game_mode));
    ROLLY_RETURN_IF_ERROR(ParseOptional(root, "game_state", "GameState", &data_.game_state));
    ROLLY_RETURN_IF_ERROR(ParseOptional(root, "level_script", "LevelScript", &data_.level_script));
    if (root.contains("world_subsystems"))
      ROLLY_RETURN_IF_ERROR(ParseList(root["world_subsystems"], "WorldSubsystem",
                                      "world_subsystems", &data_.world_subsystems));
    ROLLY_RETURN_IF_ERROR(ParsePlayers(root));
    ROLLY_RETURN_IF_ERROR(ParseActors(root));
    return std::make_unique<Scene::MapData>(std::move(data_));
  }

 private:
  Status Err(const std::string& what) const {
    return InvalidInputError("map " + data_.path + " " + what);
  }

  Status ParseLevels(const json& root) {
    if (!root.contains("levels")) {
      data_.levels.push_back({Name("Persistent"), true});
      return OkStatus();
    }
    const json& levels = root["levels"];
    if (!levels.is_array() || levels.empty()) return Err("\"levels\" is not a non-empty array");
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const json& l = levels[i];
      LevelSpec spec;
      if (l.is_string()) {
        spec.name = Name(l.get<std::string>());
      } else if (l.is_object() && l.contains("name") && l["name"].is_string()) {
        spec.name = Name(l["name"].get<std::string>());
        if (l.contains("loaded")) {
          if (!l["loaded"].is_boolean()) return Err("level \"loaded\" is not a boolean");
          spec.loaded = l["loaded"].get<bool>();
        }
      } else {
        return Err("level " + std::to_string(i) + " is neither a name nor {\"name\": ...}");
      }
      if (spec.name.is_none()) return Err("has a level with an empty name");
      if (i == 0) spec.loaded = true;  // the persistent level is always loaded
      for (const LevelSpec& other : data_.levels)
        if (other.name == spec.name) return Err("has level " + spec.name.str() + " twice");
      data_.levels.push_back(spec);
    }
    return OkStatus();
  }

  // A class named `text` that is a `base`, that the registry can make.
  Result<const ClassInfo*> ClassOf(const json& text, std::string_view base,
                                   const std::string& where) const {
    if (!text.is_string()) return Err(where + ": the class is not a string");
    const ClassInfo* cls = registry_.FindClass(Name(text.get<std::string>()));
    if (cls == nullptr) return Err(where + ": unknown class \"" + text.get<std::string>() + "\"");
    const ClassInfo* base_cls = registry_.FindClass(Name(base));
    if (base_cls == nullptr || !cls->IsA(*base_cls))
      return Err(where + ": class " + cls->name().str() + " is not a " + std::string(base));
    if (!cls->can_create())
      return Err(where + ": class " + cls->name().str() +
                 " cannot be made (abstract, or not "
                 "default-constructible)");
    return cls;
  }

  Status ParseObject(const json& j, std::string_view base, const std::string& where,
                     ObjectSpec* out) const {
    if (j.is_string()) {
      ROLLY_ASSIGN_OR_RETURN(out->cls, ClassOf(j, base, where));
      return OkStatus();
    }
    if (!j.is_object() || !j.contains("class"))
      return Err(where + ": expected a class name or {\"class\": ..., \"values\": {...}}");
    ROLLY_ASSIGN_OR_RETURN(out->cls, ClassOf(j["class"], base, where));
    if (j.contains("values")) {
      if (!j["values"].is_object()) return Err(where + ": \"values\" is not an object");
      out->values = j["values"];
    }
    return OkStatus();
  }

  Status ParseOptional(const json& root, const char* key, std::string_view base,
                       std::optional<ObjectSpec>* out) const {
    if (!root.contains(key) || root[key].is_null()) return OkStatus();
    ObjectSpec spec;
    ROLLY_RETURN_IF_ERROR(ParseObject(root[key], base, key, &spec));
    *out = std::move(spec);
    return OkStatus();
  }

  Status ParseList(const json& list, std::string_view base, const std::string& where,
                   std::vector<ObjectSpec>* out) const {
    if (!list.is_array()) return Err(where + " is not an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
      ObjectSpec spec;
      ROLLY_RETURN_IF_ERROR(
          ParseObject(list[i], base, where + "[" + std::to_string(i) + "]", &spec));
      out->push_back(std::move(spec));
    }
    return OkStatus();
  }

  Status ParsePlayers(const json& root) {
    if (!root.contains("players")) return OkStatus();
    const json& players = root["players"];
    if (!players.is_array()) return Err("\"players\" is not an array");
    for (std::size_t i = 0; i < players.size(); ++i) {
      const std::string where = "players[" + std::to_string(i) + "]";
      const json& p = players[i];
      if (!p.is_object()) return Err(where + " is not an object");
      PlayerSpec spec;
      if (!p.contains("controller")) return Err(where + " has no \"controller\"");
      ROLLY_RETURN_IF_ERROR(ParseObject(p["controller"], "PlayerController", where + ".controller",
                                        &spec.controller));
      if (!p.contains("player_state")) return Err(where + " has no \"player_state\"");
      ROLLY_RETURN_IF_ERROR(ParseObject(p["player_state"], "PlayerState", where + ".player_state",
                                        &spec.player_state));
      if (p.contains("pawn") && !p["pawn"].is_null()) {
        ObjectSpec pawn;
        ROLLY_RETURN_IF_ERROR(ParseObject(p["pawn"], "Pawn", where + ".pawn", &pawn));
        spec.pawn = std::move(pawn);
      }
      if (p.contains("transform")) {
        Result<reflect::Transformd> t =
            scene_internal::ParseTransform(p["transform"], "map " + data_.path + " " + where);
        if (!t.ok()) return t.status();
        spec.transform = *t;
      }
      data_.players.push_back(std::move(spec));
    }
    return OkStatus();
  }

  Result<Guid> IdOf(const json& j, const std::string& where) const {
    if (!j.is_string()) return Err(where + ": the ID is not a string");
    std::optional<Guid> g = Guid::Parse(j.get_ref<const std::string&>());
    if (!g || g->is_none())
      return Err(where + ": \"" + j.get<std::string>() + "\" is not an actor ID (a GUID)");
    return *g;
  }

  Status ParseActor(const json& a, std::size_t i) {
    std::string where = "actors[" + std::to_string(i) + "]";
    if (!a.is_object()) return Err(where + " is not an object");
    static const std::set<std::string> kKeys = {"class", "id",     "level",  "transform",
                                                "tags",  "saving", "values", "components",
                                                "owner", "attach"};
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!kKeys.count(it.key())) return Err(where + " has an unknown key \"" + it.key() + "\"");
    ActorSpec spec;
    if (!a.contains("id")) return Err(where + " has no \"id\"");
    ROLLY_ASSIGN_OR_RETURN(spec.id, IdOf(a["id"], where));
    where = "actor " + spec.id.ToString();
    if (!a.contains("class")) return Err(where + " has no \"class\"");
    ROLLY_ASSIGN_OR_RETURN(spec.cls, ClassOf(a["class"], "Actor", where));
    where += " (" + spec.cls->name().str() + ")";
    if (!ids_.insert(spec.id).second) return Err(where + ": the ID is used twice");
    spec.level = data_.levels.front().name;
    if (a.contains("level")) {
      if (!a["level"].is_string()) return Err(where + ": \"level\" is not a string");
      spec.level = Name(a["level"].get<std::string>());
      bool known = false;
      for (const LevelSpec& l : data_.levels) known = known || l.name == spec.level;
      if (!known) return Err(where + ": unknown level \"" + spec.level.str() + "\"");
    }
    if (a.contains("transform")) {
      Result<reflect::Transformd> t =
          scene_internal::ParseTransform(a["transform"], "map " + data_.path + " " + where);
      if (!t.ok()) return t.status();
      spec.transform = *t;
    }
    if (a.contains("tags")) {
      const json& tags = a["tags"];
      if (!tags.is_array()) return Err(where + ": \"tags\" is not an array");
      for (const json& t : tags) {
        if (!t.is_string()) return Err(where + ": a tag is not a string");
        spec.tags.push_back(Name(t.get<std::string>()));
      }
    }
    if (a.contains("saving")) {
      const json& s = a["saving"];
      const std::string text = s.is_string() ? s.get<std::string>() : "";
      if (text == "WithSavedState")
        spec.saving = world::Saving::kWithSavedState;
      else if (text == "Always")
        spec.saving = world::Saving::kAlways;
      else if (text == "Never")
        spec.saving = world::Saving::kNever;
      else
        return Err(where + ": \"saving\" is not WithSavedState, Always or Never");
    }
    if (a.contains("values")) {
      if (!a["values"].is_object()) return Err(where + ": \"values\" is not an object");
      spec.values = a["values"];
    }
    if (a.contains("components")) {
      const json& cs = a["components"];
      if (!cs.is_array()) return Err(where + ": \"components\" is not an array");
      for (std::size_t k = 0; k < cs.size(); ++k) {
        const json& c = cs[k];
        const std::string cw = where + " component " + std::to_string(k);
        if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
          return Err(cw + ": expected {\"name\": ..., \"class\": ..., \"values\": {...}}");
        ComponentSpec comp;
        comp.name = Name(c["name"].get<std::string>());
        if (comp.name.is_none()) return Err(cw + ": empty name");
        for (const ComponentSpec& other : spec.components)
          if (other.name == comp.name) return Err(cw + ": name " + comp.name.str() + " twice");
        if (c.contains("class")) {
          ROLLY_ASSIGN_OR_RETURN(comp.cls, ClassOf(c["class"], "Component", cw));
        }
        if (c.contains("values")) {
          if (!c["values"].is_object()) return Err(cw + ": \"values\" is not an object");
          comp.values = c["values"];
        }
        spec.components.push_back(std::move(comp));
      }
    }
    if (a.contains("owner") && !a["owner"].is_null()) {
      ROLLY_ASSIGN_OR_RETURN(spec.owner, IdOf(a["owner"], where + " owner"));
    }
    if (a.contains("attach") && !a["attach"].is_null()) {
      const json& at = a["attach"];
      if (!at.is_object() || !at.contains("parent"))
        return Err(where + ": \"attach\" is not {\"parent\": ID, \"socket\": name}");
      ROLLY_ASSIGN_OR_RETURN(spec.attach_parent, IdOf(at["parent"], where + " attach parent"));
      if (at.contains("socket")) {
        if (!at["socket"].is_string()) return Err(where + ": the socket is not a string");
        spec.attach_socket = Name(at["socket"].get<std::string>());
      }
    }
    data_.actors.push_back(std::move(spec));
    return OkStatus();
  }

  Status ParseActors(const json& root) {
    if (!root.contains("actors")) return OkStatus();
    const json& actors = root["actors"];
    if (!actors.is_array()) return Err("\"actors\" is not an array");
    data_.actors.reserve(actors.size());
    for (std::size_t i = 0; i < actors.size(); ++i) ROLLY_RETURN_IF_ERROR(ParseActor(actors[i], i));
    for (const ActorSpec& a : data_.actors) {
      const std::string where = "actor " + a.id.ToString();
      if (!a.owner.is_none() && !ids_.count(a.owner))
        return Err(where + ": owner " + a.owner.ToString() + " is not an actor of the map");
      if (!a.attach_parent.is_none() && !ids_.count(a.attach_parent))
        return Err(where + ": attach parent " + a.attach_parent.ToString() +
                   " is not an actor of the map");
      if (a.attach_parent == a.id) return Err(where + ": attached to itself");
    }
    return OkStatus();
  }

  const TypeRegistry& registry_;
  Scene::MapData data_;
  std::unordered_set<Guid> ids_;
};

// Makes an object of `cls` (checked by the parser to be a Base), sets `values` and returns it as
// Base.
template <typename Base>
Result<std::unique_ptr<Base>> MakeObject(const TypeRegistry& registry, const ObjectSpec& spec,
                                         const std::string& where,
                                         std::vector<PendingReference>* refs) {
  const ClassInfo* base = registry.FindClass<Base>();
  void* object = TypeRegistry::CreateObject(*spec.cls);
  void* as_base = object && base ? TypeRegistry::Upcast(*spec.cls, object, *base) : nullptr;
  if (as_base == nullptr) {
    if (object) TypeRegistry::DeleteObject(*spec.cls, object);
    return InvalidInputError(where + ": class " + spec.cls->name().str() + " cannot be made");
  }
  std::unique_ptr<Base> owned(static_cast<Base*>(as_base));
  if (!spec.values.is_null())
    ROLLY_RETURN_IF_ERROR(
        scene_internal::SetFields(registry, *spec.cls, object, spec.values, where, refs));
  return owned;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Scene::Scene(const TypeRegistry& registry)
    : registry_(registry),
      actor_class_(registry.FindClass<Actor>()),
      component_class_(registry.FindClass<Component>()) {}

Scene::~Scene() {
  // Actors end play before the world and the game instance go.
  TearDown();
  game_instance_.reset();
}

void Scene::TearDown() {
  if (!world_) return;
  for (Guid id : world_->Ids()) {
    Actor* a = world_->Find(id);
    if (a != nullptr && a->begun_play) {
      a->begun_play = false;
      a->EndPlay();
    }
  }
  world_.reset();
}

std::string Scene::CurrentMap() const { return world_ ? world_->map->path : std::string(); }

std::vector<Name> Scene::Levels() const { return world_ ? world_->levels : std::vector<Name>(); }

Name Scene::PersistentLevel() const { return world_ ? world_->levels.front() : Name(); }

std::vector<Name> Scene::MapLevels() const {
  std::vector<Name> out;
  if (world_)
    for (const LevelSpec& l : world_->map->levels) out.push_back(l.name);
  return out;
}

world::Object Scene::ObjectOf(const ClassInfo& static_class, const void* object) const {
  reflect::ObjectRef r = registry_.DynamicClass(static_class, object);
  return {r.cls, const_cast<void*>(r.object)};
}

world::Object Scene::ObjectOf(const Actor& actor) const {
  return actor.registered ? actor.registered : ObjectOf(*actor_class_, &actor);
}

world::Object Scene::ObjectOf(const Component& component) const {
  return component.registered ? component.registered : ObjectOf(*component_class_, &component);
}

world::ActorView Scene::ViewOf(const Actor& a) const {
  world::ActorView v;
  v.id = a.id;
  v.object = ObjectOf(a);
  v.level = a.level;
  v.spawned = a.spawned;
  v.saving = a.saving;
  for (const LocalPlayer& p : world_->players) v.player_pawn = v.player_pawn || p.pawn == &a;
  v.transform = a.transform;
  v.owner = a.owner_id;
  v.attach_parent = a.attach_parent;
  v.attach_socket = a.attach_socket;
  return v;
}

void Scene::ListGlobals(std::vector<world::GlobalView>* out) {
  auto add = [&](std::string_view role, const ClassInfo* cls, const void* object) {
    if (object != nullptr && cls != nullptr) out->push_back({Name(role), ObjectOf(*cls, object)});
  };
  if (game_instance_) {
    add(world::kRoleGameInstance, registry_.FindClass<GameInstance>(), game_instance_.get());
    for (const auto& s : game_instance_->subsystems)
      add(world::kRoleSubsystem, registry_.FindClass<Subsystem>(), s.get());
  }
  if (!world_) return;
  add(world::kRoleGameMode, registry_.FindClass<GameMode>(), world_->game_mode.get());
  add(world::kRoleGameState, registry_.FindClass<GameState>(), world_->game_state.get());
  for (const auto& s : world_->world_subsystems)
    add(world::kRoleWorldSubsystem, registry_.FindClass<WorldSubsystem>(), s.get());
  add(world::kRoleLevelScript, registry_.FindClass<LevelScript>(), world_->level_script.get());
}

void Scene::VisitActors(Name level, const std::function<void(const world::ActorView&)>& visit) {
  if (!world_) return;
  const auto& actors = world_->actors;
  // Each actor is its own allocation, its list of components another, and each component another:
  // a software pipeline asks them into cache ahead of the visit, each stage once the one before
  // has arrived. Actor i + kActorAhead (what a view reads spans its first four lines); the list
  // of actor i + kListAhead; the components of actor i + kComponentsAhead (what a visitor listing
  // them reads: the name and class, in the first line).
  constexpr std::size_t kActorAhead = 16;
  constexpr std::size_t kListAhead = 8;
  constexpr std::size_t kComponentsAhead = 4;
  const std::size_t n = actors.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kActorAhead < n) {
      const char* ahead = reinterpret_cast<const char*>(actors[i + kActorAhead].second.get());
      for (int line = 0; line < 4; ++line) __builtin_prefetch(ahead + 64 * line);
    }
    if (i + kListAhead < n) {
      const auto& list = actors[i + kListAhead].second->components;
      if (!list.empty()) __builtin_prefetch(list.data());
    }
    if (i + kComponentsAhead < n) {
      for (const auto& c : actors[i + kComponentsAhead].second->components) {
        __builtin_prefetch(c.get());
      }
    }
    const Actor& a = *actors[i].second;
    if (a.level == level) visit(ViewOf(a));
  }
}

Actor* Scene::ActorOf(const world::Object& object) {
  const std::size_t at = (reinterpret_cast<std::uintptr_t>(object.cls) >> 4) % 16;
  ActorOffset& slot = actor_offsets_[at];
  if (slot.cls != object.cls) {
    void* actor = TypeRegistry::Upcast(*object.cls, object.ptr, *actor_class_);
    if (actor == nullptr) return nullptr;
    slot = {object.cls, static_cast<char*>(actor) - static_cast<char*>(object.ptr)};
  }
  return reinterpret_cast<Actor*>(static_cast<char*>(object.ptr) + slot.offset);
}

void Scene::ListComponents(const world::ActorView& actor, std::vector<world::ComponentView>* out) {
  // The view holds the actor already (views stay valid until the world changes).
  Actor* a = actor.object ? ActorOf(actor.object) : FindActor(actor.id);
  if (a == nullptr) return;
  for (const auto& c : a->components)
    out->push_back({c->name, ObjectOf(*c)});
}

void Scene::ListPlayers(std::vector<world::PlayerView>* out) {
  if (!world_) return;
  for (const LocalPlayer& p : world_->players) {
    world::PlayerView v;
    v.index = p.index;
    v.controller = ObjectOf(*registry_.FindClass<PlayerController>(), p.controller);
    if (p.pawn) {
      v.pawn = ObjectOf(*registry_.FindClass<Actor>(), p.pawn);
      v.pawn_id = p.pawn->id;
    }
    v.player_state = ObjectOf(*registry_.FindClass<PlayerState>(), p.player_state);
    out->push_back(v);
  }
}

bool Scene::FindActor(Guid id, world::ActorView* out) {
  Actor* a = FindActor(id);
  if (a == nullptr) return false;
  *out = ViewOf(*a);
  return true;
}

Actor* Scene::FindActor(Guid id) const { return world_ ? world_->Find(id) : nullptr; }

namespace {

// The index in `actors` (ordered by sequence number, each number once) of the actor numbered
// `seq`, which is there. The numbers grow by at least one from an actor to the next, so the actor
// lies at most `seq - n` places past one numbered n: at exactly that place when none numbered in
// between was destroyed (a map just opened), which is read first, else before it, found by halves
// from there. The place is reckoned from the actor at `from` when `seq` lies past it (an ID that
// misses the cursor, such as a save's tombstones, which come after the actors there in the map's
// order, mostly lies a little past the last one found), else from the first.
std::size_t PositionOf(const std::vector<std::pair<std::uint64_t, std::unique_ptr<Actor>>>& actors,
                       std::uint64_t seq, std::size_t from) {
  const auto before = [](const auto& e, std::uint64_t s) { return e.first < s; };
  const std::size_t low = from < actors.size() && actors[from].first <= seq ? from : 0;
  const std::size_t at = low + static_cast<std::size_t>(std::min<std::uint64_t>(
                                   seq - actors[low].first, actors.size() - 1 - low));
  if (actors[at].first == seq) return at;
  const std::size_t high = at;
  const auto begin = actors.begin();
  return static_cast<std::size_t>(
      std::lower_bound(begin + static_cast<std::ptrdiff_t>(low),
                       begin + static_cast<std::ptrdiff_t>(high), seq, before) -
      begin);
}

}  // namespace

template <typename Each>
void Scene::LookUpActors(std::span<const Guid> ids, bool components, Each&& each) {
  if (!world_) {
    for (std::size_t k = 0; k < ids.size(); ++k) each(k, nullptr);
    return;
  }
  // A save lists actors in the order this scene visited them, which is the order `actors` holds
  // them in once the map is opened again. So each ID is first matched against the actor at a
  // cursor into `actors`, or one of the few after it (those between were destroyed, or not
  // saved); the actors along the cursor are asked into cache kCursorAhead ahead. Only the others
  // are looked up in the ID table, which puts the cursor after the actor found there. After an
  // ID the cursor missed, the next goes to the table straight away, its slot asked ahead (a
  // save's spawned actors and tombstones come in runs, none near the cursor), until one is found
  // within reach of the cursor again.
  //
  // A software pipeline around that: while IDs miss the cursor, the table slot of ID k +
  // kSlotAhead is asked into cache; ID k + kActorAhead is looked up and its actor asked into
  // cache (what a view reads spans its first four lines); the list of components of actor k +
  // kListAhead (in cache by then), and the components of actor k + kComponentsAhead, are asked
  // too, as a load lists them; actor k is handed over. The actors looked up wait in a ring.
  constexpr std::size_t kCursorWindow = 8;
  constexpr std::size_t kCursorAhead = 24;
  constexpr std::size_t kSlotAhead = 16;
  constexpr std::size_t kActorAhead = 8;
  constexpr std::size_t kListAhead = 4;
  constexpr std::size_t kComponentsAhead = 2;
  constexpr std::size_t kRing = 16;  // a power of two above kActorAhead
  static_assert(kActorAhead < kRing && kActorAhead < kSlotAhead);
  Actor* ring[kRing];
  const World& w = *world_;
  const auto& actors = w.actors;
  std::size_t cursor = 0;
  std::size_t asked = 0;  // the actors along the cursor asked for: those before this
  bool on_cursor = true;  // whether the last ID looked up was found within reach of the cursor
  // (Inlined at both calls: it runs for every ID.)
  auto lookup = [&](std::size_t k) __attribute__((always_inline)) {
    Actor* a = nullptr;
    if (on_cursor) {
      for (; asked < std::min(cursor + kCursorAhead, actors.size()); ++asked) {
        __builtin_prefetch(actors[asked].second.get());
      }
      const std::size_t end = std::min(cursor + kCursorWindow, actors.size());
      for (std::size_t j = cursor; j < end; ++j) {
        if (actors[j].second->id == ids[k]) {
          a = actors[j].second.get();
          cursor = j + 1;
          break;
        }
      }
    }
    if (a == nullptr) {
      on_cursor = false;
      if (const auto* entry = w.by_id.Find(ids[k])) {
        a = entry->second;
        const std::size_t at = PositionOf(actors, entry->first, cursor);
        assert(at < actors.size() && actors[at].first == entry->first);
        on_cursor = at >= cursor && at < cursor + kCursorWindow;
        cursor = at + 1;
        asked = std::max(asked, cursor);
      }
    }
    if (a != nullptr) {
      const char* at = reinterpret_cast<const char*>(a);
      for (int line = 0; line < 4; ++line) __builtin_prefetch(at + 64 * line);
    }
    ring[k % kRing] = a;
  };
  const std::size_t n = ids.size();
  for (std::size_t k = 0; k < std::min(n, kActorAhead); ++k) lookup(k);
  for (std::size_t k = 0; k < n; ++k) {
    if (!on_cursor && k + kSlotAhead < n) w.by_id.Prefetch(ids[k + kSlotAhead]);
    if (k + kActorAhead < n) lookup(k + kActorAhead);
    if (components && k + kListAhead < n && ring[(k + kListAhead) % kRing] != nullptr) {
      const auto& list = ring[(k + kListAhead) % kRing]->components;
      if (!list.empty()) __builtin_prefetch(list.data());
    }
    if (components && k + kComponentsAhead < n &&
        ring[(k + kComponentsAhead) % kRing] != nullptr) {
      for (const auto& c : ring[(k + kComponentsAhead) % kRing]->components) {
        __builtin_prefetch(c.get());
      }
    }
    each(k, ring[k % kRing]);
  }
}

void Scene::FindActors(std::span<const Guid> ids,
                       const std::function<void(std::size_t, const world::ActorView*)>& found) {
  LookUpActors(ids, true, [&](std::size_t k, const Actor* a) {
    if (a == nullptr) {
      found(k, nullptr);
      return;
    }
    // Made in place: a view assigned from ViewOf's was copied in wide loads right after its
    // narrow stores, which stalled.
    const world::ActorView view = ViewOf(*a);
    found(k, &view);
  });
}

void Scene::PlaceAll(std::span<const std::pair<Guid, world::Placement>> placements) {
  std::vector<Guid> ids;
  ids.reserve(placements.size());
  for (const auto& entry : placements) ids.push_back(entry.first);
  LookUpActors(ids, false, [&](std::size_t k, Actor* a) {
    if (a == nullptr) return;
    const world::Placement& placement = placements[k].second;
    a->transform = placement.transform;
    a->owner_id = placement.owner;
    a->attach_parent = placement.attach_parent;
    a->attach_socket = placement.attach_socket;
  });
}

void Scene::ForEachActor(const std::function<void(Actor&)>& fn) const {
  if (!world_) return;
  for (const auto& [seq, a] : world_->actors) fn(*a);
}

std::size_t Scene::ActorCount() const { return world_ ? world_->actors.size() : 0; }

GameMode* Scene::game_mode() const { return world_ ? world_->game_mode.get() : nullptr; }
GameState* Scene::game_state() const { return world_ ? world_->game_state.get() : nullptr; }
LevelScript* Scene::level_script() const { return world_ ? world_->level_script.get() : nullptr; }
bool Scene::HasBegunPlay() const { return world_ && world_->begun_play; }

const std::vector<std::unique_ptr<WorldSubsystem>>& Scene::world_subsystems() const {
  static const std::vector<std::unique_ptr<WorldSubsystem>> kNone;
  return world_ ? world_->world_subsystems : kNone;
}

const std::vector<LocalPlayer>& Scene::players() const {
  static const std::vector<LocalPlayer> kNone;
  return world_ ? world_->players : kNone;
}

// --- Making and ending actors -----------------------------------------------------------------

Result<Actor*> Scene::MakeActor(World& world, const ClassInfo& cls, Guid id, Name level,
                                const reflect::Transformd& transform, bool spawned) {
  const ClassInfo* actor_class = actor_class_;
  if (actor_class == nullptr || !cls.IsA(*actor_class) || !cls.can_create())
    return InvalidInputError("class " + cls.name().str() +
                             " is not an actor class the scene can make");
  if (id.is_none()) return InvalidInputError("an actor needs an ID");
  if (world.by_id.Contains(id))
    return InvalidInputError("AlreadyExists: an actor has ID " + id.ToString());
  void* object = TypeRegistry::CreateObject(cls);
  if (object == nullptr) return InvalidInputError("class " + cls.name().str() + " cannot be made");
  auto* actor = static_cast<Actor*>(TypeRegistry::Upcast(cls, object, *actor_class));
  actor->id = id;
  actor->level = level;
  actor->spawned = spawned;
  actor->transform = transform;
  actor->registered = {&cls, object};
  for (auto& c : actor->components) {
    c->owner = actor;
    if (component_class_ != nullptr) c->registered = ObjectOf(*component_class_, c.get());
  }
  const std::uint64_t seq = world.next_seq++;
  world.actors.emplace_back(seq, std::unique_ptr<Actor>(actor));
  world.by_id.Put(id, std::make_pair(seq, actor));
  return actor;
}

void Scene::BeginPlayOf(Actor& actor) {
  if (actor.begun_play) return;
  actor.begun_play = true;
  actor.BeginPlay();
}

void Scene::EndAndDestroy(Actor& actor) { DestroyMany({actor.id}); }

void Scene::DestroyMany(const std::vector<Guid>& ids) {
  World& w = *world_;
  // Each actor as the ID table holds it: its creation number and address; `at` is its ID's
  // place in `ids`.
  struct Going {
    Guid id;
    std::uint64_t seq;
    Actor* actor;
    std::size_t at;
  };
  std::vector<Going> found;
  found.reserve(ids.size());
  // Looks the IDs up, the table slot of the one kAhead on asked into cache meanwhile, then its
  // actor (each is a random place in the table, then in memory).
  constexpr std::size_t kAhead = 8;
  auto find_all = [&] {
    found.clear();
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (k + kAhead < ids.size()) w.by_id.Prefetch(ids[k + kAhead]);
      if (const auto* entry = w.by_id.Find(ids[k])) {
        __builtin_prefetch(entry->second);
        found.push_back({ids[k], entry->first, entry->second, k});
      }
    }
  };
  find_all();
  // End play first. EndPlay may destroy or make actors, so once one ran, the IDs after it are
  // looked up as the world is then, and all of them again for what follows.
  std::size_t looked_up = ids.size();  // the IDs from here on are looked up afresh
  bool ended = false;
  for (const Going& g : found) {
    if (g.actor->begun_play) {
      g.actor->begun_play = false;
      g.actor->EndPlay();
      looked_up = g.at + 1;
      ended = true;
      break;
    }
  }
  for (std::size_t k = looked_up; k < ids.size(); ++k) {
    const auto* entry = w.by_id.Find(ids[k]);
    if (entry != nullptr && entry->second->begun_play) {
      entry->second->begun_play = false;
      entry->second->EndPlay();
    }
  }
  if (ended) find_all();
  std::vector<Going> gone_list;
  GuidSet gone_ids;
  GuidSet gone;  // by address (GoneKey)
  // Room for every ID, and for an actor and a component or two each: the sets grow no more.
  gone_list.reserve(found.size());
  gone_ids.Reserve(found.size());
  gone.Reserve(found.size() * 3);
  for (const Going& g : found) {
    if (gone_ids.Insert(g.id)) {
      gone_list.push_back(g);
      gone.Insert(GoneKey(g.actor));
      for (const auto& c : g.actor->components) {
        gone.Insert(GoneKey(static_cast<Component*>(c.get())));
      }
    }
  }
  if (gone_list.empty()) return;
  // Every actor lets go of them, in one pass however many go: attachments, owners, reference
  // fields; then players.
  ClearReferencesTo(gone, gone_ids);
  for (LocalPlayer& p : w.players)
    if (p.pawn != nullptr && gone.Contains(GoneKey(p.pawn))) p.pawn = nullptr;
  std::vector<std::uint64_t> seqs;
  seqs.reserve(gone_list.size());
  for (const Going& g : gone_list) {
    seqs.push_back(g.seq);
    w.by_id.Erase(g.id);
  }
  // Out of the array, each let go of rather than destroyed there: a few found by their creation
  // numbers (the array is sorted by them), many in one pass that walks the sorted numbers along
  // with the array (no look-up per actor).
  if (seqs.size() <= 16) {
    for (std::uint64_t seq : seqs) {
      auto at =
          std::lower_bound(w.actors.begin(), w.actors.end(), seq,
                           [](const auto& entry, std::uint64_t n) { return entry.first < n; });
      at->second.release();
      w.actors.erase(at);
    }
  } else {
    std::sort(seqs.begin(), seqs.end());
    auto next = seqs.begin();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < w.actors.size(); ++i) {
      auto& entry = w.actors[i];
      while (next != seqs.end() && *next < entry.first) ++next;
      if (next != seqs.end() && *next == entry.first) {
        entry.second.release();
        continue;
      }
      if (kept != i) w.actors[kept] = std::move(entry);
      ++kept;
    }
    w.actors.resize(kept);
  }
  // Then destroyed, each with its memory asked into cache a few ahead (their lines went cold
  // while every actor was walked): the actor, then its list of components.
  for (std::size_t k = 0; k < gone_list.size(); ++k) {
    if (k + kAhead < gone_list.size()) {
      const char* ahead = reinterpret_cast<const char*>(gone_list[k + kAhead].actor);
      for (int line = 0; line < 4; ++line) __builtin_prefetch(ahead + 64 * line);
    }
    if (k + kAhead / 2 < gone_list.size()) {
      const auto& list = gone_list[k + kAhead / 2].actor->components;
      for (const auto& c : list) __builtin_prefetch(c.get());
    }
    delete gone_list[k].actor;
  }
}

namespace {

// Reference fields of a class (its bases' too), with offsets from the class's start.
struct RefField {
  std::uint32_t offset;
  const reflect::Type* type;
};

void CollectRefFields(const ClassInfo& cls, std::vector<RefField>* out) {
  std::uint32_t base = 0;
  for (const ClassInfo* c = &cls; c != nullptr; c = c->base()) {
    for (const reflect::Property& p : c->properties()) {
      const reflect::Type* t = p.type;
      if (t->kind == reflect::Kind::kReference ||
          (t->kind == reflect::Kind::kVector && t->element->kind == reflect::Kind::kReference))
        out->push_back({base + p.offset, t});
    }
    base += c->base_offset();
  }
}

// Of `actor_class` and `component_class`, the one `cls` is (null: neither).
const ClassInfo* SceneBaseOf(const ClassInfo& cls, const ClassInfo& actor_class,
                             const ClassInfo* component_class) {
  if (cls.IsA(actor_class)) return &actor_class;
  if (component_class != nullptr && cls.IsA(*component_class)) return component_class;
  return nullptr;
}

// Clears a reference field (or a vector of them) that points at an actor in `gone`, or at a
// component of one (`gone` holds both: actors as Actor, components as Component).
void ClearIn(const TypeRegistry& registry, const ClassInfo& actor_class,
             const ClassInfo* component_class, const GuidSet& gone, const reflect::Type& type,
             void* field) {
  if (type.kind == reflect::Kind::kVector) {
    for (std::size_t i = 0; i < type.container->size(field); ++i) {
      ClearIn(registry, actor_class, component_class, gone, *type.element,
              type.container->element(field, i));
    }
    return;
  }
  void* target = type.pointer->get(field);
  if (target == nullptr) return;
  // The field holds a C* for some actor or component class C: seen as its base, does it go?
  const ClassInfo* from = type.class_info;
  const ClassInfo* base = SceneBaseOf(*from, actor_class, component_class);
  if (base == nullptr) {
    // A field of another class (an interface an actor or a component may implement): the class
    // of the object it points at decides.
    if (!from->is_polymorphic()) return;
    const reflect::ObjectRef ref = registry.DynamicClass(*from, target);
    if (ref.cls == nullptr) return;
    base = SceneBaseOf(*ref.cls, actor_class, component_class);
    if (base == nullptr) return;
    from = ref.cls;
    target = const_cast<void*>(ref.object);
  }
  if (gone.Contains(GoneKey(TypeRegistry::Upcast(*from, target, *base))))
    type.pointer->set(field, nullptr);
}

}  // namespace

void Scene::ClearReferencesTo(const GuidSet& gone, const GuidSet& gone_ids) {
  const ClassInfo& actor_base = *registry_.FindClass<Actor>();
  using Fields = std::vector<std::pair<std::uint32_t, const reflect::Type*>>;
  auto fields_of = [&](const ClassInfo* cls) -> const Fields& {
    auto cached = ref_fields_.find(cls);
    if (cached == ref_fields_.end()) {
      std::vector<RefField> fields;
      CollectRefFields(*cls, &fields);
      Fields pairs;
      for (const RefField& f : fields) pairs.emplace_back(f.offset, f.type);
      cached = ref_fields_.emplace(cls, std::move(pairs)).first;
    }
    return cached->second;
  };
  auto scrub = [&](void* object, const Fields& fields) {
    for (const auto& [offset, type] : fields)
      ClearIn(registry_, actor_base, component_class_, gone, *type,
              static_cast<char*>(object) + offset);
  };
  // Each object's class is the one kept with it (ObjectOf). A small table by class address keeps
  // the reference fields of the classes met, so most objects cost no map look-up; objects of a
  // class without reference fields are passed over.
  struct Seen {
    const ClassInfo* cls = nullptr;
    const Fields* fields = nullptr;
  };
  Seen seen[16];
  auto scrub_object = [&](const world::Object& o) {
    if (o.cls == nullptr) return;
    Seen& slot = seen[(reinterpret_cast<std::uintptr_t>(o.cls) >> 4) % std::size(seen)];
    if (slot.cls != o.cls) slot = {o.cls, &fields_of(o.cls)};
    scrub(o.ptr, *slot.fields);
  };
  const auto& actors = world_->actors;
  for (std::size_t i = 0; i < actors.size(); ++i) {
    // Each actor and component is its own allocation: the actor a few ahead is asked into cache,
    // then (once there) its list of components, then the components.
    if (i + 8 < actors.size()) {
      const char* ahead = reinterpret_cast<const char*>(actors[i + 8].second.get());
      for (int line = 0; line < 4; ++line) __builtin_prefetch(ahead + 64 * line);
    }
    if (i + 4 < actors.size()) {
      const auto& ahead = actors[i + 4].second->components;
      if (!ahead.empty()) __builtin_prefetch(ahead.data());
    }
    if (i + 2 < actors.size()) {
      for (const auto& c : actors[i + 2].second->components) __builtin_prefetch(c.get());
    }
    Actor* a = actors[i].second.get();
    if (!a->attach_parent.is_none() && gone_ids.Contains(a->attach_parent)) {
      a->attach_parent = Guid();
      a->attach_socket = Name();
    }
    if (!a->owner_id.is_none() && gone_ids.Contains(a->owner_id)) a->owner_id = Guid();
    // (Those going are scrubbed too: cheaper than asking of every actor whether it goes.)
    scrub_object(ObjectOf(*a));
    for (const auto& c : a->components) scrub_object(ObjectOf(*c));
  }
  std::vector<world::GlobalView> globals;
  ListGlobals(&globals);
  for (const world::GlobalView& gv : globals) {
    if (gv.object.cls != nullptr) scrub(gv.object.ptr, fields_of(gv.object.cls));
  }
}

// --- Building a world -------------------------------------------------------------------------

Status Scene::BuildLevelActors(World& world, Name level, bool resolve_references,
                               LeaveOut* leave_out) {
  std::vector<PendingReference> refs;
  const MapData& map = *world.map;
  const auto left_out = [leave_out](Guid id) {
    return leave_out != nullptr && !id.is_none() && leave_out->ids.Contains(id);
  };
  for (const ActorSpec& spec : map.actors) {
    if (spec.level != level) continue;
    if (left_out(spec.id)) {
      leave_out->left.push_back(spec.id);
      continue;
    }
    const std::string where = ActorWhere(map.path, spec.id, spec.cls);
    Result<Actor*> made = MakeActor(world, *spec.cls, spec.id, spec.level, spec.transform, false);
    if (!made.ok()) return InvalidInputError(where + ": " + std::string(made.status().message()));
    Actor* a = *made;
    a->tags.assign(spec.tags.begin(), spec.tags.end());
    a->saving = spec.saving;
    // (An owner or a parent left out is as one destroyed: DestroyMany would set none.)
    if (!left_out(spec.owner)) a->owner_id = spec.owner;
    if (!left_out(spec.attach_parent)) {
      a->attach_parent = spec.attach_parent;
      a->attach_socket = spec.attach_socket;
    }
    if (!spec.values.is_null()) {
      void* object = const_cast<void*>(ObjectOf(*actor_class_, a).ptr);
      ROLLY_RETURN_IF_ERROR(
          scene_internal::SetFields(registry_, *spec.cls, object, spec.values, where, &refs));
    }
    for (const ComponentSpec& cs : spec.components) {
      const std::string cw = where + " component " + cs.name.str();
      Component* c = a->FindComponent(cs.name);
      const ClassInfo* component_class = registry_.FindClass<Component>();
      if (c == nullptr) {
        if (cs.cls == nullptr)
          return InvalidInputError(cw + ": the actor has no such component; give its \"class\"");
        void* object = TypeRegistry::CreateObject(*cs.cls);
        c = static_cast<Component*>(TypeRegistry::Upcast(*cs.cls, object, *component_class));
        c->name = cs.name;
        c->owner = a;
        c->registered = {cs.cls, object};
        a->components.emplace_back(c);
      }
      world::Object o = ObjectOf(*component_class, c);
      if (cs.cls != nullptr && o.cls != cs.cls)
        return InvalidInputError(cw + ": the actor's component is a " +
                                 (o.cls ? o.cls->name().str() : std::string("?")) + ", not a " +
                                 cs.cls->name().str());
      if (!cs.values.is_null() && o.cls != nullptr)
        ROLLY_RETURN_IF_ERROR(
            scene_internal::SetFields(registry_, *o.cls, o.ptr, cs.values, cw, &refs));
    }
  }
  if (!resolve_references) return OkStatus();
  const ClassInfo* actor_class = registry_.FindClass<Actor>();
  for (const PendingReference& r : refs) {
    Actor* target = world.Find(r.id);
    if (target == nullptr && left_out(r.id)) continue;  // left empty
    if (target == nullptr)
      return InvalidInputError(r.where + ": no actor " + r.id.ToString() + " is loaded");
    reflect::ObjectRef t = registry_.DynamicClass(*actor_class, target);
    const void* as = t.cls ? TypeRegistry::Upcast(*t.cls, t.object, *r.type->class_info) : nullptr;
    if (as == nullptr)
      return InvalidInputError(r.where + ": actor " + r.id.ToString() + " is not a " +
                               r.type->class_info->name().str());
    r.type->pointer->set(r.field, const_cast<void*>(as));
  }
  return OkStatus();
}

Result<std::string> Scene::ReadMapText(std::string_view map) const {
  auto added = added_maps_.find(map);
  if (added != added_maps_.end()) return added->second;
  std::ifstream in{std::string(map), std::ios::binary};
  if (!in) return NotFoundError("map " + std::string(map) + " not found");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return NotFoundError("map " + std::string(map) + " could not be read");
  return text.str();
}

void Scene::AddMap(std::string_view map_path, std::string json_text) {
  added_maps_[std::string(map_path)] = std::move(json_text);
}

Status Scene::OpenMap(std::string_view map) { return OpenMapImpl(map, /*fresh_game=*/false); }

Status Scene::OpenMapWithout(std::string_view map, const GuidSet& leave_out, GuidSet* left_out) {
  return OpenMapImpl(map, /*fresh_game=*/false, &leave_out, left_out);
}

Status Scene::Start(std::string_view map) { return OpenMapImpl(map, /*fresh_game=*/true); }

Status Scene::OpenMapImpl(std::string_view map_path, bool fresh_game, const GuidSet* leave_out,
                          GuidSet* left_out) {
  if (actor_class_ == nullptr || component_class_ == nullptr)
    return InvalidInputError(
        "the registry lacks RegisterSceneTypes' classes (register them and "
        "Finish() before making the scene)");
  ROLLY_ASSIGN_OR_RETURN(std::string text, ReadMapText(map_path));
  std::unique_ptr<MapData> parsed;
  try {
    ROLLY_ASSIGN_OR_RETURN(parsed, MapParser(registry_, std::string(map_path)).Parse(text));
  } catch (const std::exception& e) {  // nlohmann throws on a mistyped access we did not check
    return InvalidInputError("map " + std::string(map_path) + ": " + e.what());
  }
  const std::string prefix = "map " + parsed->path + ": ";
  std::vector<PendingReference> global_refs;  // refused: globals reference no actor in a map

  // The game instance: a new one for a new game (or the first map), else the one running.
  std::unique_ptr<GameInstance> new_game_instance;
  if (fresh_game || !game_instance_) {
    ObjectSpec spec{registry_.FindClass<GameInstance>(), json()};
    if (parsed->game_instance) spec = *parsed->game_instance;
    ROLLY_ASSIGN_OR_RETURN(
        new_game_instance,
        MakeObject<GameInstance>(registry_, spec, prefix + "game_instance", nullptr));
    for (const ObjectSpec& s : parsed->subsystems) {
      ROLLY_ASSIGN_OR_RETURN(
          auto sub, MakeObject<Subsystem>(registry_, s, prefix + "subsystem " + s.cls->name().str(),
                                          nullptr));
      new_game_instance->subsystems.push_back(std::move(sub));
    }
  }

  std::optional<LeaveOut> leaving;
  if (leave_out != nullptr && left_out != nullptr && !leave_out->empty())
    leaving.emplace(*leave_out);
  auto world = std::make_unique<World>();
  const MapData& map = *parsed;
  world->map = std::move(parsed);
  // Room for every actor the map places (those of levels not loaded yet, and those left out,
  // too): a load that spawns its saved actors right after grows the table less often while it
  // spawns them (each growth moves every entry: about a millisecond at 100,000).
  world->by_id.Reserve(map.actors.size());
  world->actors.reserve(map.actors.size());
  try {
    if (map.game_mode) {
      ROLLY_ASSIGN_OR_RETURN(world->game_mode, MakeObject<GameMode>(registry_, *map.game_mode,
                                                                    prefix + "game_mode", nullptr));
    }
    if (map.game_state) {
      ROLLY_ASSIGN_OR_RETURN(
          world->game_state,
          MakeObject<GameState>(registry_, *map.game_state, prefix + "game_state", nullptr));
    }
    if (map.level_script) {
      ROLLY_ASSIGN_OR_RETURN(
          world->level_script,
          MakeObject<LevelScript>(registry_, *map.level_script, prefix + "level_script", nullptr));
    }
    for (const ObjectSpec& s : map.world_subsystems) {
      ROLLY_ASSIGN_OR_RETURN(
          auto sub, MakeObject<WorldSubsystem>(
                        registry_, s, prefix + "world subsystem " + s.cls->name().str(), nullptr));
      world->world_subsystems.push_back(std::move(sub));
    }
    for (const LevelSpec& l : map.levels) {
      if (!l.loaded) continue;
      world->levels.push_back(l.name);
      ROLLY_RETURN_IF_ERROR(
          BuildLevelActors(*world, l.name, true, leaving ? &*leaving : nullptr));
    }
    for (std::size_t i = 0; i < map.players.size(); ++i) {
      const PlayerSpec& ps = map.players[i];
      const std::string where = prefix + "player " + std::to_string(i);
      LocalPlayer lp;
      lp.index = static_cast<int>(i);
      ROLLY_ASSIGN_OR_RETURN(
          auto controller, MakeObject<PlayerController>(registry_, ps.controller, where, nullptr));
      ROLLY_ASSIGN_OR_RETURN(auto state,
                             MakeObject<PlayerState>(registry_, ps.player_state, where, nullptr));
      lp.controller = controller.get();
      lp.player_state = state.get();
      world->controllers.push_back(std::move(controller));
      world->player_states.push_back(std::move(state));
      if (ps.pawn) {
        ROLLY_ASSIGN_OR_RETURN(
            Actor * pawn, MakeActor(*world, *ps.pawn->cls, NewId(), world->levels.front(),
                                    ps.transform, /*spawned=*/true));
        if (!ps.pawn->values.is_null()) {
          world::Object o = ObjectOf(*registry_.FindClass<Actor>(), pawn);
          ROLLY_RETURN_IF_ERROR(scene_internal::SetFields(registry_, *o.cls, o.ptr, ps.pawn->values,
                                                          where + " pawn", nullptr));
        }
        lp.pawn = dynamic_cast<Pawn*>(pawn);
      }
      world->players.push_back(lp);
    }
    // The levels that load later are checked now, so a map's mistakes show when it opens.
    for (const LevelSpec& l : map.levels) {
      if (l.loaded) continue;
      World scratch;
      scratch.map = world->map;
      ROLLY_RETURN_IF_ERROR(BuildLevelActors(scratch, l.name, /*resolve_references=*/false));
    }
  } catch (const std::exception& e) {
    return InvalidInputError(prefix + e.what());
  }

  // The new world is complete: end the old one, then swap.
  TearDown();
  if (new_game_instance) game_instance_ = std::move(new_game_instance);
  world_ = std::move(world);
  if (leaving) {
    for (Guid id : leaving->left) left_out->Insert(id);
  }

  if (events_) events_->OnActorsInitialized();
  world_->begun_play = true;
  for (Guid id : world_->Ids()) {
    Actor* a = world_->Find(id);
    if (a != nullptr && !a->deferred) BeginPlayOf(*a);
  }
  if (events_) events_->OnBeginPlay();
  return OkStatus();
}

// --- Changing the world -----------------------------------------------------------------------

Result<world::ActorView> Scene::BeginSpawn(Name level, const ClassInfo& cls, Guid id,
                                           const reflect::Transformd& transform) {
  if (!world_) return InvalidInputError("BeginSpawn: no world");
  if (level.is_none()) level = world_->levels.front();
  if (!world_->IsLoaded(level))
    return InvalidInputError("BeginSpawn: level " + level.str() + " is not loaded");
  ROLLY_ASSIGN_OR_RETURN(Actor * a, MakeActor(*world_, cls, id, level, transform, true));
  a->deferred = true;
  return ViewOf(*a);
}

void Scene::BeginSpawns(
    std::span<const world::SpawnRequest> requests,
    const std::function<void(std::size_t k, const Result<world::ActorView>& result)>& spawned) {
  constexpr std::size_t kAhead = 8;
  const std::size_t n = requests.size();
  // (Prefetches are hints only: a spawn that grows the table wastes those asked before it.)
  auto ask = [&](std::size_t k) {
    if (world_ && k < n) world_->by_id.Prefetch(requests[k].id);
  };
  for (std::size_t k = 1; k < kAhead; ++k) ask(k);
  for (std::size_t k = 0; k < n; ++k) {
    ask(k + kAhead);
    const world::SpawnRequest& r = requests[k];
    spawned(k, BeginSpawn(r.level, *r.cls, r.id, r.transform));
  }
}

void Scene::FinishSpawn(Guid id) {
  if (!world_) return;
  World& w = *world_;
  constexpr std::size_t kAhead = 4;
  Actor* a = nullptr;
  if (w.finish_at < w.actors.size() && w.actors[w.finish_at].second->id == id) {
    a = w.actors[w.finish_at].second.get();
  } else if (const auto* entry = w.by_id.Find(id)) {
    a = entry->second;
    w.finish_at = PositionOf(w.actors, entry->first, w.finish_at);
  }
  if (a == nullptr) return;
  ++w.finish_at;
  if (w.finish_at + kAhead < w.actors.size()) {
    __builtin_prefetch(w.actors[w.finish_at + kAhead].second.get());
  }
  if (!a->deferred) return;
  a->deferred = false;
  if (world_->begun_play) BeginPlayOf(*a);
}

void Scene::DestroyActor(Guid id) {
  if (world_ && FindActor(id)) DestroyMany({id});
}

void Scene::DestroyActors(const std::vector<Guid>& ids) {
  if (world_) DestroyMany(ids);
}

void Scene::Place(Guid id, const world::Placement& placement) {
  Actor* a = FindActor(id);
  if (a == nullptr) return;
  a->transform = placement.transform;
  a->owner_id = placement.owner;
  a->attach_parent = placement.attach_parent;
  a->attach_socket = placement.attach_socket;
}

Result<Actor*> Scene::SpawnActor(Name cls, Name level, const reflect::Transformd& transform) {
  const ClassInfo* info = registry_.FindClass(cls);
  if (info == nullptr) return InvalidInputError("SpawnActor: unknown class " + cls.str());
  return SpawnActor(*info, level, transform);
}

Result<Actor*> Scene::SpawnActor(const ClassInfo& cls, Name level,
                                 const reflect::Transformd& transform) {
  if (!world_) return InvalidInputError("SpawnActor: no world");
  if (level.is_none()) level = world_->levels.front();
  if (!world_->IsLoaded(level))
    return InvalidInputError("SpawnActor: level " + level.str() + " is not loaded");
  ROLLY_ASSIGN_OR_RETURN(Actor * a,
                         MakeActor(*world_, cls, NewId(), level, transform, true));
  if (world_->begun_play) BeginPlayOf(*a);
  return a;
}

Result<Component*> Scene::AddComponent(Guid actor, Name name, Name cls) {
  Actor* a = FindActor(actor);
  if (a == nullptr) return NotFoundError("AddComponent: no actor " + actor.ToString());
  const ClassInfo* component_class = registry_.FindClass<Component>();
  const ClassInfo* info = registry_.FindClass(cls);
  if (info == nullptr || !info->IsA(*component_class) || !info->can_create())
    return InvalidInputError("AddComponent: " + cls.str() + " is not a component class");
  if (name.is_none() || a->FindComponent(name) != nullptr)
    return InvalidInputError("AddComponent: actor " + actor.ToString() + " has a component " +
                             name.str() + " already (or the name is empty)");
  void* object = TypeRegistry::CreateObject(*info);
  auto* c = static_cast<Component*>(TypeRegistry::Upcast(*info, object, *component_class));
  c->name = name;
  c->owner = a;
  c->registered = {info, object};
  a->components.emplace_back(c);
  if (events_ && !a->deferred)
    events_->OnComponentCreated(actor, {name, {info, object}});
  return c;
}

Status Scene::Attach(Guid child, Guid parent, Name socket) {
  Actor* c = FindActor(child);
  if (c == nullptr) return NotFoundError("Attach: no actor " + child.ToString());
  if (parent.is_none()) {
    c->attach_parent = Guid();
    c->attach_socket = Name();
    return OkStatus();
  }
  if (FindActor(parent) == nullptr) return NotFoundError("Attach: no actor " + parent.ToString());
  for (Guid p = parent; !p.is_none();) {
    if (p == child) return InvalidInputError("Attach: the attachment would make a cycle");
    Actor* up = FindActor(p);
    p = up ? up->attach_parent : Guid();
  }
  c->attach_parent = parent;
  c->attach_socket = socket;
  return OkStatus();
}

Status Scene::SetOwner(Guid actor, Guid owner) {
  Actor* a = FindActor(actor);
  if (a == nullptr) return NotFoundError("SetOwner: no actor " + actor.ToString());
  if (!owner.is_none() && FindActor(owner) == nullptr)
    return NotFoundError("SetOwner: no actor " + owner.ToString());
  a->owner_id = owner;
  return OkStatus();
}

Status Scene::AddLevel(Name level) {
  if (!world_) return InvalidInputError("AddLevel: no world");
  bool known = false;
  for (const LevelSpec& l : world_->map->levels) known = known || l.name == level;
  if (!known)
    return NotFoundError("AddLevel: map " + world_->map->path + " has no level " + level.str());
  if (world_->IsLoaded(level)) return InvalidInputError("AddLevel: " + level.str() + " is loaded");
  const std::vector<Guid> before = world_->Ids();
  Status built;
  try {
    built = BuildLevelActors(*world_, level);
  } catch (const std::exception& e) {
    built = InvalidInputError(e.what());
  }
  if (!built.ok()) {
    // Undo: the level's actors never began play, so they just go.
    std::unordered_set<Guid> old(before.begin(), before.end());
    for (Guid id : world_->Ids())
      if (!old.count(id)) EndAndDestroy(*world_->Find(id));
    return built;
  }
  world_->levels.push_back(level);
  // The world layer hears of the level before its actors begin play, so the actors a save holds
  // destroyed go without ever beginning play.
  if (events_) events_->OnLevelAdded(level);
  if (world_->begun_play) {
    for (Guid id : world_->Ids()) {
      Actor* a = world_->Find(id);
      if (a != nullptr && a->level == level && !a->deferred) BeginPlayOf(*a);
    }
  }
  return OkStatus();
}

Status Scene::RemoveLevel(Name level) {
  if (!world_ || !world_->IsLoaded(level))
    return NotFoundError("RemoveLevel: level " + level.str() + " is not loaded");
  if (level == world_->levels.front())
    return InvalidInputError("RemoveLevel: the persistent level stays");
  if (events_) events_->OnLevelRemoved(level);
  // Out of the loaded levels before its actors end play: nothing spawns into it any more (an
  // EndPlay that tries is refused, as for any level not loaded), so every actor of it goes.
  world_->levels.erase(std::find(world_->levels.begin(), world_->levels.end(), level));
  // All at once: each actor's end of play first, then one walk of the world lets go of them all
  // (a walk for each actor made removing a large level take time in its size times the world's).
  std::vector<Guid> going;
  for (Guid id : world_->Ids()) {
    if (const Actor* a = world_->Find(id); a != nullptr && a->level == level) going.push_back(id);
  }
  DestroyMany(going);
  return OkStatus();
}

}  // namespace rolly::scene
