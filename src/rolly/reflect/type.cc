#include "rolly/reflect/type.h"

#include <utility>
#include <vector>

#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace rolly::reflect {

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kBool: return "Bool";
    case Kind::kInt8: return "Int8";
    case Kind::kInt16: return "Int16";
    case Kind::kInt32: return "Int32";
    case Kind::kInt64: return "Int64";
    case Kind::kUInt8: return "UInt8";
    case Kind::kUInt16: return "UInt16";
    case Kind::kUInt32: return "UInt32";
    case Kind::kUInt64: return "UInt64";
    case Kind::kFloat: return "Float";
    case Kind::kDouble: return "Double";
    case Kind::kString: return "String";
    case Kind::kName: return "Name";
    case Kind::kText: return "Text";
    case Kind::kGuid: return "Guid";
    case Kind::kColor: return "Color";
    case Kind::kDateTime: return "DateTime";
    case Kind::kVector2f: return "Vector2f";
    case Kind::kVector2d: return "Vector2d";
    case Kind::kVector3f: return "Vector3f";
    case Kind::kVector3d: return "Vector3d";
    case Kind::kVector4f: return "Vector4f";
    case Kind::kVector4d: return "Vector4d";
    case Kind::kQuatf: return "Quatf";
    case Kind::kQuatd: return "Quatd";
    case Kind::kRotatorf: return "Rotatorf";
    case Kind::kRotatord: return "Rotatord";
    case Kind::kTransformf: return "Transformf";
    case Kind::kTransformd: return "Transformd";
    case Kind::kSoftPath: return "SoftPath";
    case Kind::kEnum: return "Enum";
    case Kind::kStruct: return "Struct";
    case Kind::kVector: return "Vector";
    case Kind::kArray: return "Array";
    case Kind::kSet: return "Set";
    case Kind::kMap: return "Map";
    case Kind::kOptional: return "Optional";
    case Kind::kOwned: return "Owned";
    case Kind::kReference: return "Reference";
    case Kind::kInstancedStruct: return "InstancedStruct";
    case Kind::kPropertyBag: return "PropertyBag";
  }
  return "Unknown";
}

std::string DescribeType(const Type& type) {
  std::string out(KindName(type.kind));
  switch (type.kind) {
    case Kind::kEnum:
      out += ' ';
      out += type.enum_info ? type.enum_info->name().view() : "?";
      break;
    case Kind::kStruct:
    case Kind::kOwned:
    case Kind::kReference:
      out += ' ';
      out += type.class_info ? type.class_info->name().view() : "?";
      break;
    case Kind::kVector:
    case Kind::kSet:
    case Kind::kOptional:
      out += '<' + DescribeType(*type.element) + '>';
      break;
    case Kind::kArray:
      out += '<' + DescribeType(*type.element) + ", " + std::to_string(type.fixed_count) + '>';
      break;
    case Kind::kMap:
      out += '<' + DescribeType(*type.element) + ", " + DescribeType(*type.mapped) + '>';
      break;
    default:
      break;
  }
  return out;
}

namespace {

constexpr std::uint8_t kUnknown = 0, kReadable = 1, kRefused = 2;

// Depth-first over the types reachable from `type`. A type already on the path counts as
// readable there (a cycle adds nothing a bag could not hold); only refusals, which are final,
// are cached on the way, and the root's answer.
bool Walk(const Type& type, std::vector<const Type*>& path) {
  std::uint8_t known = type.readable_in_bag.load(std::memory_order_acquire);
  if (known != kUnknown) return known == kReadable;
  for (const Type* t : path) {
    if (t == &type) return true;
  }
  if (type.copy == nullptr) {
    type.readable_in_bag.store(kRefused, std::memory_order_release);
    return false;
  }
  path.push_back(&type);
  bool ok = true;
  switch (type.kind) {
    case Kind::kOwned:
    case Kind::kReference:
      ok = false;
      break;
    case Kind::kVector:
    case Kind::kArray:
    case Kind::kSet:
    case Kind::kOptional:
      ok = Walk(*type.element, path);
      break;
    case Kind::kMap:
      ok = Walk(*type.element, path) && Walk(*type.mapped, path);
      break;
    case Kind::kStruct: {
      const ClassInfo* cls = type.class_info;
      ok = cls != nullptr && cls->registered() && cls->is_struct() && !TypeRegistry::HasExtra(*cls);
      for (const ClassInfo* c = cls; ok && c != nullptr; c = c->base()) {
        for (const Property& p : c->properties()) {
          if ((p.flags & kEditorOnly) == 0 && !Walk(*p.type, path)) {
            ok = false;
            break;
          }
        }
      }
      break;
    }
    default:
      break;
  }
  path.pop_back();
  if (!ok) type.readable_in_bag.store(kRefused, std::memory_order_release);
  return ok;
}

}  // namespace

bool ReadableInBag(const Type& type) {
  std::vector<const Type*> path;
  bool ok = Walk(type, path);
  // Readable from the root means every type reached is readable; one answer per descriptor.
  if (ok) type.readable_in_bag.store(kReadable, std::memory_order_release);
  return ok;
}

int TextNestingDepth(const Text& text) {
  int deepest = 0;
  std::vector<std::pair<const Text*, int>> stack{{&text, 1}};
  while (!stack.empty()) {
    auto [t, depth] = stack.back();
    stack.pop_back();
    if (depth > deepest) deepest = depth;
    for (const Text& a : t->arguments) stack.push_back({&a, depth + 1});
  }
  return deepest;
}

}  // namespace rolly::reflect
