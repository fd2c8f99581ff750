#include "rolly/scene/objects.h"

namespace rolly::scene {

Component* Actor::FindComponent(Name component_name) const {
  for (const auto& c : components)
    if (c->name == component_name) return c.get();
  return nullptr;
}

void RegisterSceneTypes(reflect::TypeRegistry& registry) {
  registry.Class<Actor>("Actor").Field("Tags", &Actor::tags, reflect::kSaveGame);
  registry.Class<Pawn>("Pawn").Base<Actor>();
  registry.Class<Component>("Component");
  registry.Class<GameInstance>("GameInstance");
  registry.Class<Subsystem>("Subsystem");
  registry.Class<WorldSubsystem>("WorldSubsystem");
  registry.Class<GameMode>("GameMode");
  registry.Class<GameState>("GameState");
  registry.Class<LevelScript>("LevelScript");
  registry.Class<PlayerController>("PlayerController");
  registry.Class<PlayerState>("PlayerState");
}

}  // namespace rolly::scene
