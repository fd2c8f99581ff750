#include "rolly/scene/objects.h"

#include "rolly/scene/internal/object_pool.h"
#include "rolly/scene/internal/sanitizer.h"

namespace rolly::scene {

// The pool's slots are 16-byte aligned: a class needing no more than operator new's default
// alignment fits.
static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ <= internal::ObjectPool::kSlotStep);

// Under AddressSanitizer each object comes from the general heap, whose quarantine keeps a freed
// actor's memory unused for a while, so a use after free is caught (the pool takes a freed slot
// again first). The pool's own tests run under the sanitizer too.
void* Pooled::operator new(std::size_t size) {
  if constexpr (ROLLY_SCENE_ASAN) return ::operator new(size);
  return internal::ObjectPool::Shared().Allocate(size);
}
void Pooled::operator delete(void* p, std::size_t size) noexcept {
  if constexpr (ROLLY_SCENE_ASAN) return ::operator delete(p);
  internal::ObjectPool::Shared().Free(p, size);
}
void* Pooled::operator new(std::size_t size, std::align_val_t align) {
  return ::operator new(size, align);
}
void Pooled::operator delete(void* p, std::size_t, std::align_val_t align) noexcept {
  ::operator delete(p, align);
}

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
