#include "rolly/reflect/redirects.h"

#include <string>
#include <vector>

namespace rolly::reflect {
namespace {

std::string_view KindWord(RedirectKind kind) {
  switch (kind) {
    case RedirectKind::kClass: return "class";
    case RedirectKind::kStruct: return "struct";
    case RedirectKind::kProperty: return "property";
    case RedirectKind::kMember: return "member";
    case RedirectKind::kEnumValue: return "enum";
  }
  return "?";
}

std::string Describe(RedirectKind kind, Name scope, Name name) {
  std::string out(KindWord(kind));
  out += ' ';
  if (!scope.is_none()) {
    out += scope.view();
    out += '.';
  }
  out += name.view();
  return out;
}

}  // namespace

Status Redirects::Add(RedirectKind kind, Name scope, Name old_name, Name new_name) {
  bool scoped = kind == RedirectKind::kProperty || kind == RedirectKind::kMember ||
                kind == RedirectKind::kEnumValue;
  if (old_name.is_none() || new_name.is_none() || scoped == scope.is_none()) {
    return InvalidInputError("redirect " + Describe(kind, scope, old_name) +
                             ": a name is empty or the scope does not fit the kind");
  }
  if (old_name == new_name) {
    return InvalidInputError("redirect " + Describe(kind, scope, old_name) + " to itself");
  }
  auto it = map_.find(Key{kind, scope, old_name});
  if (it != map_.end()) {
    if (it->second == new_name) return OkStatus();
    return InvalidInputError("redirect " + Describe(kind, scope, old_name) + " to " +
                             new_name.str() + " conflicts with the redirect to " +
                             it->second.str());
  }
  // Refuse a cycle: following the chain from the new name must not come back to the old one.
  Name at = new_name;
  for (std::size_t steps = 0; steps <= map_.size(); ++steps) {
    if (at == old_name) {
      return InvalidInputError("redirect " + Describe(kind, scope, old_name) + " to " +
                               new_name.str() + " would make a cycle");
    }
    auto next = map_.find(Key{kind, scope, at});
    if (next == map_.end()) break;
    at = next->second;
  }
  map_.emplace(Key{kind, scope, old_name}, new_name);
  return OkStatus();
}

Status Redirects::AddClass(std::string_view old_name, std::string_view new_name) {
  return Add(RedirectKind::kClass, Name(), Name(old_name), Name(new_name));
}
Status Redirects::AddStruct(std::string_view old_name, std::string_view new_name) {
  return Add(RedirectKind::kStruct, Name(), Name(old_name), Name(new_name));
}
Status Redirects::AddProperty(std::string_view cls, std::string_view old_name,
                              std::string_view new_name) {
  return Add(RedirectKind::kProperty, Name(cls), Name(old_name), Name(new_name));
}
Status Redirects::AddMember(std::string_view strct, std::string_view old_name,
                            std::string_view new_name) {
  return Add(RedirectKind::kMember, Name(strct), Name(old_name), Name(new_name));
}
Status Redirects::AddEnumValue(std::string_view enm, std::string_view old_name,
                               std::string_view new_name) {
  return Add(RedirectKind::kEnumValue, Name(enm), Name(old_name), Name(new_name));
}

Status Redirects::Parse(std::string_view text) {
  std::size_t line_number = 0;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i == line.size()) break;
      std::size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      fields.push_back(line.substr(start, i - start));
    }
    if (fields.empty() || fields[0].front() == '#') continue;
    std::string where = "redirects line " + std::to_string(line_number) + ": ";
    RedirectKind kind;
    if (fields[0] == "class") kind = RedirectKind::kClass;
    else if (fields[0] == "struct") kind = RedirectKind::kStruct;
    else if (fields[0] == "property") kind = RedirectKind::kProperty;
    else if (fields[0] == "member") kind = RedirectKind::kMember;
    else if (fields[0] == "enum") kind = RedirectKind::kEnumValue;
    else return InvalidInputError(where + "unknown kind '" + std::string(fields[0]) + "'");
    if (fields.size() != 3) {
      return InvalidInputError(where + "expected '" + std::string(fields[0]) +
                               " OldName NewName', got " + std::to_string(fields.size()) +
                               " fields");
    }
    Name scope;
    std::string_view old_name = fields[1];
    if (kind == RedirectKind::kProperty || kind == RedirectKind::kMember ||
        kind == RedirectKind::kEnumValue) {
      std::size_t dot = old_name.find('.');
      if (dot == std::string_view::npos || dot == 0 || dot + 1 == old_name.size()) {
        return InvalidInputError(where + "expected Scope.OldName, got '" + std::string(old_name) +
                                 "'");
      }
      scope = Name(old_name.substr(0, dot));
      old_name = old_name.substr(dot + 1);
    } else if (old_name.find('.') != std::string_view::npos) {
      return InvalidInputError(where + "a " + std::string(fields[0]) +
                               " name has no '.': '" + std::string(old_name) + "'");
    }
    Status s = Add(kind, scope, Name(old_name), Name(fields[2]));
    if (!s.ok()) return InvalidInputError(where + std::string(s.message()));
  }
  return OkStatus();
}

Name Redirects::Resolve(RedirectKind kind, Name scope, Name name) const {
  if (map_.empty()) return name;
  // Add refuses cycles, so the chain ends; the bound is a second guard.
  for (std::size_t steps = 0; steps <= map_.size(); ++steps) {
    auto it = map_.find(Key{kind, scope, name});
    if (it == map_.end()) break;
    name = it->second;
  }
  return name;
}

}  // namespace rolly::reflect
