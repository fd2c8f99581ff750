// Value types a saved property may hold besides the C++ standard ones: texts, soft asset paths,
// colours, date-times and the fixed-size math types of a game, each a plain struct.
//
// The registry (type_registry.h) knows each of these types as its own saved kind (type.h), so the
// record codec writes their members directly. Engines with their own math types either register
// them as structs (TypeRegistry::Struct) or convert to these at their boundary.
//
// Thread rules: plain values; use them from any thread.

#ifndef ROLLY_REFLECT_VALUE_TYPES_H_
#define ROLLY_REFLECT_VALUE_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rolly::reflect {

// A text shown to players: its source string, an optional localization key (empty when the text
// is not localized), and the texts its {0}, {1}... arguments format in. Each argument is one more
// level of nesting; TextNestingDepth counts them so a save can refuse texts nested past a bound.
struct Text {
  std::string source;
  // The localization namespace and key; both empty for a culture-invariant text.
  std::string localization_namespace;
  std::string localization_key;
  // Format arguments, in order; each may format further texts.
  std::vector<Text> arguments;

  friend bool operator==(const Text&, const Text&) = default;
};

// 1 for a text without arguments, otherwise 1 + the deepest argument's depth. Iterative, so a
// damaged or hostile text nested very deep cannot overflow the stack.
int TextNestingDepth(const Text& text);

// A path to an asset that is not loaded with the object (saved as the path, resolved by the game).
struct SoftPath {
  std::string path;
  friend bool operator==(const SoftPath&, const SoftPath&) = default;
};

// A linear colour, components usually in [0, 1].
struct Color {
  float r = 0, g = 0, b = 0, a = 1;
  friend bool operator==(const Color&, const Color&) = default;
};

// A date and time: 100-nanosecond ticks since 0001-01-01 00:00:00 UTC.
struct DateTime {
  std::int64_t ticks = 0;
  friend bool operator==(const DateTime&, const DateTime&) = default;
};

template <typename F>
struct Vector2 {
  F x = 0, y = 0;
  friend bool operator==(const Vector2&, const Vector2&) = default;
};
template <typename F>
struct Vector3 {
  F x = 0, y = 0, z = 0;
  friend bool operator==(const Vector3&, const Vector3&) = default;
};
template <typename F>
struct Vector4 {
  F x = 0, y = 0, z = 0, w = 0;
  friend bool operator==(const Vector4&, const Vector4&) = default;
};
// A rotation as a unit quaternion (identity by default).
template <typename F>
struct Quat {
  F x = 0, y = 0, z = 0, w = 1;
  friend bool operator==(const Quat&, const Quat&) = default;
};
// A rotation as pitch, yaw and roll in degrees.
template <typename F>
struct Rotator {
  F pitch = 0, yaw = 0, roll = 0;
  friend bool operator==(const Rotator&, const Rotator&) = default;
};
// Rotation, then translation, with a per-axis scale (identity by default).
template <typename F>
struct Transform {
  Quat<F> rotation;
  Vector3<F> translation;
  Vector3<F> scale{1, 1, 1};
  friend bool operator==(const Transform&, const Transform&) = default;
};

using Vector2f = Vector2<float>;
using Vector2d = Vector2<double>;
using Vector3f = Vector3<float>;
using Vector3d = Vector3<double>;
using Vector4f = Vector4<float>;
using Vector4d = Vector4<double>;
using Quatf = Quat<float>;
using Quatd = Quat<double>;
using Rotatorf = Rotator<float>;
using Rotatord = Rotator<double>;
using Transformf = Transform<float>;
using Transformd = Transform<double>;

}  // namespace rolly::reflect

#endif  // ROLLY_REFLECT_VALUE_TYPES_H_
