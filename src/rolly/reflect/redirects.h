// Redirects for renames: an old name of a class, struct, property, struct member or enum value
// maps to its new name, so a saved value finds the renamed type or field.
//
// Built in code (Add*) or read from a config text (Parse), one redirect a line:
//
//   # a comment; blank lines are ignored
//   class   OldClass NewClass
//   struct  OldStruct NewStruct
//   property Class.OldProperty NewProperty     (Class is the class's current name)
//   member  Struct.OldMember NewMember         (Struct is the struct's current name)
//   enum    Enum.OldValue NewValue             (Enum is the enum's current name)
//
// Fields are separated by spaces or tabs. A bad line (an unknown kind, a wrong number of fields, a
// scoped name without its '.', an empty name) gives InvalidInput naming the line number; lines
// before it stay added. Chains resolve (A -> B -> C gives C for A). A redirect that would close a
// cycle, or that gives an old name a second, different new name, is refused with InvalidInput.
//
// Thread rules: add at start-up on one thread; resolve from any thread afterwards.

#ifndef ROLLY_REFLECT_REDIRECTS_H_
#define ROLLY_REFLECT_REDIRECTS_H_

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "rolly/core/name.h"
#include "rolly/core/status.h"

namespace rolly::reflect {

enum class RedirectKind : std::uint8_t { kClass, kStruct, kProperty, kMember, kEnumValue };

class Redirects {
 public:
  // `scope` is the class, struct or enum name for kProperty, kMember and kEnumValue; none for
  // kClass and kStruct.
  Status Add(RedirectKind kind, Name scope, Name old_name, Name new_name);
  Status AddClass(std::string_view old_name, std::string_view new_name);
  Status AddStruct(std::string_view old_name, std::string_view new_name);
  Status AddProperty(std::string_view cls, std::string_view old_name, std::string_view new_name);
  Status AddMember(std::string_view strct, std::string_view old_name, std::string_view new_name);
  Status AddEnumValue(std::string_view enm, std::string_view old_name, std::string_view new_name);
  // Adds every line of a config text (format above).
  Status Parse(std::string_view text);

  // The current name for `name` after following every redirect; `name` itself when none.
  Name Resolve(RedirectKind kind, Name scope, Name name) const;
  Name ResolveClass(Name name) const { return Resolve(RedirectKind::kClass, Name(), name); }
  Name ResolveStruct(Name name) const { return Resolve(RedirectKind::kStruct, Name(), name); }
  Name ResolveProperty(Name cls, Name name) const {
    return Resolve(RedirectKind::kProperty, cls, name);
  }
  Name ResolveMember(Name strct, Name name) const {
    return Resolve(RedirectKind::kMember, strct, name);
  }
  Name ResolveEnumValue(Name enm, Name name) const {
    return Resolve(RedirectKind::kEnumValue, enm, name);
  }
  std::size_t size() const { return map_.size(); }

 private:
  struct Key {
    RedirectKind kind;
    Name scope;
    Name old_name;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<Name>()(k.old_name) ^ (std::hash<Name>()(k.scope) * 31) ^
             static_cast<std::size_t>(k.kind);
    }
  };
  std::unordered_map<Key, Name, KeyHash> map_;
};

}  // namespace rolly::reflect

#endif  // ROLLY_REFLECT_REDIRECTS_H_
