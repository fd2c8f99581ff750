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
