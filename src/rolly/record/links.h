// How references between saved objects are saved and resolved (docs/records.md, "References").
//
// A reference field (a C* of a registered class) saves the identity of the object it points to,
// never the pointer. The game (the world layer, later) knows which objects are saved and under
// which subject ID, so capture and apply ask it through ObjectLinks:
//   - Locate, at capture: where the object a reference points to is saved. A target saved in the
//     same chunk gives its record index there (a small number in the file), one saved elsewhere
//     its subject ID (kept once per chunk in the refs table), one not saved nothing (the reference
//     saves as null).
//   - Resolve, at apply: the live object saved under a subject ID, as the reference's class.
//     ResolveRecord is asked instead for a reference saved by record index, so a game that keeps
//     the objects of the chunk being applied by record index finds them without a look-up by ID
//     (by default it is Resolve).
//
// Thread rules: called on the thread that captures or applies, during the call only.

#ifndef ROLLY_RECORD_LINKS_H_
#define ROLLY_RECORD_LINKS_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "rolly/core/guid.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {

// Where a referenced object is saved.
struct LinkTarget {
  // Its subject ID.
  Guid id;
  // Its record's index in the chunk being written (1 or more), or 0 when it is saved elsewhere.
  std::uint32_t record = 0;
};

class ObjectLinks {
 public:
  virtual ~ObjectLinks() = default;
  // Where `object` is saved; `cls` is the reference field's class and `object` is seen as it.
  // nullopt when the object is not saved: the reference saves as null.
  virtual std::optional<LinkTarget> Locate(const reflect::ClassInfo& cls, const void* object) = 0;
  // The live object saved as `id`, as class `cls` (upcast), or null when there is none or it is
  // not a `cls` (the reference is then left as it was and a message names it).
  virtual void* Resolve(Guid id, const reflect::ClassInfo& cls) = 0;
  // The same for a reference saved as record `record` (1 or more) of the chunk being applied,
  // whose subject is `id`.
  virtual void* ResolveRecord(std::size_t record, Guid id, const reflect::ClassInfo& cls) {
    (void)record;
    return Resolve(id, cls);
  }
};

}  // namespace rolly::record

#endif  // ROLLY_RECORD_LINKS_H_
