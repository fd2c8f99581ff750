// Setting registered fields from a map's JSON values, through the registry's descriptors (the
// rules are listed in scene.h). Only the scene uses this; nlohmann-json stays out of public
// headers.
//
// Thread rules: plain functions on the values they are given.

#ifndef ROLLY_SCENE_INTERNAL_JSON_VALUES_H_
#define ROLLY_SCENE_INTERNAL_JSON_VALUES_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rolly/core/guid.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace rolly::scene_internal {

// A reference field whose value names an actor by ID, set once every actor of the map exists.
struct PendingReference {
  void* field = nullptr;
  const reflect::Type* type = nullptr;
  Guid id;
  std::string where;
};

// Sets the value at `at` (of `type`) from `json`. `where` names the value in messages
// ("actor <id> (Door) field Inventory[2].Count"). References go to `refs` (null refuses them).
Status SetValue(const reflect::TypeRegistry& registry, const reflect::Type& type, void* at,
                const nlohmann::json& json, const std::string& where,
                std::vector<PendingReference>* refs);

// Sets the registered fields (of `cls` and its bases) of `object`, an object of `cls`, from the
// JSON object `values`; keys listed in `skip` are ignored. InvalidInput for an unknown field.
Status SetFields(const reflect::TypeRegistry& registry, const reflect::ClassInfo& cls, void* object,
                 const nlohmann::json& values, const std::string& where,
                 std::vector<PendingReference>* refs, const char* skip = nullptr);

// A transform from {"translation": [x, y, z], "rotation": [x, y, z, w], "scale": [x, y, z]}
// (each key optional) or from an array of ten numbers in that order.
Result<reflect::Transformd> ParseTransform(const nlohmann::json& json, const std::string& where);

}  // namespace rolly::scene_internal

#endif  // ROLLY_SCENE_INTERNAL_JSON_VALUES_H_
