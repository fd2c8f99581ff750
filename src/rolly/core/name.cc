// Name's intern table: a set of entries behind a reader-writer lock. Entries never move or die,
// so a Name is a stable pointer.

#include "rolly/core/name.h"

#include <deque>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "rolly/core/utf8.h"

namespace rolly {

namespace {

class NameTable {
 public:
  const Name::Entry* Find(std::string_view text) {
    std::shared_lock lock(mutex_);
    auto it = index_.find(text);
    return it == index_.end() ? nullptr : it->second;
  }

  const Name::Entry* Intern(std::string_view text) {
    if (const Name::Entry* e = Find(text)) return e;
    std::unique_lock lock(mutex_);
    auto it = index_.find(text);
    if (it != index_.end()) return it->second;
    entries_.push_back(Name::Entry{std::string(text),
                                   static_cast<std::uint32_t>(entries_.size() + 1),
                                   IsValidUtf8(text) && text.find('\0') == std::string_view::npos});
    const Name::Entry* e = &entries_.back();
    index_.emplace(std::string_view(e->text), e);
    return e;
  }

  static NameTable& Get() {
    static NameTable* table = new NameTable();  // never destroyed: Names outlive static dtors
    return *table;
  }

 private:
  std::shared_mutex mutex_;
  std::deque<Name::Entry> entries_;
  std::unordered_map<std::string_view, const Name::Entry*> index_;
};

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

Name::Name(std::string_view text) : entry_(text.empty() ? nullptr : NameTable::Get().Intern(text)) {}

std::optional<Name> Name::Find(std::string_view text) {
  if (text.empty()) return Name();
  const Entry* e = NameTable::Get().Find(text);
  if (e == nullptr) return std::nullopt;
  return Name(e);
}

bool Name::EqualsIgnoreCase(Name other) const {
  const std::string_view a = view(), b = other.view();
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

}  // namespace rolly
